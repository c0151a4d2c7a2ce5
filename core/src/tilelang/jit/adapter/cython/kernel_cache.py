"""The cython adapter's kernel cache (the shared `tilelang.cache.kernel_cache.KernelCache`)."""

from tilelang.cache.kernel_cache import KernelCache


class CythonKernelCache(KernelCache):
    kernel_lib_path = "kernel_lib.so"
