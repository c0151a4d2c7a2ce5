"""Autotuning: ``@tilelang.autotune`` over ``@tilelang.jit`` kernel factories, the `AutoTuner` class, the
argument sets (`CompileArgs`, `ProfileArgs`) and ``set_autotune_inputs``."""

from tilelang.autotuner.capture import get_autotune_inputs, set_autotune_inputs
from tilelang.autotuner.executors import SerialExecutor, local_process_executor
from tilelang.autotuner.param import CompileArgs, ProfileArgs
from tilelang.autotuner.tuner import AutoTuner, AutoTuneResult, autotune

AutotuneResult = AutoTuneResult  # the reference's spelling

__all__ = ["autotune", "AutoTuner", "AutoTuneResult", "AutotuneResult", "CompileArgs", "ProfileArgs",
           "SerialExecutor", "local_process_executor", "set_autotune_inputs", "get_autotune_inputs"]
