"""The table of the dialect's lowerings (``tl.<name>`` -> its `Requirement` and lowering), filled by the topic
modules through `lowering` / `simple`, and the extern calls and statements the lowerings build."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tvm import tirx

from tilelang.transform import utils as C
from tilelang_cuda.tileops.dialect.requirements import Requirement

LowerFn = Callable[[Any], Any]
LOWER: dict[str, tuple[Requirement, LowerFn]] = {}


def ext(name: str, *args: Any, dtype: str = "void") -> Any:
    return tirx.call_extern(dtype, name, *args)


def stmt(name: str, *args: Any) -> Any:
    return tirx.Evaluate(ext(name, *args))


def seq(stmts: list[Any]) -> Any:
    return C.seq([s for s in stmts if s is not None])


def as_u32(x: Any) -> Any:
    return tirx.Cast("uint32", x) if str(x.ty.dtype) != "uint32" else x


def bits_of(dtype: str) -> int:
    from tilelang.backend.sdk import dtype_bits

    return int(dtype_bits(dtype))


def lowering(name: str, req: Requirement) -> Callable[[LowerFn], LowerFn]:
    """Register the decorated function as the lowering of ``tl.<name>``, gated on `req`."""
    def deco(fn: LowerFn) -> LowerFn:
        LOWER[f"tl.{name}"] = (req, fn)
        return fn

    return deco


def simple(name: str, req: Requirement, helper: str, dtype: str = "void",
           arg_fn: Callable[[Any], list[Any]] | None = None) -> None:
    """A construct that is one helper call on its (adapted) arguments."""
    def lower(ctx: Any) -> Any:
        args = arg_fn(ctx) if arg_fn is not None else list(ctx.args)
        return ext(helper, *args, dtype=dtype)

    LOWER[f"tl.{name}"] = (req, lower)
