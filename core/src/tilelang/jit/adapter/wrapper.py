"""Source wrappers: a kernel's device source joined with the host code that launches it.

The reference generates host wrappers in C++/Python for its Cython and NVRTC adapters; here the host code is
what this project's host codegen produces for the kernel's host module (TVM's C host codegen), so a wrapper's
`lib_code` is the device source followed by that host source. Every wrapper needs the lowered device and host
modules (``device_mod`` / ``host_mod`` of `tilelang.lower`'s artifact).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

__all__ = ["BaseWrapper", "TLCUDASourceWrapper", "TLHIPSourceWrapper", "TLCPUSourceWrapper",
           "TLMetalSourceWrapper", "TLWrapper", "TLPyWrapper"]


def _require_lowered_modules(device_mod: Any, host_mod: Any) -> None:
    missing = [name for name, mod in (("device_mod", device_mod), ("host_mod", host_mod)) if mod is None]
    if missing:
        raise ValueError("Adapter source generation requires pre-lowered device_mod and host_mod; missing: "
                         f"{', '.join(missing)}.")


def _host_c_source(host_mod: Any) -> str:
    import tvm_ffi
    from tvm.target import Target

    try:
        return str(tvm_ffi.get_global_func("target.build.c")(host_mod, Target("c")).inspect_source())
    except Exception as exc:  # a host module TVM's C codegen cannot print: say so in the wrapper
        return f"/* host module not printable as C: {exc} */\n{host_mod.script()}"


class BaseWrapper(ABC):
    @abstractmethod
    def wrap(self, *args: Any, **kwargs: Any) -> str:
        """The wrapped source."""


class TLCUDASourceWrapper:
    """Device source (CUDA C) + host launch code of one lowered kernel."""

    def __init__(self, scheduled_ir_module: Any, source: str, target: Any, device_mod: Any = None,
                 host_mod: Any = None, pass_configs: dict[str, Any] | None = None):
        _require_lowered_modules(device_mod, host_mod)
        self.mod = scheduled_ir_module
        self.source = source
        self.target = target
        self.device_mod = device_mod
        self.host_mod = host_mod
        self.pass_configs = pass_configs or {}
        self.lib_code = self.update_lib_code(source)

    def update_lib_code(self, code: str) -> str:
        return f"{code}\n\n// ---- host ----\n{_host_c_source(self.host_mod)}"

    def get_function_names(self) -> list[str]:
        return [str(gv.name_hint) for gv in self.device_mod.functions.keys()]


class TLHIPSourceWrapper(TLCUDASourceWrapper):
    """The HIP flavour (same structure)."""


class TLCPUSourceWrapper(TLCUDASourceWrapper):
    """A CPU kernel's C source and its host entry."""


class TLMetalSourceWrapper(TLCUDASourceWrapper):
    """MSL source and the host launch code."""


_BY_KIND = {"cuda": TLCUDASourceWrapper, "rocm": TLHIPSourceWrapper, "hip": TLHIPSourceWrapper,
            "c": TLCPUSourceWrapper, "llvm": TLCPUSourceWrapper, "metal": TLMetalSourceWrapper}


class TLWrapper(BaseWrapper):
    """Picks the wrapper of the target's kind (`assign_*` then `wrap(source)`)."""

    def __init__(self, target: Any):
        self.target = target
        self.scheduled_ir_module = None
        self.pass_configs: dict[str, Any] = {}
        self.device_mod = None
        self.host_mod = None

    def assign_optimized_module(self, scheduled_ir_module: Any) -> None:
        self.scheduled_ir_module = scheduled_ir_module

    def assign_pass_configs(self, pass_configs: dict[str, Any]) -> None:
        self.pass_configs = dict(pass_configs or {})

    def assign_host_module(self, host_mod: Any) -> None:
        self.host_mod = host_mod

    def assign_device_module(self, device_mod: Any) -> None:
        self.device_mod = device_mod

    def wrap(self, c_source: str) -> str:
        from tilelang.backend.target import kind_of

        cls = _BY_KIND.get(kind_of(self.target))
        if cls is None:
            raise ValueError(f"no source wrapper for target kind {kind_of(self.target)!r}")
        wrapper = cls(self.scheduled_ir_module, c_source, self.target, self.device_mod, self.host_mod,
                      self.pass_configs)
        return wrapper.lib_code


class TLPyWrapper(TLWrapper):
    """The Python-host flavour of `TLWrapper` (same output here)."""
