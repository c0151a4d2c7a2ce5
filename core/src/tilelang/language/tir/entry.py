"""``prim_func`` and ``macro``: the reference's ``tilelang.language.tir.entry`` names (TileLang's front end)."""

from tilelang.frontend.build import prim_func
from tilelang.frontend.macro import macro

__all__ = ["macro", "prim_func"]
