"""Autotuning: ``@tilelang.autotune`` over ``@tilelang.jit`` kernel factories, and the `AutoTuner` class."""

from tilelang.autotuner.executors import SerialExecutor, local_process_executor
from tilelang.autotuner.tuner import AutoTuner, AutoTuneResult, autotune

__all__ = ["autotune", "AutoTuner", "AutoTuneResult", "SerialExecutor", "local_process_executor"]
