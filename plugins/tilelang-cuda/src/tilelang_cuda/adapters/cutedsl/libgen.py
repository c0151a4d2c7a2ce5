"""`CuTeDSLLibraryGenerator`: writes a CuTeDSL kernel's generated Python module, builds its C++ launcher with
nvcc, and imports the module.

The generated module (the host wrapper, with the ``@cute.kernel`` code embedded so CuTe DSL is imported only on
first launch) goes to its own temporary directory, where the CuTe DSL later keeps the cubin it compiles. The
optional C++ launcher is linked against the CUDA driver and TVM FFI.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import tempfile
from types import ModuleType
from typing import Any

from tilelang.backend.sdk import LibraryGenerator

__all__ = ["CuTeDSLLibraryGenerator"]


def _is_cutedsl_target(target: Any) -> bool:
    keys = target.get("keys", ()) if isinstance(target, dict) else getattr(target, "keys", ())
    kind = target.get("kind") if isinstance(target, dict) else getattr(getattr(target, "kind", None), "name", None)
    return str(kind) == "cuda" and "cutedsl" in [str(k) for k in keys]


def _tvm_ffi_flags() -> tuple[list[str], list[str]]:
    """Include and link flags of the installed TVM FFI (empty when it cannot be located)."""
    try:
        import tvm_ffi.libinfo

        include = [f"-I{path}" for path in tvm_ffi.libinfo.include_paths()]
        lib_dir = os.path.dirname(tvm_ffi.libinfo.find_libtvm_ffi())
        return include, [f"-L{lib_dir}", "-ltvm_ffi"]
    except (ImportError, RuntimeError, AttributeError):
        return [], []


class CuTeDSLLibraryGenerator(LibraryGenerator):
    """``update_host_func`` / ``update_launcher_cpp_code`` / ``update_launcher_lib_name``, then `compile_lib`
    and `load_lib` (`pymodule` is the imported generated module)."""

    host_func: str | None = None
    launcher_cpp_code: str | None = None
    launcher_lib_name: str | None = None
    launcher_libpath: str | None = None
    pymodule: ModuleType | None = None

    @staticmethod
    def import_from_file(module_name: str, file_path: str) -> ModuleType:
        """Import the Python file at `file_path` as a module named `module_name`."""
        spec = importlib.util.spec_from_file_location(module_name, file_path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import a Python module from {file_path!r}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    def update_host_func(self, host_func: str) -> None:
        self.host_func = host_func

    def update_launcher_cpp_code(self, launcher_cpp_code: str | None) -> None:
        self.launcher_cpp_code = launcher_cpp_code

    def update_launcher_lib_name(self, launcher_lib_name: str | None) -> None:
        self.launcher_lib_name = launcher_lib_name

    def load_lib(self, lib_path: str | None = None) -> ModuleType:
        """Import the generated module (`lib_path`, default the one `compile_lib` wrote)."""
        path = lib_path or self.libpath
        if path is None:
            raise RuntimeError("CuTeDSLLibraryGenerator.libpath is not set; call compile_lib() first or pass "
                               "lib_path explicitly.")
        self.pymodule = self.import_from_file("kernel", path)
        return self.pymodule

    def compile_lib(self, timeout: float | None = None) -> str:
        """Write the generated module (and build the launcher library when there is launcher code)."""
        if self.host_func is None:
            raise RuntimeError("CuTeDSLLibraryGenerator.host_func is not set; call update_host_func() before "
                               "compile_lib().")
        if not _is_cutedsl_target(self.target):
            raise ValueError(f"Unsupported target: {self.target} (CuTeDSL needs a cuda target with the 'cutedsl' "
                             "key, e.g. {'kind': 'cutedsl', 'arch': 'sm_90'})")
        work_dir = tempfile.mkdtemp(prefix="tilelang_cutedsl_")
        src_path = os.path.join(work_dir, "kernel.py")
        with open(src_path, "w") as f:
            f.write(self.host_func)
        if self.launcher_cpp_code is not None:
            self._build_launcher(work_dir, timeout)
        self.srcpath = src_path
        self.libpath = src_path
        return src_path

    def _build_launcher(self, work_dir: str, timeout: float | None) -> None:
        from tilelang_cuda.contrib.nvcc import get_cuda_library_dirs, get_nvcc_compiler

        if not self.launcher_lib_name:
            raise RuntimeError("CuTeDSLLibraryGenerator.launcher_lib_name is not set; call "
                               "update_launcher_lib_name() with the launcher's file name.")
        src = os.path.join(work_dir, "launcher.cpp")
        with open(src, "w") as f:
            f.write(self.launcher_cpp_code or "")
        out = os.path.join(work_dir, self.launcher_lib_name)
        include, link = _tvm_ffi_flags()
        cmd = [get_nvcc_compiler(), "-shared", "-Xcompiler=-fPIC",
               *[f"-L{d}" for d in get_cuda_library_dirs()], "-lcuda", *include, *link, "-o", out, src]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"Failed to compile C++ launcher: {proc.stderr}")
        self.launcher_libpath = out
        self.launcher_libname = self.launcher_lib_name
