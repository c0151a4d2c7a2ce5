"""ShareScratchTiles: one allocation for all copies of a tile-op's shared scratch tile.

The wgmma lowering re-lays B into a shared ``b_core`` tile per ``T.gemm`` call; software pipelining copies a
gemm into the steady loop and each epilogue step, so a kernel can hold several such tiles (three 32 KiB tiles
for a 256-wide B with ``num_stages=3``), all counted in the block's shared memory. A scratch tile (an
allocation annotated ``tl.cuda.scratch``) is written and read only between two block barriers of the call
that allocates it, and the calls run one after another, so tiles of one shape and dtype can share storage:
the pass keeps one buffer per (shape, dtype, scope), removes the other allocations, renames their uses and
allocates the survivor once in the innermost statement sequence that holds all of its uses. It does so only
when the block's shared tiles would not fit the arch's per-block limit otherwise, or its static ("shared")
tiles the 48 KiB static limit (merging moves code around, which can change register allocation; kernels that
fit are left as they are).
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.backend.sdk import dtype_bytes
from tilelang.transform import utils as C
from tilelang_cuda.tileops.common import arch_number

SCRATCH = "tl.cuda.scratch"
_SHARED = ("shared", "shared.dyn")
MAX_STATIC_SHARED_BYTES = 48 * 1024  # statically declared __shared__ arrays, per block, on every arch


def max_shared_bytes(arch: int) -> int:
    """The most shared memory one block may use (opt-in dynamic limit) on ``sm_<arch>``."""
    if arch >= 90:
        return 227 * 1024
    if arch in (86, 87, 89):
        return 99 * 1024
    return 163 * 1024


def shared_bytes(body: Any, scopes: tuple[str, ...] = _SHARED) -> int:
    """The bytes of all shared allocations (of `scopes`) in `body` (static shapes)."""
    total = 0
    for a in C.allocations(body):
        if C.scope_of(a.buffer) in scopes:
            total += (C.num_elements(a.buffer.ty.shape) or 0) * dtype_bytes(str(a.buffer.ty.dtype))
    return total


def _place(stmt: Any, buf: Any, alloc: Any) -> Any:
    """`stmt` with `alloc` put in front of the innermost sequence holding every use of `buf`."""
    if isinstance(stmt, tirx.SeqStmt):
        users = [n for n, s in enumerate(stmt.seq) if C.uses_var(s, [buf])]
        items = list(stmt.seq)
        if len(users) == 1 and not isinstance(items[users[0]], tirx.Evaluate):
            items[users[0]] = _place(items[users[0]], buf, alloc)
            return tirx.SeqStmt(items)
        return tirx.SeqStmt([alloc, *items])
    if isinstance(stmt, tirx.For):
        return tirx.For(stmt.loop_var, stmt.min, stmt.extent, stmt.kind, _place(stmt.body, buf, alloc),
                        stmt.thread_binding, stmt.annotations)
    if isinstance(stmt, tirx.AttrStmt):
        return tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value, _place(stmt.body, buf, alloc))
    if isinstance(stmt, tirx.IfThenElse) and stmt.else_case is None:
        return tirx.IfThenElse(stmt.condition, _place(stmt.then_case, buf, alloc), None)
    return tirx.SeqStmt([alloc, stmt])


def ShareScratchTiles(target: Any = None) -> tvm.transform.Pass:
    """Merge same-shaped scratch tiles (see the module docstring)."""

    @C.prim_func_pass("cuda.share_scratch_tiles")
    def share(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        allocs = C.collect(func.body, tirx.AllocBuffer, lambda a: SCRATCH in a.annotations)
        groups: dict[tuple, list[Any]] = {}
        for a in allocs:
            ty = a.buffer.ty
            key = (tuple(C.as_int(s) for s in ty.shape), str(ty.dtype), str(ty.storage_scope))
            if None not in key[0]:
                groups.setdefault(key, []).append(a)
        groups = {k: v for k, v in groups.items() if len(v) > 1}
        tgt = target if target is not None else (func.attrs.get("target") if func.attrs else None)
        limit = max_shared_bytes(arch_number(tgt)) if tgt is not None else 0
        fits = shared_bytes(func.body) <= limit and shared_bytes(func.body, ("shared",)) <= MAX_STATIC_SHARED_BYTES
        if not groups or fits:
            return func
        rename = {a.buffer: g[0].buffer for g in groups.values() for a in g[1:]}
        dropped = {a.buffer for g in groups.values() for a in g}

        def on_seq(seq: Any, m: Any) -> Any:
            items = [m.mutate(s) for s in seq.seq
                     if not (isinstance(s, tirx.AllocBuffer) and s.buffer in dropped)]
            return C.seq(items)

        body = tvm_ffi.structural_mutate(func.body, [(tirx.SeqStmt, on_seq)])
        body = C.substitute(body, rename)
        for g in groups.values():
            body = _place(body, g[0].buffer, g[0])
        return C.with_body(func, body)

    return share
