"""``tl.reduce`` on the CPU along the last (contiguous) dimension (registered for llvm / c with priority 1).

Core's generic fold is one serial chain of dependent adds (or max/min) per row, which LLVM may not reorder. Here
each row folds into ``4 x lanes`` independent partial results (one vectorised update per ``4 x lanes`` elements:
four vector registers, enough chains to cover the add latency), halved in a vectorised tree at the end.
Floating-point sums are reassociated, as on a GPU.
"""

from __future__ import annotations

from typing import Any

from tilelang.backend import TileOpImpl
from tilelang_cpu.tileops.common import llvm_vectors

_REDUCE_KINDS = ("sum", "max", "min", "abssum", "absmax")
_REDUCE_UNROLL = 4  # vector registers of partial results per row


def _reduce_dim(ctx: Any) -> int:
    nd = len(ctx.region(0).region)
    dim = ctx.int_arg(3)
    return dim + nd if dim < 0 else dim


def _reduce_chunk(ctx: Any, extent: int) -> int:
    """Partial results per row: ``4 x lanes``, halved until it fits the row."""
    from tilelang_cpu.tileops.gemm import _vector_facts

    lanes, _ = _vector_facts(str(ctx.target))
    chunk = lanes * _REDUCE_UNROLL
    while chunk > extent:
        chunk //= 2
    return chunk


def _reduce_applies(ctx: Any) -> bool:
    from tilelang.transform import utils as C
    from tilelang_cpu.gemm_plan import VECTOR_REDUCE, config

    if not config(VECTOR_REDUCE, True) or ctx.has_threads or not llvm_vectors(ctx) or len(ctx.args) < 4:
        return False
    try:
        src, dst = ctx.region(0), ctx.region(1)
        kind, dim = ctx.str_arg(2), _reduce_dim(ctx)
    except Exception:
        return False
    if kind not in _REDUCE_KINDS or dim != len(src.region) - 1 or str(dst.source.ty.dtype) not in ("float32",
                                                                                                   "float64"):
        return False
    extent = C.as_int(src.region[dim].extent)
    if len(dst.region) == dim + 1 and not C.is_const(dst.region[dim].extent, 1):
        return False  # dst is not src's shape with the reduced dim dropped or kept as 1 (e.g. a row R[0, :])
    same = all(C.as_int(dst.region[d].extent) == C.as_int(src.region[d].extent) for d in range(dim))
    return extent is not None and extent >= 2 and len(dst.region) in (dim, dim + 1) and same


def lower_reduce_cpu(ctx: Any) -> Any:
    """``tl.reduce`` over the last dimension with vectorised partial results (see the module docstring)."""
    from tvm import tirx

    from tilelang.backend.sdk import identity_value, reduce_combine, tileop_utils
    from tilelang.transform import utils as C

    src, dst = ctx.region(0), ctx.region(1)
    kind, dim = ctx.str_arg(2), _reduce_dim(ctx)
    clear = bool(ctx.int_arg(4, 1))
    pre, src = ctx.staged(src)
    dtype = str(dst.source.ty.dtype)
    extent = C.as_int(src.region[dim].extent)
    chunk = _reduce_chunk(ctx, extent)
    steps, tail = divmod(extent, chunk)
    merge = {"abssum": "sum", "absmax": "max"}.get(kind, kind)  # partial results are already absolute
    acc = tirx.decl_buffer([chunk], dtype, name="red_acc", scope="global", data_alignment=64)
    keep = list(range(dim))
    keepdim = len(dst.region) == dim + 1
    vs = [tirx.Var(n, "int32") for n in "ijklmn"[:len(keep)]]
    r = tirx.Var("r", "int32")

    def element(col: Any) -> Any:
        si = [C.add(src.region[d].min, v) for d, v in zip(keep, vs)] + [C.add(src.region[dim].min, col)]
        return tileop_utils.cast(dtype, tirx.BufferLoad(src.source, si))

    def vec(extent_: int, make: Any) -> Any:
        if extent_ == 1:  # TVM refuses one-lane vector loops
            return make(tirx.const(0, "int32"))
        t = tirx.Var("t", "int32")  # one variable per loop: the analyzer binds each loop's range
        return tirx.For(t, 0, extent_, tirx.ForKind.VECTORIZED, make(t))

    def acc_at(index: Any) -> Any:
        return tirx.BufferLoad(acc, [index])

    stmts = [vec(chunk, lambda t: tirx.BufferStore(acc, identity_value(kind, dtype), [t]))]
    update = vec(chunk, lambda t: tirx.BufferStore(acc, reduce_combine(kind, acc_at(t), element(r * chunk + t)), [t]))
    stmts.append(tirx.For(r, 0, steps, tirx.ForKind.SERIAL, update))
    half = chunk // 2
    while half >= 1:
        stmts.append(vec(half, lambda t, h=half: tirx.BufferStore(acc, reduce_combine(merge, acc_at(t), acc_at(t + h)),
                                                                   [t])))
        half //= 2
    if tail:
        rt = tirx.Var("rt", "int32")
        stmts.append(tirx.For(rt, 0, tail, tirx.ForKind.SERIAL,
                              tirx.BufferStore(acc, reduce_combine(kind, acc_at(0), element(steps * chunk + rt)), [0])))
    dvs = [*vs, 0] if keepdim else list(vs)
    di = [C.add(rg.min, v) for rg, v in zip(dst.region, dvs)]
    result = acc_at(0) if clear else reduce_combine(merge, tirx.BufferLoad(dst.source, di), acc_at(0))
    stmts.append(tirx.BufferStore(dst.source, result, di))
    body = C.seq(stmts)
    for v, rg in reversed(list(zip(vs, [src.region[d] for d in keep]))):
        body = tirx.For(v, 0, rg.extent, tirx.ForKind.SERIAL, body)
    return C.seq([*pre, tirx.AllocBuffer(acc), body])


REDUCE = TileOpImpl("tl.reduce", "cpu_vector_partials", lower_reduce_cpu, applies=_reduce_applies, priority=1)
