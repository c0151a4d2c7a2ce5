"""Compile phase timing: ``with jit_phase("lower", kernel=..., target=...)`` times one phase of a compilation.

Each phase is logged to the ``tilelang.jit.diagnostics`` logger:

- at DEBUG (``tilelang.set_log_level("DEBUG")`` or ``TILELANG_LOG_LEVEL=DEBUG``): one line when it ends, with
  its duration (``phase lower: 0.412 s kernel='matmul'``), or when it fails;
- with ``TILELANG_JIT_DIAGNOSTICS=1`` (or ``verbose=True``): its start, end and failure (with the traceback) at INFO.

The phases of a JIT compilation: ``parse`` (the front end builds the PrimFunc), ``cache.lookup``, ``lower``
(with, inside it, one ``passes`` phase per pipeline run and one ``codegen`` phase per code generator, timed by
`phase_timing_tool` at the compile session's boundaries), ``load`` (the execution backend loads the kernel) and
``cache.store``; ``cache.compile`` spans lowering and loading. `log_slow_compile` writes the one INFO line of a
compilation that took longer than `SLOW_COMPILE_SECONDS`.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

from tilelang.env import env

__all__ = ["jit_phase", "diagnostics_enabled", "phase_timing_tool", "log_slow_compile", "SLOW_COMPILE_SECONDS"]

logger = logging.getLogger("tilelang.jit.diagnostics")

SLOW_COMPILE_SECONDS = 2.0


def diagnostics_enabled(*, verbose: bool = False) -> bool:
    """Whether JIT phases are logged at INFO (`verbose`, or ``TILELANG_JIT_DIAGNOSTICS``)."""
    return bool(verbose) or env.is_jit_diagnostics_enabled()


def _context(context: dict[str, object]) -> str:
    return "".join(f" {k}={v!r}," for k, v in sorted(context.items())).rstrip(",")


@contextlib.contextmanager
def jit_phase(name: str, *, enabled: bool | None = None, verbose: bool = False, **context: object) -> Iterator[None]:
    """Time JIT phase `name` and log it (see the module docstring); `context` is shown with it."""
    if enabled is None:
        enabled = diagnostics_enabled(verbose=verbose)
    debug = logger.isEnabledFor(logging.DEBUG)
    if not enabled and not debug:
        yield
        return
    where = _context(context)
    start = time.monotonic()
    if enabled:
        logger.info("TileLang JIT phase start: %s%s", name, where, stacklevel=3)
    try:
        yield
    except BaseException:
        elapsed = time.monotonic() - start
        if enabled:
            logger.exception("TileLang JIT phase failed: %s elapsed=%.3fs%s", name, elapsed, where, stacklevel=3)
        else:
            logger.debug("phase %s failed after %.3f s%s", name, elapsed, where, stacklevel=3)
        raise
    elapsed = time.monotonic() - start
    if enabled:
        logger.info("TileLang JIT phase done: %s elapsed=%.3fs%s", name, elapsed, where, stacklevel=3)
    else:
        logger.debug("phase %s: %.3f s%s", name, elapsed, where, stacklevel=3)


def log_slow_compile(name: str, kind: Any, seconds: float) -> None:
    """The INFO line of a compilation that took longer than `SLOW_COMPILE_SECONDS` (nothing for a faster one)."""
    if seconds > SLOW_COMPILE_SECONDS:
        logging.getLogger("tilelang.jit").info("compiling %s for %s took %.1f s", name, kind, seconds, stacklevel=2)


def phase_timing_tool() -> Any:
    """A `PhaseTimingTool` for a new compile session when phases are logged (DEBUG or diagnostics), else None."""
    if not (diagnostics_enabled() or logger.isEnabledFor(logging.DEBUG)):
        return None
    return _phase_timing_tool_class()()


@functools.cache
def _phase_timing_tool_class() -> type:
    from tilelang.instrumentation import PassInstrumentationTool  # imports TVM: only when a compile needs it

    class PhaseTimingTool(PassInstrumentationTool):
        """Times the phases inside lowering at the compile session's boundaries: each pass-pipeline run
        (``passes``) and each code generator (``codegen``)."""

        @contextlib.contextmanager
        def pipeline_scope(self, base_phase: str) -> Iterator[None]:
            with jit_phase("passes", pipeline=base_phase):
                yield

        def run_codegen(self, event: Any, next_call: Callable[[], Any]) -> Any:
            with jit_phase("codegen", codegen=event.name):
                return next_call()

    return PhaseTimingTool
