"""Per-kernel AMD GPU resource usage from clang's ``-Rpass-analysis=kernel-resource-usage`` remarks.

hipcc run with `hipcc_remark_flag()` prints, for every kernel, a block of remark lines (``Function Name``,
``VGPRs``, ``TotalSGPRs``, ``ScratchSize [bytes/lane]``, ``VGPRs Spill``, ...) among its real diagnostics.
`filter_and_record` removes those lines from the output (so logs keep only the diagnostics) and records the
parsed numbers, per kernel, in a per-thread recorder opened with `reset_recorder` and read with `pop_recorded`.
`dump_to_file` / `load_from_file` keep them beside a cached kernel.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from dataclasses import asdict, dataclass, field

__all__ = ["KernelResourceUsage", "hipcc_remark_flag", "reset_recorder", "pop_recorded", "filter_and_record",
           "dump_to_file", "load_from_file"]

_FLAG = "-Rpass-analysis=kernel-resource-usage"
_TAG = f"[{_FLAG}]"
_REMARK = re.compile(r"\bremark:\s*(?P<key>[^:]+?):\s*(?P<value>.*?)\s*" + re.escape(_TAG) + r"\s*$")
_RECORDER = threading.local()


@dataclass
class KernelResourceUsage:
    """One kernel's resources: VGPRs (``n_regs``), spills (``VGPRs Spill`` plus scratch dwords), scratch bytes
    per lane, and every remark as reported (``extra``)."""

    n_regs: int = 0
    n_spills: int = 0
    scratch_bytes: int = 0
    n_max_threads: int | None = None
    extra: dict[str, str] = field(default_factory=dict)


def hipcc_remark_flag() -> str:
    """The clang flag that makes hipcc print the remarks parsed here."""
    return _FLAG


def reset_recorder() -> None:
    """Start recording on this thread (forgetting what was recorded before)."""
    _RECORDER.items = {}


def pop_recorded() -> dict[str, KernelResourceUsage]:
    """What was recorded on this thread since `reset_recorder`, and clear it."""
    items = getattr(_RECORDER, "items", {})
    _RECORDER.items = {}
    return dict(items)


def _apply(usage: KernelResourceUsage, key: str, value: str) -> None:
    usage.extra[key] = value
    with contextlib.suppress(ValueError):
        if key == "VGPRs":
            usage.n_regs = int(value)
        elif key == "VGPRs Spill":
            usage.n_spills += int(value)
        elif key.startswith("ScratchSize"):
            usage.scratch_bytes = int(value)
            usage.n_spills += int(value) // 4


def filter_and_record(output: str) -> str:
    """`output` without its kernel-resource-usage remark lines; the parsed kernels go to the active recorder."""
    if _TAG not in output:
        return output
    recorder = getattr(_RECORDER, "items", None)
    kept: list[str] = []
    name: str | None = None
    usage: KernelResourceUsage | None = None
    for line in output.splitlines(keepends=True):
        match = _REMARK.search(line.rstrip("\r\n"))
        if match is None:
            kept.append(line)
            continue
        key, value = match.group("key").strip(), match.group("value").strip()
        if key == "Function Name":
            if recorder is not None and name and usage is not None:
                recorder[name] = usage
            name, usage = value, KernelResourceUsage()
        elif usage is not None:
            _apply(usage, key, value)
    if recorder is not None and name and usage is not None:
        recorder[name] = usage
    return "".join(kept)


def dump_to_file(usage: dict[str, KernelResourceUsage], path: str) -> None:
    """Write `usage` as JSON (so it survives a kernel-cache hit)."""
    with open(path, "w") as f:
        json.dump({name: asdict(u) for name, u in usage.items()}, f, indent=2, sort_keys=True)


def load_from_file(path: str) -> dict[str, KernelResourceUsage]:
    """Read what `dump_to_file` wrote (missing or unknown fields are tolerated)."""
    with open(path) as f:
        data = json.load(f)
    return {
        name: KernelResourceUsage(n_regs=int(entry.get("n_regs", 0)), n_spills=int(entry.get("n_spills", 0)),
                                  scratch_bytes=int(entry.get("scratch_bytes", 0)),
                                  n_max_threads=entry.get("n_max_threads"), extra=dict(entry.get("extra", {})))
        for name, entry in data.items()
    }
