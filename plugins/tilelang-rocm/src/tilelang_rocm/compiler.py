"""What a ROCm artifact carries besides TVM's module: the hsaco, the assembly, and the kernel's resource usage.

`products` (what the device codegen hands to `tilelang.lower`) gives an artifact ``files["kernel.hsaco"]`` (the
ld.lld-linked code object), ``files["kernel.ll"]`` (LLVM IR), ``kernel_source`` the AMDGPU assembly (LLVM IR with
``TILELANG_ROCM_SOURCE=llvm``) and ``metadata["resources"]``: VGPR / AGPR / SGPR counts, LDS and scratch
bytes and the wavefront size, read from the assembly's ``.amdhsa`` metadata.

`tilelang_callback_hip_compile` is the reference TileLang's hipcc callback (HIP C++ -> hsaco through
`tilelang_rocm.contrib.hipcc`), declared in the manifest and registered with TVM by `tilelang.backend.get_backend`.
"""

from __future__ import annotations

import os
import re
from typing import Any

ELF_MAGIC = b"\x7fELF"
# YAML kernel metadata (.amdgpu_metadata) keys -> our names
_RESOURCE_KEYS = {
    "vgpr_count": "vgpr", "agpr_count": "agpr", "sgpr_count": "sgpr", "group_segment_fixed_size": "lds_bytes",
    "private_segment_fixed_size": "scratch_bytes", "wavefront_size": "wavefront_size",
    "vgpr_spill_count": "vgpr_spills", "sgpr_spill_count": "sgpr_spills",
}


def resource_usage(asm: str) -> dict[str, dict[str, int]]:
    """``{kernel symbol: {"vgpr": .., "sgpr": .., "lds_bytes": .., ...}}`` from AMDGPU assembly."""
    meta = asm.split(".amdgpu_metadata", 1)[-1] if ".amdgpu_metadata" in asm else ""
    out: dict[str, dict[str, int]] = {}
    for block in re.split(r"\n\s{2}-\s", meta)[1:]:  # one block per entry of amdhsa.kernels
        name = re.search(r"\.symbol:\s+(\S+)", block)
        if name is None:
            continue
        values = {ours: int(m.group(1)) for key, ours in _RESOURCE_KEYS.items()
                  if (m := re.search(rf"\.{key}:\s+(\d+)", block))}
        out[name.group(1).removesuffix(".kd")] = values
    return out


def device_module(artifact: Any) -> Any:
    """TVM's ROCm module of `artifact` (imported by the host module)."""
    rt = artifact.rt_mod
    if rt is None:
        return None
    if str(getattr(rt, "kind", "")) == "hip":
        return rt
    return next((m for m in rt.imports if str(getattr(m, "kind", "")) == "hip"), None)


def products(dev: Any, hsaco: bytes | None, mcpu: str | None) -> Any:
    """The `DeviceBuild` of TVM's ROCm module `dev`: its hsaco (when ld.lld linked one), LLVM IR and assembly,
    the kernel source to show (assembly; LLVM IR with ``TILELANG_ROCM_SOURCE=llvm``) and the resource usage."""
    from tilelang.backend import DeviceBuild

    llvm_ir, asm = str(dev.inspect_source("llvm")), str(dev.inspect_source("asm"))
    files = {"kernel.ll": llvm_ir.encode(), "kernel.s": asm.encode()}
    if hsaco is not None:
        files["kernel.hsaco"] = hsaco
    want_llvm = os.environ.get("TILELANG_ROCM_SOURCE", "asm").lower() in ("llvm", "ll")
    return DeviceBuild(rt_mod=dev, files=files, metadata={"resources": resource_usage(asm), "mcpu": mcpu},
                       source=llvm_ir if want_llvm else asm)


def finalize(artifact: Any) -> Any:
    """Fill the LLVM IR, assembly source and resource usage of a ROCm artifact that lacks them (one built by
    ``tilelang.lower`` has them already; the hsaco exists only where the build linked one)."""
    if "kernel.s" in artifact.files and "resources" in artifact.metadata:
        return artifact
    dev = device_module(artifact)
    if dev is None:
        return artifact
    built = products(dev, artifact.files.get("kernel.hsaco"), artifact.target.get("mcpu"))
    artifact.files.update(built.files)
    artifact.metadata.update(built.metadata)
    artifact.kernel_source = built.source
    return artifact


def _mcpu(target: Any) -> str | None:
    """The ``mcpu`` (``gfx942`` ...) of a tvm Target or a target config dict."""
    if isinstance(target, dict):
        return target.get("mcpu")
    return str(target.attrs["mcpu"]) if "mcpu" in target.attrs else None


def tilelang_callback_hip_compile(code: str, target: Any) -> bytearray:
    """Compile HIP C++ `code` into an hsaco for `target`'s ``mcpu`` with hipcc (`tilelang_rocm.contrib.hipcc`),
    adding TileLang's template and Composable Kernel include directories when they are configured."""
    from tilelang.env import env
    from tilelang_rocm.contrib import hipcc

    options = ["-std=c++17"]
    for directory in (env.TILELANG_TEMPLATE_PATH, env.COMPOSABLE_KERNEL_INCLUDE_DIR):
        if directory:
            options.append(f"-I{directory}")
    return hipcc.compile_hip(code, target_format="hsaco", arch=_mcpu(target), options=options, verbose=False)
