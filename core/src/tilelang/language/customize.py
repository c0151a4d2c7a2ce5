"""The reference's ``tilelang.language.customize``: atomics, ``dp4a``, ``clamp``, views and ``loop_break``."""

from tilelang.language.atomic import (
    atomic_add,
    atomic_addx2,
    atomic_addx4,
    atomic_load,
    atomic_max,
    atomic_min,
    atomic_or,
    atomic_store,
)
from tilelang.language.exprs import clamp
from tilelang.language.fastmath import dp4a
from tilelang.language.misc import loop_break
from tilelang.language.views import reshape, view

__all__ = ["atomic_add", "atomic_addx2", "atomic_addx4", "atomic_load", "atomic_max", "atomic_min", "atomic_or",
           "atomic_store", "clamp", "dp4a", "loop_break", "reshape", "view"]
