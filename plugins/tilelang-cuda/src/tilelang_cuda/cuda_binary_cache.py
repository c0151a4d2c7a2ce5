"""`CUDABinaryCache`: compiled CUDA device binaries (cubin / fatbin) on disk, apart from host artifacts.

A device binary depends on the source, the target (arch and code list), the output format and every compiler
option (``--use_fast_math`` changes the SASS, not the source), never on the host: entries live at
``<TILELANG_CACHE_DIR>/<version>/cuda-binaries/<key>.<format>``, where ``<version>`` is the version part of
`tilelang.cache.kernel_cache.KernelCache._get_cache_namespace` (host executables add the platform below it), so
hosts sharing a cache directory share binaries. ``TILELANG_KERNEL_CACHE_USE_LIB_STAMP=1`` adds a hash of the
native TileLang/TVM libraries to the key. Writes are atomic (a host-qualified temporary under the cache's
``tmp/``, ``fsync``, rename); a hit marks the file as used for LRU eviction (``TILELANG_CACHE_MAX_BYTES``,
`tilelang.cache.usage`); the cache is skipped while caching is disabled.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from tilelang.env import env

__all__ = ["CUDABinaryCache"]


def _tilelang_version() -> str:
    from tilelang import __version__

    return str(__version__)


class CUDABinaryCache:
    """Class-level API: `make_key`, `get_path`, `load`, `save`."""

    cache_root_dir = "cuda-binaries"

    @classmethod
    def _version_namespace(cls) -> str:
        """The version directory shared with the kernel cache's namespace (its first component)."""
        from tilelang.cache import KernelCache

        namespace = os.path.normpath(KernelCache._get_cache_namespace())
        return namespace.split(os.sep)[0]

    @classmethod
    def _get_namespace_root(cls) -> str:
        return os.path.join(str(env.cache_dir()), cls._version_namespace())

    @classmethod
    def _get_cache_root(cls) -> str:
        return os.path.join(cls._get_namespace_root(), cls.cache_root_dir)

    @staticmethod
    @functools.cache
    def _get_tilelang_lib_stamp() -> str | None:
        """A hash of the native libraries the binaries were produced with (TVM's runtime and compiler, TVM
        FFI), or None when none is found."""
        names = {"win32": ("tvm_runtime.dll", "tvm_compiler.dll", "tvm_ffi.dll", "tvm.dll"),
                 "darwin": ("libtvm_runtime.dylib", "libtvm_compiler.dylib", "libtvm_ffi.dylib", "libtvm.dylib")}
        wanted = names.get(sys.platform, ("libtvm_runtime.so", "libtvm_compiler.so", "libtvm_ffi.so", "libtvm.so"))
        dirs = []
        for package in ("tvm", "tvm_ffi"):
            module = sys.modules.get(package)
            if module is not None and getattr(module, "__file__", None):
                root = os.path.dirname(module.__file__)
                dirs += [root, os.path.join(root, "lib")]
        stamps = []
        seen = set()
        for directory in dirs:
            for name in wanted:
                path = os.path.join(directory, name)
                if name in seen or not os.path.exists(path):
                    continue
                digest = hashlib.sha256()
                with open(path, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        digest.update(chunk)
                stamps.append(f"{name}:{digest.hexdigest()}")
                seen.add(name)
        return "|".join(stamps) or None

    @classmethod
    def make_key(cls, *, code: str, target_kind: str, target_arch: str, target_code: list[str],
                 compile_format: str, options: list[str] | None = None) -> str:
        """The hex key of one compile: version, source hash, the plugin's helper headers, target, format and every
        option."""
        from tilelang_cuda.intrinsics.device import headers_digest

        data: dict[str, Any] = {
            "tilelang_version": _tilelang_version(),
            "code_hash": hashlib.sha256(code.encode()).hexdigest(),
            "target_kind": target_kind,
            "target_arch": target_arch,
            "target_code": list(target_code),
            "compile_format": compile_format,
            "options": list(options or []),
            "helper_headers": headers_digest(),  # the tilelang_cuda/*.cuh the source includes
        }
        if env.should_use_kernel_cache_lib_stamp():
            stamp = cls._get_tilelang_lib_stamp()
            if stamp:
                data["tilelang_lib"] = stamp
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()

    @classmethod
    def get_path(cls, key: str, compile_format: str) -> str:
        return os.path.join(cls._get_cache_root(), f"{key}.{compile_format}")

    @classmethod
    def load(cls, key: str, compile_format: str) -> bytes | None:
        """The cached binary, or None (a miss, or caching disabled); a hit marks the file as just used."""
        if not env.is_cache_enabled():
            return None
        path = cls.get_path(key, compile_format)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return None  # absent, or evicted by another process
        now = time.time_ns()
        try:
            os.utime(path, ns=(now, now))
        except OSError:
            pass
        return data

    @classmethod
    def save(cls, key: str, compile_format: str, data: bytes) -> None:
        """Store `data` atomically (a host-qualified temporary, ``fsync``, rename; nothing while caching is
        disabled), then keep the cache within ``TILELANG_CACHE_MAX_BYTES``."""
        if not env.is_cache_enabled():
            return
        from tilelang.backend.sdk import DiskStore, write_atomic

        limit = env.cache_max_bytes()  # a malformed value is reported before anything is written
        store = DiskStore(env.cache_dir())
        path = cls.get_path(key, compile_format)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        store.collect_garbage()
        write_atomic(path, bytes(data), tmp_dir=store.tmp_dir)
        if limit is not None:
            from tilelang.backend.sdk import enforce_limit

            enforce_limit(store, limit, keep=Path(path))
