"""Instrumenting generated CUDA for IKET: event ids, the metadata IKET reads, and the event macros.

The kernel source holds calls ``TL_IKET_EVENT(id, "<token>")`` (see `frontend`). `inject_iket_cuda`

1. renumbers the events module-wide (PrimFuncs built independently may reuse ids) and rewrites the calls;
2. emits, per event, the ``__iket_evt_decl_<name>_<id>_attrs`` byte array IKET's loader reads (60 bytes:
   size, event id, instrumentation method, payload type id, range flag and id, name), one
   ``__iket_range_decl_<name>_<range id>_attrs`` per range (72 bytes) and the ``__iket_meta_info`` header
   (48 bytes: counts, the range-end id 31, record sizes, IKET's magic number, the largest event id);
3. defines the macros: a ``%globaltimer_lo``-stamped record in shared memory at the CTA's cluster rank (0
   before sm_90) followed by ``pmevent.mask``; with runtime payloads a second 32-bit store holds the value.

The block goes right before the first kernel (file scope, outside preprocessor conditionals). The source is
marked ``// __tilelang_iket_tool__`` and left alone if seen again.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from tilelang_cuda.tools.iket.metadata import RANGE_END_EVENT_ID, TOKEN_PREFIX, Event, decode_event, encode_event

__all__ = ["inject_iket_cuda"]

MARKER = "__tilelang_iket_tool__"
_MAGIC = (157, 241, 190, 186)
_EVENT_ATTR_BYTES = 60
_RANGE_ATTR_BYTES = 72
_META_BYTES = 48
_METHOD_PMEVENT = 3
_TOKEN = re.compile(re.escape(TOKEN_PREFIX) + r"[A-Za-z0-9_-]+")
_CALL = re.compile(r"(?P<head>\bTL_IKET_EVENT(?:_PAYLOAD_(?:U32|F32))?\(\s*)(?P<id>\d+)"
                   r"(?P<tail>[^\n]*?\"(?P<token>" + re.escape(TOKEN_PREFIX) + r"[A-Za-z0-9_-]+)\"\s*\))")


def _renumber(code: str) -> tuple[str, list[Event]]:
    """Module-wide event ids in first-use order; the calls and their tokens rewritten to match."""
    calls = list(_CALL.finditer(code))
    if len(calls) != len(_TOKEN.findall(code)):
        raise ValueError("IKET metadata token is not attached to a supported event call")
    events: dict[tuple[str, str], Event] = {}
    new_id: dict[str, int] = {}
    new_token: dict[str, str] = {}
    next_id = 1
    for m in calls:
        token = m.group("token")
        if token in new_id:
            continue
        event = decode_event(token)
        key = (event.kind, event.name)
        known = events.get(key)
        if known is None:
            if next_id == RANGE_END_EVENT_ID:
                next_id += 1
            known = events[key] = dataclasses.replace(event, event_id=next_id)
            next_id += 1
        elif dataclasses.replace(known, event_id=event.event_id) != event:
            raise ValueError(f"Conflicting IKET metadata for event {event.name!r}")
        new_id[token], new_token[token] = known.event_id, encode_event(known)

    def rewrite(m: re.Match[str]) -> str:
        token = m.group("token")
        return m.group("head") + str(new_id[token]) + m.group("tail").replace(token, new_token[token])

    return _CALL.sub(rewrite, code), list(events.values())


def _le32(value: int) -> list[int]:
    return list(int(value & 0xFFFFFFFF).to_bytes(4, "little"))


def _bytes(size: int, fields: dict[int, int], name: str | None = None, name_at: int = 24) -> list[int]:
    """`size` bytes: the size itself at 0, each ``offset: u32`` of `fields`, then the name's length and bytes."""
    data = [0] * size
    data[0:4] = _le32(size)
    for offset, value in fields.items():
        data[offset:offset + 4] = _le32(value)
    if name is not None:
        raw = list(name.encode("utf-8"))
        if len(raw) > size - name_at - 4:
            raise ValueError(f"IKET name too long for its metadata record: {name!r}")
        data[name_at:name_at + 4] = _le32(len(raw))
        data[name_at + 4:name_at + 4 + len(raw)] = raw
    return data


def _symbol(name: str) -> str:
    s = re.sub(r"\W", "_", name, flags=re.ASCII)
    return s if s and not s[0].isdigit() else "_" + s


def _array(symbol: str, data: list[int]) -> str:
    return (f"__device__ __attribute__((used, aligned(1))) unsigned char {symbol}[{len(data)}] = "
            f"{{{', '.join(map(str, data))}}};")


