"""Warp specialisation: ``with T.ws(1):`` runs its body on warpgroup 1 only (threads 128..255 of the block).

A scope is an ``if`` on the thread's warpgroup around an ``AttrStmt("tl.cuda.warp_group", ...)`` that names the
warpgroups; `tilelang_cuda.tileops.dialect` reads it to start producer / consumer scopes with ``setmaxnreg`` when
the kernel asks for it (``T.annotate_producer_reg_dealloc`` / ``T.annotate_consumer_reg_alloc``).
"""

from __future__ import annotations

import contextlib
from typing import Any

from tilelang.errors import KernelSyntaxError, KernelTypeError
from tilelang_cuda.language._emit import const_int, public

__all__ = ["WarpSpecialize", "WarpSpecializeFrame", "ws"]

WARP_GROUP_SIZE = 128
ATTR_KEY = "tl.cuda.warp_group"


class WarpSpecializeFrame:
    """The scope of ``T.ws(...)``: entered, the following statements run only on the named warpgroups."""

    def __init__(self, warp_group_ids: list[int]):
        self.warp_group_ids = warp_group_ids
        self._stack: contextlib.ExitStack | None = None

    def __enter__(self) -> WarpSpecializeFrame:
        import tvm
        from tvm import tirx
        from tvm.script.ir_builder import tirx as B

        from tilelang.backend.sdk import require_build_state

        st = require_build_state("T.ws")
        if not st.launches:
            raise KernelSyntaxError("T.ws must be used inside a T.Kernel")
        launch = st.launches[-1]
        tid = launch.thread_vars[0]  # T.ws partitions threadIdx.x (the reference's warpgroups of 128 threads)
        group = tirx.floordiv(tid, WARP_GROUP_SIZE)
        cond = None
        for i in self.warp_group_ids:
            c = group == i
            cond = c if cond is None else tirx.Or(cond, c)
        stack = contextlib.ExitStack()
        stack.enter_context(B.If(cond))
        stack.enter_context(B.Then())
        node = tvm.ir.StringImm(",".join(str(i) for i in self.warp_group_ids))
        stack.enter_context(B.attr(node, ATTR_KEY, tirx.IntImm("int32", WARP_GROUP_SIZE)))
        self._stack = stack
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._stack is not None:
            self._stack.__exit__(*exc)
            self._stack = None


@public
def WarpSpecialize(*warp_group_idx: int) -> WarpSpecializeFrame:
    """``with T.WarpSpecialize(0):`` / ``T.ws(0, 1)``: the body runs on the listed warpgroups (128 threads each)."""
    if not warp_group_idx:
        raise KernelTypeError("T.ws needs at least one warpgroup index")
    ids = [const_int(i, "T.ws warpgroup index") for i in warp_group_idx]
    if any(i < 0 for i in ids):
        raise KernelTypeError(f"T.ws: warpgroup indices must be non-negative, got {ids}")
    return WarpSpecializeFrame(ids)


ws = WarpSpecialize
