"""The roller: recommends tile configurations (`Hint`) for an operator graph on a device model."""

from tilelang.carver.arch import CUDA, TileDevice
from tilelang.carver.roller.hint import Hint
from tilelang.carver.roller.node import Edge, OutputNode, PrimFuncNode
from tilelang.carver.roller.policy import DefaultPolicy, TensorCorePolicy
from tilelang.carver.roller.rasterization import NoRasterization, Rasterization2DColumn, Rasterization2DRow

__all__ = [
    "PrimFuncNode", "OutputNode", "Edge", "NoRasterization", "Rasterization2DRow", "Rasterization2DColumn",
    "Hint", "DefaultPolicy", "TensorCorePolicy", "TileDevice", "CUDA",
]
