"""The reference's ``tilelang.language.loop``: the loop constructors."""

from tilelang.language.loops import Parallel, Pipelined, grid, serial, unroll, vectorized
from tilelang.language.misc import Persistent

Serial, Unroll, Vectorized = serial, unroll, vectorized

__all__ = ["Parallel", "Persistent", "Pipelined", "Serial", "Unroll", "Vectorized", "grid", "serial", "unroll",
           "vectorized"]
