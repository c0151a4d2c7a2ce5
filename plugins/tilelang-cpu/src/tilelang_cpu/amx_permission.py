"""Ask Linux for the AMX tile state before a kernel that uses AMX runs.

Linux (5.16+) enables the AMX tile data registers (XSAVE feature 18, ``XTILEDATA``) per process on request:
until a process calls ``arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)`` its first tile instruction raises
SIGILL. The permission is process-wide and inherited by threads created later, so one successful request serves
every kernel; this module makes it once (ctypes, the raw ``syscall``: glibc has no ``arch_prctl`` wrapper before
2.35) and raises `AmxUnavailable`, naming the reason, when the kernel refuses.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import threading

from tilelang.errors import ExecutionBackendUnavailable

SYS_ARCH_PRCTL = 158  # x86-64
ARCH_REQ_XCOMP_PERM = 0x1023
XFEATURE_XTILEDATA = 18

_lock = threading.Lock()
_granted = False


class AmxUnavailable(ExecutionBackendUnavailable):
    """The kernel uses AMX tiles and this process may not: the OS refused, or this is not Linux on x86-64."""


def request_amx() -> None:
    """Make sure this process may execute AMX instructions (a no-op after the first success)."""
    global _granted
    if _granted:
        return
    with _lock:
        if _granted:
            return
        if platform.system() != "Linux" or platform.machine().lower() not in ("x86_64", "amd64"):
            raise AmxUnavailable(f"this kernel uses AMX tiles, which tilelang enables on Linux x86-64 only "
                                 f"(this is {platform.system()} {platform.machine()}); compile it for a target "
                                 f"without amx-tile (e.g. mattr=['-amx-tile'])")
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        if libc.syscall(ctypes.c_long(SYS_ARCH_PRCTL), ctypes.c_long(ARCH_REQ_XCOMP_PERM),
                        ctypes.c_long(XFEATURE_XTILEDATA)) != 0:
            err = ctypes.get_errno()
            why = {errno.EINVAL: "the kernel or the CPU does not support AMX (Linux 5.16+ on a CPU with AMX)",
                   errno.EPERM: "AMX is not permitted for this process"}.get(err, os.strerror(err))
            raise AmxUnavailable(f"this kernel uses AMX tiles but Linux refused the tile state "
                                 f"(arch_prctl(ARCH_REQ_XCOMP_PERM): {why}); compile it for a target without "
                                 f"amx-tile (e.g. mattr=['-amx-tile'])")
        _granted = True
