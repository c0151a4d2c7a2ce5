"""``cpu.lower_launch``: core's host launch lowering (`tilelang.transform.lower_launch_to_host`: block grid -> one
parallel loop, threads emulated by loops split at barriers, shared tiles -> block-local workspace), with this
backend's GEMM operand packing hoisted out of the block loop (`tilelang_cpu.gemm_prepack`) and the row-streaming
block order under ``tl.cpu.row_streaming`` (default on)."""

from __future__ import annotations

from typing import Any

from tilelang.backend.sdk import emulate_threads, per_thread_buffers, stream_rows

__all__ = ["LowerLaunchToCPU", "emulate_threads", "per_thread_buffers", "stream_rows"]


def LowerLaunchToCPU(target: Any = None) -> Any:
    """The ``cpu.lower_launch`` pass."""
    from tilelang.backend.sdk import LowerLaunchToHost
    from tilelang_cpu.gemm_plan import ROW_STREAMING, config
    from tilelang_cpu.gemm_prepack import hoist_block_invariants

    return LowerLaunchToHost(target, name="cpu.lower_launch", hoist_invariants=hoist_block_invariants,
                             stream_rows_when=lambda: config(ROW_STREAMING, True))
