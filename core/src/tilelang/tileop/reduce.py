"""Generic ``tl.reduce``: a parallel nest over the kept dimensions, a serial fold along the reduced one.

Kinds ``sum max min abssum absmax bitand bitor bitxor``; ``clear`` starts from the kind's identity, otherwise
the fold continues from the destination's values. Floating-point ``max`` / ``min`` / ``absmax`` propagate NaN as
``torch.amax`` / ``torch.amin`` do (a row holding a NaN reduces to NaN; `nan_max` / `nan_min`); sums propagate it
by arithmetic. A partitioned-fragment source is staged through shared memory first.
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.backend.tile_ops import TileOpImpl
from tilelang.tileop.utils import cast
from tilelang.transform import utils as C

KINDS = ("sum", "max", "min", "abssum", "absmax", "bitand", "bitor", "bitxor")


def identity_value(kind: str, dtype: str) -> Any:
    is_float = dtype.startswith(("float", "bfloat"))
    if kind in ("sum", "abssum", "absmax", "bitor", "bitxor"):
        return tirx.const(0, dtype)
    if kind == "bitand":  # every bit set
        return tirx.const(-1, dtype) if dtype.startswith("int") else tirx.max_value(dtype)
    if kind == "max":
        return tirx.const(float("-inf"), dtype) if is_float else tirx.min_value(dtype)
    if kind == "min":
        return tirx.const(float("inf"), dtype) if is_float else tirx.max_value(dtype)
    raise ValueError(kind)


def _is_float(dtype: Any) -> bool:
    return str(dtype).startswith(("float", "bfloat"))


def _isnan(x: Any) -> Any:
    # not ``x != x``: TVM's simplifier folds that to false
    dtype = str(x.ty.dtype)
    return tirx.isnan(x if dtype in ("float16", "float32", "float64") else tirx.Cast("float32", x))


def isnan_by_bits(x: Any) -> Any:
    """``x`` (float16 / float32, any lanes) is NaN, read from its float32 bits: exponent all ones, mantissa not
    zero. For backends whose shader compilers may assume no NaN (WGSL, Metal's fast math) and fold ``x != x``."""
    dtype = x.ty.dtype
    lanes = int(dtype.lanes)

    def of(name: str) -> str:
        return name if lanes == 1 else f"{name}x{lanes}"

    def u32(v: int) -> Any:
        c = tirx.IntImm("uint32", v)
        return c if lanes == 1 else tirx.Broadcast(c, lanes)

    if int(dtype.bits) != 32:
        x = tirx.Cast(of("float32"), x)  # a NaN stays a NaN when widened
    return tirx.bitwise_and(tirx.reinterpret(of("uint32"), x), u32(0x7FFFFFFF)) > u32(0x7F800000)


def nan_tests_by_bits(body: Any) -> Any:
    """`body` with every NaN test (``isnan(x)``, and ``x != x``, which TVM lowers it to) of a float16 / float32
    ``x`` made by `isnan_by_bits`."""
    import tvm_ffi
    from tvm.ir import Call, Op

    isnan_op = Op.get("tirx.isnan")

    def small_float(e: Any) -> bool:
        return str(e.ty.dtype).startswith("float") and int(e.ty.dtype.bits) in (16, 32)

    def on_ne(ne: Any) -> Any:
        return isnan_by_bits(ne.a) if small_float(ne.a) and tvm_ffi.structural_equal(ne.a, ne.b) else ne

    def on_call(call: Any) -> Any:
        return isnan_by_bits(call.args[0]) if call.op.same_as(isnan_op) and small_float(call.args[0]) else call

    return tvm_ffi.structural_map(body, [(tirx.NE, on_ne), (Call, on_call)])


def _has_effects(x: Any) -> bool:
    """Whether evaluating `x` does more than compute a value (a warp shuffle, an opaque extern call): such an
    operand must be evaluated once, by every lane, not once per use inside a short-circuiting test."""
    import tvm

    from tilelang.transform import utils as C

    def effectful(call: Any) -> bool:
        op = call.op
        if not isinstance(op, tvm.ir.Op):
            return True
        kind = op.get_attr("TCallEffectKind")
        return kind is None or int(kind) > 1  # above kPure

    return bool(C.collect(x, tvm.ir.Call, effectful))


def _nan_keeping(acc: Any, x: Any, wins: Any) -> Any:
    """``wins(x, acc) or isnan(x) ? x : acc``, with an effectful `x` bound once (`_has_effects`)."""
    if not _has_effects(x):
        return tirx.Select(tirx.Or(wins(x, acc), _isnan(x)), x, acc)
    v = tirx.Var("fold_x", x.ty.dtype)
    return tirx.Let(v, x, tirx.Select(tirx.Or(wins(v, acc), _isnan(v)), v, acc))


def nan_max(acc: Any, x: Any) -> Any:
    """``max(acc, x)`` that is NaN when either operand is (``Max`` itself for integers).

    Backends lower ``Max`` to ``fmax`` / ``max`` or ``a > b ? a : b``, all of which drop a NaN operand.
    """
    if not _is_float(x.ty.dtype):
        return tirx.Max(acc, x)
    return _nan_keeping(acc, x, lambda a, b: a > b)  # a NaN `acc` fails both tests and is kept


def nan_min(acc: Any, x: Any) -> Any:
    """``min(acc, x)`` that is NaN when either operand is (``Min`` itself for integers)."""
    if not _is_float(x.ty.dtype):
        return tirx.Min(acc, x)
    return _nan_keeping(acc, x, lambda a, b: a < b)


def combine(kind: str, acc: Any, x: Any) -> Any:
    """`acc` folded with `x` under reduction `kind` (float max / min propagate NaN, see `nan_max`)."""
    if kind in ("abssum", "absmax"):
        x = tirx.abs(x)
    if kind in ("sum", "abssum"):
        return acc + x
    if kind in ("max", "absmax"):
        return nan_max(acc, x)
    if kind == "bitand":
        return tirx.bitwise_and(acc, x)
    if kind == "bitor":
        return tirx.bitwise_or(acc, x)
    if kind == "bitxor":
        return tirx.bitwise_xor(acc, x)
    return nan_min(acc, x)


def lower_reduce(ctx: Any) -> Any:
    if len(ctx.args) < 4:
        raise ctx.error("expects (src, dst, kind, dim, clear)")
    src, dst = ctx.region(0), ctx.region(1)
    kind = ctx.str_arg(2)
    if kind not in KINDS:
        raise ctx.error(f"unknown reduction kind {kind!r}; expected one of {', '.join(KINDS)}")
    nd = len(src.region)
    dim = ctx.int_arg(3)
    dim = dim + nd if dim < 0 else dim
    if not 0 <= dim < nd:
        raise ctx.error(f"dim {ctx.int_arg(3)} is out of range for a {nd}-D source")
    clear = bool(ctx.int_arg(4, 1))
    keep = [d for d in range(nd) if d != dim]
    # the kept source dims that are not of extent 1 land, in order, on dst's dims that are not of extent 1
    kept_wide = [d for d in keep if not C.is_const(src.region[d].extent, 1)]
    dst_wide = [d for d, r in enumerate(dst.region) if not C.is_const(r.extent, 1)]
    if len(kept_wide) != len(dst_wide):
        raise ctx.error(f"destination extents {[str(r.extent) for r in dst.region]} do not match the source's "
                        f"kept extents {[str(src.region[d].extent) for d in keep]}")
    pre, src = ctx.staged(src)
    dtype = str(dst.source.ty.dtype)
    ext = [src.region[d].extent for d in keep]

    def body(vs: list[Any]) -> Any:
        r = tirx.Var("r", "int32")
        si = [rg.min for rg in src.region]
        for d, v in zip(keep, vs):
            si[d] = C.add(src.region[d].min, v)
        si[dim] = C.add(src.region[dim].min, r)
        di = [rg.min for rg in dst.region]
        by_dim = dict(zip(keep, vs))
        for sd, dd in zip(kept_wide, dst_wide):
            di[dd] = C.add(dst.region[dd].min, by_dim[sd])
        cur = tirx.BufferLoad(dst.source, di)
        x = cast(dtype, tirx.BufferLoad(src.source, si))
        fold = tirx.For(r, 0, src.region[dim].extent, tirx.ForKind.SERIAL,
                        tirx.BufferStore(dst.source, combine(kind, cur, x), di))
        init = [tirx.BufferStore(dst.source, identity_value(kind, dtype), di)] if clear else []
        return C.seq([*init, fold])

    return C.seq([*pre, C.make_parallel_nest(ext, body)])


REDUCE = TileOpImpl("tl.reduce", "generic", lower_reduce)
