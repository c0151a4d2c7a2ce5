"""IKET sessions: the CUDA post-processing callback that defines the event macros, and its lifetime.

`enable` registers the ``tilelang_callback_cuda_postproc`` TVM global function (remembering any previous one);
enables nest, and the previous callback comes back when the last `disable` runs (an absent one stays absent).
`session` wraps that for a ``with`` block and also sets the export directory, runtime payloads and disables the
kernel cache (an instrumented kernel must not be served from, or stored into, the cache), restoring all of it
on exit -- also when entering fails.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from tilelang_cuda.tools.iket.cli import _restore_output_dir, _snapshot_output_dir, set_output_dir
from tilelang_cuda.tools.iket.frontend import reset

__all__ = ["disable", "disable_runtime_payloads", "enable", "enable_runtime_payloads", "is_enabled",
           "runtime_payloads_enabled", "session"]

_CALLBACK = "tilelang_callback_cuda_postproc"


class _State:
    lock = threading.RLock()
    depth = 0
    previous: Any = None
    payloads = False


def enable_runtime_payloads() -> None:
    """Record payload values at run time in kernels compiled from now on."""
    with _State.lock:
        _State.payloads = True


def disable_runtime_payloads() -> None:
    """Compile payload events as plain events (the metadata still names the payload type)."""
    with _State.lock:
        _State.payloads = False


def runtime_payloads_enabled() -> bool:
    with _State.lock:
        return _State.payloads


def _postprocess(code: str, target: Any) -> str:
    from tilelang_cuda.tools.iket.codegen import inject_iket_cuda

    return inject_iket_cuda(code, target, runtime_payloads=runtime_payloads_enabled())


def enable(*, override: bool = True) -> None:
    """Instrument the CUDA source of later compilations (nestable; see the module docstring)."""
    import tvm_ffi

    with _State.lock:
        if _State.depth:
            _State.depth += 1
            return
        previous = tvm_ffi.get_global_func(_CALLBACK, allow_missing=True)
        tvm_ffi.register_global_func(_CALLBACK, f=_postprocess, override=override)
        _State.previous, _State.depth = previous, 1


def disable(*, restore: bool = True) -> None:
    """Close one `enable`; the last one reinstates the previous callback (`restore`) or removes the callback."""
    import tvm_ffi

    with _State.lock:
        if not _State.depth:
            return
        _State.depth -= 1
        if _State.depth:
            return
        previous, _State.previous = _State.previous, None
        if restore and previous is not None:
            tvm_ffi.register_global_func(_CALLBACK, f=previous, override=True)
        else:
            tvm_ffi.remove_global_func(_CALLBACK)


def is_enabled() -> bool:
    with _State.lock:
        return _State.depth > 0


class _Session:
    """The context manager `session` returns (one object can be active once at a time)."""

    def __init__(self, *, reset_events: bool, override: bool, disable_on_exit: bool,
                 output_dir: str | os.PathLike[str] | None, runtime_payloads: bool | None,
                 disable_cache: bool) -> None:
        self.reset_events = reset_events
        self.override = override
        self.disable_on_exit = disable_on_exit
        self.output_dir = output_dir
        self.runtime_payloads = runtime_payloads
        self.disable_cache = disable_cache
        self._active = False
        self._enabled_here = False
        self._saved: tuple[Any, ...] = ()

    def __enter__(self) -> _Session:
        from tilelang.env import CacheState, disable_cache

        if self._active:
            raise RuntimeError("An IKET session object cannot be entered more than once at a time")
        self._saved = (_snapshot_output_dir(), runtime_payloads_enabled(), CacheState.is_enabled())
        try:
            if self.output_dir is not None:
                set_output_dir(self.output_dir)
            if self.runtime_payloads is not None:
                (enable_runtime_payloads if self.runtime_payloads else disable_runtime_payloads)()
            if self.disable_cache:
                disable_cache()
            enable(override=self.override)
            self._enabled_here = True
            if self.reset_events:
                reset()
        except BaseException:
            self._leave(restore_callback=True)
            raise
        self._active = True
        return self

    def __exit__(self, *exc: Any) -> bool:
        self._leave(restore_callback=self.disable_on_exit)
        return False

    def _leave(self, *, restore_callback: bool) -> None:
        from tilelang.env import disable_cache, enable_cache

        try:
            if restore_callback and self._enabled_here:
                disable(restore=True)
        finally:
            self._enabled_here = False
            self._active = False
            (out_dir, out_env), payloads, cache_on = self._saved
            _restore_output_dir(out_dir, out_env)
            (enable_runtime_payloads if payloads else disable_runtime_payloads)()
            if self.disable_cache:
                (enable_cache if cache_on else disable_cache)()


def session(*, reset_events: bool = True, override: bool = True, disable_on_exit: bool = True,
            output_dir: str | os.PathLike[str] | None = None, runtime_payloads: bool | None = None,
            disable_cache: bool = True) -> _Session:
    """A ``with`` scope for building and compiling instrumented kernels (see the module docstring)."""
    return _Session(reset_events=reset_events, override=override, disable_on_exit=disable_on_exit,
                    output_dir=output_dir, runtime_payloads=runtime_payloads, disable_cache=disable_cache)
