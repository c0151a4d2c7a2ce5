"""Building blocks of the CUDA dialect: its ``tl.*`` intrinsic calls and the operand forms they take.

Every dialect construct is a ``tl.<name>`` intrinsic (`tilelang.ir.ops.register_intrinsic`), lowered by the CUDA
backend (`tilelang_cuda.tileops.dialect`) after the tile operators; on a target without it the lowering raises a
`LoweringError` naming the construct, the target and the lowest architecture that has it.
"""

from __future__ import annotations

from typing import Any

from tilelang.errors import KernelTypeError

_PUBLIC_PREFIX = "tilelang.cuda.language."


def public(fn: Any) -> Any:
    """Give `fn` the module path users import it from (``tilelang.cuda.language.<module>``), as numpy's
    ``set_module`` does: ``tilelang.cuda`` is the alias of this distribution's ``tilelang_cuda``."""
    module = fn.__module__
    if module.startswith("tilelang_cuda.language."):
        fn.__module__ = _PUBLIC_PREFIX + module[len("tilelang_cuda.language."):]
    return fn


def call(name: str, dtype: str, args: list[Any], effect: str = "opaque", doc: str = "") -> Any:
    """The ``tl.<name>`` intrinsic call returning `dtype` (``"handle"`` for none)."""
    from tilelang.ir import intrin_call, register_intrinsic

    register_intrinsic(f"tl.{name}", effect, doc or f"CUDA dialect: T.{name}")
    return intrin_call(f"tl.{name}", dtype, [expr(a) for a in args])


def expr(x: Any, dtype: str | None = None) -> Any:
    """A Python scalar as a TIR constant (int32 / bool / float32 unless `dtype` says); IR values unchanged."""
    from tvm import tirx

    if hasattr(x, "asobject"):
        x = x.asobject()
    if isinstance(x, bool):
        return tirx.const(x, dtype or "bool")
    if isinstance(x, int):
        return tirx.const(x, dtype or "int32")
    if isinstance(x, float):
        return tirx.const(x, dtype or "float32")
    if isinstance(x, str):
        import tvm

        return tvm.ir.StringImm(x)
    return x


def const_int(x: Any, what: str) -> int:
    """`x` as a Python int; KernelTypeError when it is not a compile-time constant."""
    from tvm import tirx

    if isinstance(x, bool):
        return int(x)
    if isinstance(x, int):
        return x
    if isinstance(x, tirx.IntImm):
        return int(x.value)
    raise KernelTypeError(f"{what} must be a compile-time integer, got {x!r}")


def is_buffer(x: Any) -> bool:
    from tilelang.ir import region as R

    return R.is_buffer(x)


def barrier_load(mbar: Any, what: str) -> Any:
    """An mbarrier operand as the ``BufferLoad`` of its 64-bit word (a one-element buffer means element 0)."""
    from tvm import tirx

    from tilelang.ir import region as R

    if R.is_load(mbar):
        return mbar
    if R.is_buffer(mbar):
        shape = R.buffer_shape(mbar)
        if len(shape) != 1 or int(shape[0]) != 1:
            raise KernelTypeError(f"{what}: a barrier buffer with {shape} barriers needs an index, e.g. mbars[i]")
        return tirx.BufferLoad(mbar, [tirx.IntImm("int32", 0)])
    raise KernelTypeError(f"{what}: the barrier must be an element of T.alloc_barrier(...) (mbars[i]) or a "
                          f"one-barrier buffer, got {mbar!r}")


def pointer(x: Any, access: str, what: str, extent: Any = None) -> Any:
    """A pointer operand: ``T.access_ptr`` of a buffer, region or element (pointer expressions pass through)."""
    from tilelang.ir import region as R
    from tilelang.language import access_ptr

    if R.is_buffer(x) or R.is_load(x) or R.is_region(x):
        return access_ptr(x, access, extent=extent) if extent is not None else access_ptr(x, access)
    if hasattr(x, "ty") and str(getattr(x.ty, "dtype", "")) == "handle":
        return x
    import tvm

    if isinstance(x, tvm.ir.Expr) and not tvm.ir.is_prim_expr(x):
        return x
    raise KernelTypeError(f"{what} expects a Buffer, BufferRegion or BufferLoad (or a pointer), got {x!r}")


def buffer_of(x: Any, what: str) -> Any:
    from tilelang.ir import region as R

    if R.is_buffer(x):
        return x
    if R.is_load(x) or R.is_region(x):
        return x.source
    raise KernelTypeError(f"{what} expects a buffer, got {x!r}")


def scope_of(buf: Any) -> str:
    from tilelang.ir import region as R

    return R.buffer_scope(buf)
