"""Autotuning: ``@tilelang.autotune`` over ``@tilelang.jit`` kernel factories, the `AutoTuner` class, the
argument sets (`CompileArgs`, `ProfileArgs`) and ``set_autotune_inputs``. Executors: the local ones here;
`RayExecutor` (``tilelang-core[ray]``) and `DaskExecutor` (``tilelang-core[dask]``) are attributes that import
their module (and Ray / Dask only when one is made)."""

from tilelang.autotuner.capture import get_autotune_inputs, set_autotune_inputs
from tilelang.autotuner.executors import SerialExecutor, local_process_executor
from tilelang.autotuner.param import CompileArgs, ProfileArgs
from tilelang.autotuner.tuner import AutoTuner, AutoTuneResult, autotune

AutotuneResult = AutoTuneResult  # the reference's spelling

_LAZY = {"RayExecutor": "tilelang.autotuner.ray_executor", "DaskExecutor": "tilelang.autotuner.dask_executor"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["autotune", "AutoTuner", "AutoTuneResult", "AutotuneResult", "CompileArgs", "ProfileArgs",
           "SerialExecutor", "local_process_executor", "RayExecutor", "DaskExecutor",
           "set_autotune_inputs", "get_autotune_inputs"]
