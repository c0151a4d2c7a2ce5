"""Runs ``ccpu`` kernels: the compiled library's function called with torch CPU tensors (zero-copy)."""

from __future__ import annotations

from tilelang.backend.c_library import SharedLibraryBackend

EXECUTION_BACKENDS = [SharedLibraryBackend()]
