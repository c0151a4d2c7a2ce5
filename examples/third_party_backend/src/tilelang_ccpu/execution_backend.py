"""Runs ``ccpu`` kernels: the compiled library's function called with torch CPU tensors (zero-copy)."""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

from tilelang.backend import ExecutionBackend


class SharedLibraryBackend(ExecutionBackend):
    """Loads the compiled C library through TVM's runtime and calls the kernel symbol."""

    name = "shared_library"
    description = "the kernel's C shared library, loaded by the TVM runtime"

    def unavailable_reason(self) -> str | None:
        if shutil.which("cc") is None and shutil.which("gcc") is None:
            return "no C compiler on PATH"
        return None

    def load(self, artifact: Any) -> Any:
        rt_mod = artifact.rt_mod
        if rt_mod is None:  # rebuilt from a cache entry: only the library bytes are there
            import tvm

            with tempfile.TemporaryDirectory(prefix="tilelang-ccpu-") as tmp:
                path = os.path.join(tmp, "kernel.so")
                with open(path, "wb") as f:
                    f.write(artifact.files["kernel.so"])
                rt_mod = tvm.runtime.load_module(path)
        return rt_mod[artifact.name]


EXECUTION_BACKENDS = [SharedLibraryBackend()]
