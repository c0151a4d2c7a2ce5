"""Lowerings of the dialect's raw wgmma instructions on shared-memory descriptors (``T.ptx_wgmma_ss``, the sparse
``T.ptx_wgmma_sp_ss`` / ``_rs``), ``T.initialize_wgmma_descriptor`` and ``T.increase_descriptor_offset``."""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.backend.sdk import Lowered
from tilelang.transform import utils as C
from tilelang_cuda.tileops.dialect.emit import ext, lowering
from tilelang_cuda.tileops.dialect.pointers import addr_of
from tilelang_cuda.tileops.dialect.requirements import BASE, WGMMA

_WGMMA_AB = {"fp16": "f16", "bf16": "bf16"}


def _desc_plus(desc: Any, offset: Any) -> Any:
    """A descriptor advanced by `offset` 16-byte units (its start address field is the low 14 bits)."""
    if C.is_const(offset, 0):
        return desc
    return desc + tirx.Cast("uint64", offset)


@lowering("ptx_wgmma_ss", WGMMA)
def _wgmma_ss(ctx: Any) -> Any:
    a = list(ctx.args)
    prefix = str(a[1].value)
    a_k_major, b_k_major = bool(ctx.int_arg(2)), bool(ctx.int_arg(3))
    ab, b_t, acc_t = str(a[4].value), str(a[5].value), str(a[6].value)
    if ab != b_t or ab not in _WGMMA_AB or acc_t != "fp32":
        raise ctx.error(f"lowers fp16 / bf16 operands with an fp32 accumulator; got {ab} x {b_t} -> {acc_t}")
    m, rest = prefix[1:].split("n")
    n, k = rest.split("k")
    if (m, k) != ("64", "16") or not (8 <= int(n) <= 256 and int(n) % 8 == 0):
        raise ctx.error(f"{prefix} is not a wgmma m64nNk16 shape (N a multiple of 8 up to 256)")
    name = f"tl_wgmma_ss_m64n{n}k16_{_WGMMA_AB[ab]}_t{int(not a_k_major)}{int(not b_k_major)}_sd"
    c_load = a[11]
    return ext(name, addr_of(c_load), _desc_plus(a[7], a[8]), _desc_plus(a[9], a[10]), tirx.Cast("int32", a[12]))


def _wgmma_sp_checks(ctx: Any, prefix: str, ab: str, b_t: str, acc_t: str, sel: int, scales: list[Any]) -> str:
    """The N of a checked ``wgmma.sp`` call (m64nNk32, fp16 / bf16 -> fp32, selector 0, unit input scales)."""
    if ab != b_t or ab not in _WGMMA_AB or acc_t != "fp32":
        raise ctx.error(f"lowers fp16 / bf16 operands with an fp32 accumulator; got {ab} x {b_t} -> {acc_t}")
    m, rest = prefix[1:].split("n") if prefix.startswith("m") and "n" in prefix else ("", "k")
    n, k = rest.split("k") if rest.count("k") == 1 else ("", "")
    if (m, k) != ("64", "32") or not n.isdigit() or not (8 <= int(n) <= 256 and int(n) % 8 == 0):
        raise ctx.error(f"{prefix} is not a sparse wgmma m64nNk32 shape (N a multiple of 8 up to 256)")
    if sel != 0:
        raise ctx.error(f"uses sparsity selector {sel}; this backend emits selector 0 (metadata from the first "
                        "two threads of each quad)")
    for name, s in zip(("scale_in_a", "scale_in_b"), scales):
        if not C.is_const(s, 1):
            raise ctx.error(f"has {name} {s}; this backend emits the input scale 1 only")
    return n


@lowering("ptx_wgmma_sp_ss", WGMMA)
def _wgmma_sp_ss(ctx: Any) -> Any:
    a = list(ctx.args)
    a_k_major, b_k_major = bool(ctx.int_arg(2)), bool(ctx.int_arg(3))
    n = _wgmma_sp_checks(ctx, str(a[1].value), str(a[4].value), str(a[5].value), str(a[6].value), ctx.int_arg(10),
                         a[15:17])
    name = f"tl_wgmma_sp_ss_m64n{n}k32_{_WGMMA_AB[str(a[4].value)]}_t{int(not a_k_major)}{int(not b_k_major)}_sd"
    meta = ext("tl_u32_at", addr_of(a[9]), dtype="uint32")
    return ext(name, addr_of(a[13]), _desc_plus(a[7], a[8]), _desc_plus(a[11], a[12]), meta,
               tirx.Cast("int32", a[14]))


@lowering("ptx_wgmma_sp_rs", WGMMA)
def _wgmma_sp_rs(ctx: Any) -> Any:
    a = list(ctx.args)
    b_k_major = bool(ctx.int_arg(2))
    n = _wgmma_sp_checks(ctx, str(a[1].value), str(a[3].value), str(a[4].value), str(a[5].value), ctx.int_arg(8),
                         a[13:15])
    name = f"tl_wgmma_sp_rs_m64n{n}k32_{_WGMMA_AB[str(a[3].value)]}_t0{int(not b_k_major)}_sd"
    meta = ext("tl_u32_at", addr_of(a[7]), dtype="uint32")
    return ext(name, addr_of(a[11]), addr_of(a[6]), _desc_plus(a[9], a[10]), meta, tirx.Cast("int32", a[12]))


@lowering("initialize_wgmma_descriptor", WGMMA)
def _init_wgmma_desc(ctx: Any) -> Any:
    load, ptr, layout, lbo, sbo = ctx.args  # offsets in 16-byte units (the descriptor fields)
    return Lowered(None, [tirx.BufferStore(load.source, ext("tl_wgmma_desc_user", ptr, lbo * 16, sbo * 16, layout,
                                                            dtype="uint64"), list(load.indices))])


@lowering("increase_descriptor_offset", BASE)
def _increase_desc(ctx: Any) -> Any:
    load, offset = ctx.args
    dt = str(load.source.ty.dtype)
    step = tirx.Cast(dt, tirx.shift_right(offset, tirx.IntImm(str(offset.ty.dtype), 4)))
    return Lowered(None, [tirx.BufferStore(load.source, load + step, list(load.indices))])
