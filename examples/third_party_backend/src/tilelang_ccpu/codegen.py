"""The ``ccpu`` device codegen: TVM's C output, made compilable, built by the system compiler into a shared library
(core's `tilelang.backend.c_library`)."""

from __future__ import annotations

from tilelang.backend.sdk import c_library_codegen

CCPU_CODEGEN = c_library_codegen("ccpu", cflags="-O3 -march=native")
