"""Environment variables TileLang reads, each through one function (read at call time, never cached).

| variable | meaning | default |
|---|---|---|
| ``TILELANG_CACHE_DIR`` | root of the on-disk kernel cache | ``~/.tilelang/cache`` |
| ``TILELANG_DISABLE_CACHE`` | ``1`` turns the kernel cache (memory and disk) off | off |
| ``TILELANG_DEFAULT_TARGET`` | target used for ``target="auto"`` | detected |
| ``TILELANG_EXECUTION_BACKEND`` | execution backend used for ``execution_backend="auto"`` | first available |
| ``TILELANG_NUM_THREADS`` | CPU threads of TVM's runtime (sets ``TVM_NUM_THREADS``) | all usable cores |
| ``TILELANG_AUTOTUNE_WORKERS`` | processes compiling autotuning candidates | usable cores |
| ``TILELANG_VERBOSE`` | ``1`` logs compilations and cache decisions | off |
| ``TILELANG_CACHE_WRITE_DELAY`` | test hook: seconds to sleep between the files of a cache write | 0 |
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "cache_dir", "cache_disabled", "default_target", "execution_backend", "num_threads", "autotune_workers",
    "verbose", "cache_write_delay", "usable_cores",
]

_TRUE = {"1", "true", "yes", "on"}


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


def cache_dir() -> Path:
    """The kernel cache root (``TILELANG_CACHE_DIR``, default ``~/.tilelang/cache``)."""
    value = os.environ.get("TILELANG_CACHE_DIR", "").strip()
    return Path(value).expanduser() if value else Path.home() / ".tilelang" / "cache"


def cache_disabled() -> bool:
    """Whether ``TILELANG_DISABLE_CACHE`` turns the kernel cache off."""
    return _flag("TILELANG_DISABLE_CACHE")


def default_target() -> str | None:
    """``TILELANG_DEFAULT_TARGET`` when set (and not "auto")."""
    value = os.environ.get("TILELANG_DEFAULT_TARGET", "").strip()
    return value if value and value != "auto" else None


def execution_backend() -> str:
    """``TILELANG_EXECUTION_BACKEND`` or ``"auto"``."""
    return os.environ.get("TILELANG_EXECUTION_BACKEND", "").strip() or "auto"


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity where the OS reports one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _positive_int(name: str) -> int | None:
    value = os.environ.get(name, "").strip()
    if not value:
        return None
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"{name}={value!r} is not an integer") from None
    if number < 1:
        raise ValueError(f"{name}={value!r} must be at least 1")
    return number


def num_threads() -> int:
    """Threads for CPU kernels: ``TILELANG_NUM_THREADS``, else ``TVM_NUM_THREADS``, else every usable core."""
    return _positive_int("TILELANG_NUM_THREADS") or _positive_int("TVM_NUM_THREADS") or usable_cores()


def autotune_workers() -> int:
    """Processes that compile autotuning candidates (``TILELANG_AUTOTUNE_WORKERS``, default the usable cores)."""
    return _positive_int("TILELANG_AUTOTUNE_WORKERS") or usable_cores()


def verbose() -> bool:
    """Whether ``TILELANG_VERBOSE`` asks for compilation and cache logging."""
    return _flag("TILELANG_VERBOSE")


def cache_write_delay() -> float:
    """Test hook ``TILELANG_CACHE_WRITE_DELAY``: seconds to sleep between the files of one cache write."""
    value = os.environ.get("TILELANG_CACHE_WRITE_DELAY", "").strip()
    return float(value) if value else 0.0
