"""Lowerings of ``T.cooperative_tensor_*`` (`tilelang_metal.language.cooperative_tensor`) under a ``metal4`` target.

A cooperative-tensor buffer keeps ``n / 32`` elements per lane (`CooperativeTensorStorage` turns its allocation
into a ``local`` array of that size after this lowering); tile `idx` of ``rows x cols`` is the lane's elements
from ``idx * rows * cols / 32``, 8 per 16x16 piece in `tilelang_metal.mpp`'s lane map.

- fill: an unrolled loop over the tile's elements of the lane;
- load / store: an unrolled loop moving each element between the lane's registers and the memory the pointer
  (``T.access_ptr(buf[i, j])``, ``T.address_of(buf[i, j])`` or ``buf.access_ptr(...)``) addresses, as ordinary
  buffer accesses (barrier insertion sees them), converting between the two dtypes;
- multiply-accumulate: a call of the MSL helper ``tl_mpp_ct_mma_<a><b><c>`` (`tilelang_metal.mpp`), which runs
  ``matmul2d(16, 32, 16)`` on ``execution_simdgroup``.

A target without ``metal4`` (or another kind) refuses each with a LoweringError naming the construct.
"""

from __future__ import annotations

from typing import Any

import tvm
from tvm import tirx

from tilelang.backend import TileOpImpl
from tilelang.backend.sdk import Lowered
from tilelang.transform import utils as C
from tilelang_metal.utils import COOPERATIVE_TENSOR_SCOPE

LANES = 32
PIECE = 16  # the 16x16 pieces a tile is kept in
MMA_SHAPE = (16, 32, 16)
TENSOR_DTYPES = ("float16", "bfloat16", "float32")
MSL_TYPE = {"float16": "half", "bfloat16": "bfloat", "float32": "float"}
_MEMORY = ("global", "shared", "shared.dyn")


def _is_metal(target: Any) -> bool:
    from tilelang_metal.target import target_is_metal

    return target_is_metal(target)


def _require_metal4(ctx: Any) -> None:
    from tilelang_metal.target import target_metal_supports_metal4

    if not target_metal_supports_metal4(ctx.target):
        raise ctx.error("needs Metal 4 cooperative tensors (MetalPerformancePrimitives, Apple M5 and newer); the "
                        "target has no \"metal4\" key",
                        "compile for {\"kind\": \"metal\", \"keys\": [\"metal\", \"gpu\", \"metal4\"]}, or use "
                        "T.gemm / T.simdgroup_* on older GPUs")


def tensor_buffer(ctx: Any, operand: Any, role: str) -> tuple[Any, int]:
    """``(buffer, elements per lane)`` of a cooperative-tensor operand, checked."""
    buf = operand.source
    scope = C.scope_of(buf)
    if scope != COOPERATIVE_TENSOR_SCOPE:
        raise ctx.error(f"{role} {buf.name} is a {scope!r} buffer; cooperative tensors are allocated with "
                        f"T.alloc_local((n,), dtype, scope=\"{COOPERATIVE_TENSOR_SCOPE}\")")
    problem = storage_problem(buf)
    if problem:
        raise ctx.error(problem)
    return buf, int(C.as_int(buf.ty.shape[0])) // LANES


def storage_problem(buf: Any) -> str | None:
    """Why `buf` cannot be a cooperative tensor, or None."""
    shape = list(buf.ty.shape)
    n = C.as_int(shape[0]) if len(shape) == 1 else None
    if n is None or n <= 0 or n % 64:
        return (f"cooperative tensor {buf.name} must have a one-dimensional constant shape (n,) with n a multiple "
                f"of 64 (n / 32 elements per lane), got {[str(s) for s in shape]}")
    if str(buf.ty.dtype) not in TENSOR_DTYPES:
        return (f"cooperative tensor {buf.name} must be float16, bfloat16 or float32, got {buf.ty.dtype}")
    return None


def _const(ctx: Any, index: int, what: str) -> int:
    value = C.as_int(ctx.args[index])
    if value is None:
        raise ctx.error(f"{what} must be a constant integer, got {ctx.args[index]}")
    return value


def _tile(ctx: Any, rows_at: int, what: str) -> tuple[int, int]:
    rows, cols = _const(ctx, rows_at, "rows"), _const(ctx, rows_at + 1, "cols")
    if rows <= 0 or cols <= 0 or rows % PIECE or cols % PIECE:
        raise ctx.error(f"{what} tiles are kept in 16x16 pieces: rows and cols must be positive multiples of 16, "
                        f"got {rows}x{cols}")
    return rows, cols


def _check_index(ctx: Any, buf: Any, per_lane: int, idx: Any, elems: int, what: str) -> None:
    i = C.as_int(idx)
    if i is not None and (i < 0 or (i + 1) * elems > per_lane):
        raise ctx.error(f"{what} tile {i} of {buf.name} needs per-lane elements [{i * elems}, {(i + 1) * elems}), "
                        f"but {buf.name} holds {per_lane} per lane ({per_lane * LANES} elements in all)")


