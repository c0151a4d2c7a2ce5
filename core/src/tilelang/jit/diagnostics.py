"""JIT phase diagnostics: ``with jit_phase("lower", kernel=..., target=...)`` logs start / done / failed.

Enabled by ``TILELANG_JIT_DIAGNOSTICS=1`` (or ``enabled=True`` / ``verbose=True``); silent otherwise. Records go
to the ``tilelang.jit.diagnostics`` logger at INFO (failures with the traceback); the exception is re-raised.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator

from tilelang.env import env

__all__ = ["jit_phase", "diagnostics_enabled"]

logger = logging.getLogger("tilelang.jit.diagnostics")


def diagnostics_enabled(*, verbose: bool = False) -> bool:
    """Whether JIT phases are logged (`verbose`, or ``TILELANG_JIT_DIAGNOSTICS``)."""
    return bool(verbose) or env.is_jit_diagnostics_enabled()


def _context(context: dict[str, object]) -> str:
    return "".join(f" {k}={v!r}," for k, v in sorted(context.items())).rstrip(",")


@contextlib.contextmanager
def jit_phase(name: str, *, enabled: bool | None = None, verbose: bool = False, **context: object) -> Iterator[None]:
    """Log the start, the end (with its duration) or the failure of JIT phase `name` with `context`."""
    if enabled is None:
        enabled = diagnostics_enabled(verbose=verbose)
    if not enabled:
        yield
        return
    where = _context(context)
    start = time.monotonic()
    logger.info("TileLang JIT phase start: %s%s", name, where)
    try:
        yield
    except BaseException:
        logger.exception("TileLang JIT phase failed: %s elapsed=%.3fs%s", name, time.monotonic() - start, where)
        raise
    logger.info("TileLang JIT phase done: %s elapsed=%.3fs%s", name, time.monotonic() - start, where)
