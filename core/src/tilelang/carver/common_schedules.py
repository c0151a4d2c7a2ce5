"""Schedule helpers on `BlockInfo` lists: find blocks by name or by output, inline what can be inlined."""

from __future__ import annotations

from collections.abc import Callable

from tvm.s_tir import Schedule
from tvm.s_tir.schedule import SBlockRV

from tilelang.carver.analysis import BlockInfo, func_buffers

__all__ = ["get_block", "get_output_blocks", "try_inline", "try_inline_contiguous_spatial"]


def get_block(sch: Schedule, blocks: list[BlockInfo], name: str) -> SBlockRV | None:
    """The block named `name` (the last one when several share it), None when absent."""
    found = None
    for info in blocks:
        if sch.get(info.block_rv).name_hint == name:
            found = info.block_rv
    return found


def get_output_blocks(sch: Schedule, blocks: list[BlockInfo]) -> list[SBlockRV]:
    """The blocks that write a parameter of the scheduled function."""
    from tilelang.carver.utils import retrieve_func_from_module

    params = func_buffers(retrieve_func_from_module(sch.mod))
    out = []
    for info in blocks:
        for write in sch.get(info.block_rv).writes:
            if any(write.source.same_as(p) for p in params):
                out.append(info.block_rv)
    return out


def try_inline(sch: Schedule, blocks: list[BlockInfo]) -> list[BlockInfo]:
    """Inline blocks (into their consumers, else into their producer) while any can be; return the rest."""
    def first_that(inline: Callable[[SBlockRV], None]) -> int | None:
        for i, info in enumerate(blocks):
            try:
                inline(info.block_rv)
            except Exception:
                continue
            return i
        return None

    while True:
        i = first_that(sch.compute_inline)
        if i is None:
            i = first_that(sch.reverse_compute_inline)
        if i is None:
            return blocks
        blocks.pop(i)


def try_inline_contiguous_spatial(sch: Schedule, block_infos: list[BlockInfo] | None) -> list[BlockInfo] | None:
    """Inline each run of consecutive spatial (injective) blocks; keep the other blocks in order."""
    if block_infos is None:
        return None
    out: list[BlockInfo] = []
    run: list[BlockInfo] = []
    for info in block_infos:
        if info.is_injective():
            run.append(info)
            continue
        if run:
            out.extend(try_inline(sch, run))
            run = []
        out.append(info)
    if run:
        out.extend(try_inline(sch, run))
    return out
