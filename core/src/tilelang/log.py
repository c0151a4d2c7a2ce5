"""The ``tilelang`` logger: one handler that writes through tqdm (log lines do not break progress bars).

Level of the ``tilelang`` logger, decided at import (`configured_level`):

- ``TILELANG_LOG_LEVEL`` when set: a level name (DEBUG, INFO, WARNING, ERROR, CRITICAL) or a number;
- else INFO under ``TILELANG_VERBOSE=1`` (the reference's switch for compilation and cache messages);
- else WARNING.

`set_log_level` changes it at run time. Each line reads ``<time>  [TileLang:<logger>:<LEVEL>] (<file>:<line>):
<message>``, as in the reference. What each level shows of a compilation:

- DEBUG: every compile phase with its duration (logger ``tilelang.jit.diagnostics``: parse, cache lookup, the
  pass pipeline, device codegen, lowering as a whole, loading, cache store);
- INFO: one line for any compilation that took longer than 2 s (`SLOW_COMPILE_SECONDS`), and, under
  ``TILELANG_VERBOSE=1`` or ``verbose=True``, a line per compilation and cache hit;
- WARNING (the default): problems only.

Output the user switched on by name is shown at INFO whatever that level: JIT phase diagnostics
(``TILELANG_JIT_DIAGNOSTICS``: start and end of each phase), pass timing reports (``TILELANG_PASS_PROFILE`` or the
``tl.pass_profile`` pass config, logger ``tilelang.pass_timing``) and, when ``TILELANG_PRINT_ON_COMPILATION=1`` is
set in the environment, the "begins to compile" line of each compilation (logger ``tilelang.jit.compilation``;
``=0`` silences it at any level).

Records do not propagate to the root logger (as in the reference TileLang); set
``logging.getLogger("tilelang").propagate = True`` to route them to your own handlers.
"""

from __future__ import annotations

import logging
import sys

__all__ = ["set_log_level", "configured_level", "TqdmLoggingHandler", "logger", "OPT_IN_LOGGERS"]

logger = logging.getLogger("tilelang")

# loggers that only emit INFO records for a feature the user turned on (always shown at INFO)
OPT_IN_LOGGERS = ("tilelang.jit.diagnostics", "tilelang.pass_timing")
COMPILATION_LOGGER = "tilelang.jit.compilation"
# the reference TileLang's format: where the record was made (file:line) before the message
_FORMAT = "%(asctime)s  [TileLang:%(name)s:%(levelname)s] (%(filename)s:%(lineno)d): %(message)s"


class TqdmLoggingHandler(logging.Handler):
    """Writes records to stderr with ``tqdm.write`` when tqdm is installed (a running progress bar is cleared,
    the line written, the bar redrawn), else straight to stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = self.format(record)
            try:
                from tqdm.auto import tqdm
            except ImportError:
                sys.stderr.write(message + "\n")
                sys.stderr.flush()
            else:
                tqdm.write(message, file=sys.stderr)
        except Exception:
            self.handleError(record)


def _parse_level(level: int | str) -> int:
    if isinstance(level, bool) or not isinstance(level, (int, str)):
        raise TypeError(f"log level must be a name or an int, got {level!r}")
    if isinstance(level, int):
        return level
    name = level.strip().upper()
    if name.isdigit():
        return int(name)
    value = logging.getLevelName(name)
    if not isinstance(value, int):
        raise ValueError(f"unknown log level {level!r}; use DEBUG, INFO, WARNING, ERROR or CRITICAL (or a number)")
    return value


def set_log_level(level: int | str) -> None:
    """Set the level of the ``tilelang`` logger: a name such as ``"DEBUG"`` (any case), a number, or a `logging`
    constant. Opt-in output (see the module docstring) stays visible at INFO."""
    from tilelang.env import env

    value = _parse_level(level)
    logger.setLevel(value)
    for name in OPT_IN_LOGGERS:
        logging.getLogger(name).setLevel(min(value, logging.INFO))
    # NOTSET: the compilation line follows the `tilelang` level unless asked for by name
    compilation = min(value, logging.INFO) if env.is_print_on_compilation_requested() else logging.NOTSET
    logging.getLogger(COMPILATION_LOGGER).setLevel(compilation)


def configured_level() -> tuple[int, str]:
    """The level the environment asks for and why, as ``(level, reason)``.

    ``(level, "TILELANG_LOG_LEVEL=...")``, ``(INFO, "TILELANG_VERBOSE=1")`` or ``(WARNING, "default")``;
    ValueError for a ``TILELANG_LOG_LEVEL`` that is not a level."""
    from tilelang.env import env

    name = env.log_level()
    if name:
        try:
            return _parse_level(name), f"TILELANG_LOG_LEVEL={name}"
        except ValueError:
            raise ValueError(f"TILELANG_LOG_LEVEL={name!r} is not a log level; use DEBUG, INFO, WARNING, ERROR "
                             "or CRITICAL (or a number)") from None
    if env.verbose():
        return logging.INFO, "TILELANG_VERBOSE=1"
    return logging.WARNING, "default"


def _install() -> None:
    if not any(isinstance(h, TqdmLoggingHandler) for h in logger.handlers):
        handler = TqdmLoggingHandler()
        handler.setFormatter(logging.Formatter(fmt=_FORMAT, datefmt="%Y-%m-%d %H:%M:%S"))
        logger.addHandler(handler)
        logger.propagate = False
    try:
        level, _ = configured_level()
    except ValueError as exc:
        set_log_level(logging.WARNING)
        logger.warning("%s; using WARNING", exc)
        return
    set_log_level(level)


_install()
