"""Device codegen for the CPU: the lowered module is host code, built by TVM's LLVM or C builder."""

from __future__ import annotations

import functools
from typing import Any

from tilelang.backend import DeviceCodegen


@functools.cache
def host_cpu() -> str:
    """LLVM's name for this machine's CPU (e.g. ``znver4``): without it LLVM emits generic x86-64 (no FMA)."""
    from tvm.target.codegen import llvm_get_system_cpu

    return str(llvm_get_system_cpu())


def with_host_cpu(target: Any) -> Any:
    """`target` with ``mcpu`` set to the host CPU when the user gave none."""
    from tvm.target import Target

    config = dict(target.export()) if hasattr(target, "export") else dict(target)
    if config.get("kind") == "llvm" and not config.get("mcpu"):
        config["mcpu"] = host_cpu()
    return Target({k: v for k, v in config.items() if k not in ("keys", "tag") or v})


def _build_llvm(mod: Any, target: Any) -> Any:
    """The LLVM module; a kernel that uses AMX tiles is marked ``cpu_amx`` in the artifact's metadata (the
    execution backend asks the OS for tile state before loading it)."""
    import tvm_ffi

    from tilelang.backend import DeviceBuild
    from tilelang_cpu.tileops.gemm_amx import uses_amx

    rt_mod = tvm_ffi.get_global_func("target.build.llvm")(mod, with_host_cpu(target))
    return DeviceBuild(rt_mod=rt_mod, metadata={"cpu_amx": True}) if uses_amx(mod) else rt_mod


def _build_c(mod: Any, target: Any) -> Any:
    from tilelang.backend.sdk import build_c_source

    return build_c_source(mod, target)


LLVM_CODEGEN = DeviceCodegen("llvm", build=_build_llvm)
C_CODEGEN = DeviceCodegen("c", build=_build_c)
