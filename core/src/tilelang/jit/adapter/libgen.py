"""`LibraryGenerator`: compiles a kernel's C/C++ source into a shared library and loads it."""

from __future__ import annotations

import os
import tempfile
from typing import Any

__all__ = ["LibraryGenerator"]


class LibraryGenerator:
    """``update_lib_code(code)``, ``compile_lib()``, ``load_lib()``; `libpath` is the built library."""

    def __init__(self, target: Any, verbose: bool = False):
        self.target = target
        self.verbose = verbose
        self.lib_code: str | None = None
        self.libpath: str | None = None
        self.lib: Any = None
        self.compile_flags: list[str] = []

    def assign_compile_flags(self, compile_flags: list[str] | str | None) -> None:
        if compile_flags is None:
            self.compile_flags = []
        else:
            self.compile_flags = [compile_flags] if isinstance(compile_flags, str) else list(compile_flags)

    def update_lib_code(self, lib_code: str) -> None:
        self.lib_code = lib_code

    def compile_lib(self, timeout: float | None = None) -> str:
        """Build `lib_code` into a shared library (the system C compiler via `tilelang.contrib.cc`)."""
        if self.lib_code is None:
            raise ValueError("LibraryGenerator.compile_lib: no code; call update_lib_code first")
        from tilelang.contrib import cc
        from tilelang.env import env

        tmp = env.tmp_dir()
        tmp.mkdir(parents=True, exist_ok=True)
        fd, src = tempfile.mkstemp(suffix=".c", dir=tmp)
        with os.fdopen(fd, "w") as f:
            f.write(self.lib_code)
        out = src[:-2] + ".so"
        cc.create_shared(out, [src], options=["-O3", "-fPIC", *self.compile_flags])
        self.libpath = out
        return out

    def load_lib(self, lib_path: str | None = None) -> Any:
        import ctypes

        path = lib_path or self.libpath
        if path is None:
            raise ValueError("LibraryGenerator.load_lib: no library built or given")
        self.libpath = path
        self.lib = ctypes.CDLL(path)
        return self.lib

    def get_source_path(self) -> str | None:
        return self.libpath
