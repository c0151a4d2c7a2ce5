"""`NVRTCLibraryGenerator`: CUDA C -> cubin with NVRTC, written beside its Python launcher, then loaded.

`compile_lib` writes three files to a temporary directory: the source (``.cu``, for debugging), the cubin and
the launcher (``.py``, the wrapper's ``host_func``); `load_lib` imports the launcher and loads the cubin with
the CUDA driver (``culib``, unloaded when the generator is collected). Without cuda-python the module imports,
and using it raises ImportError saying what to install.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import tempfile
from types import ModuleType
from typing import Any

from tilelang.backend.sdk import LibraryGenerator
from tilelang_cuda.adapters.nvrtc import MissingCudaPython, check_nvrtc_available, is_nvrtc_available
from tilelang_cuda.adapters.nvrtc.include_paths import discover_cuda_include_paths

if is_nvrtc_available:
    import cuda.bindings.driver as cuda
else:  # the module imports; using it raises ImportError saying what to install
    cuda = MissingCudaPython()

__all__ = ["NVRTCLibraryGenerator"]

logger = logging.getLogger(__name__)


def _sm_number(target: Any) -> int:
    """``sm_90a`` -> 90 (NVRTC adds the arch-specific suffix itself from 90 on)."""
    arch = str(target.attrs["arch"]) if "arch" in target.attrs else ""
    digits = "".join(ch for ch in arch.removeprefix("sm_") if ch.isdigit())
    if not digits:
        raise ValueError(f"NVRTC needs a cuda target with an arch such as 'sm_90a', got {target}")
    return int(digits)


def _cuda_home_with_headers() -> str:
    """The CUDA root whose include directories hold ``cuda_runtime.h`` (``CUDA_HOME`` first, then
    ``/usr/local/cuda``); NVRTC has no default include path."""
    from tilelang.env import env

    candidates = [c for c in (env.CUDA_HOME, "/usr/local/cuda") if c]
    for root in candidates:
        if any(os.path.exists(os.path.join(d, "cuda_runtime.h")) for d in discover_cuda_include_paths(root)):
            return root
    return candidates[0] if candidates else "/usr/local/cuda"


class NVRTCLibraryGenerator(LibraryGenerator):
    """``update_lib_code(cuda_source)``, ``update_host_func(launcher_source)``, `compile_lib`, `load_lib`."""

    host_func: str | None = None
    culib: Any = None
    pymodule: ModuleType | None = None
    pypath: str | None = None

    def __init__(self, target: Any, verbose: bool = False):
        check_nvrtc_available()
        super().__init__(target, verbose)

    @staticmethod
    def import_from_file(module_name: str, file_path: str) -> ModuleType:
        spec = importlib.util.spec_from_file_location(module_name, file_path)
        if spec is None or spec.loader is None:
            raise ImportError(f"Failed to import module from file: {file_path}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    def update_host_func(self, host_func: str) -> None:
        self.host_func = host_func

    def compile_options(self) -> list[str]:
        """NVRTC flags: CUDA (and configured TileLang / CUTLASS) include directories, then the compile flags."""
        from tilelang.env import env
        from tilelang_cuda.contrib.nvrtc import get_nvrtc_version

        cuda_home = _cuda_home_with_headers()
        options = [f"-I{d}" for d in (env.TILELANG_TEMPLATE_PATH, env.CUTLASS_INCLUDE_DIR) if d]
        options += [f"-I{p}" for p in discover_cuda_include_paths(cuda_home)]
        options.append(f"-D__CUDACC_VER_MAJOR__={get_nvrtc_version()[0]}")
        options += [item for flag in self.compile_flags for item in str(flag).split() if item not in options]
        return options

    def compile_lib(self, timeout: float | None = None) -> str:
        """Compile `lib_code` to a cubin and write it with the source and the launcher (returns the cubin path)."""
        from tilelang.backend.sdk import is_cuda_target
        from tilelang_cuda.contrib.nvrtc import compile_cuda

        if not is_cuda_target(self.target):
            raise ValueError(f"Unsupported target: {self.target} (NVRTC compiles for cuda targets)")
        if self.lib_code is None:
            raise RuntimeError("NVRTCLibraryGenerator has no source: call update_lib_code() first.")
        if self.host_func is None:
            raise RuntimeError("Host function is not set, please call update_host_func() first.")
        cubin = compile_cuda(self.lib_code, target_format="cubin", arch=_sm_number(self.target),
                             options=self.compile_options(), verbose=self.verbose)
        work_dir = tempfile.mkdtemp(prefix="tilelang-nvrtc-")
        self.srcpath = os.path.join(work_dir, "kernel.cu")
        self.libpath = os.path.join(work_dir, "kernel.cubin")
        self.pypath = os.path.join(work_dir, "kernel.py")
        for path, data in ((self.srcpath, self.lib_code.encode()), (self.libpath, bytes(cubin)),
                           (self.pypath, self.host_func.encode())):
            with open(path, "wb") as f:
                f.write(data)
        return self.libpath

    def load_lib(self, lib_path: str | None = None) -> Any:
        """Import the launcher next to the cubin and load the cubin into the current CUDA context."""
        if lib_path is not None:
            self.libpath = lib_path
        if self.libpath is None:
            raise RuntimeError("NVRTCLibraryGenerator.libpath is not set; call compile_lib() first.")
        self.pypath = self.libpath.replace(".cubin", ".py")
        self.pymodule = self.import_from_file("kernel", self.pypath)
        status, ctx = cuda.cuCtxGetCurrent()
        if status != cuda.CUresult.CUDA_SUCCESS or not int(ctx):
            import torch

            torch.cuda.synchronize()  # makes torch's primary context current
        status, self.culib = cuda.cuLibraryLoadFromFile(self.libpath.encode(), [], [], 0, [], [], 0)
        if status != cuda.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"Failed to load library: {self.libpath}, error: {status}")
        return self.culib

    def __del__(self) -> None:
        if self.culib:
            if cuda.cuLibraryUnload(self.culib)[0] != cuda.CUresult.CUDA_SUCCESS:
                logger.warning("Failed to unload library: %s", self.libpath)
            self.culib = None
