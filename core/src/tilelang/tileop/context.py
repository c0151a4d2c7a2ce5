"""`TileOpContext`: what a tile-op implementation sees when the lowering pass asks it to lower one call."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import tvm
from tvm import tirx

from tilelang.layout import CyclicFragment
from tilelang.transform import utils as C


@dataclass
class TileOpContext:
    """One tile-op call site being lowered.

    op / call / args: the ``tl.*`` op name, its Call and arguments. target: the tvm Target.
    options: the target's `TargetKind.pipeline_options`. num_threads: threads of the block (1 when the target has
    no threads). fragments: the `CyclicFragment` decided by layout inference for each fragment buffer.
    analyzer: an arithmetic analyzer that knows the ranges of the launch and enclosing loop vars.
    thread_range: ``(begin, count)`` when the call sits in a branch on the thread index that only threads
    ``[begin, begin + count)`` of the block run (`tilelang.transform.thread_range`; warp roles), else None.
    """

    op: str
    call: Any
    target: Any
    options: Mapping[str, Any]
    num_threads: int
    fragments: dict[Any, CyclicFragment]
    analyzer: Any
    func: Any = None
    thread_range: tuple[int, int] | None = None
    _scratch: list[Any] = field(default_factory=list)

    @property
    def args(self) -> list[Any]:
        return list(self.call.args)

    @property
    def has_threads(self) -> bool:
        return bool(self.options.get("has_threads", True))

    def region(self, index: int, like: Any = None) -> Any:
        """Argument `index` as a region; an element argument takes the extents of region `like`."""
        from tilelang.ir.region import region_extents, to_region

        arg = self.args[index]
        extents = None if like is None else region_extents(like)
        return to_region(arg, extents)

    def regions(self, i: int, j: int) -> tuple[Any, Any]:
        """Arguments `i` and `j` as regions; an element argument takes the other one's extents."""
        from tilelang.ir.region import is_load

        if is_load(self.args[i]) and not is_load(self.args[j]):
            rj = self.region(j)
            return self.region(i, like=rj), rj
        ri = self.region(i)
        return ri, self.region(j, like=ri)

    def int_arg(self, index: int, default: int = 0) -> int:
        args = self.args
        if index >= len(args):
            return default
        value = C.as_int(args[index])
        if value is None:
            raise self.error(f"argument {index} of {self.op} must be a constant integer, got {args[index]}")
        return value

    def str_arg(self, index: int, default: str = "") -> str:
        args = self.args
        if index >= len(args):
            return default
        arg = args[index]
        return str(arg.value) if isinstance(arg, tvm.ir.StringImm) else str(arg)

    def error(self, message: str) -> Exception:
        return C.lowering_error(self.func, f"{self.op}: {message}")

    # ------------------------------------------------------------------ fragments
    def is_partitioned(self, buf: Any) -> bool:
        frag = self.fragments.get(buf)
        return frag is not None and not frag.replicated

    def staged(self, region: Any) -> tuple[list[Any], Any]:
        """`region`, readable by every thread: a partitioned fragment is first copied to a shared scratch tile.

        Returns ``(statements to run first, region to read)``; the scratch write and the reads are ordered by
        the barrier pass.
        """
        buf = region.source
        if not self.is_partitioned(buf):
            return [], region
        scratch = C.buffer_with(buf, scope="shared.dyn", name=f"{buf.name}_stage")
        shape = list(buf.ty.shape)
        fill = C.make_parallel_nest(shape, lambda vs: tirx.BufferStore(scratch, tirx.BufferLoad(buf, vs), vs))
        return [tirx.AllocBuffer(scratch), fill], tirx.BufferRegion(scratch, list(region.region))

    # ------------------------------------------------------------------ bounds
    def in_bounds(self, buf: Any, indices: Sequence[Any]) -> Any:
        """The condition that `indices` lie inside `buf` (None when provably always true)."""
        conds = []
        for index, extent in zip(indices, buf.ty.shape):
            if self.analyzer.can_prove(index < extent) and self.analyzer.can_prove(index >= 0):
                continue
            conds.append(index < extent)
        if not conds:
            return None
        cond = conds[0]
        for c in conds[1:]:
            cond = tirx.And(cond, c)
        return cond

    def bind_loop_vars(self, variables: Sequence[Any], extents: Sequence[Any]) -> None:
        for v, e in zip(variables, extents):
            self.analyzer.bind(v, tvm.ir.Range.from_min_extent(0, e))
