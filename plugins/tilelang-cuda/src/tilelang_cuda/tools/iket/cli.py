"""Host-side IKET helpers: the trace directory and the command line that profiles a program.

Collecting traces needs the external IKET profiler (``python -m iket.cli.main``) and an NVIDIA GPU; these helpers
only build paths and commands, so they work anywhere.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from pathlib import Path

__all__ = ["iket_available", "output_dir", "output_path", "profile_command", "require_iket", "set_output_dir",
           "trace_files"]

_ENV = "TL_IKET_OUTPUT_DIR"


class _State:
    output_dir: Path | None = None


def set_output_dir(path: str | os.PathLike[str] | None) -> Path | None:
    """Use `path` (created) for IKET exports in this process (also exported as ``TL_IKET_OUTPUT_DIR``)."""
    if path is None:
        _State.output_dir = None
        os.environ.pop(_ENV, None)
        return None
    folder = Path(path).expanduser().absolute()
    folder.mkdir(parents=True, exist_ok=True)
    _State.output_dir = folder
    os.environ[_ENV] = str(folder)
    return folder


def output_dir(default: str | os.PathLike[str] | None = None) -> Path | None:
    """The IKET export directory: `set_output_dir`'s, else ``TL_IKET_OUTPUT_DIR``, else `default`."""
    if _State.output_dir is not None:
        return _State.output_dir
    from tilelang.env import env

    configured = env.TL_IKET_OUTPUT_DIR
    if configured:
        return Path(str(configured)).expanduser().absolute()
    return None if default is None else Path(default).expanduser().absolute()


def output_path(name: str, *, directory: str | os.PathLike[str] | None = None) -> Path:
    """``<output dir>/<name>`` (the directory is created); RuntimeError when no directory is configured."""
    base = output_dir(directory)
    if base is None:
        raise RuntimeError("IKET output directory is not configured: call iket.set_output_dir(path), pass "
                           "output_dir= to iket.session, or set TL_IKET_OUTPUT_DIR")
    base.mkdir(parents=True, exist_ok=True)
    return base / name


def trace_files(*, directory: str | os.PathLike[str] | None = None) -> list[Path]:
    """The ``*.trace.json`` files exported so far, largest first."""
    base = output_dir(directory)
    if base is None or not base.exists():
        return []
    return sorted(base.glob("*.trace.json"), key=lambda p: p.stat().st_size, reverse=True)


def profile_command(command: str | Sequence[str], *, directory: str | os.PathLike[str], postprocess: str = "all",
                    clobber: bool = True) -> str:
    """The shell command that runs `command` under the IKET profiler, exporting traces to `directory`."""
    parts = ["python", "-m", "iket.cli.main", "--output-dir", str(Path(directory).expanduser())]
    if clobber:
        parts.append("--clobber")
    parts += ["profile", "--postprocess", postprocess, "--"]
    head = " ".join(shlex.quote(p) for p in parts)
    tail = command if isinstance(command, str) else " ".join(shlex.quote(str(c)) for c in command)
    return f"{head} {tail}"


def iket_available() -> bool:
    """Whether the external ``iket`` package is importable."""
    import importlib.util

    return importlib.util.find_spec("iket") is not None


def require_iket() -> None:
    """RuntimeError saying what is missing when traces cannot be collected on this machine."""
    if not iket_available():
        raise RuntimeError("collecting IKET traces needs the external IKET profiler (the `iket` Python package and "
                           "its runtime) and an NVIDIA GPU; TileLang only instruments the generated CUDA. Install "
                           "IKET, then run `iket.profile_command([...])` on a GPU machine.")


def _snapshot_output_dir() -> tuple[Path | None, str | None]:
    return _State.output_dir, os.environ.get(_ENV)


def _restore_output_dir(previous: Path | None, previous_env: str | None) -> None:
    _State.output_dir = previous
    if previous_env is None:
        os.environ.pop(_ENV, None)
    else:
        os.environ[_ENV] = previous_env
