"""A backend whose kernels are C, built by the system compiler into a shared library, in a few declarations.

`c_library_codegen(kind)` is the `DeviceCodegen`: TVM's C codegen, its output made compilable
(`tilelang.backend.c_source`), built with ``cc`` into a shared library whose bytes travel in the artifact (so the
kernel cache and the autotuner's compile workers rebuild the kernel from them). `SharedLibraryBackend` is the
`ExecutionBackend` that loads that library and calls the kernel with torch CPU tensors (zero-copy). Together with
`tilelang.backend.host_launch_pass` they are a complete backend for a target kind that maps to TVM's ``c``
(``TargetKind(kind, to_tvm=lambda config: {"kind": "c"})``): the example third-party backend ``tilelang-ccpu``
and what ``tilelang backend new`` generates are built on them.
"""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
from typing import Any

from tilelang.backend.device_codegen import DeviceBuild, DeviceCodegen
from tilelang.backend.execution import ExecutionBackend

__all__ = ["LIBRARY_FILE", "SharedLibraryBackend", "build_shared_library", "c_library_codegen", "c_compiler"]

LIBRARY_FILE = "kernel.so"  # the artifact file holding the library


def c_compiler() -> str | None:
    """The system C compiler TVM's ``export_library`` will run, or None."""
    return shutil.which("cc") or shutil.which("gcc")


def build_shared_library(source_module: Any, cflags: str) -> tuple[Any, bytes]:
    """Compile a C source module to a shared library; returns ``(loaded runtime module, library bytes)``."""
    import tvm

    with tempfile.TemporaryDirectory(prefix="tilelang-c-library-") as tmp:
        path = os.path.join(tmp, LIBRARY_FILE)
        source_module.export_library(path, options=shlex.split(cflags))
        with open(path, "rb") as f:
            data = f.read()
        return tvm.runtime.load_module(path), data


def c_library_codegen(kind: str, cflags: str = "-O3 -march=native") -> DeviceCodegen:
    """The device codegen of target kind `kind`: C source (kept as the kernel source) compiled with `cflags`."""

    def build(mod: Any, target: Any) -> DeviceBuild:
        from tilelang.backend.c_source import build as c_source

        source_module = c_source(mod, target)
        loaded, data = build_shared_library(source_module, cflags)
        return DeviceBuild(rt_mod=loaded, files={LIBRARY_FILE: data}, source=str(source_module.inspect_source()))

    return DeviceCodegen(kind, build=build)


class SharedLibraryBackend(ExecutionBackend):
    """Loads the kernel's shared library through TVM's runtime and calls the kernel symbol with torch tensors."""

    name = "shared_library"
    description = "the kernel's C shared library, loaded by the TVM runtime"

    def unavailable_reason(self) -> str | None:
        return None if c_compiler() is not None else "no C compiler (cc or gcc) on PATH"

    def load(self, artifact: Any) -> Any:
        rt_mod = artifact.rt_mod
        if rt_mod is None:  # rebuilt from a cache entry or a compile worker: only the library's bytes are there
            import tvm

            with tempfile.TemporaryDirectory(prefix="tilelang-c-library-") as tmp:
                path = os.path.join(tmp, LIBRARY_FILE)
                with open(path, "wb") as f:
                    f.write(artifact.files[LIBRARY_FILE])
                rt_mod = tvm.runtime.load_module(path)
        return rt_mod[artifact.name]
