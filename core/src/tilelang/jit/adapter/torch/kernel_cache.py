"""The torch adapter's kernel cache (the shared `tilelang.cache.kernel_cache.KernelCache`)."""

from tilelang.cache.kernel_cache import KernelCache


class TorchKernelCache(KernelCache):
    kernel_lib_path = "kernel.metal"
