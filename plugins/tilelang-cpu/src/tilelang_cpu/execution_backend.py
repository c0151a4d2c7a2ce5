"""Execution backends for CPU kernels, in preference order.

`TVMFFIBackend` runs the compiled module through TVM's runtime via ``tvm_ffi``: torch CPU tensors pass
zero-copy through DLPack, and the generated code itself checks ndim, dtype, shape and strides (so the JIT
checks only count, device and alignment on the fast path). A cached ``kernel.so`` loads without importing
the TVM compiler (`tilelang.jit.runtime_loader`); in a process that has not imported ``tvm_ffi`` (a warm start)
it is called through TVM-FFI's C ABI with ctypes instead (`tilelang_cpu.direct_call`), which needs neither the
``tvm_ffi`` package nor TVM. TVM's thread pool is set to every usable core before the first kernel runs
(``TILELANG_NUM_THREADS`` overrides). A kernel marked ``cpu_amx`` (it uses AMX tiles) first gets the process's AMX
permission from Linux (`tilelang_cpu.amx_permission`), on either path.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from tilelang.backend import ExecutionBackend
from tilelang.errors import ExecutionBackendUnavailable

LIBRARY = "kernel.so"


@functools.cache
def _runtime_missing() -> str | None:
    """Why TVM's runtime cannot run kernels here (None: it can); looked up once per process."""
    if importlib.util.find_spec("tvm_ffi") is None:
        return "the tvm_ffi package is not installed (pip install apache-tvm-ffi)"
    from tilelang.backend.sdk import runtime_library_path

    try:
        runtime_library_path()
    except FileNotFoundError as exc:
        return str(exc)
    return None


def prefer_direct() -> bool:
    """Whether a cached library is called through `tilelang_cpu.direct_call`: in a process that has not imported
    ``tvm_ffi`` (importing it costs more than a whole cache hit). Once ``tvm_ffi`` is imported its launcher is
    taken: it passes tensors to the kernel's own checks and costs about a microsecond less per call."""
    return "tvm_ffi" not in sys.modules


class TVMFFIBackend(ExecutionBackend):
    """Runs llvm (in-process module) and c (compiled with the system C compiler) kernels through TVM's runtime."""

    name = "tvm_ffi"
    description = "TVM runtime via tvm_ffi; torch CPU tensors zero-copy through DLPack"
    aliases = ("ctypes",)
    torch_device_type = "cpu"
    launcher_checks_arguments = True
    default_alignment = 64

    def names_for(self, target: Any) -> tuple[str, ...]:
        """``cython`` (the reference's default for C kernels) and ``tvm_ffi`` on ``c``; ``tvm_ffi`` on llvm."""
        from tilelang.backend.sdk import kind_of

        return ("cython", "tvm_ffi") if kind_of(target) == "c" else ("tvm_ffi",)

    def unavailable_reason(self) -> str | None:
        return _runtime_missing()

    def load(self, artifact: Any) -> Any:
        from tilelang.backend.sdk import load_runtime

        if artifact.metadata.get("cpu_amx"):  # before any path runs the kernel: AMX without it is SIGILL
            from tilelang_cpu.amx_permission import request_amx

            request_amx()
        paths = getattr(artifact.files, "paths", {})
        if artifact.rt_mod is None and LIBRARY in paths and prefer_direct():
            from tilelang_cpu.direct_call import load_direct

            launcher = load_direct(artifact, paths[LIBRARY])
            if launcher is not None:
                return launcher
        load_runtime()  # thread pool + context symbols, also for modules built in this process
        module = self._module(artifact)
        try:
            return module[artifact.name]
        except (AttributeError, KeyError) as exc:
            raise ExecutionBackendUnavailable(
                f"{self.name}: the compiled module has no function {artifact.name!r}") from exc

    def _module(self, artifact: Any) -> Any:
        from tilelang.backend.sdk import load_module

        rt_mod = artifact.rt_mod
        if rt_mod is not None and artifact.target.get("kind") == "llvm":
            return rt_mod
        paths = getattr(artifact.files, "paths", {})
        if LIBRARY in paths:
            try:
                return load_module(paths[LIBRARY])
            except Exception:
                if os.path.exists(paths[LIBRARY]) or LIBRARY not in artifact.files:
                    raise
                # the cache entry was evicted or cleared after it was read: load the bytes already in memory
        with tempfile.TemporaryDirectory(prefix="tilelang-") as tmp:
            path = Path(tmp) / LIBRARY
            if LIBRARY in artifact.files:
                path.write_bytes(artifact.files[LIBRARY])
            elif rt_mod is not None:
                rt_mod.export_library(os.fspath(path))
            else:
                raise ExecutionBackendUnavailable(
                    f"{self.name}: artifact {artifact.name!r} has neither a runtime module nor {LIBRARY}")
            return load_module(path)  # the loaded library stays mapped after its file is deleted

    def export_files(self, artifact: Any) -> dict[str, bytes]:
        """The files that reload this kernel without the compiler: ``kernel.so``."""
        if LIBRARY in artifact.files:
            return {LIBRARY: artifact.files[LIBRARY]}
        if artifact.rt_mod is None:
            raise ExecutionBackendUnavailable(f"{self.name}: artifact {artifact.name!r} has no runtime module")
        with tempfile.TemporaryDirectory(prefix="tilelang-") as tmp:
            path = Path(tmp) / LIBRARY
            artifact.rt_mod.export_library(os.fspath(path))
            return {LIBRARY: path.read_bytes()}

    def export_library(self, artifact: Any, path: str | os.PathLike[str]) -> None:
        """Write the kernel as a shared library loadable by ``tvm_ffi.load_module``."""
        if artifact.rt_mod is not None:
            artifact.rt_mod.export_library(os.fspath(path))
        else:
            Path(path).write_bytes(self.export_files(artifact)[LIBRARY])


EXECUTION_BACKENDS = [TVMFFIBackend()]