def _declarations(events: list[Event], runtime_payloads: bool) -> str:
    out = ['extern "C" {']
    ranges: dict[str, int] = {}
    for e in events:
        fields = {4: e.event_id, 8: _METHOD_PMEVENT, 12: e.payload_iket_id if runtime_payloads else 0}
        if e.kind == "range":
            fields.update({16: 1, 20: e.range_id})
            ranges[e.name] = e.range_id
        out.append(_array(f"__iket_evt_decl_{_symbol(e.name)}_{e.event_id}_attrs",
                          _bytes(_EVENT_ATTR_BYTES, fields, e.name)))
    for name, rid in ranges.items():
        out.append(_array(f"__iket_range_decl_{_symbol(name)}_{rid}_attrs",
                          _bytes(_RANGE_ATTR_BYTES, {8: rid, 12: 0xFFFFFFFF, 16: 2}, name, name_at=32)))
    meta = _bytes(_META_BYTES, {8: len(events) + len(ranges), 12: RANGE_END_EVENT_ID, 16: 32,
                                20: _EVENT_ATTR_BYTES, 32: max(e.event_id for e in events)})
    meta[24:28] = list(_MAGIC)
    out.append(_array("__iket_meta_info", meta))
    out.append("}")
    return "\n".join(out)


def _sm(target: Any) -> int | None:
    """The SM version of a CUDA target (None when it cannot be told)."""
    texts = []
    attrs = getattr(target, "attrs", None)
    try:
        arch = attrs.get("arch", None) if attrs is not None else None
    except Exception:
        arch = None
    if arch is not None:
        texts.append(str(arch))
    texts.append(str(target))
    for text in texts:
        m = re.search(r"(?:sm|compute)_(\d+)", text)
        if m:
            return int(m.group(1))
    return None


def _macros(target: Any, runtime_payloads: bool) -> str:
    sm = _sm(target)
    rank = "mov.b32 r, %cluster_ctarank;" if sm is not None and sm >= 90 else "mov.u32 r, 0;"

    def record(regs: str, extra: str, store: str, trailer: str, operands: str) -> str:
        return (f'  asm volatile("{{\\n\\t" \\\n'
                f'               ".reg .b32 {regs};\\n\\t" \\\n'
                f'               "{rank}\\n\\t" \\\n'
                f"{extra}"
                f'               "{store}\\n\\t" \\\n'
                f"{trailer}"
                f'               "}}" {operands})')

    stamp = ('               "mov.u32 t, %globaltimer_lo;\\n\\t" \\\n'
             '               "or.b32 t, t, " #ID ";\\n\\t" \\\n'
             '               "mad.lo.u32 r, r, 0x1000000, 0x20;\\n\\t" \\\n')
    pm = '               "pmevent.mask " #ID ";\\n\\t" \\\n'
    event = ("#define TL_IKET_EVENT(ID, ...) \\\n"
             + record("r, t", stamp, "st.weak.shared.u32 [r], t;", pm, '::: "memory"') + "\n")
    if not runtime_payloads:
        return (event + "#define TL_IKET_EVENT_PAYLOAD_U32(ID, VALUE, ...) TL_IKET_EVENT(ID)\n"
                        "#define TL_IKET_EVENT_PAYLOAD_F32(ID, VALUE, ...) TL_IKET_EVENT(ID)\n")
    value = ('               "mov.u32 p, %0;\\n\\t" \\\n'
             '               "mad.lo.u32 r, r, 0x1000000, 0x24;\\n\\t" \\\n')
    u32 = ("#define TL_IKET_EVENT_PAYLOAD_U32(ID, VALUE, ...) do { \\\n"
           "  unsigned int __tl_iket_u32_value = (unsigned int)(VALUE); \\\n"
           "  /* two 32-bit stores: IKET rejects a 64-bit record store */ \\\n"
           + record("r, t", stamp, "st.weak.shared.u32 [r], t;", "", '::: "memory"') + "; \\\n"
           + record("r, p", value, "st.volatile.shared.u32 [r], p;", pm, ':: "r"(__tl_iket_u32_value) : "memory"')
           + "; \\\n} while (0)\n")
    f32 = ("#define TL_IKET_EVENT_PAYLOAD_F32(ID, VALUE, ...) do { \\\n"
           "  union { float f; unsigned int u; } __tl_iket_f32_bits; \\\n"
           "  __tl_iket_f32_bits.f = (float)(VALUE); \\\n"
           "  TL_IKET_EVENT_PAYLOAD_U32(ID, __tl_iket_f32_bits.u); \\\n"
           "} while (0)\n")
    return event + u32 + f32


def inject_iket_cuda(code: str, target: Any, *, runtime_payloads: bool) -> str:
    """`code` (generated CUDA) with IKET's metadata and macros added (unchanged when it has no events)."""
    if MARKER in code:
        return code
    code, events = _renumber(code)
    if not events:
        return code
    # at file scope, outside any preprocessor conditional: right before the first kernel
    kernel = re.search(r'^(?:extern "C" )?__global__', code, flags=re.M)
    at = kernel.start() if kernel else 0
    header = (f"// {MARKER}\n// IKET event metadata and macros (tilelang_cuda.tools.iket)\n"
              f"{_declarations(events, runtime_payloads)}\n{_macros(target, runtime_payloads)}\n")
    return code[:at] + header + code[at:]
