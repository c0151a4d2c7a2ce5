"""Device codegen for ROCm: AMDGPU code objects through TVM's LLVM AMDGPU codegen, linked by ld.lld; without
device compilation (``tilelang.lower(..., enable_device_compile=False)``) HIP C++ source (`hip_codegen`).

TVM asks two global callbacks during the build; this module answers both for the build it runs:
``tvm_callback_rocm_bitcode_path`` (bitcode / LLVM IR linked into the kernel: the plugin's `device_lib` and,
with a ROCm install under ``ROCM_PATH``, TVM's choice of ROCm device libraries) and ``tvm_callback_rocm_link``
(ld.lld turns the object into an hsaco). The build hands the hsaco, its LLVM IR and assembly and the register
usage to `tilelang.lower` in a `DeviceBuild` (`tilelang_rocm.compiler.products`). A kernel over the GPU's LDS
or scratch is refused before LLVM sees it (`tilelang_rocm.limits`: LLVM would end the process).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

from tilelang.backend import DeviceBuild, DeviceCodegen
from tilelang.errors import ToolchainMissing

DEVICE_LIB = Path(__file__).parent / "device_lib"
_BUILD = threading.local()


def bitcode_paths(*_args: Any) -> list[str]:
    """The plugin's device library, plus ROCm's bitcode libraries when ``ROCM_PATH`` holds them."""
    paths = sorted(str(p) for p in DEVICE_LIB.glob("*.ll"))
    rocm = os.environ.get("ROCM_PATH")
    if rocm and os.path.isdir(os.path.join(rocm, "amdgcn", "bitcode")):
        from tvm.support.rocm import callback_rocm_bitcode_path

        paths += list(callback_rocm_bitcode_path())
    return paths


def link(obj: Any) -> bytearray:
    """ld.lld: relocatable AMDGPU object -> shared code object (hsaco); undefined symbols are errors."""
    from tilelang_rocm.backend import LLD_MISSING, find_ld_lld

    lld = find_ld_lld()
    if lld is None:
        raise ToolchainMissing(LLD_MISSING)
    with tempfile.TemporaryDirectory(prefix="tilelang-rocm-") as tmp:
        src, out = os.path.join(tmp, "kernel.o"), os.path.join(tmp, "kernel.hsaco")
        Path(src).write_bytes(bytes(obj))
        proc = subprocess.run([*lld, "--no-undefined", "-shared", src, "-o", out], capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"ld.lld failed: {proc.stderr.strip() or proc.stdout.strip()}")
        hsaco = Path(out).read_bytes()
    _BUILD.hsaco = hsaco
    return bytearray(hsaco)


def _build_rocm(mod: Any, target: Any) -> DeviceBuild:
    import tvm_ffi

    from tilelang_rocm.backend import LLD_MISSING, find_ld_lld
    from tilelang_rocm.compiler import products
    from tilelang_rocm.limits import check_memory
    from tilelang_rocm.target import target_get_mcpu

    if find_ld_lld() is None:
        raise ToolchainMissing(LLD_MISSING)
    check_memory(mod, target_get_mcpu(target))  # LLVM would exit(1) on a kernel over the LDS / scratch limits
    tvm_ffi.register_global_func("tvm_callback_rocm_bitcode_path", bitcode_paths, override=True)
    tvm_ffi.register_global_func("tvm_callback_rocm_link", link, override=True)
    _BUILD.hsaco = None
    rt_mod = tvm_ffi.get_global_func("target.build.rocm")(mod, target)
    hsaco, _BUILD.hsaco = _BUILD.hsaco, None
    return products(rt_mod, hsaco, target_get_mcpu(target))


def _build_hip_source(mod: Any, target: Any) -> Any:
    from tilelang.errors import LoweringError
    from tilelang_rocm.hip_codegen import build_hip_without_compile

    try:
        return build_hip_without_compile(mod, target)
    except LoweringError as exc:
        raise LoweringError(f"{exc}; lower with enable_device_compile=True for the AMDGPU code object (its kernel "
                            "source is the LLVM IR)") from None


# the reference names the ROCm codegen after TVM's old kind; without device compilation it prints HIP C++
ROCM_CODEGEN = DeviceCodegen("hip", build=_build_rocm, build_without_compile=_build_hip_source)
