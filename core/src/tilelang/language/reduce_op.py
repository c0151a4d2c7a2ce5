"""The reference's ``tilelang.language.reduce_op``: tile reductions, reducers and warp reductions."""

from tilelang.language.reducer import alloc_reducer, finalize_reducer, reducer_init, reducer_update
from tilelang.language.tileops import (
    reduce,
    reduce_absmax,
    reduce_abssum,
    reduce_bitand,
    reduce_bitor,
    reduce_bitxor,
    reduce_max,
    reduce_min,
    reduce_sum,
)
from tilelang.language.warp import (
    warp_reduce_bitand,
    warp_reduce_bitor,
    warp_reduce_max,
    warp_reduce_min,
    warp_reduce_sum,
)

__all__ = ["alloc_reducer", "finalize_reducer", "reduce", "reduce_absmax", "reduce_abssum", "reduce_bitand",
           "reduce_bitor", "reduce_bitxor", "reduce_max", "reduce_min", "reduce_sum", "reducer_init",
           "reducer_update", "warp_reduce_bitand", "warp_reduce_bitor", "warp_reduce_max", "warp_reduce_min",
           "warp_reduce_sum"]
