"""A syntax, type and address-space check for generated MSL, with clang-22 and the shim header in ``shim/``.

No Metal compiler exists off macOS. This check runs ``clang-22 -x clcpp -cl-std=clc++2021 -fsyntax-only``
(OpenCL C++ mode: Metal's ``device`` / ``threadgroup`` / ``constant`` / ``thread`` become address spaces clang
enforces) against `shim/metal_stdlib`, a declaration-only stand-in for Apple's header. ``[[attributes]]`` are
blanked first (keeping line and column numbers); an unknown attribute name is an error. It catches syntax
errors, undeclared names, wrong types and arity, mixed address spaces and writes through ``constant``; it
cannot promise the Metal compiler accepts the file (Apple-only built-ins are declared loosely).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

CLANG = "clang-22"  # the tool the project's CI installs (noxfile SYSTEM_PACKAGES["metal"])
SHIM_DIR = Path(__file__).parent / "shim"
KNOWN_ATTRIBUTES = frozenset({
    "buffer", "texture", "sampler", "threadgroup", "kernel", "host_name", "function_constant",
    "thread_position_in_grid", "thread_position_in_threadgroup", "threadgroup_position_in_grid",
    "threads_per_threadgroup", "threadgroups_per_grid", "threads_per_grid", "thread_index_in_threadgroup",
    "thread_index_in_simdgroup", "simdgroup_index_in_threadgroup", "threads_per_simdgroup",
    "simdgroups_per_threadgroup", "thread_execution_width", "dispatch_threads_per_threadgroup",
    "max_total_threads_per_threadgroup", "maybe_unused", "likely", "unlikely",
})
_ATTRIBUTE = re.compile(r"\[\[([^\[\]]*)\]\]")
_ATTRIBUTE_NAME = re.compile(r"\s*([A-Za-z_]\w*)\s*(\([^()]*\))?\s*")


@dataclass(frozen=True)
class MSLCheckResult:
    """``ok`` and clang's (plus the attribute check's) diagnostics, with the caller's file name."""

    ok: bool
    diagnostics: str

    def __bool__(self) -> bool:
        return self.ok


def find_clang() -> str | None:
    """The clang-22 executable, or None (``apt-get install clang-22``)."""
    return shutil.which(CLANG)


def strip_attributes(source: str, name: str = "kernel.metal") -> tuple[str, list[str]]:
    """`source` with every ``[[...]]`` blanked, and an error line per unknown attribute name. A list that holds
    ``kernel`` (``[[kernel, max_total_threads_per_threadgroup(128)]]``) becomes the ``kernel`` qualifier."""
    errors = []

    def blank(m: re.Match[str]) -> str:
        line = source.count("\n", 0, m.start()) + 1
        names = []
        for item in m.group(1).split(","):
            parsed = _ATTRIBUTE_NAME.fullmatch(item)
            attr = parsed.group(1) if parsed else item.strip()
            names.append(attr)
            if attr not in KNOWN_ATTRIBUTES:
                errors.append(f"{name}:{line}: error: unknown Metal attribute [[{attr}]]")
        width = len(m.group(0))
        return "kernel".ljust(width) if "kernel" in names and len(names) > 1 else " " * width

    return _ATTRIBUTE.sub(blank, source), errors


def check_msl(source: str, *, name: str = "kernel.metal", clang: str | None = None,
              timeout: float = 60.0) -> MSLCheckResult:
    """Check MSL `source`; FileNotFoundError when clang-22 is missing."""
    exe = clang or find_clang()
    if exe is None:
        raise FileNotFoundError(f"{CLANG} not found: `apt-get install {CLANG}` to check MSL")
    stripped, errors = strip_attributes(source, name)
    with tempfile.TemporaryDirectory(prefix="mslcheck") as tmp:
        path = os.path.join(tmp, "kernel.metal")
        Path(path).write_text(stripped)
        cmd = [exe, "-fsyntax-only", "-x", "clcpp", "-cl-std=clc++2021", "-isystem", str(SHIM_DIR),
               "-fno-color-diagnostics", "-ferror-limit=50", path]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    output = proc.stderr.replace(path, name)
    diagnostics = "\n".join([*errors, output.strip()]).strip()
    return MSLCheckResult(proc.returncode == 0 and not errors, diagnostics)
