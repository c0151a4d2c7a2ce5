"""Index arithmetic shared by the layout classes: placeholders, substitution, bounds and integer evaluation.

Layouts store their maps as tirx expressions over canonical placeholder variables (``_i``, ``_j``, ... for the
input dims, ``_rep`` for a fragment's replication index), so two layouts built from different Python functions
compare and compose directly. `evaluate_index` runs such an expression on integers or numpy arrays.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

_PLACEHOLDERS: dict[str, Any] = {}
MAX_EXACT_DOMAIN = 1 << 22  # tiles up to this many elements are enumerated exactly (bounds, checks)


def _var(name: str) -> Any:
    var = _PLACEHOLDERS.get(name)
    if var is None:
        from tvm import tirx

        var = _PLACEHOLDERS[name] = tirx.Var(name, "int32")
    return var


def input_placeholder(k: int) -> Any:
    """The canonical variable of input dimension `k` (``_i``, ``_j``, ...)."""
    if not 0 <= k < 16:
        raise ValueError(f"layouts support at most 16 input dimensions, asked for dimension {k}")
    return _var("_" + chr(ord("i") + k))


def replication_placeholder() -> Any:
    """The canonical variable of a fragment's replication index."""
    return _var("_rep")


def linearize(indices: Sequence[Any], shape: Sequence[Any]) -> Any:
    """Row-major linear offset of `indices` in `shape`."""
    offset: Any = 0
    for i, (index, extent) in enumerate(zip(indices, shape)):
        offset = index if i == 0 else offset * extent + index
    return offset


def unravel(offset: Any, shape: Sequence[Any]) -> list[Any]:
    """Inverse of `linearize` (row-major)."""
    out: list[Any] = []
    for extent in reversed(list(shape)[1:]):
        out.append(offset % extent)
        offset = offset // extent
    out.append(offset)
    return out[::-1]


def const_int(e: Any) -> int | None:
    """`e` as a Python int when it is an integer constant (int or IntImm), else None."""
    if isinstance(e, bool):
        return int(e)
    if isinstance(e, int):
        return e
    try:
        import numpy as np

        if isinstance(e, np.integer):
            return int(e)
    except ImportError:  # pragma: no cover - numpy ships with tvm
        pass
    value = getattr(e, "value", None)
    return int(value) if isinstance(value, int) and type(e).__name__ == "IntImm" else None


def ints(shape: Sequence[Any]) -> list[Any]:
    """`shape` with constant extents as Python ints (symbolic ones kept)."""
    return [s if const_int(s) is None else const_int(s) for s in shape]


def as_expr(e: Any, dtype: str = "int32") -> Any:
    """`e` as a tirx expression (Python ints become IntImm of `dtype`)."""
    from tvm import tirx

    if isinstance(e, bool):
        return tirx.IntImm("bool", int(e))
    if isinstance(e, int):
        return tirx.IntImm(dtype, e)
    iv_var = getattr(e, "var", None)
    if iv_var is not None and type(e).__name__ == "IterVar":
        return iv_var
    return e


def substitute(expr: Any, mapping: dict[Any, Any]) -> Any:
    """`expr` with the variables of `mapping` replaced (values may be ints or expressions)."""
    import tvm
    import tvm_ffi

    if not mapping:
        return expr
    if isinstance(expr, int):
        return expr
    table = {k: as_expr(v, dtype_of(k)) for k, v in mapping.items()}
    return tvm_ffi.structural_map(expr, (tvm.ir.Var, lambda v: table.get(v, v)))


def dtype_of(e: Any) -> str:
    """The dtype of a tirx expression ("int32" for Python ints)."""
    if isinstance(e, int):
        return "int32"
    return str(e.ty)


def analyzer_for(ranges: dict[Any, Any]) -> Any:
    """A ``tvm.sym.Analyzer`` with each variable of `ranges` bound to ``[0, extent)``."""
    import tvm
    from tvm import tirx

    ana = tvm.sym.Analyzer()
    for var, extent in ranges.items():
        c = const_int(extent)
        if c is not None:
            if c > 0:
                ana.bind(var, tvm.ir.Range.from_min_extent(tirx.IntImm("int32", 0), tirx.IntImm("int32", c)))
            continue
        ext = extent if dtype_of(extent) == "int32" else tirx.Cast("int32", extent)
        ana.bind(var, tvm.ir.Range.from_min_extent(tirx.IntImm("int32", 0), ext))
    return ana


def simplify(expr: Any, ana: Any) -> Any:
    """`expr` simplified by `ana`; Python ints pass through."""
    if isinstance(expr, int):
        return expr
    out = ana.simplify(as_expr(expr))
    return out


class NotEvaluable(Exception):
    """An index expression the integer evaluator does not know."""


