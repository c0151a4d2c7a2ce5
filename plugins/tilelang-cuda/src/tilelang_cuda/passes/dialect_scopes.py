"""DialectScopes: give the CUDA dialect's scoped constructs the thread range they run in, and apply the register
annotations of warp-specialised kernels.

A TMA copy or a tcgen05 MMA is issued by one thread of the threads that reach it. Those threads are the ones of
the enclosing ``T.ws`` scopes (``AttrStmt("tl.cuda.warp_group")``: warpgroups of 128 threads) and ``if``s on
``threadIdx.x`` (``tx < c``, ``tx >= c``, their ``else``s, ``tx // 128 == i``); the pass appends the range's first
thread and size to each such call (``tl.tma_copy``, ``tl.tcgen05_gemm``, ``tl.tma_gather4`` ...), which its
lowering uses to elect the issuer (`tilelang_cuda.tileops.dialect.tma`).

``T.annotate_producer_reg_dealloc(n)`` / ``T.annotate_consumer_reg_alloc(m)`` (without
``T.no_set_max_nreg()``): the warpgroups of the kernel's ``T.ws`` scopes adjust their registers once, before the
first statement that holds such a scope: ``setmaxnreg.dec n`` for producers (their scopes issue copies and run
no GEMM), ``setmaxnreg.inc m`` for the others. The annotations are removed.

Runs at ``post_layout``, before the tile operators and intrinsics are lowered.
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C

WS_ATTR = "tl.cuda.warp_group"
WARP_GROUP = 128
SCOPED = ("tl.tma_copy", "tl.tcgen05_gemm", "tl.tcgen05_gemm_blockscaled", "tl.tma_gather4", "tl.tma_scatter4",
          "tl.copy_cluster", "tl.tcgen05_cp_warpx4", "tl.tcgen05_mma_arrive")
PRODUCER_OPS = ("tl.tma_copy", "tl.ptx_cp_async", "tl.tma_gather4", "tl.copy", "tl.tma_load")
CONSUMER_OPS = ("tl.gemm", "tl.wgmma_gemm", "tl.tcgen05_gemm", "tl.tcgen05_gemm_blockscaled", "tl.ptx_wgmma_ss",
                "tl.ptx_wgmma_rs", "tl.ptx_wgmma_sp_ss", "tl.ptx_wgmma_sp_rs")
REG_OPS = ("tl.annotate_producer_reg_dealloc", "tl.annotate_consumer_reg_alloc", "tl.no_set_max_nreg")


def _call_name(x: Any) -> str:
    if isinstance(x, tirx.Evaluate):
        x = x.value
    if isinstance(x, tvm.ir.Call) and isinstance(x.op, tvm.ir.Op):
        return str(x.op.name)
    return ""


def _is_tx(e: Any, tx: Any) -> bool:
    return isinstance(e, tvm.ir.Var) and e.same_as(tx)


def _range_of(cond: Any, tx: Any, lo: int, hi: int) -> tuple[int, int] | None:
    """The threadIdx.x range `cond` keeps of [lo, hi) (None: not a condition on threadIdx.x alone)."""
    names = {"LT": "<", "LE": "<=", "GT": ">", "GE": ">=", "EQ": "=="}
    kind = type(cond).__name__
    if kind == "And":
        a = _range_of(cond.a, tx, lo, hi)
        return None if a is None else _range_of(cond.b, tx, *a)
    if kind == "Or":
        a, b = _range_of(cond.a, tx, lo, hi), _range_of(cond.b, tx, lo, hi)
        if a is None or b is None:
            return None
        return min(a[0], b[0]), max(a[1], b[1])
    if kind not in names:
        return None
    op, x, c = names[kind], cond.a, cond.b
    if not _is_tx(x, tx) and _is_tx(c, tx):  # c < tx  ->  tx > c
        x, c = c, x
        op = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "=="}[op]
    scale = 1
    if type(x).__name__ == "FloorDiv" and _is_tx(x.a, tx) and C.as_int(x.b):
        scale, x = C.as_int(x.b), x.a
    value = C.as_int(c)
    if not _is_tx(x, tx) or value is None:
        return None
    if op == "<":
        return lo, min(hi, value * scale)
    if op == "<=":
        return lo, min(hi, (value + 1) * scale)
    if op == ">":
        return max(lo, (value + 1) * scale), hi
    if op == ">=":
        return max(lo, value * scale), hi
    return max(lo, value * scale), min(hi, (value + 1) * scale)


def _negate(cond: Any, tx: Any, lo: int, hi: int) -> tuple[int, int] | None:
    """The range of ``not cond`` when `cond` cuts [lo, hi) at one end."""
    kept = _range_of(cond, tx, lo, hi)
    if kept is None:
        return None
    if kept[0] == lo and kept[1] < hi:
        return kept[1], hi
    if kept[1] == hi and kept[0] > lo:
        return lo, kept[0]
    return None


def _ws_range(attr: Any) -> tuple[int, int]:
    ids = [int(i) for i in str(attr.node.value).split(",")]
    size = C.as_int(attr.value) or WARP_GROUP
    return min(ids) * size, (max(ids) + 1) * size


def _mentions(body: Any, names: tuple[str, ...]) -> bool:
    return bool(C.collect(body, tvm.ir.Call, lambda c: isinstance(c.op, tvm.ir.Op) and c.op.name in names))


def _adjust_registers(body: Any, tx: Any, dealloc: Any, alloc: Any, set_max_nreg: Any) -> Any:
    """``setmaxnreg`` once per warpgroup of the ``T.ws`` scopes, before the first statement holding one."""
    scopes = C.collect(body, tirx.AttrStmt, lambda a: a.attr_key == WS_ATTR)
    if not scopes:
        return body
    roles: dict[int, bool] = {}  # warpgroup -> producer
    for scope in scopes:
        producer = _mentions(scope.body, PRODUCER_OPS) and not _mentions(scope.body, CONSUMER_OPS)
        for group in (int(i) for i in str(scope.node.value).split(",")):
            roles[group] = roles.get(group, True) and producer
    adjust = []
    for group, producer in sorted(roles.items()):
        ann = dealloc if producer else alloc
        if ann is None:
            continue
        cond = tirx.floordiv(tx, WARP_GROUP) == group
        adjust.append(tirx.IfThenElse(cond, set_max_nreg(int(ann.args[0].value), 0 if producer else 1), None))
    if not adjust:
        return body
    done = [False]

    def on_seq(seq: Any, mutator: Any) -> Any:
        if done[0]:
            return seq
        parts = list(seq.seq)
        for i, part in enumerate(parts):
            if C.collect(part, tirx.AttrStmt, lambda a: a.attr_key == WS_ATTR):
                if isinstance(part, tirx.SeqStmt) or (not isinstance(part, (tirx.For, tirx.IfThenElse,
                                                                             tirx.AttrStmt))):
                    break
                if isinstance(part, tirx.AttrStmt) and part.attr_key != WS_ATTR:
                    break
                done[0] = True
                return C.seq([*parts[:i], *adjust, *parts[i:]])
        return mutator.default_mutate(seq)

    out = tvm_ffi.structural_mutate(body, [(tirx.SeqStmt, on_seq)])
    return out if done[0] else C.seq([*adjust, body])


def DialectScopes(target: Any = None) -> tvm.transform.Pass:
    """See the module docstring."""

    @C.prim_func_pass("cuda.dialect_scopes")
    def dialect_scopes(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        ext = C.launch_extents(func)
        if "threadIdx.x" not in ext:
            return func
        tx, tx_extent = ext["threadIdx.x"][0], C.as_int(ext["threadIdx.x"][1]) or 1
        annotations = {_call_name(ev): ev.value for ev in C.collect(func.body, tirx.Evaluate)
                       if _call_name(ev) in REG_OPS}
        scoped = C.collect(func.body, tvm.ir.Call, lambda c: isinstance(c.op, tvm.ir.Op) and c.op.name in SCOPED)
        if not scoped and not annotations:
            return func
        dealloc = annotations.get("tl.annotate_producer_reg_dealloc")
        alloc = annotations.get("tl.annotate_consumer_reg_alloc")
        use_regs = (dealloc is not None or alloc is not None) and "tl.no_set_max_nreg" not in annotations

        def set_max_nreg(count: int, inc: int) -> Any:
            from tilelang_cuda.language._emit import call

            return tirx.Evaluate(call("set_max_nreg", "handle", [count, inc]))

        def walk(node: Any, lo: int, hi: int) -> Any:
            def on_attr(n: Any, mutator: Any) -> Any:
                if n.attr_key != WS_ATTR:
                    return mutator.default_mutate(n)
                a, b = _ws_range(n)
                return tirx.AttrStmt(n.node, n.attr_key, n.value, walk(n.body, max(lo, a), min(hi, b)))

            def on_if(n: Any, mutator: Any) -> Any:
                kept = _range_of(n.condition, tx, lo, hi)
                then = walk(n.then_case, *(kept or (lo, hi)))
                other = None
                if n.else_case is not None:
                    neg = _negate(n.condition, tx, lo, hi)
                    other = walk(n.else_case, *(neg or (lo, hi)))
                return tirx.IfThenElse(n.condition, then, other)

            def on_eval(n: Any, mutator: Any) -> Any:
                name = _call_name(n)
                if name in REG_OPS:
                    return tirx.Evaluate(tirx.IntImm("int32", 0))
                if name in SCOPED:
                    call = n.value
                    extra = [tirx.IntImm("int32", lo), tirx.IntImm("int32", hi - lo)]
                    return tirx.Evaluate(tvm.ir.Call(call.op, [*call.args, *extra], ret_ty=call.ty))
                return n

            return tvm_ffi.structural_mutate(node, [(tirx.AttrStmt, on_attr), (tirx.IfThenElse, on_if),
                                                    (tirx.Evaluate, on_eval)])

        body = walk(func.body, 0, tx_extent)
        if use_regs:
            body = _adjust_registers(body, tx, dealloc, alloc, set_max_nreg)
        return C.with_body(func, body)

    return dialect_scopes
