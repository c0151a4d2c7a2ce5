"""The ``tilelang`` logger: one handler that writes through tqdm (log lines do not break progress bars).

Level: ``TILELANG_LOG_LEVEL`` (DEBUG, INFO, WARNING, ...) when set, else INFO under ``TILELANG_VERBOSE=1``,
else WARNING; `set_log_level` changes it at run time. Records do not propagate to the root logger (as in the
reference TileLang); set ``logging.getLogger("tilelang").propagate = True`` to route them to your own handlers.
"""

from __future__ import annotations

import logging
import sys

__all__ = ["set_log_level", "TqdmLoggingHandler", "logger"]

logger = logging.getLogger("tilelang")


class TqdmLoggingHandler(logging.Handler):
    """Writes records with ``tqdm.write`` (to stderr) when tqdm is installed, else straight to stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = self.format(record)
            try:
                from tqdm.auto import tqdm
            except ImportError:
                sys.stderr.write(message + "\n")
            else:
                tqdm.write(message, file=sys.stderr)
        except Exception:
            self.handleError(record)


def set_log_level(level: int | str) -> None:
    """Set the level of the ``tilelang`` logger (a name such as ``"DEBUG"`` or a `logging` constant)."""
    if isinstance(level, str):
        name = level.strip().upper()
        value = logging.getLevelName(name)
        if not isinstance(value, int):
            raise ValueError(f"unknown log level {level!r}; use DEBUG, INFO, WARNING, ERROR or CRITICAL")
        level = value
    logger.setLevel(level)


def _install() -> None:
    if any(isinstance(h, TqdmLoggingHandler) for h in logger.handlers):
        return
    handler = TqdmLoggingHandler()
    handler.setFormatter(logging.Formatter(
        fmt="%(asctime)s  [TileLang:%(name)s:%(levelname)s]: %(message)s", datefmt="%Y-%m-%d %H:%M:%S"))
    logger.addHandler(handler)
    logger.propagate = False
    from tilelang.env import env

    level = env.log_level()
    try:
        set_log_level(level or ("INFO" if env.verbose() else "WARNING"))
    except ValueError:
        set_log_level("WARNING")
        logger.warning("TILELANG_LOG_LEVEL=%r is not a log level; using WARNING", level)


_install()