def _lane_corner(ctx: Any) -> tuple[Any, Any]:
    """The lane's first row and column in a 16x16 piece (`tilelang_metal.mpp`'s lane map)."""
    lane = tirx.floormod(ctx.linear_thread(), LANES)
    row = tirx.floordiv(lane, 16) * 4 + tirx.floormod(tirx.floordiv(lane, 2), 4)
    col = (tirx.floormod(tirx.floordiv(lane, 8), 2) * 2 + tirx.floormod(lane, 2)) * 4
    return row, col


def _element(q: Any, cols: int, row0: Any, col0: Any) -> tuple[Any, Any]:
    """Row and column in the tile of the lane's element `q` of it."""
    piece, half, e = tirx.floordiv(q, 8), tirx.floormod(tirx.floordiv(q, 4), 2), tirx.floormod(q, 4)
    per_row = cols // PIECE
    return (tirx.floordiv(piece, per_row) * PIECE + row0 + half * 8,
            tirx.floormod(piece, per_row) * PIECE + col0 + e)


def _unrolled(count: int, body: Any) -> Any:
    q = tirx.Var("q", "int32")
    return tirx.For(q, 0, count, tirx.ForKind.UNROLLED, body(q))


# ------------------------------------------------------------------------------------------------ memory
def _memory(ctx: Any, ptr: Any, what: str) -> tuple[Any, list[Any] | None, Any]:
    """``(buffer, element indices or None, flat offset or None)`` of the memory `ptr` addresses."""
    from tilelang.ir import region as R

    if isinstance(ptr, tvm.ir.Call) and isinstance(ptr.op, tvm.ir.Op):
        name = str(ptr.op.name)
        if name in ("tl.access_ptr", "tirx.address_of") and ptr.args and R.is_load(ptr.args[0]):
            load = ptr.args[0]
            return load.source, list(load.indices), None
        if name == "tirx.tvm_access_ptr":
            data = ptr.args[1]
            if isinstance(data, tvm.ir.Call) and str(getattr(data.op, "name", "")) == "tirx.buffer_data":
                data = data.args[0]
            if R.is_buffer(data):
                return data, None, ptr.args[2]
    raise ctx.error(f"the {what} pointer must be T.access_ptr(buf[i, j]), T.address_of(buf[i, j]) or "
                    f"buf.access_ptr(...) of a threadgroup or device buffer, got {ptr}")


def _memory_access(ctx: Any, ptr: Any, stride: Any, what: str) -> tuple[Any, Any]:
    """``(buffer, (row, col) -> indices)`` for element ``(row, col)`` of the block at `ptr` (row stride `stride`)."""
    buf, base, flat = _memory(ctx, ptr, what)
    scope = C.scope_of(buf)
    if scope not in _MEMORY:
        raise ctx.error(f"{what} reaches {buf.name}, a {scope!r} buffer; cooperative tensors move from and to "
                        "threadgroup (T.alloc_shared) or device (global) memory")
    shape, strides = list(buf.ty.shape), list(buf.strides)
    row_length = strides[-2] if len(strides) >= 2 else shape[-1]
    if base is not None and len(shape) >= 2 and _provably_equal(stride, row_length):
        def at(r: Any, c: Any) -> list[Any]:
            return [*base[:-2], base[-2] + r, base[-1] + c]

        return buf, at
    if strides:
        raise ctx.error(f"{what} of {buf.name}, a buffer with explicit strides, must use its row stride "
                        f"({row_length}) and an element pointer (T.access_ptr(buf[i, j])), got stride {stride}")
    if flat is None:
        flat = 0
        for i, extent in zip(base, shape):
            flat = flat * extent + i

    def unravel(r: Any, c: Any) -> list[Any]:
        pos = flat + r * stride + c
        out = []
        for extent in reversed(shape[1:]):
            out.append(tirx.floormod(pos, extent))
            pos = tirx.floordiv(pos, extent)
        return [pos, *reversed(out)]

    return buf, unravel


def _provably_equal(a: Any, b: Any) -> bool:
    from tvm import arith

    return bool(arith.Analyzer().can_prove_equal(a, b))


def _move(ctx: Any, store: bool) -> Lowered:
    what = "store" if store else "load"
    _require_metal4(ctx)
    buf, per_lane = tensor_buffer(ctx, ctx.args[0], "the tensor")
    rows, cols = _tile(ctx, 4, f"T.cooperative_tensor_{what}")
    elems = rows * cols // LANES
    idx, ptr, stride, transposed = ctx.args[1], ctx.args[2], ctx.args[3], ctx.args[6]
    _check_index(ctx, buf, per_lane, idx, elems, what)
    flag = C.as_int(transposed)
    if flag is None:
        raise ctx.error(f"transposed must be a constant bool, got {transposed}")
    mem, at = _memory_access(ctx, ptr, stride, what)
    row0, col0 = _lane_corner(ctx)

    def body(q: Any) -> Any:
        r, c = _element(q, cols, row0, col0)
        indices = at(c, r) if flag else at(r, c)
        reg = [idx * elems + q]
        if store:
            return tirx.BufferStore(mem, tirx.Cast(str(mem.ty.dtype), tirx.BufferLoad(buf, reg)), indices)
        return tirx.BufferStore(buf, tirx.Cast(str(buf.ty.dtype), tirx.BufferLoad(mem, indices)), reg)

    return Lowered(None, [_unrolled(elems, body)])


