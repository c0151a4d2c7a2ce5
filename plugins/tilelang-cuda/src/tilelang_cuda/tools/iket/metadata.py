"""IKET event metadata carried through the IR as a string token.

An event (name, id, kind, range id, payload type) is encoded as ``__tl_iket_v1_<base64url JSON>`` and stored
as the last argument of its ``TL_IKET_EVENT*`` call, so a PrimFunc built before (or without) the session that
compiles it still carries everything the CUDA post-processor needs.
"""

from __future__ import annotations

import base64
import json
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Event", "MAX_EVENT_NAME_BYTES", "TOKEN_PREFIX", "decode_event", "encode_event"]

TOKEN_PREFIX = "__tl_iket_v1_"
MAX_EVENT_NAME_BYTES = 32
RANGE_END_EVENT_ID = 31  # reserved by IKET for "the innermost range ends here"
_VERSION = 1
_KINDS = ("mark", "range")


@dataclass(frozen=True)
class Event:
    """One IKET event of a kernel."""

    name: str
    event_id: int
    kind: str
    range_id: int = 0
    payload_type: str = "NoPayload"
    payload_iket_id: int = 0


def encode_event(event: Event) -> str:
    """The token of `event` (safe inside a C string literal and a TVMScript StringImm)."""
    text = json.dumps({"version": _VERSION, **asdict(event)}, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)
    return TOKEN_PREFIX + base64.urlsafe_b64encode(text.encode("utf-8")).decode("ascii").rstrip("=")


def decode_event(token: str) -> Event:
    """The `Event` of a token (ValueError on a foreign, corrupt or inconsistent one)."""
    if not token.startswith(TOKEN_PREFIX):
        raise ValueError("Invalid TileLang IKET metadata token prefix")
    body = token[len(TOKEN_PREFIX):]
    try:
        data: dict[str, Any] = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError("Invalid TileLang IKET metadata token") from exc
    fields = {"version", "name", "event_id", "kind", "range_id", "payload_type", "payload_iket_id"}
    if not isinstance(data, dict) or set(data) != fields or data["version"] != _VERSION:
        raise ValueError("Unsupported TileLang IKET metadata schema")
    name = data["name"]
    if not isinstance(name, str) or not name:
        raise ValueError("IKET event metadata must contain a non-empty name")
    if len(name.encode("utf-8")) > MAX_EVENT_NAME_BYTES:
        raise ValueError(f"IKET event name must be at most {MAX_EVENT_NAME_BYTES} UTF-8 bytes")
    if data["kind"] not in _KINDS:
        raise ValueError(f"Unsupported IKET event kind: {data['kind']!r}")
    for key in ("event_id", "range_id", "payload_iket_id"):
        value = data[key]
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"Invalid IKET metadata field {key!r}")
    if data["event_id"] in (0, RANGE_END_EVENT_ID):
        raise ValueError(f"Invalid IKET event id: {data['event_id']}")
    if not isinstance(data["payload_type"], str):
        raise ValueError("Invalid IKET payload type metadata")
    del data["version"]
    return Event(**data)
