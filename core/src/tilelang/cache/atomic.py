"""Temporaries that name their writer, and durable atomic writes, for cache directories shared by several hosts.

A temporary is called ``<stem>.<host>.<pid>.<random>``: `host` is this machine's name (made path-safe) plus, on
Linux, the id of the pid namespace, so two containers with one hostname still differ. A dead writer's leftover
can only be recognised by its own host: a pid says nothing about another machine's processes, so
`is_stale_own_temporary` answers True only for a temporary of this host whose process is gone, and another
host's temporaries are never touched. Data is written to a temporary, flushed with ``fsync`` and renamed into
place (`write_atomic`), so readers on any host see the old file or the new one, never a part.
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
from pathlib import Path

__all__ = ["host_tag", "temporary_name", "parse_temporary_name", "is_stale_own_temporary", "write_durable",
           "write_atomic", "fsync_directory", "pid_alive"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_RANDOM_HEX = 12


def _pid_namespace() -> str:
    try:
        return f"{os.stat('/proc/self/ns/pid').st_ino:x}"
    except OSError:
        return ""


def host_tag() -> str:
    """This writer's host, as used in temporary names: the hostname made path-safe (no dots), plus the pid
    namespace where the OS has one. Read on every call (cheap), so a changed hostname is seen at once."""
    name = _UNSAFE.sub("_", socket.gethostname() or "unknown-host").strip("_") or "unknown-host"
    if len(name) > 40:  # keep names short without letting two long hostnames collide
        name = f"{name[:31]}_{hashlib.sha256(name.encode()).hexdigest()[:8]}"
    namespace = _pid_namespace()
    return f"{name}-{namespace}" if namespace else name


def temporary_name(stem: str) -> str:
    """A fresh temporary name ``<stem>.<host>.<pid>.<random>`` (`stem` is cut to 24 path-safe characters)."""
    stem = _UNSAFE.sub("_", stem)[:24] or "tmp"
    return f"{stem}.{host_tag()}.{os.getpid()}.{os.urandom(_RANDOM_HEX // 2).hex()}"


def parse_temporary_name(name: str) -> tuple[str, int] | None:
    """``(host, pid)`` of a name made by `temporary_name`, or None for any other name."""
    parts = name.rsplit(".", 3)
    if len(parts) != 4:
        return None
    _, host, pid, rand = parts
    if not host or not pid.isdigit() or len(rand) != _RANDOM_HEX or not all(c in "0123456789abcdef" for c in rand):
        return None
    return host, int(pid)


def pid_alive(pid: int) -> bool:
    """Whether process `pid` exists on this host (a process of another user counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return True  # cannot tell: keep its files
    return True


def is_stale_own_temporary(name: str) -> bool:
    """True only for a temporary written on this host by a process that no longer exists."""
    parsed = parse_temporary_name(name)
    if parsed is None:
        return False
    host, pid = parsed
    return host == host_tag() and pid != os.getpid() and not pid_alive(pid)


def fsync_directory(path: str | os.PathLike[str]) -> None:
    """Make a rename inside directory `path` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_durable(path: str | os.PathLike[str], data: bytes) -> None:
    """Write `data` to a new file `path` and ``fsync`` it."""
    with open(path, "xb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def write_atomic(path: str | os.PathLike[str], data: bytes, tmp_dir: str | os.PathLike[str] | None = None) -> None:
    """Replace file `path` by `data` atomically: a host-qualified temporary in `tmp_dir` (default: next to
    `path`; it must be on the same filesystem), ``fsync``, then ``os.replace``."""
    path = Path(path)
    directory = Path(tmp_dir) if tmp_dir is not None else path.parent
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / temporary_name(path.name)
    try:
        write_durable(tmp, data)
        os.replace(tmp, path)
    finally:
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass
    fsync_directory(path.parent)