def lower_load(ctx: Any) -> Lowered:
    """Tile `idx` from memory, element by element in the lane map."""
    return _move(ctx, store=False)


def lower_store(ctx: Any) -> Lowered:
    """Tile `idx` to memory, element by element in the lane map."""
    return _move(ctx, store=True)


def lower_fill(ctx: Any) -> Lowered:
    """Every element of the lane's part of tile `idx` set to the value."""
    _require_metal4(ctx)
    buf, per_lane = tensor_buffer(ctx, ctx.args[0], "the tensor")
    rows, cols = _tile(ctx, 3, "T.cooperative_tensor_fill")
    elems = rows * cols // LANES
    idx, value = ctx.args[1], ctx.args[2]
    _check_index(ctx, buf, per_lane, idx, elems, "fill")
    dtype = str(buf.ty.dtype)
    return Lowered(None, [_unrolled(elems, lambda q: tirx.BufferStore(buf, tirx.Cast(dtype, value),
                                                                       [idx * elems + q]))])


def lower_mma(ctx: Any) -> Lowered:
    """``c[c_idx] = a[a_idx] @ b[b_idx] + d[d_idx]``: one call of the MSL helper on the lanes' elements."""
    from tilelang_metal.mpp import ct_mma_name

    _require_metal4(ctx)
    shape = tuple(_const(ctx, i, name) for i, name in ((8, "m"), (9, "n"), (10, "k")))
    if shape != MMA_SHAPE:
        raise ctx.error(f"runs MetalPerformancePrimitives matmul2d on 16x32x16 tiles (the shape whose lane map "
                        f"the loads and stores use); got m, n, k = {shape}",
                        "split the product into 16x32 C tiles over K steps of 16")
    m, n, k = shape
    (c, c_lane), (a, a_lane), (b, b_lane), (d, d_lane) = (
        tensor_buffer(ctx, ctx.args[i], role) for i, role in ((0, "c"), (2, "a"), (4, "b"), (6, "d")))
    ta, tb, tc, td = (str(x.ty.dtype) for x in (a, b, c, d))
    if ta != tb or ta == "float32":
        raise ctx.error(f"a and b must both be float16 or both bfloat16, got {a.name}: {ta}, {b.name}: {tb}")
    if tc != td or tc not in ("float32", ta):
        raise ctx.error(f"c and d must have one dtype, float32 or a's ({ta}), got {c.name}: {tc}, {d.name}: {td}")
    operands = []
    for buf, per_lane, i, elems, role in ((c, c_lane, 1, m * n // LANES, "c"), (a, a_lane, 3, m * k // LANES, "a"),
                                          (b, b_lane, 5, k * n // LANES, "b"), (d, d_lane, 7, m * n // LANES, "d")):
        _check_index(ctx, buf, per_lane, ctx.args[i], elems, f"multiply_accumulate {role}")
        operands.append(tirx.address_of(tirx.BufferLoad(buf, [ctx.args[i] * elems])))
    return Lowered(None, [tirx.Evaluate(tirx.call_extern("void", ct_mma_name(ta, tc), *operands))])


# ------------------------------------------------------------------------------------------------ registration
_LOWER = {
    "tl.cooperative_tensor_fill": lower_fill,
    "tl.cooperative_tensor_load": lower_load,
    "tl.cooperative_tensor_store": lower_store,
    "tl.cooperative_tensor_multiply_accumulate": lower_mma,
}


def _ensure_ops() -> None:
    from tilelang.ir import register_intrinsic
    from tilelang_metal.language.cooperative_tensor import OPS

    for op, doc in OPS.items():
        register_intrinsic(op, "opaque", doc)


def metal_impls() -> tuple[TileOpImpl, ...]:
    _ensure_ops()
    return tuple(TileOpImpl(op, "metal_cooperative_tensor", fn, supports_target=_is_metal, priority=10)
                 for op, fn in sorted(_LOWER.items()))


_elsewhere_registered = False


def register_elsewhere() -> None:
    """For targets other than Metal: a LoweringError naming the construct as Metal 4's (registered once)."""
    global _elsewhere_registered
    if _elsewhere_registered:
        return
    from tilelang.backend import ANY_TARGET, register_tile_op_impl

    def lower(ctx: Any) -> Any:
        raise ctx.error(f"is a Metal 4 construct (MetalPerformancePrimitives cooperative tensors); target kind "
                        f"{ctx.target_kind!r} does not have it", "use a metal4 target, or T.gemm")

    _ensure_ops()
    for op in sorted(_LOWER):
        register_tile_op_impl(TileOpImpl(op, "metal_cooperative_tensor_elsewhere", lower,
                                         supports_target=lambda t: not _is_metal(t), priority=-1),
                              target_kind=ANY_TARGET)
    _elsewhere_registered = True


IMPLS = metal_impls()
