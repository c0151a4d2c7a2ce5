"""Runs ``ccpu`` kernels: the compiled library's function called with torch CPU tensors (zero-copy)."""

from __future__ import annotations

from tilelang.backend.sdk import SharedLibraryBackend

EXECUTION_BACKENDS = [SharedLibraryBackend()]
