"""Warp-specialisation schedules (``T.annotate_ws_schedule``, ``T.ws_op``, ``T.WS*``): how a straight-line
kernel is split into producer and consumer warp roles with barrier-protected pipelines.

These describe a CUDA-architecture transformation that the CUDA backend performs; the objects and
annotations are accepted on every target, where the kernel's meaning does not depend on them (another backend
runs the straight-line kernel as written).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

WSID = "tl.ws_op_id"  # the annotation key naming a statement's warp-specialisation op


class WSSyncKind(enum.Enum):
    """How a pipeline stage is handed between roles."""

    FULL = "full"
    EMPTY = "empty"


@dataclass
class WSRole:
    """A warp role: its name, warp count and register budget."""

    name: str
    num_warps: int = 4
    registers: int | None = None


@dataclass
class WSPipeline:
    """Multi-versioned buffers protected by full / empty barrier pairs between a producer and a consumer."""

    name: str
    buffers: list[Any] = field(default_factory=list)
    num_stages: int = 2
    producer: str = ""
    consumer: str = ""


@dataclass
class WSInstr:
    """One instruction of a role's sequence."""


@dataclass
class WSOpRef(WSInstr):
    """Run the statement annotated with ``WSID == op_id``."""

    op_id: str = ""


@dataclass
class WSSync(WSInstr):
    """Wait on or arrive at a pipeline barrier."""

    pipeline: str = ""
    kind: WSSyncKind = WSSyncKind.FULL
    arrive: bool = False


@dataclass
class WSScope:
    """The per-role instruction sequences of one loop scope."""

    scope_id: str = ""
    roles: dict[str, list[WSInstr]] = field(default_factory=dict)


@dataclass
class WSSchedule:
    """A complete schedule: roles, pipelines and scopes."""

    roles: list[WSRole] = field(default_factory=list)
    pipelines: list[WSPipeline] = field(default_factory=list)
    scopes: list[WSScope] = field(default_factory=list)


def annotate_ws_schedule(schedule: WSSchedule) -> None:
    """Attach a warp-specialisation schedule to the kernel (the ``tl.ws_schedule`` function attribute)."""
    from tilelang.frontend import state as _state

    assert isinstance(schedule, WSSchedule), f"annotate_ws_schedule expects a T.WSSchedule object, got {type(schedule)}"
    st = _state.require("T.annotate_ws_schedule")
    st.func_attrs["tl.ws_schedule"] = repr(schedule)


def ws_op(op_id: str) -> Any:
    """``with T.ws_op("id"):`` names the enclosed statements one warp-specialisation op (an ``AttrStmt``)."""
    import tvm
    from tvm.script.ir_builder import tirx as B

    assert isinstance(op_id, str) and op_id, "ws_op id must be a non-empty string"
    return B.attr(tvm.ir.StringImm(op_id), WSID, 0)
