"""What an autotuning run compiles with (`CompileArgs`) and profiles with (`ProfileArgs`).

Both are frozen dataclasses (``dataclasses.replace`` makes variants) and hash by value, lists and dicts
included, so the autotuning cache key (`AutoTuner.generate_cache_key`) sees every field.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

__all__ = ["CompileArgs", "ProfileArgs"]  # AutotuneResult: module attribute (lazy, from the tuner)

# file names of a stored tuning result and kernel (the reference's layout constants)
BEST_CONFIG_PATH = "best_config.json"
FUNCTION_PATH = "function.pkl"
OUT_IDX_PATH = "out_idx.json"
LATENCY_PATH = "latency.json"
DEVICE_KERNEL_PATH = "device_kernel.cu"
HOST_KERNEL_PATH = "host_kernel.cu"
EXECUTABLE_PATH = "executable.so"
KERNEL_LIB_PATH = "kernel_lib.so"
KERNEL_CUBIN_PATH = "kernel.cubin"
KERNEL_PY_PATH = "kernel.py"
PARAMS_PATH = "params.pkl"


def _hashable(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((str(k), _hashable(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple, set, frozenset)):
        return tuple(_hashable(v) for v in value)
    if callable(value):
        return ("callable", getattr(value, "__module__", ""), getattr(value, "__qualname__", repr(value)), id(value))
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


class _ValueHash:
    def __hash__(self) -> int:
        return hash(tuple((f.name, _hashable(getattr(self, f.name))) for f in fields(self)))


@dataclass(frozen=True, eq=True)
class CompileArgs(_ValueHash):
    """``tilelang.compile`` arguments of every candidate."""

    out_idx: list[int] | int | None = None
    execution_backend: str = "auto"
    target: Any = "auto"
    target_host: Any = None
    verbose: bool = False
    pass_configs: dict[str, Any] | None = None
    compile_flags: list[str] | str | None = None

    __hash__ = _ValueHash.__hash__

    def compile_program(self, program: Any) -> Any:
        """Compile `program` (a PrimFunc) with these arguments."""
        from tilelang.jit import compile as jit_compile

        return jit_compile(program, out_idx=self.out_idx, execution_backend=self.execution_backend,
                           target=self.target, target_host=self.target_host, verbose=self.verbose,
                           pass_configs=self.pass_configs, compile_flags=self.compile_flags)


@dataclass(frozen=True, eq=True)
class ProfileArgs(_ValueHash):
    """How candidates are checked and timed.

    warmup / rep: ms of warm-up and of timed runs. timeout: seconds allowed per candidate (compile and
    benchmark). supply_type / supply_prog: how inputs are made (``supply_prog(params) -> tensors`` wins).
    ref_prog: the reference computation (outputs compared within rtol / atol / max_mismatched_ratio unless
    skip_check; ``manual_check_prog(outputs, ref_outputs)`` replaces the comparison). cache_input_tensors:
    reuse one set of inputs for every candidate. dims: values of symbolic dims for supplied inputs.
    """

    warmup: float = 25
    rep: float = 100
    timeout: float = 30
    backend: str = "event"
    supply_type: Any = "auto"
    ref_prog: Callable[..., Any] | None = None
    supply_prog: Callable[..., Any] | None = None
    rtol: float = 1e-2
    atol: float = 1e-2
    max_mismatched_ratio: float = 0.01
    skip_check: bool = False
    manual_check_prog: Callable[..., Any] | None = None
    cache_input_tensors: bool = True
    dims: dict[str, int] | None = None

    __hash__ = _ValueHash.__hash__


def __getattr__(name: str) -> Any:
    if name == "AutotuneResult":
        from tilelang.autotuner.tuner import AutoTuneResult

        return AutoTuneResult
    raise AttributeError(f"module 'tilelang.autotuner.param' has no attribute {name!r}")
