"""The reference TileLang's ``tilelang.cache.kernel_cache``: `KernelCache`, the kernel cache's entry point.

This project's cache lives in `tilelang.cache.manager` (memory + `tilelang.cache.store.DiskStore`); this class
presents it under the reference's interface: `cached` compiles through it, `_get_cache_namespace` names the
directory that separates versions and platforms (``<version>/<platform>-<machine>``; the kernel store keys
entries by versions and the host CPU already, compilers' binary caches such as the CUDA one live under it),
`_get_cache_path` / `_load_kernel_from_disk` address entries by program key.
"""

from __future__ import annotations

import functools
import os
import platform
import re
import sys
from typing import Any

from tilelang import __version__  # noqa: F401 (read through the module by _get_cache_namespace)
from tilelang.jit.kernel import JITKernel

__all__ = ["KernelCache", "JITKernel"]


class KernelCache:
    """Facade over the process-wide kernel cache (`tilelang.cache.manager.kernel_cache`)."""

    device_kernel_path = "device_kernel.cu"
    host_kernel_path = "host_kernel.cu"
    kernel_lib_path = "kernel_lib.so"
    params_path = "params.pkl"

    _instance: KernelCache | None = None

    def __new__(cls) -> KernelCache:
        instance = cls.__dict__.get("_instance")
        if instance is None:
            instance = super().__new__(cls)
            cls._instance = instance
        return instance

    @staticmethod
    @functools.lru_cache(maxsize=1)
    def _get_cache_namespace() -> str:
        """``<version>/<platform>-<machine>``: caches of other versions, OSes and CPU kinds never mix."""
        public, _, local = str(sys.modules[__name__].__version__).partition("+")
        version = public + (f"_{local}" if local else "")
        version = re.sub(r"[^0-9A-Za-z.]+", "_", version.replace("+", "_"))
        version = re.sub(r"(?<=[A-Za-z_])\.|\.(?=[A-Za-z_])", "_", version)
        return os.path.join(version, f"{sys.platform}-{platform.machine()}")

    # ------------------------------------------------------------------------------------------ paths
    def _store(self) -> Any:
        from tilelang.cache.manager import kernel_cache

        return kernel_cache.store()

    def _get_cache_path(self, key: str) -> str:
        return str(self._store().entry_dir(key))

    def _get_staging_root(self) -> str:
        return str(self._store().tmp_dir)

    # ------------------------------------------------------------------------------------------ keys
    def _generate_key(self, func: Any, out_idx: Any, execution_backend: str = "tvm_ffi", args: Any = None,
                      target: Any = "auto", target_host: Any = None, pass_configs: dict[str, Any] | None = None,
                      compile_flags: Any = None) -> str:
        """The cache key of compiling `func` this way: the program's text (attributes and metadata included),
        the output indices, call arguments, target, host, execution backend, pass configs, compile flags and
        the versions of everything that lowers it (the same key `tilelang.compile` uses, plus out_idx/args)."""
        from tilelang.cache.keys import digest, program_text
        from tilelang.jit.compiler import CompileOptions

        options = CompileOptions(out_idx, target, target_host, execution_backend, pass_configs, compile_flags)
        resolved = options.resolved_target()
        out = tuple(out_idx) if isinstance(out_idx, (list, tuple)) else (out_idx,)
        return digest("program", program_text(func), options.fingerprint(resolved), list(out),
                      [repr(a) for a in (args or ())], execution_backend)

    # ------------------------------------------------------------------------------------------ compile
    def cached(self, func: Any = None, out_idx: Any = None, *args: Any, target: Any = "auto", target_host: Any = None,
               execution_backend: str = "auto", verbose: bool = False, pass_configs: dict[str, Any] | None = None,
               compile_flags: Any = None) -> JITKernel:
        """Compile `func` through the cache (memory, disk, or a real compile) and return its kernel."""
        from tilelang.cache import cached

        return cached(func, out_idx, *args, target=target, target_host=target_host,
                      execution_backend=execution_backend, verbose=verbose, pass_configs=pass_configs,
                      compile_flags=compile_flags)

    def _load_kernel_from_disk(self, key: str, backend_context: Any = None, out_idx: Any = None,
                               pass_configs: dict[str, Any] | None = None, compile_flags: Any = None,
                               func: Any = None, **_: Any) -> JITKernel | None:
        """The kernel stored under program key `key`, or None (a damaged entry is removed and is a miss)."""
        from tilelang.jit.compiler import CompileOptions, kernel_from_cache

        target, host = "auto", None
        if backend_context is not None:
            target, host = backend_context.target, backend_context.target_host
        options = CompileOptions(out_idx=out_idx, target=target, target_host=host, pass_configs=pass_configs,
                                 compile_flags=compile_flags)
        try:
            return kernel_from_cache(key, options, options.resolved_target(), prim_func=func)
        except Exception:
            store = self._store()
            store._discard(store.entry_dir(key))
            return None

    def clear_cache(self) -> None:
        from tilelang.cache import clear_cache

        clear_cache()
