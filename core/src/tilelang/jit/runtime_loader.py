"""Load compiled kernels through TVM's runtime without importing the TVM compiler package.

``import tvm`` costs seconds; a cached kernel only needs ``tvm_ffi`` (the FFI and module loader) plus
``libtvm_runtime`` (thread pool and the other context symbols generated code calls, e.g.
``TVMBackendParallelLaunch``). This module loads exactly those:

- `import_tvm_ffi` imports ``tvm_ffi`` without ``ml_dtypes`` when neither is imported yet: ``tvm_ffi`` imports it
  only to map numpy's ml_dtypes (bfloat16/fp8 numpy arrays) and it costs ~1 s here. Tensors still travel
  through DLPack; TVM itself imports ml_dtypes when it is needed. ``TILELANG_FFI_ML_DTYPES=1`` keeps the eager
  import.
- `load_runtime` dlopens ``libtvm_runtime`` (RTLD_GLOBAL, the same file ``import tvm`` loads later) after
  setting ``TVM_NUM_THREADS`` (TVM's pool otherwise uses one thread on many machines; see `tilelang.env`).
- `runtime_libraries` does the same without the ``tvm_ffi`` Python package: ``libtvm_ffi`` and ``libtvm_runtime``
  as ctypes libraries, for a backend that calls a kernel library through TVM-FFI's C ABI directly
  (``tilelang_cpu.direct_call``); importing ``tvm_ffi`` later finds the same ``libtvm_ffi`` loaded.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import os
import sys
import threading
from pathlib import Path
from typing import Any

from tilelang import env

__all__ = ["import_tvm_ffi", "load_runtime", "load_module", "runtime_library_path", "configure_threads",
           "ffi_library_path", "runtime_libraries"]

_lock = threading.Lock()
_runtime_handle: Any = None
_ffi_handle: Any = None


def import_tvm_ffi() -> Any:
    """``tvm_ffi``, imported quickly (see the module docstring)."""
    module = sys.modules.get("tvm_ffi")
    if module is not None:
        return module
    skip = ("ml_dtypes" not in sys.modules and "tvm" not in sys.modules
            and os.environ.get("TILELANG_FFI_ML_DTYPES", "").strip() != "1")
    if not skip:
        import tvm_ffi

        return tvm_ffi
    with _lock:
        sys.modules["ml_dtypes"] = None  # type: ignore[assignment]  # makes `import ml_dtypes` raise ImportError
        try:
            import tvm_ffi
        finally:
            if sys.modules.get("ml_dtypes", 0) is None:
                del sys.modules["ml_dtypes"]
    return tvm_ffi


@functools.cache
def runtime_library_path() -> Path:
    """Where ``libtvm_runtime`` is (``TVM_LIBRARY_PATH`` first, as TVM searches), found without importing tvm."""
    names = {"linux": "libtvm_runtime.so", "darwin": "libtvm_runtime.dylib", "win32": "tvm_runtime.dll"}
    name = names.get(sys.platform, "libtvm_runtime.so")
    candidates = []
    if os.environ.get("TVM_LIBRARY_PATH"):
        candidates.append(Path(os.environ["TVM_LIBRARY_PATH"]) / name)
    spec = importlib.util.find_spec("tvm")
    if spec is not None and spec.origin:
        candidates.append(Path(spec.origin).parent / "lib" / name)
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"cannot find {name} (looked in: {', '.join(map(str, candidates)) or 'no tvm package found'}); "
        "install apache-tvm or set TVM_LIBRARY_PATH"
    )


def configure_threads() -> int:
    """Set ``TVM_NUM_THREADS`` for TVM's thread pool (read when the pool starts) and return the count."""
    threads = env.num_threads()
    os.environ["TVM_NUM_THREADS"] = str(threads)
    return threads


def _open_runtime() -> Any:
    """``libtvm_runtime`` (once per process; ``libtvm_ffi`` must be loaded first), after `configure_threads`."""
    global _runtime_handle
    if _runtime_handle is None:
        with _lock:
            if _runtime_handle is None:
                configure_threads()
                base = sys.modules.get("tvm.base")
                loaded = getattr(base, "_LOADED_LIBS", {}).get("tvm_runtime") if base is not None else None
                _runtime_handle = loaded or ctypes.CDLL(str(runtime_library_path()), mode=ctypes.RTLD_GLOBAL)
    return _runtime_handle


def load_runtime() -> Any:
    """Make TVM's runtime usable for generated kernels (once per process); returns ``tvm_ffi``."""
    tvm_ffi = import_tvm_ffi()
    _open_runtime()
    return tvm_ffi


@functools.cache
def ffi_library_path() -> Path:
    """Where ``libtvm_ffi`` is (the ``tvm_ffi`` package's ``lib`` folder), found without importing it."""
    names = {"linux": "libtvm_ffi.so", "darwin": "libtvm_ffi.dylib", "win32": "tvm_ffi.dll"}
    spec = importlib.util.find_spec("tvm_ffi")
    if spec is None or not spec.origin:
        raise FileNotFoundError("the tvm_ffi package is not installed (pip install apache-tvm-ffi)")
    path = Path(spec.origin).parent / "lib" / names.get(sys.platform, "libtvm_ffi.so")
    if not path.is_file():
        raise FileNotFoundError(f"cannot find {path.name} in {path.parent}")
    return path


def runtime_libraries() -> tuple[Any, Any]:
    """``(libtvm_ffi, libtvm_runtime)`` as ctypes libraries loaded RTLD_GLOBAL, without importing the ``tvm_ffi``
    package (once per process; raises FileNotFoundError when either is missing)."""
    global _ffi_handle
    if _ffi_handle is None:
        with _lock:
            if _ffi_handle is None:
                _ffi_handle = ctypes.CDLL(str(ffi_library_path()), mode=ctypes.RTLD_GLOBAL)
    return _ffi_handle, _open_runtime()


def load_module(path: str | os.PathLike[str]) -> Any:
    """Load an exported kernel library (``export_library`` output) as a ``tvm_ffi.Module``."""
    return load_runtime().load_module(os.fspath(path))
