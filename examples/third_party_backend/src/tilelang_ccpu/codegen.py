"""C source from TVM's C codegen, compiled by the system compiler into a loadable shared library."""

from __future__ import annotations

import os
import shlex
import tempfile
from typing import Any

from tilelang.backend import DeviceCodegen


def build_shared_library(source_module: Any, cflags: str) -> tuple[Any, bytes]:
    """Compile a C source module to a shared library; returns ``(loaded module, library bytes)``."""
    import tvm

    with tempfile.TemporaryDirectory(prefix="tilelang-ccpu-") as tmp:
        path = os.path.join(tmp, "kernel.so")
        source_module.export_library(path, options=shlex.split(cflags))
        with open(path, "rb") as f:
            data = f.read()
        return tvm.runtime.load_module(path), data


def _build(mod: Any, target: Any) -> Any:
    import tvm_ffi

    source_module = tvm_ffi.get_global_func("target.build.c")(mod, target)
    loaded, _ = build_shared_library(source_module, "-O3 -march=native")
    return loaded


CCPU_CODEGEN = DeviceCodegen("ccpu", build=_build)
