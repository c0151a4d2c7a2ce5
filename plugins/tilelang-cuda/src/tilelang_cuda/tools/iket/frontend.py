"""Kernel-side IKET calls: `mark`, `range` / `range_push` / `range_pop`, `payload`.

Each call emits ``T.call_extern("TL_IKET_EVENT", id, token)`` (``TL_IKET_EVENT_PAYLOAD_U32/F32`` with a payload)
into the kernel being built; the macros are defined by the CUDA post-processor of an active `iket.session`.
Event ids are handed out by a process-wide registry (`reset` restarts it); one name used with two payload
types is an error. Ranges are per warp: ``with iket.range("load"):`` brackets a lexical region.
"""

from __future__ import annotations

import threading
import zlib
from dataclasses import dataclass
from typing import Any

from tilelang_cuda.tools.iket.metadata import MAX_EVENT_NAME_BYTES, RANGE_END_EVENT_ID, Event, encode_event

__all__ = ["PayloadSpec", "event_table", "mark", "payload", "range", "range_end", "range_pop", "range_push",
           "range_start", "reset"]

_EVENT = "TL_IKET_EVENT"
_EVENT_U32 = "TL_IKET_EVENT_PAYLOAD_U32"
_EVENT_F32 = "TL_IKET_EVENT_PAYLOAD_F32"
_PAYLOAD_IDS = {"int32": 5, "uint32": 6, "float32": 13}  # IKET's payload type ids
_ALIASES = {"int": "int32", "uint": "uint32", "float": "float32"}


@dataclass(frozen=True)
class PayloadSpec:
    """A scalar value recorded with an event: the expression, its dtype and IKET's id for that dtype."""

    expr: Any
    dtype: str
    iket_id: int


class _Registry:
    lock = threading.RLock()
    events: dict[tuple[str, str], Event] = {}
    next_id = 1
    stacks = threading.local()


def _stack() -> list[str]:
    stack = getattr(_Registry.stacks, "names", None)
    if stack is None:
        stack = _Registry.stacks.names = []
    return stack


def reset() -> None:
    """Forget every registered event: kernels built afterwards number their events from 1 again."""
    with _Registry.lock:
        _Registry.events.clear()
        _Registry.next_id = 1
        _stack().clear()


def event_table() -> list[dict[str, Any]]:
    """The registered events (id order): name, id, kind, range id, payload type and ids."""
    from tilelang_cuda.tools.iket.session import runtime_payloads_enabled

    live = runtime_payloads_enabled()
    with _Registry.lock:
        events = sorted(_Registry.events.values(), key=lambda e: e.event_id)
    return [{"name": e.name, "event_id": e.event_id, "kind": e.kind, "range_id": e.range_id,
             "payload_type": e.payload_type, "payload_iket_id": e.payload_iket_id,
             "runtime_payload_iket_id": e.payload_iket_id if live else 0} for e in events]


def _dtype_of(expr: Any) -> str:
    dtype = getattr(expr, "dtype", None)
    if dtype is None and hasattr(expr, "ty"):
        dtype = getattr(expr.ty, "dtype", None)
    if dtype is not None:
        return str(dtype)
    if isinstance(expr, bool):
        return "uint32"
    if isinstance(expr, int):
        return "int32"
    if isinstance(expr, float):
        return "float32"
    raise TypeError("Cannot infer the IKET payload dtype; use iket.payload(expr, dtype='int32' | 'uint32' | "
                    "'float32').")


def payload(expr: Any, dtype: str | None = None) -> PayloadSpec:
    """A payload for `mark` / `range_push`: `expr` recorded as int32, uint32 or float32."""
    d = str(dtype or _dtype_of(expr)).lower()
    d = _ALIASES.get(d, d)
    if d not in _PAYLOAD_IDS:
        raise ValueError(f"Unsupported IKET payload dtype: {dtype or d!r}; IKET records int32, uint32 and float32")
    return PayloadSpec(expr, d, _PAYLOAD_IDS[d])


def _spec(value: Any) -> PayloadSpec | None:
    if value is None or isinstance(value, PayloadSpec):
        return value
    return payload(value)


def _event(name: str, kind: str, spec: PayloadSpec | None) -> Event:
    if not isinstance(name, str) or not name:
        raise ValueError("IKET event name must be a non-empty string")
    if len(name.encode("utf-8")) > MAX_EVENT_NAME_BYTES:
        raise ValueError(f"IKET event name must be at most {MAX_EVENT_NAME_BYTES} UTF-8 bytes: {name!r}")
    ptype = spec.dtype if spec is not None else "NoPayload"
    with _Registry.lock:
        found = _Registry.events.get((kind, name))
        if found is not None:
            if found.payload_type != ptype:
                raise ValueError(f"IKET event {name!r} was first registered with payload type {found.payload_type!r}, "
                                 f"but is now used with {ptype!r}")
            return found
        if _Registry.next_id == RANGE_END_EVENT_ID:
            _Registry.next_id += 1
        event = Event(name=name, event_id=_Registry.next_id, kind=kind,
                      range_id=(zlib.crc32(name.encode("utf-8")) or 1) if kind == "range" else 0,
                      payload_type=ptype, payload_iket_id=spec.iket_id if spec is not None else 0)
        _Registry.next_id += 1
        _Registry.events[(kind, name)] = event
        return event


def _call(event: Event, spec: PayloadSpec | None) -> Any:
    from tvm import tirx

    # int32 (not handle): an expression statement of the kernel must be a primitive expression
    token = encode_event(event)
    if spec is None:
        return tirx.call_extern("int32", _EVENT, event.event_id, token)
    extern = _EVENT_F32 if spec.dtype == "float32" else _EVENT_U32
    return tirx.call_extern("int32", extern, event.event_id, spec.expr, token)


def mark(name: str, payload: Any = None) -> Any:
    """An instant event at this point of the kernel (optionally with a payload)."""
    spec = _spec(payload)
    return _call(_event(name, "mark", spec), spec)


def range_push(name: str, payload: Any = None) -> Any:
    """Start the warp-local range `name` here."""
    spec = _spec(payload)
    call = _call(_event(name, "range", spec), spec)
    _stack().append(name)
    return call


def range_pop(name: str | None = None) -> Any:
    """End the innermost open range (checked against `name` when given)."""
    from tvm import tirx

    stack = _stack()
    if not stack:
        raise RuntimeError("iket.range_pop() called without a matching iket.range_push()")
    if name is not None and stack[-1] != name:
        raise RuntimeError(f"iket.range_pop({name!r}) does not match the open range {stack[-1]!r}")
    stack.pop()
    return tirx.call_extern("int32", _EVENT, RANGE_END_EVENT_ID)


range_start = range_push
range_end = range_pop


class _RangeScope:
    """``with iket.range(name):`` -- a range around the statements of the block."""

    def __init__(self, name: str, payload: Any = None) -> None:
        self.name, self.payload = name, payload

    def __enter__(self) -> _RangeScope:
        from tvm.script.ir_builder import tirx as B

        B.evaluate(range_push(self.name, payload=self.payload))
        return self

    def __exit__(self, *exc: Any) -> bool:
        from tvm.script.ir_builder import tirx as B

        B.evaluate(range_pop(self.name))
        return False


def range(name: str, payload: Any = None) -> _RangeScope:
    """A ``with`` scope emitting the start and end events of range `name`."""
    return _RangeScope(name, payload)
