"""``T.wgmma_gemm``: a ``T.gemm`` that must lower to Hopper wgmma and leaves its batch in flight (and
``T.wgmma_gemm_sp``: a ``T.gemm_sp`` that must lower to ``wgmma.mma_async.sp``, handled alike).

`WgmmaGemmAsGemm` (``pre_layout``) turns each ``tl.wgmma_gemm(A, B, C, trans_A, trans_B, policy, clear)`` into the
tile operator ``tl.gemm`` (``tl.wgmma_gemm_sp``: ``tl.gemm_sp``) with the same operands, wrapped in
``AttrStmt("tl.cuda.wgmma_gemm")`` (value 2 for the sparse one): layout inference gives C the accumulator
layout of a gemm and the gemm lowering (`tilelang_cuda.tileops.gemm`) emits the wgmma batch. A target
without wgmma (not sm_90a) or an accumulator that is not a fragment is refused here.

`WgmmaGemmNoWait` (``post_tile_lowering``, before the async pipeline) checks that each wrapped gemm became wgmma
(an operand pattern that lowers to mma.sync instead, e.g. fewer than 64 rows per warpgroup, is a
``LoweringError``: no silent fallback), and drops the batch's closing ``wgmma.wait_group 0`` and the barrier after
it: ``T.wait_wgmma(n)`` / ``T.warpgroup_wait(n)`` retire it. (A gemm in an RS form, whose A registers or relaid B
the next gemm rewrites, keeps its wait: correct, only less overlapped.) Each of those waits is followed by the
register fence of every such accumulator (``tl_wgmma_fence_acc``), so no read of C is scheduled above the wait.
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C

ATTR = "tl.cuda.wgmma_gemm"
PHRASE = "T.wgmma_gemm() requires Hopper WGMMA lowering"
_ISSUE_PREFIXES = ("tl_wgmma_ss_", "tl_wgmma_rs_", "tl_wgmma_m64", "tl_wgmma_sp_")
# the explicit op -> (the tile operator it becomes, its argument count, C's index)
_AS = {"tl.wgmma_gemm": ("tl.gemm", 7, 2), "tl.wgmma_gemm_sp": ("tl.gemm_sp", 9, 3)}


def _phrase(op: str) -> str:
    return PHRASE if op == "tl.wgmma_gemm" else PHRASE.replace("wgmma_gemm()", op[3:] + "()")
_WAITS = ("tl_warpgroup_wait_n", "tl_wgmma_wait_group")


def _extern_name(x: Any) -> str:
    if isinstance(x, tirx.Evaluate):
        x = x.value
    if isinstance(x, tvm.ir.Call) and isinstance(x.op, tvm.ir.Op) and x.op.name == "tirx.call_extern":
        return str(x.args[0].value)
    return ""


def WgmmaGemmAsGemm(target: Any = None) -> tvm.transform.Pass:
    """See the module docstring."""

    @C.prim_func_pass("cuda.wgmma_gemm_as_gemm")
    def as_gemm(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        calls = C.collect(func.body, tvm.ir.Call, lambda c: isinstance(c.op, tvm.ir.Op) and c.op.name in _AS)
        if not calls:
            return func
        from tilelang.ir import tile_call
        from tilelang_cuda.tileops.dialect.requirements import WGMMA, missing

        tgt = target if target is not None else (func.attrs.get("target") if func.attrs else None)
        lacking = missing(tgt, WGMMA) if tgt is not None else None
        if lacking is not None:
            raise C.lowering_error(func, f"{_phrase(calls[0].op.name)} on target 'cuda': " + "; ".join(lacking))
        for call in calls:
            c = call.args[_AS[call.op.name][2]]
            scope = C.scope_of(c.source) if isinstance(c, tvm.ir.TensorRegion) else None
            if scope not in ("local.fragment", "local"):
                raise C.lowering_error(func, f"{_phrase(call.op.name)}: its accumulator C must be a fragment "
                                             f"(T.alloc_fragment), got {scope or c}")

        def on_eval(ev: Any, m: Any) -> Any:
            call = ev.value
            if not (isinstance(call, tvm.ir.Call) and isinstance(call.op, tvm.ir.Op) and call.op.name in _AS):
                return ev
            op, nargs, _ = _AS[call.op.name]
            gemm = tirx.Evaluate(tile_call(op, list(call.args[:nargs])))
            sparse = tirx.IntImm("int32", 2 if op == "tl.gemm_sp" else 1)
            return tirx.AttrStmt(tirx.IntImm("int32", 0), ATTR, sparse, gemm)

        return C.with_body(func, tvm_ffi.structural_mutate(func.body, [(tirx.Evaluate, on_eval)]))

    return as_gemm


def WgmmaGemmNoWait(target: Any = None) -> tvm.transform.Pass:
    """See the module docstring."""

    @C.prim_func_pass("cuda.wgmma_gemm_no_wait")
    def no_wait(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        if not C.collect(func.body, tirx.AttrStmt, lambda a: str(a.attr_key) == ATTR):
            return func
        from tilelang_cuda.tileops.common import addr
        from tilelang_cuda.tileops.gemm import FENCE_ACC, WAIT

        accumulators: list[Any] = []

        def on_attr(a: Any, m: Any) -> Any:
            if str(a.attr_key) != ATTR:
                return m.default_mutate(a)
            issues = C.collect(a.body, tvm.ir.Call, lambda c: _extern_name(c).startswith(_ISSUE_PREFIXES))
            if not issues and C.as_int(a.value) == 2:
                raise C.lowering_error(func, f"{_phrase('tl.wgmma_gemm_sp')}: this sparse gemm does not lower to "
                                             "wgmma.mma_async.sp here (the tilelang-cuda backend issues it for "
                                             "float16 / bfloat16 operands into float32 accumulators, 64 accumulator "
                                             "rows per warpgroup); use T.gemm_sp")
            if not issues:
                raise C.lowering_error(func, f"{PHRASE}: this gemm does not lower to wgmma here (the "
                                             "tilelang-cuda backend issues wgmma for float16 / bfloat16 / tf32 "
                                             "operands into float32 and int8 into int32 accumulators, 64 "
                                             "accumulator rows per warpgroup); use T.gemm")
            for c in issues:
                acc = c.args[1]
                if isinstance(acc, tvm.ir.Call) and acc.op.name == "tirx.address_of":
                    buf = acc.args[0].source
                    if not any(buf.same_as(b) for b in accumulators):
                        accumulators.append(buf)
            body = a.body
            if any(not _extern_name(c).startswith("tl_wgmma_ss_") for c in issues):
                # an RS form (wgmma.sp among them) reads registers (A staged by ldmatrix, a relaid B) that the next
                # gemm rewrites: the batch keeps its wait (T.wait_wgmma then finds nothing in flight)
                return body
            parts = list(body.seq) if isinstance(body, tirx.SeqStmt) else [body]
            # [..., commit, wait_group 0, __syncthreads()] -> [..., commit]
            for i in range(len(parts) - 1, -1, -1):
                if _extern_name(parts[i]) == WAIT:
                    parts = parts[:i]
                    break
            return C.seq(parts)

        body = tvm_ffi.structural_mutate(func.body, [(tirx.AttrStmt, on_attr)])

        def on_eval(ev: Any, m: Any) -> Any:
            if _extern_name(ev) not in _WAITS or not accumulators:
                return ev
            fences = [tirx.Evaluate(tirx.call_extern("void", FENCE_ACC, addr(b, [0] * len(b.shape)),
                                                     C.num_elements(b.ty.shape))) for b in accumulators]
            return C.seq([ev, *fences])

        body = tvm_ffi.structural_mutate(body, [(tirx.Evaluate, on_eval)])
        return C.with_body(func, body)

    return no_wait
