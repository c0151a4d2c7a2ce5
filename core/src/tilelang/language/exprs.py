"""Scalar expressions: arithmetic helpers, math intrinsics, special values, casts.

Python numbers stay Python numbers where the result is compile-time (``T.ceildiv(1024, 128) == 8``); a number
combined with an expression takes the expression's dtype.
"""

from __future__ import annotations

import math as _math
from typing import Any

from tilelang.errors import KernelTypeError
from tilelang.language.dtypes import canonical
from tilelang.language.dtypes import cast as _cast


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def expr(x: Any) -> Any:
    """`x` as a PrimExpr-compatible value (unwraps the lazy results of ``==`` / ``!=``)."""
    if hasattr(x, "asobject"):
        return x.asobject()
    return x


def _dtype_of(x: Any) -> str | None:
    import tvm

    if isinstance(x, tvm.ir.Expr) and tvm.ir.is_prim_expr(x):
        return str(x.ty.dtype)
    return None


def _coerce(*args: Any) -> list[Any]:
    """Give Python numbers the dtype of the first expression argument."""
    from tvm import tirx

    args = [expr(a) for a in args]
    dt = next((d for d in map(_dtype_of, args) if d is not None), None)
    if dt is None:
        return [tirx.const(a, "float32" if isinstance(a, float) else "int32") if _is_num(a) else a for a in args]
    out = []
    for a in args:
        if isinstance(a, bool):
            a = tirx.const(a, "bool")
        elif _is_num(a):
            if isinstance(a, float) and dt.startswith(("int", "uint")):
                a = tirx.const(a, "float32")
            else:
                a = tirx.const(a, dt)
        out.append(a)
    return out


