"""Threadgroup memory per kernel, read from the generated MSL, and the lowering-time limit check.

Apple GPUs give a threadgroup 32 KiB (``MTLDevice.maxThreadgroupMemoryLength``; TVM's Metal target says the
same in ``max_shared_memory_per_block``). A kernel that declares more fails only when its pipeline state is
created on a Mac, so `check_threadgroup_memory` refuses it at lowering time, naming every buffer and its size.
The MSL is the truth here: it is what runs, after TVM's StorageRewrite has let buffers whose lifetimes do not
overlap share memory (the survivor keeps one name and the largest size). A kernel whose tiles are typed
aliases into one threadgroup array (`tilelang_metal.passes.alias_threadgroup_tiles`) is reported per offset: the
aliases that start there (``"K_shared/P_shared"`` when tiles share storage) own the bytes up to the next offset
(or the array's end).
"""

from __future__ import annotations

import re
from typing import Any

from tilelang.errors import LoweringError

MAX_THREADGROUP_BYTES = 32 * 1024
_SCALAR_BYTES = {"bool": 1, "char": 1, "uchar": 1, "short": 2, "ushort": 2, "half": 2, "bfloat": 2, "int": 4,
                 "uint": 4, "float": 4, "long": 8, "ulong": 8}
# how an MSL kernel header starts, with its name as group 1: ``kernel void f(`` or ``[[kernel, ...]] void f(``
KERNEL_HEAD = r"(?:\bkernel|\[\[\s*kernel\b[^\]]*\]\])\s+void\s+(\w+)\s*\("
_KERNEL = re.compile(KERNEL_HEAD)
_DECL = re.compile(r"^\s*threadgroup\s+([A-Za-z_]\w*)\s+([A-Za-z_]\w*)\s*(?:\[\s*(\d+)\s*\])?\s*;", re.M)
_ALIAS = re.compile(r"^\s*threadgroup\s+\w+\*\s+(\w+)\s*=\s*\(threadgroup \w+\*\)\(\(threadgroup \w+\*\)"
                    r"\(&\((\w+)\[(\d+)\]\)\)\);", re.M)


def type_bytes(msl_type: str) -> int:
    """Bytes of one element of an MSL scalar or vector type (3-vectors are padded to 4, as in MSL)."""
    m = re.fullmatch(r"([a-z]+?)([234]?)", msl_type)
    if m is None or m.group(1) not in _SCALAR_BYTES:
        raise ValueError(f"unknown MSL element type {msl_type!r}")
    lanes = int(m.group(2) or 1)
    return _SCALAR_BYTES[m.group(1)] * (4 if lanes == 3 else lanes)


def threadgroup_usage(msl: str) -> dict[str, dict[str, int]]:
    """``{kernel: {threadgroup buffer: bytes}}`` for every ``kernel void`` in `msl`, in declaration order."""
    starts = [(m.start(), m.group(1)) for m in _KERNEL.finditer(msl)]
    out: dict[str, dict[str, int]] = {}
    for n, (start, name) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(msl)
        arrays = {d.group(2): type_bytes(d.group(1)) * int(d.group(3) or 1) for d in _DECL.finditer(msl, start, end)}
        out[name] = _split_aliased(arrays, [(a.group(1), a.group(2), int(a.group(3)))
                                            for a in _ALIAS.finditer(msl, start, end)])
    return out


def _split_aliased(arrays: dict[str, int], aliases: list[tuple[str, str, int]]) -> dict[str, int]:
    """`arrays` with each array that typed aliases point into replaced by its byte spans: one per offset, named
    by the aliases starting there (in declaration order, joined by ``/``)."""
    out: dict[str, int] = {}
    for array, size in arrays.items():
        at: dict[int, list[str]] = {}
        for alias, base, off in aliases:
            if base == array:
                at.setdefault(off, []).append(alias)
        if not at:
            out[array] = size
            continue
        offsets = sorted(at)
        for n, off in enumerate(offsets):
            out["/".join(at[off])] = (offsets[n + 1] if n + 1 < len(offsets) else size) - off
    return out


def limit_of(target: Any) -> int:
    """The target's threadgroup-memory limit (``max_shared_memory_per_block``, else 32 KiB)."""
    attrs = getattr(target, "attrs", None)
    value = attrs.get("max_shared_memory_per_block") if attrs is not None else None
    return int(value) if value else MAX_THREADGROUP_BYTES


def check_threadgroup_memory(msl: str, limit: int = MAX_THREADGROUP_BYTES) -> dict[str, dict[str, int]]:
    """`threadgroup_usage` of `msl`; LoweringError naming the buffers of the first kernel over `limit` bytes."""
    usage = threadgroup_usage(msl)
    for kernel, buffers in usage.items():
        total = sum(buffers.values())
        if total > limit:
            listing = ", ".join(f"{name} {size} B" for name, size in sorted(buffers.items(), key=lambda kv: -kv[1]))
            raise LoweringError(
                f"{kernel}: needs {total} bytes of threadgroup memory, Apple GPUs allow {limit} ({listing}); "
                "use smaller shared tiles (block_M / block_N / block_K), fewer pipeline stages or fragments")
    return usage


def report(usage: dict[str, dict[str, int]]) -> dict[str, dict[str, Any]]:
    """``{kernel: {"bytes": total, "buffers": {name: bytes}}}`` of a `threadgroup_usage` result: what the
    artifact's metadata records."""
    return {kernel: {"bytes": sum(buffers.values()), "buffers": buffers} for kernel, buffers in usage.items()}
