"""Profiling: `Profiler` (inputs, correctness check, timing), `do_bench`, and tensor supply types."""

from tilelang.profiler.bench import do_bench
from tilelang.profiler.profiler import Profiler
from tilelang.profiler.supply import TensorSupplyType, supply_tensor

__all__ = ["Profiler", "do_bench", "TensorSupplyType", "supply_tensor"]
