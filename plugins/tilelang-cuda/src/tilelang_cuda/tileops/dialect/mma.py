"""Lowerings of the dialect's warp-level tensor-core instructions: ``ldmatrix``, ``mma.sync`` (dense, sparse
``mma.sp`` and block-scaled) and the accumulator fill / store of ``T.mma_fill`` / ``T.mma_store``."""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.backend.sdk import Lowered
from tilelang_cuda.tileops.dialect.emit import as_u32, ext, lowering
from tilelang_cuda.tileops.dialect.pointers import addr_of
from tilelang_cuda.tileops.dialect.requirements import (
    BASE,
    FP8_MMA,
    LDMATRIX,
    MMA,
    MMA_ANY,
    MMA_BLOCK_SCALE,
    MMA_SM75,
    require,
)


@lowering("ptx_ldmatrix", LDMATRIX)
def _ldmatrix(ctx: Any) -> Any:
    trans, num = ctx.int_arg(0), ctx.int_arg(1)
    src, dst = ctx.args[2], ctx.args[3]
    return ext(f"tl_ldmatrix_x{num}{'_trans' if trans else ''}", dst, src)


_MMA_EXISTING = {("m16n8k16", "fp16", "fp32"): "tl_mma_f16_f32", ("m16n8k16", "bf16", "fp32"): "tl_mma_bf16_f32",
                 ("m16n8k8", "tf32", "fp32"): "tl_mma_tf32_f32", ("m16n8k32", "int8", "int32"): "tl_mma_s8_s32"}
MMA_SM75_SHAPES = ("m16n8k8", "m8n8k16", "m8n8k32")


@lowering("ptx_mma", MMA_ANY)
def _mma(ctx: Any) -> Any:
    from tilelang_cuda.intrinsics.mma_sync import helper_name

    args = list(ctx.args)
    shape, a_t, b_t, c_t = (str(args[i].value) for i in (1, 2, 3, 4))
    a, b, c = args[5], args[6], args[7]
    require(ctx, MMA_SM75 if shape in MMA_SM75_SHAPES and a_t != "fp64" else MMA)
    name = _MMA_EXISTING.get((shape, a_t, c_t)) if a_t == b_t else None
    if name is None:
        try:
            name = helper_name(shape, a_t, b_t, c_t)
        except ValueError as exc:
            raise ctx.error(str(exc)) from None
    return ext(name, addr_of(c), addr_of(a), addr_of(b))


# (shape, A type, C type) -> (mma.sp helper, A element bits)
_MMA_SP = {("m16n8k32", "fp16", "fp32"): ("tl_mma_sp_f16_f32", 16),
           ("m16n8k32", "bf16", "fp32"): ("tl_mma_sp_bf16_f32", 16),
           ("m16n8k64", "int8", "int32"): ("tl_mma_sp_s8_s32", 8),
           ("m16n8k64", "e4m3", "fp32"): ("tl_mma_sp_e4m3_f32", 8),
           ("m16n8k64", "e5m2", "fp32"): ("tl_mma_sp_e5m2_f32", 8)}


@lowering("ptx_mma_sp", MMA)
def _mma_sp(ctx: Any) -> Any:
    args = list(ctx.args)
    shape, a_t, b_t, c_t = (str(args[i].value) for i in (1, 2, 3, 4))
    a, b, c, e = args[5], args[6], args[7], args[8]
    found = _MMA_SP.get((shape, a_t, c_t)) if a_t == b_t else None
    if found is None:
        supported = ", ".join(f"{s} {t} -> {ct}" for s, t, ct in _MMA_SP)
        raise ctx.error(f"has no sparse mma for {shape} {a_t} x {b_t} -> {c_t}; supported: {supported}")
    if ctx.int_arg(9) != 0:
        raise ctx.error(f"uses sparsity selector {ctx.int_arg(9)}; this backend emits selector 0 (metadata from "
                        "the first threads of each quad)")
    require(ctx, FP8_MMA if a_t in ("e4m3", "e5m2") else MMA)
    name, bits = _MMA_SP[(shape, a_t, c_t)]
    b_hi = tirx.BufferLoad(b.source, [*list(b.indices)[:-1], b.indices[-1] + 2 * 32 // bits])
    meta = ext("tl_u32_at", addr_of(e), dtype="uint32")
    return ext(name, addr_of(c), addr_of(a), addr_of(b), addr_of(b_hi), meta)


@lowering("ptx_mma_block_scale", MMA_BLOCK_SCALE)
def _mma_block_scale(ctx: Any) -> Any:
    from tilelang_cuda.intrinsics.mma_sync import block_scale_helper_name

    args = list(ctx.args)
    shape, kind = str(args[1].value), str(args[2].value)
    a_t, b_t, stype = (str(args[i].value) for i in (4, 5, 6))
    name = block_scale_helper_name(shape, kind, ctx.int_arg(3), a_t, b_t, stype)
    a, b, c = args[7], args[8], args[9]
    sels = [tirx.Cast("uint16", x) for x in args[12:16]]
    return ext(name, addr_of(c), addr_of(a), addr_of(b), as_u32(args[10]), as_u32(args[11]), *sels)


@lowering("mma_fill", BASE)
def _mma_fill(ctx: Any) -> Any:
    n = ctx.int_arg(1)
    load = ctx.args[2]
    buf, idx = load.source, list(load.indices)
    zero = tirx.const(0, str(buf.ty.dtype))
    return Lowered(None, [tirx.BufferStore(buf, zero, [*idx[:-1], idx[-1] + i]) for i in range(n)])


@lowering("mma_store", MMA)
def _mma_store(ctx: Any) -> Any:
    m, n = ctx.int_arg(1), ctx.int_arg(2)
    if (m, n) != (16, 16):
        raise ctx.error(f"stores 16 x 16 accumulator tiles, got {m} x {n}")
    dst, src, stride = ctx.args[3], ctx.args[4], ctx.args[5]
    return ext("tl_mma_store_16x16", dst, addr_of(src), stride, tirx.Cast("int32", ctx.linear_thread() % 32))
