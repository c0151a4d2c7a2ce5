"""Lowerings of the dialect's explicit memory accesses: vector loads and stores (``T.ldg*`` / ``stg*`` / ``lds*``
/ ``sts*``, ``__ldg``) and ``cp.async`` copies with their commit groups."""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.backend.sdk import Lowered
from tilelang.transform import utils as C
from tilelang_cuda.tileops.dialect.emit import LOWER, bits_of, ext, lowering, simple, stmt
from tilelang_cuda.tileops.dialect.pointers import addr_of, ptr_dtype
from tilelang_cuda.tileops.dialect.requirements import BASE, CP_ASYNC, V256


def _ld_st(name: str, bits: int, space: str) -> None:
    req = V256 if bits == 256 else BASE

    def lower(ctx: Any) -> Any:
        args = list(ctx.args)
        if space in ("ldg", "lds"):
            # the value goes through a register array: a vector-typed extern call would be printed lane by lane
            lanes = bits // 32
            tmp = tirx.decl_buffer((lanes,), "uint32", name=f"{space}_regs", scope="local")
            call_args = [args[0]]
            if space == "ldg":
                call_args.append(args[1] if len(args) > 1 else tirx.const(True, "bool"))
            fill = stmt(f"tl_{space}{bits}_to", addr_of(tirx.BufferLoad(tmp, [tirx.IntImm("int32", 0)])), *call_args)
            index = tirx.IntImm("int32", 0) if lanes == 1 else tirx.Ramp(tirx.IntImm("int32", 0), 1, lanes)
            return Lowered(tirx.BufferLoad(tmp, [index]), [tirx.AllocBuffer(tmp), fill])
        if space == "stg":
            pred = args[2] if len(args) > 2 else tirx.const(True, "bool")
            return ext(f"tl_stg{bits}", args[0], args[1], pred)
        return ext(f"tl_sts{bits}", args[0], args[1])

    LOWER[f"tl.{name}"] = (req, lower)


for _bits in (32, 64, 128, 256):
    _ld_st(f"ldg{_bits}", _bits, "ldg")
    _ld_st(f"stg{_bits}", _bits, "stg")
    if _bits <= 128:
        _ld_st(f"lds{_bits}", _bits, "lds")
        _ld_st(f"sts{_bits}", _bits, "sts")


@lowering("__ldg", BASE)
def _ldg(ctx: Any) -> Any:
    (load,) = ctx.args
    return ext("__ldg", addr_of(load), dtype=ctx.dtype)


@lowering("ptx_cp_async", CP_ASYNC)
def _cp_async(ctx: Any) -> Any:
    args = list(ctx.args)
    dst, src, n = args[:3]
    elems = C.as_int(n)
    nbytes = None if elems is None else elems * bits_of(ptr_dtype(dst)) // 8
    if nbytes not in (4, 8, 16):
        raise ctx.error(f"copies {nbytes if nbytes is not None else n} bytes; cp.async copies 4, 8 or 16 bytes "
                        "(num_elems times the element size)")
    src_bytes: Any = tirx.IntImm("int32", nbytes)
    if len(args) > 3:
        src_bytes = tirx.if_then_else(args[3], tirx.IntImm("int32", nbytes), tirx.IntImm("int32", 0))
    return ext(f"tl_cp_async_{nbytes}", dst, src, src_bytes)


simple("ptx_commit_group", CP_ASYNC, "tl_cp_async_commit")


@lowering("ptx_wait_group", CP_ASYNC)
def _wait_group(ctx: Any) -> Any:
    return ext("tl_cp_async_wait_group", ctx.int_arg(0))
