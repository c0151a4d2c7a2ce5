"""Fast and IEEE math intrinsics: ``T.__exp`` ... ``T.__sin``, ``T.fast_rcp``, ``T.ieee_*`` with a rounding mode,
the packed two-lane operations ``T.add2`` ... ``T.abs2``, and ``T.dp4a``.

The fast variants may be approximate (CUDA's ``__expf`` ...); a backend without them computes the precise
function. IEEE operations take ``rounding_mode`` in ``rn`` (nearest), ``rz``, ``ru``, ``rd``.
"""

from __future__ import annotations

from typing import Any

from tilelang.ir import ops as _ops

ROUNDING_MODES = ("rn", "rz", "ru", "rd")
PACKED_X2_DTYPES = ("float32x2", "bfloat16x2", "float16x2")


def _expr(x: Any, dtype: str = "float32") -> Any:
    from tvm import tirx

    if hasattr(x, "asobject"):
        x = x.asobject()
    if isinstance(x, bool):
        return tirx.const(x, "bool")
    if isinstance(x, int):
        return tirx.const(x, "int32")
    if isinstance(x, float):
        return tirx.const(x, dtype)
    return x


_FLOAT_CODES = (2, 4)  # DLPack float and bfloat: the fp8 / fp6 / fp4 formats have codes of their own


def _float_arg(x: Any, name: str) -> Any:
    import tvm

    x = _expr(x)
    dtype = str(x.ty.dtype)
    if int(tvm.DataType(dtype).type_code) not in _FLOAT_CODES:
        raise TypeError(f"T.{name} only supports floating-point inputs, but got {dtype}")
    return x


def _fast(name: str) -> Any:
    def fn(x: Any) -> Any:
        v = _float_arg(x, name)
        return _ops.intrin_call(f"tl.{name}", str(v.ty.dtype), [v])

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Fast (possibly approximate) ``{name[2:]}(x)`` of a floating-point value."
    return fn


__exp = _fast("__exp")
__exp10 = _fast("__exp10")
__log = _fast("__log")
__log2 = _fast("__log2")
__log10 = _fast("__log10")
__tan = _fast("__tan")
__cos = _fast("__cos")
__sin = _fast("__sin")


def fast_rcp(x: Any) -> Any:
    """Fast (possibly approximate) ``1 / x``."""
    v = _float_arg(x, "fast_rcp")
    return _ops.intrin_call("tl.fast_rcp", str(v.ty.dtype), [v])


def _rounding(mode: Any) -> Any:
    import tvm

    if not (isinstance(mode, str) and mode in ROUNDING_MODES):
        raise ValueError(f"Invalid rounding mode '{mode}'. Must be one of: {set(ROUNDING_MODES)}")
    return tvm.ir.StringImm(mode)


def _ieee(name: str, operands: list[Any], rounding_mode: Any) -> Any:
    mode = _rounding(rounding_mode)
    first = _float_arg(operands[0], f"ieee_{name}")
    dtype = str(first.ty.dtype)
    rest = [_expr(o, dtype) for o in operands[1:]]
    return _ops.intrin_call(f"tl.ieee_{name}", dtype, [first, *rest, mode])


def ieee_add(x: Any, y: Any, rounding_mode: str = "rn") -> Any:
    """``x + y`` rounded with `rounding_mode`."""
    return _ieee("add", [x, y], rounding_mode)


def ieee_sub(x: Any, y: Any, rounding_mode: str = "rn") -> Any:
    """``x - y`` rounded with `rounding_mode`."""
    return _ieee("sub", [x, y], rounding_mode)


def ieee_mul(x: Any, y: Any, rounding_mode: str = "rn") -> Any:
    """``x * y`` rounded with `rounding_mode`."""
    return _ieee("mul", [x, y], rounding_mode)


def ieee_fmaf(x: Any, y: Any, z: Any, rounding_mode: str = "rn") -> Any:
    """``x * y + z`` with one rounding (`rounding_mode`)."""
    return _ieee("fmaf", [x, y, z], rounding_mode)