def ceildiv(a: Any, b: Any) -> Any:
    """Ceiling division."""
    if isinstance(a, int) and isinstance(b, int):
        return -(-a // b)
    from tvm import tirx

    return tirx.ceildiv(*_coerce(a, b))


def floordiv(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        return a // b
    from tvm import tirx

    return tirx.floordiv(*_coerce(a, b))


def floormod(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        return a % b
    from tvm import tirx

    return tirx.floormod(*_coerce(a, b))


def truncdiv(a: Any, b: Any) -> Any:
    from tvm import tirx

    return tirx.truncdiv(*_coerce(a, b))


def truncmod(a: Any, b: Any) -> Any:
    from tvm import tirx

    return tirx.truncmod(*_coerce(a, b))


def max(a: Any, b: Any, *rest: Any) -> Any:
    """Maximum of two or more values."""
    if rest:
        return max(max(a, b), *rest)
    if _is_num(a) and _is_num(b):
        return a if a >= b else b
    from tvm import tirx

    return tirx.max(*_coerce(a, b))


def min(a: Any, b: Any, *rest: Any) -> Any:
    """Minimum of two or more values."""
    if rest:
        return min(min(a, b), *rest)
    if _is_num(a) and _is_num(b):
        return a if a <= b else b
    from tvm import tirx

    return tirx.min(*_coerce(a, b))


def _unary(name: str, py: Any = None):
    def fn(x: Any) -> Any:
        from tvm import tirx

        x = expr(x)
        if _is_num(x):
            if py is not None:
                return py(x)
            x = tirx.const(float(x), "float32")
        dt = _dtype_of(x)
        if dt is None:
            raise KernelTypeError(f"T.{name} expects a number or a scalar expression, got {x!r}")
        return getattr(tirx, name)(x)

    fn.__name__ = name
    fn.__doc__ = f"Element-wise ``{name}``."
    return fn


exp = _unary("exp")
exp2 = _unary("exp2")
exp10 = _unary("exp10")
log = _unary("log")
log2 = _unary("log2")
log10 = _unary("log10")
log1p = _unary("log1p")
sqrt = _unary("sqrt")
rsqrt = _unary("rsqrt")
tanh = _unary("tanh")
sigmoid = _unary("sigmoid")
sin = _unary("sin")
cos = _unary("cos")
tan = _unary("tan")
erf = _unary("erf")
floor = _unary("floor", _math.floor)
ceil = _unary("ceil", _math.ceil)
round = _unary("round")
trunc = _unary("trunc")
isnan = _unary("isnan")
isinf = _unary("isinf")
isfinite = _unary("isfinite")


def abs(x: Any) -> Any:
    """Absolute value."""
    x = expr(x)
    if _is_num(x):
        return -x if x < 0 else x
    from tvm import tirx

    return tirx.abs(x)


def pow(x: Any, y: Any) -> Any:
    from tvm import tirx

    return tirx.pow(*_coerce(x, y))


def if_then_else(cond: Any, then_value: Any, else_value: Any) -> Any:
    """``then_value`` where `cond` holds, else ``else_value`` (only the chosen side is evaluated); branches of
    different dtypes are promoted as binary operators promote them (``0`` and ``float("-inf")``: float32)."""
    cond = expr(cond)
    if isinstance(cond, (bool, int)):
        return then_value if cond else else_value
    from tvm import tirx

    t, f = _coerce(then_value, else_value)
    try:  # branches of different dtypes meet as in a binary operator (int32 and float32 -> float32): TVM's rule
        return tirx.if_then_else(cond, t, f)
    except Exception as exc:
        raise KernelTypeError(f"T.if_then_else branches of dtypes {_dtype_of(t)} and {_dtype_of(f)} have no common "
                              f"dtype: {str(exc).strip().splitlines()[0]}") from None


def infinity(dtype: Any) -> Any:
    """+inf of a float dtype."""
    from tvm import tirx

    return tirx.infinity(canonical(dtype))


def max_value(dtype: Any) -> Any:
    """The largest finite value of `dtype`."""
    from tvm import tirx

    return tirx.max_value(canonical(dtype))


def min_value(dtype: Any) -> Any:
    """The lowest finite value of `dtype`."""
    from tvm import tirx

    return tirx.min_value(canonical(dtype))


CAST_ROUNDING_MODES = frozenset({"", "rn", "rz", "rp", "rm", "rs"})


def cast(value: Any, dtype: Any, round: str = "", sat: bool = True, rbits: Any = None, span: Any = None) -> Any:
    """`value` converted to `dtype`; optionally with a rounding mode (``round``: ``"rn"``, ``"rz"``, ``"rp"``,
    ``"rm"``, or ``"rs"`` stochastic with random bits `rbits`) and saturation to the finite range (`sat`)."""
    if round not in CAST_ROUNDING_MODES:
        raise ValueError(f"Invalid round '{round}'. Must be one of: {sorted(CAST_ROUNDING_MODES)}")
    if not isinstance(sat, bool):
        raise ValueError(f"Invalid sat '{sat}'. Must be a bool (True for satfinite, False for no saturation)")
    if round == "rs" and rbits is None:
        raise ValueError("rbits is required when round='rs' (stochastic rounding)")
    if round != "rs" and rbits is not None:
        raise ValueError("rbits is only valid with round='rs' (stochastic rounding)")
    if not round and sat:
        return _cast(expr(value), dtype)
    import tvm
    from tvm import tirx

    from tilelang.ir.ops import intrin_call

    target = canonical(dtype)
    v = expr(value)
    if not isinstance(v, tvm.ir.Expr):
        v = tirx.const(v, "float32" if isinstance(v, float) else "int32")
    bits = expr(rbits) if rbits is not None else tirx.const(0, "uint32")
    return intrin_call("tl.cast", target, [v, tvm.ir.StringImm(round), tirx.const(bool(sat), "bool"), bits])


def Cast(dtype: Any, value: Any) -> Any:
    return _cast(expr(value), dtype)


def _is_dtype(x: Any) -> bool:
    import tvm

    if isinstance(x, tvm.ir.Expr) or isinstance(x, (int, float, bool)):
        return False
    try:
        canonical(x)
    except KernelTypeError:
        return False
    return True


def reinterpret(value: Any, dtype: Any, span: Any = None) -> Any:
    """The bits of `value` read as `dtype` (of the same width): ``T.reinterpret(x, T.uint32)``. TVM's order,
    ``T.reinterpret(T.uint32, x)``, is accepted too."""
    from tvm import tirx

    if _is_dtype(value) and not _is_dtype(dtype):
        value, dtype = dtype, value
    return tirx.reinterpret(canonical(dtype), expr(value), span)


def extract_lane(vector: Any, lane: Any) -> Any:
    """Lane `lane` (a compile-time integer) of the vector expression `vector`, as a scalar."""
    import numbers

    import tvm
    from tvm import tirx

    vector = expr(vector)
    if not isinstance(vector, tvm.ir.Expr) or not tvm.ir.is_prim_expr(vector):
        raise TypeError(f"extract_lane expects a PrimExpr, but got {type(vector).__name__}")
    lanes = int(vector.ty.dtype.lanes)
    if lanes <= 1:
        raise ValueError(f"extract_lane expects a vector expression, but got dtype {vector.ty.dtype}")
    if isinstance(lane, tirx.IntImm):
        lane = int(lane.value)
    elif not isinstance(lane, numbers.Integral) or isinstance(lane, bool):
        raise TypeError(f"extract_lane expects a compile-time integer lane, but got {type(lane).__name__}")
    if not 0 <= lane < lanes:
        raise IndexError(f"extract_lane lane {lane} is out of bounds for a {lanes}-lane vector")
    return tirx.Shuffle([vector], [tirx.const(int(lane), "int32")])


def clamp(dst: Any, min_val: Any, max_val: Any) -> Any:
    """`dst` limited to ``[min_val, max_val]``."""
    return min(max(dst, min_val), max_val)
