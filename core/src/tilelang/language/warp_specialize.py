"""The reference's ``tilelang.language.warp_specialize`` module path: the warp-specialisation schedule objects
(`tilelang.language.ws_schedule`); the CUDA backend performs the specialisation."""

from tilelang.language.ws_schedule import (
    WSID,
    WSInstr,
    WSOpRef,
    WSPipeline,
    WSRole,
    WSSchedule,
    WSScope,
    WSSync,
    WSSyncKind,
    annotate_ws_schedule,
    ws_op,
)

__all__ = ["WSID", "WSInstr", "WSOpRef", "WSPipeline", "WSRole", "WSSchedule", "WSScope", "WSSync", "WSSyncKind",
           "annotate_ws_schedule", "ws_op"]
