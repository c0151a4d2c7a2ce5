"""The kernel cache: compiled kernels in memory and on disk under ``TILELANG_CACHE_DIR`` (``~/.tilelang/cache``).

Keys cover the program, the call arguments, the target (with a host-CPU fingerprint when no ``mcpu`` is
given), pass configs, compile flags, the versions of core, plugins and TVM, and a digest of the installed source
trees of core and the target's plugins, so that an edited pass invalidates what it lowered (`tilelang.cache.keys`).
Writes are atomic and crash-safe, also in a directory shared by several hosts (`tilelang.cache.store`,
`tilelang.cache.atomic`). ``TILELANG_CACHE_MAX_BYTES`` bounds its size by LRU eviction (`tilelang.cache.usage`);
``tilelang cache info|clear`` inspects and empties it (`tilelang.cache.commands`). ``TILELANG_DISABLE_CACHE=1``
or `disable_cache` turns it off.
"""

from __future__ import annotations

from typing import Any

from tilelang.cache.kernel_cache import KernelCache
from tilelang.cache.manager import kernel_cache as _kernel_cache

__all__ = ["cached", "disable_cache", "enable_cache", "clear_cache", "is_cache_enabled", "KernelCache"]


def __getattr__(name: str) -> Any:
    if name == "_dispatch_map":  # the reference's per-execution-backend cache objects (all share one store here)
        from tilelang.jit.adapter.cython.kernel_cache import CythonKernelCache
        from tilelang.jit.adapter.kernel_cache import TVMFFIKernelCache
        from tilelang.jit.adapter.torch.kernel_cache import TorchKernelCache

        found = {"tvm_ffi": TVMFFIKernelCache(), "cython": CythonKernelCache(), "torch": TorchKernelCache()}
        for name_, path in (("nvrtc", "tilelang.jit.adapter.nvrtc.kernel_cache:NVRTCKernelCache"),
                            ("cutedsl", "tilelang.jit.adapter.cutedsl.kernel_cache:CuTeDSLKernelCache")):
            try:
                from tilelang.backend._registry import import_object

                found[name_] = import_object(path)()
            except Exception:
                found[name_] = KernelCache()
        return found
    raise AttributeError(f"module 'tilelang.cache' has no attribute {name!r}")


def cached(func: Any = None, out_idx: Any = None, *args: Any, target: Any = "auto", target_host: Any = None,
           execution_backend: str = "auto", verbose: bool = False, pass_configs: dict[str, Any] | None = None,
           compile_flags: Any = None) -> Any:
    """Compile `func` (a PrimFunc) through the cache and return its `JITKernel` (reference-compatible)."""
    from tilelang.jit import compile as jit_compile

    if args:
        raise TypeError("cached() takes no extra positional arguments besides func and out_idx")
    return jit_compile(func, out_idx=out_idx, target=target, target_host=target_host,
                       execution_backend=execution_backend, verbose=verbose, pass_configs=pass_configs,
                       compile_flags=compile_flags)


def disable_cache() -> None:
    """Turn the kernel cache off in this process (memory and disk)."""
    _kernel_cache.disable()


def enable_cache() -> None:
    """Turn the kernel cache back on (``TILELANG_DISABLE_CACHE`` still wins)."""
    _kernel_cache.enable()


def clear_cache() -> None:
    """Forget cached kernels in memory and delete the on-disk cache."""
    _kernel_cache.clear()


def is_cache_enabled() -> bool:
    """Whether compiled kernels are looked up in and stored to the cache."""
    return _kernel_cache.enabled