_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mul": lambda a, b: a * b,
    "FloorDiv": lambda a, b: a // b, "FloorMod": lambda a, b: a % b,
    "BitwiseXor": lambda a, b: a ^ b, "BitwiseAnd": lambda a, b: a & b, "BitwiseOr": lambda a, b: a | b,
    "LShift": lambda a, b: a << b, "RShift": lambda a, b: a >> b,
    "LT": lambda a, b: a < b, "LE": lambda a, b: a <= b, "GT": lambda a, b: a > b, "GE": lambda a, b: a >= b,
    "EQ": lambda a, b: a == b, "NE": lambda a, b: a != b, "And": lambda a, b: a & b, "Or": lambda a, b: a | b,
}
_CALLS = {"bitwise_xor": "BitwiseXor", "bitwise_and": "BitwiseAnd", "bitwise_or": "BitwiseOr",
          "shift_left": "LShift", "shift_right": "RShift"}


def _numeric(x: Any) -> bool:
    import numpy as np

    return isinstance(x, (int, np.ndarray, np.integer, np.bool_))


def evaluate_index(expr: Any, env: dict[Any, Any], keep_unbound: bool = False) -> Any:
    """Evaluate a tirx integer index expression with its variables bound by `env`: to integers / numpy arrays
    when they are numbers, to a freshly built tirx expression (dtypes and vector lanes following the bound
    values) otherwise. A variable missing from `env` raises `NotEvaluable`, or stays itself with
    `keep_unbound`."""
    import numpy as np

    c = const_int(expr)
    if c is not None:
        return c

    def ev(x: Any) -> Any:
        return evaluate_index(x, env, keep_unbound)

    name = type(expr).__name__
    args = [ev(getattr(expr, f)) for f in ("a", "b") if hasattr(expr, f)] if name != "Select" else []
    symbolic = any(not _numeric(x) for x in args)
    if name in ("And", "Or") and symbolic:
        from tvm import tirx

        return (tirx.And if name == "And" else tirx.Or)(*[as_expr(x) for x in args])
    if name in _BINARY:
        return _BINARY[name](*args)
    if name in ("Min", "Max"):
        if symbolic:
            from tvm import tirx

            return (tirx.min if name == "Min" else tirx.max)(*[as_expr(x) for x in args])
        return (np.minimum if name == "Min" else np.maximum)(*args)
    if name in ("Div", "Mod"):  # truncating
        if symbolic:
            from tvm import tirx

            return (tirx.truncdiv if name == "Div" else tirx.truncmod)(*[as_expr(x) for x in args])
        q = np.trunc(np.asarray(args[0]) / args[1]).astype(np.int64)
        if q.ndim == 0:
            q = int(q)
        return q if name == "Div" else args[0] - q * args[1]
    if name == "Select":
        cond, t, f = (ev(x) for x in (expr.condition, expr.true_value, expr.false_value))
        if not all(_numeric(x) for x in (cond, t, f)):
            from tvm import tirx

            return tirx.Select(cond, as_expr(t), as_expr(f))
        return np.where(cond, t, f)
    if name == "Call":
        op = str(getattr(expr.op, "name", "")).split(".")[-1]
        if op == "if_then_else":
            cond, t, f = (ev(x) for x in expr.args)
            if not all(_numeric(x) for x in (cond, t, f)):
                from tvm import tirx

                return tirx.if_then_else(cond, as_expr(t), as_expr(f))
            return np.where(cond, t, f)
        if op in _CALLS and len(expr.args) == 2:
            a, b = (ev(x) for x in expr.args)
            return _BINARY[_CALLS[op]](a, b)
    if name == "Not":
        inner = ev(expr.a)
        if isinstance(inner, (np.ndarray, np.bool_, bool)):
            return ~np.asarray(inner, dtype=bool)
        from tvm import tirx

        return tirx.Not(inner)
    if name == "Cast":
        return ev(expr.value)
    for var, value in env.items():
        if expr.same_as(var):
            return value
    if keep_unbound and name == "Var":
        return expr
    raise NotEvaluable(name)


def grid(shape: Sequence[int]) -> list[Any]:
    """Index grids (numpy int64, ``indexing="ij"``) over a constant `shape`."""
    import numpy as np

    return list(np.meshgrid(*[np.arange(s, dtype=np.int64) for s in shape], indexing="ij"))


def enumerate_exprs(exprs: Sequence[Any], env_vars: Sequence[Any], shape: Sequence[int]) -> list[Any] | None:
    """Every expression of `exprs` evaluated over the whole constant-shape grid of `env_vars` (numpy arrays of
    the grid's shape), or None when the grid is too large or an expression is not evaluable."""
    import numpy as np

    if math.prod(shape) > MAX_EXACT_DOMAIN:
        return None
    grids = grid(shape)
    env = dict(zip(env_vars, grids))
    base = grids[0].shape if grids else ()
    try:
        return [np.broadcast_to(np.asarray(evaluate_index(e, env), dtype=np.int64), base) for e in exprs]
    except (NotEvaluable, TypeError):
        return None
