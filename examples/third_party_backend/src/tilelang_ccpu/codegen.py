"""C source from TVM's C codegen, compiled by the system compiler into a loadable shared library."""

from __future__ import annotations

import os
import shlex
import tempfile
from typing import Any

from tilelang.backend import DeviceBuild, DeviceCodegen


def build_shared_library(source_module: Any, cflags: str) -> tuple[Any, bytes]:
    """Compile a C source module to a shared library; returns ``(loaded module, library bytes)``."""
    import tvm

    with tempfile.TemporaryDirectory(prefix="tilelang-ccpu-") as tmp:
        path = os.path.join(tmp, "kernel.so")
        source_module.export_library(path, options=shlex.split(cflags))
        with open(path, "rb") as f:
            data = f.read()
        return tvm.runtime.load_module(path), data


def _build(mod: Any, target: Any) -> DeviceBuild:
    from tilelang.backend.c_source import build

    # TVM's C codegen, its output made compilable (C prelude: half, vector types, libm calls, INFINITY / NAN)
    source_module = build(mod, target)
    loaded, data = build_shared_library(source_module, "-O3 -march=native")
    # the library's bytes go into the artifact: the kernel cache and the autotuner's compile workers ship them
    return DeviceBuild(rt_mod=loaded, files={"kernel.so": data}, source=str(source_module.inspect_source()))


CCPU_CODEGEN = DeviceCodegen("ccpu", build=_build)
