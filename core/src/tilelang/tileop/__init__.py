"""Core's generic, correct implementation of every tile operator (priority 0, any target).

Each lowers one ``tl.*`` call to parallel loop nests (``tl.parallel`` loops, partitioned over threads later) of
plain loads and stores, so a new backend works before it writes its own. `GENERIC_IMPLS` is what core
registers (lazily) under `tilelang.backend.tile_ops.ANY_TARGET`.
"""

from tilelang.tileop.atomic import ATOMIC
from tilelang.tileop.context import TileOpContext
from tilelang.tileop.copy import COPY
from tilelang.tileop.cumsum import CUMSUM
from tilelang.tileop.fill import FILL
from tilelang.tileop.gemm import GEMM
from tilelang.tileop.gemm_sp import GEMM_SP
from tilelang.tileop.im2col import IM2COL
from tilelang.tileop.reduce import REDUCE
from tilelang.tileop.transpose import TRANSPOSE

GENERIC_IMPLS = (COPY, FILL, GEMM, REDUCE, CUMSUM, ATOMIC, TRANSPOSE, IM2COL, GEMM_SP)

__all__ = ["GENERIC_IMPLS", "TileOpContext"]