def ieee_frcp(x: Any, rounding_mode: str = "rn") -> Any:
    """``1 / x`` rounded with `rounding_mode`."""
    return _ieee("frcp", [x], rounding_mode)


def ieee_fsqrt(x: Any, rounding_mode: str = "rn") -> Any:
    """``sqrt(x)`` rounded with `rounding_mode`."""
    return _ieee("fsqrt", [x], rounding_mode)


def ieee_frsqrt(x: Any) -> Any:
    """``1 / sqrt(x)`` rounded to nearest."""
    v = _float_arg(x, "ieee_frsqrt")
    return _ops.intrin_call("tl.ieee_frsqrt", str(v.ty.dtype), [v])


def ieee_fdiv(x: Any, y: Any, rounding_mode: str = "rn") -> Any:
    """``x / y`` rounded with `rounding_mode`."""
    return _ieee("fdiv", [x, y], rounding_mode)


def _packed(name: str, *operands: Any) -> Any:
    import tvm

    args = [_expr(o) for o in operands]
    for a in args:
        if not isinstance(a, tvm.ir.Expr):
            raise TypeError(f"Expected PrimExpr, got {type(a)}: {a}")
        if str(a.ty.dtype) not in PACKED_X2_DTYPES:
            raise ValueError(f"Expected dtype in {sorted(PACKED_X2_DTYPES)}, got '{a.ty.dtype}'")
    dtypes = {str(a.ty.dtype) for a in args}
    if len(dtypes) != 1:
        raise ValueError(f"Expected all packed x2 arguments to have the same dtype, got "
                         f"{[str(a.ty.dtype) for a in args]}")
    return _ops.intrin_call(f"tl.{name}", dtypes.pop(), args)


def add2(x: Any, y: Any) -> Any:
    """Lane-wise ``x + y`` of two-lane vectors."""
    return _packed("add2", x, y)


def sub2(x: Any, y: Any) -> Any:
    """Lane-wise ``x - y``."""
    return _packed("sub2", x, y)


def mul2(x: Any, y: Any) -> Any:
    """Lane-wise ``x * y``."""
    return _packed("mul2", x, y)


def fma2(x: Any, y: Any, z: Any) -> Any:
    """Lane-wise ``x * y + z``."""
    return _packed("fma2", x, y, z)


def max2(x: Any, y: Any) -> Any:
    """Lane-wise maximum."""
    return _packed("max2", x, y)


def min2(x: Any, y: Any) -> Any:
    """Lane-wise minimum."""
    return _packed("min2", x, y)


def abs2(x: Any) -> Any:
    """Lane-wise absolute value."""
    return _packed("abs2", x)


def dp4a(A: Any, B: Any, C: Any) -> Any:
    """``C += A[0] * B[0] + ... + A[3] * B[3]``: four signed int8 products accumulated into the int32 `C`
    (buffers, regions or elements; the four int8 values are consecutive from there)."""
    from tilelang.ir import region as R
    from tilelang.language.atomic import _element

    a, b, c = (_element(x, what, "T.dp4a") for x, what in ((A, "A"), (B, "B"), (C, "C")))
    for name, elem, want in (("A", a, "int8"), ("B", b, "int8"), ("C", c, "int32")):
        dtype = R.buffer_dtype(elem.source)
        if dtype != want:
            kind = "an int32 accumulator" if name == "C" else "int8 inputs"
            raise ValueError(f"dp4a requires {kind}, got {name}.dtype='{dtype}'")
    return _ops.intrin_call("tl.dp4a", "handle", [a, b, c])


__all__ = ["__exp", "__exp10", "__log", "__log2", "__log10", "__tan", "__cos", "__sin", "fast_rcp", "ieee_add",
           "ieee_sub", "ieee_mul", "ieee_fmaf", "ieee_frcp", "ieee_fsqrt", "ieee_frsqrt", "ieee_fdiv", "add2",
           "sub2", "mul2", "fma2", "max2", "min2", "abs2", "dp4a"]
