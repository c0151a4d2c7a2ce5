"""TileLang's additions to the tirx IR: tile operators (``tl.*`` Ops) and region helpers. See ``docs/ir.md``."""

from tilelang.ir.ops import (
    ATOMIC_KINDS,
    REDUCE_KINDS,
    TILE_OPS,
    GemmWarpPolicy,
    ensure_registered,
    register_all,
    register_tile_op,
    tile_call,
    tile_op_name,
    tile_stmt,
)
from tilelang.ir.region import (
    buffer_dtype,
    buffer_of,
    buffer_scope,
    buffer_shape,
    full_region,
    is_buffer,
    is_load,
    is_region,
    region_extents,
    to_region,
)

__all__ = [
    "ATOMIC_KINDS",
    "REDUCE_KINDS",
    "TILE_OPS",
    "GemmWarpPolicy",
    "buffer_dtype",
    "buffer_of",
    "buffer_scope",
    "buffer_shape",
    "full_region",
    "is_buffer",
    "is_load",
    "is_region",
    "region_extents",
    "ensure_registered",
    "register_all",
    "register_tile_op",
    "tile_call",
    "tile_op_name",
    "tile_stmt",
    "to_region",
]
