"""Per-execution-backend kernel caches of the reference: each names the files it keeps; all share
`tilelang.cache.kernel_cache.KernelCache` (this project stores one artifact per program for every backend)."""

from __future__ import annotations

from tilelang.cache.kernel_cache import KernelCache

__all__ = ["TVMFFIKernelCache"]


class TVMFFIKernelCache(KernelCache):
    kernel_lib_path = "executable.so"
