"""CuTe integer tuples: nested tuples whose leaves are ints, PrimExprs or scaled bases (``v@k``).

Algebra runs on the Python form (`to_python`): a leaf is an ``int`` (static), a ``PrimExpr`` (dynamic) or a
`ScaledBasis`; a branch is a ``tuple``. The FFI form (`IntTuple` objects, `from_python`) is what layouts store,
so `structural_equal` compares them and ``str()`` prints the CuTe spelling (``(2,(3,4))``, ``2@1``; a basis path
prints innermost-first, ``E(1, 0)`` is ``1@0@1``).

Arithmetic follows CuTe's ArithmeticTuple rules: ``0`` is the additive identity, tuples add component-wise
(the shorter zero-padded), a scaled basis ``v@(k, ...)`` adds as the tuple holding ``v`` at that position, and
a product with a scaled basis scales its value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import tvm
from tvm_ffi import Object
from tvm_ffi.dataclasses import py_class

PyIntTuple = Any  # int | PrimExpr | ScaledBasis | tuple of PyIntTuple


class LayoutAlgebraError(tvm.error.InternalError, ValueError):
    """A layout-algebra precondition failed (divisibility, rank, static-ness), as CuTe's checks would."""


def check(cond: bool, message: str) -> None:
    if not cond:
        raise LayoutAlgebraError(message)


# ---------------------------------------------------------------------------------------------- Python form
class ScaledBasis:
    """``value @ mode``: `value` placed at the coordinate position `mode` (a path of indices, outermost first)."""

    __slots__ = ("_mode", "_value")

    def __init__(self, value: PyIntTuple, mode: int | Sequence[int]):
        if isinstance(value, tuple):
            raise TypeError(f"a ScaledBasis value must be a scalar, got {value!r}")
        self._value = _norm_leaf(value)
        self._mode = (int(mode),) if isinstance(mode, int) else tuple(int(m) for m in mode)

    @property
    def value(self) -> PyIntTuple:
        return self._value

    @property
    def mode(self) -> tuple[int, ...]:
        return self._mode

    def __mul__(self, other: Any) -> PyIntTuple:
        return mul(self, _coerce(other))

    def __rmul__(self, other: Any) -> PyIntTuple:
        return mul(_coerce(other), self)

    def __add__(self, other: Any) -> PyIntTuple:
        return add(self, _coerce(other))

    def __radd__(self, other: Any) -> PyIntTuple:
        return add(_coerce(other), self)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ScaledBasis) and other.mode == self.mode and leaf_equal(other.value, self.value)

    def __hash__(self) -> int:
        return hash((self._mode, self._value if isinstance(self._value, int) else str(self._value)))

    def __repr__(self) -> str:
        return "@".join([str(self._value), *(str(m) for m in reversed(self._mode))])


def E(mode: int | Sequence[int]) -> ScaledBasis:
    """The unit basis of coordinate position `mode`."""
    return ScaledBasis(1, mode)


def _coerce(x: Any) -> PyIntTuple:
    if isinstance(x, IntTuple):
        return to_python(x)
    if isinstance(x, list):
        return tuple(_coerce(v) for v in x)
    if isinstance(x, tuple):
        return tuple(_coerce(v) for v in x)
    return _norm_leaf(x)


def _norm_leaf(x: Any) -> Any:
    """A leaf with constants as Python ints."""
    if isinstance(x, bool):
        raise TypeError("a bool is not an integer tuple leaf")
    if isinstance(x, int):
        return x
    if isinstance(x, ScaledBasis):
        return x
    if type(x).__name__ == "IntImm":
        return int(x.value)
    if isinstance(x, tvm.ir.Expr):
        return x
    try:
        import numpy as np

        if isinstance(x, np.integer):
            return int(x)
    except ImportError:  # pragma: no cover
        pass
    raise TypeError(f"cannot use {x!r} ({type(x).__name__}) as an integer tuple leaf")


def is_tuple(x: Any) -> bool:
    return isinstance(x, tuple)


def is_basis(x: Any) -> bool:
    return isinstance(x, ScaledBasis)


def is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def is_expr(x: Any) -> bool:
    return isinstance(x, tvm.ir.Expr)


def is_zero(x: Any) -> bool:
    """The plain constant 0 (CuTe's additive identity; ``0@k`` is not it)."""
    return is_int(x) and x == 0


def leaf_equal(a: Any, b: Any) -> bool:
    """Provable equality of two leaves by form: ints by value, expressions structurally, bases by both."""
    import tvm_ffi

    if is_basis(a) or is_basis(b):
        return is_basis(a) and is_basis(b) and a.mode == b.mode and leaf_equal(a.value, b.value)
    if is_int(a) or is_int(b):
        return is_int(a) and is_int(b) and a == b
    return bool(tvm_ffi.structural_equal(a, b))


def tree_equal(a: Any, b: Any) -> bool:
    if is_tuple(a) or is_tuple(b):
        return is_tuple(a) and is_tuple(b) and len(a) == len(b) and all(tree_equal(x, y) for x, y in zip(a, b))
    return leaf_equal(a, b)


def _dtype(*leaves: Any) -> str:
    for x in leaves:
        if is_expr(x):
            return str(x.ty)
    return "int32"


def _expr(x: Any, dtype: str) -> Any:
    return tvm.tirx.IntImm(dtype, x) if is_int(x) else x


def _fold(x: Any) -> Any:
    return int(x.value) if type(x).__name__ == "IntImm" else x


def mul_leaf(a: Any, b: Any) -> Any:
    """Product of two plain leaves, constants folded and the 0 / 1 identities applied."""
    if is_int(a) and is_int(b):
        return a * b
    if is_int(a):
        if a == 0:
            return 0
        if a == 1:
            return b
    if is_int(b):
        if b == 0:
            return 0
        if b == 1:
            return a
    dt = _dtype(a, b)
    return _fold(_expr(a, dt) * _expr(b, dt))


def add_leaf(a: Any, b: Any) -> Any:
    if is_int(a) and is_int(b):
        return a + b
    if is_zero(a):
        return b
    if is_zero(b):
        return a
    dt = _dtype(a, b)
    return _fold(_expr(a, dt) + _expr(b, dt))


def div_leaf(a: Any, b: Any) -> Any:
    """Floored division."""
    if is_int(a) and is_int(b):
        check(b != 0, "division by zero in a layout")
        return a // b
    if is_int(b) and b == 1:
        return a
    dt = _dtype(a, b)
    return _fold(tvm.tirx.floordiv(_expr(a, dt), _expr(b, dt)))


def mod_leaf(a: Any, b: Any) -> Any:
    """Floored modulo."""
    if is_int(a) and is_int(b):
        check(b != 0, "modulo by zero in a layout")
        return a % b
    if is_int(b) and b == 1:
        return 0
    dt = _dtype(a, b)
    return _fold(tvm.tirx.floormod(_expr(a, dt), _expr(b, dt)))


def ceil_div_leaf(a: Any, b: Any) -> Any:
    if is_int(a) and is_int(b):
        return -(-a // b)
    dt = _dtype(a, b)
    return _fold(tvm.tirx.floordiv(_expr(a, dt) + _expr(b, dt) - 1, _expr(b, dt)))


def abs_leaf(a: Any) -> Any:
    if is_int(a):
        return abs(a)
    if is_basis(a):
        return ScaledBasis(abs_leaf(a.value), a.mode)
    return tvm.tirx.abs(a)


def as_arithmetic_tuple(sb: ScaledBasis) -> tuple[Any, ...]:
    """``v@(n0, n1, ..)`` as the tuple holding `v` at position ``[n0][n1]..`` and 0 elsewhere."""
    out: Any = sb.value
    for k in reversed(sb.mode):
        out = tuple([0] * k + [out])
    return out  # type: ignore[no-any-return]


def add(a: PyIntTuple, b: PyIntTuple) -> PyIntTuple:
    """CuTe ArithmeticTuple addition (see the module docstring)."""
    if is_zero(a):
        return b
    if is_zero(b):
        return a
    if is_tuple(a) or is_tuple(b):
        if is_basis(a):
            return add(as_arithmetic_tuple(a), b)
        if is_basis(b):
            return add(a, as_arithmetic_tuple(b))
        check(is_tuple(a) and is_tuple(b), f"cannot add a non-zero leaf to a tuple: {fmt(a)} + {fmt(b)}")
        n = max(len(a), len(b))
        return tuple(add(a[i] if i < len(a) else 0, b[i] if i < len(b) else 0) for i in range(n))
    if is_basis(a) and is_basis(b):
        return add(as_arithmetic_tuple(a), as_arithmetic_tuple(b))
    check(not is_basis(a) and not is_basis(b), f"cannot add a ScaledBasis and a plain leaf: {fmt(a)} + {fmt(b)}")
    return add_leaf(a, b)


def mul(a: PyIntTuple, b: PyIntTuple) -> PyIntTuple:
    """CuTe product: a scaled basis scales its value (a tuple peer distributes over its leaves), tuples multiply
    component-wise, leaves multiply."""
    if is_basis(a) or is_basis(b):
        check(not (is_basis(a) and is_basis(b)), "two ScaledBasis leaves cannot multiply")
        basis, peer = (a, b) if is_basis(a) else (b, a)
        return transform_leaf(peer, lambda leaf: ScaledBasis(mul_leaf(basis.value, leaf)
                                                             if is_basis(a) else mul_leaf(leaf, basis.value),
                                                             basis.mode))
    if is_tuple(a) or is_tuple(b):
        check(is_tuple(a) and is_tuple(b) and len(a) == len(b), f"cannot multiply {fmt(a)} by {fmt(b)}")
        return tuple(mul(x, y) for x, y in zip(a, b))
    return mul_leaf(a, b)


def transform_leaf(t: PyIntTuple, fn: Callable[[Any], Any]) -> PyIntTuple:
    if is_tuple(t):
        return tuple(transform_leaf(x, fn) for x in t)
    return fn(t)


def leaves(t: PyIntTuple) -> list[Any]:
    if is_tuple(t):
        return [leaf for x in t for leaf in leaves(x)]
    return [t]


def flatten(t: PyIntTuple) -> PyIntTuple:
    return tuple(leaves(t)) if is_tuple(t) else t


def rank(t: PyIntTuple) -> int:
    return len(t) if is_tuple(t) else 1


def get(t: PyIntTuple, i: int) -> PyIntTuple:
    """Mode `i` (a leaf is its own mode 0)."""
    if is_tuple(t):
        check(0 <= i < len(t), f"index {i} out of range for {fmt(t)}")
        return t[i]
    check(i == 0, f"leaf index out of range: {i} vs 0")
    return t


def basis_get(path: Sequence[int], t: PyIntTuple) -> PyIntTuple:
    for i in path:
        t = get(t, i)
    return t


def product(t: PyIntTuple) -> Any:
    if not is_tuple(t):
        return t
    acc: Any = 1
    for x in t:
        acc = mul_leaf(acc, product(x))
    return acc


def congruent(a: PyIntTuple, b: PyIntTuple) -> bool:
    if is_tuple(a) != is_tuple(b):
        return False
    if not is_tuple(a):
        return True
    return len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))


def compatible(a: PyIntTuple, b: PyIntTuple) -> bool:
    """Whether shape `b` refines shape `a`: a leaf of `a` may cover a whole subtree of `b` of equal size."""
    if is_tuple(a) and is_tuple(b):
        return len(a) == len(b) and all(compatible(x, y) for x, y in zip(a, b))
    if is_tuple(a):
        return False
    if is_basis(a) or any(is_basis(leaf) for leaf in leaves(b)):
        return False
    size = product(b)
    if is_int(a) and is_int(size):
        return a == size
    if is_expr(a) and is_expr(size) and str(a.ty) != str(size.ty):
        return False
    dt = _dtype(a, size)
    return bool(tvm.sym.Analyzer().can_prove_equal(_expr(a, dt), _expr(size, dt)))


def fmt(t: PyIntTuple) -> str:
    """The CuTe spelling of a Python-form tuple."""
    if is_tuple(t):
        return "(" + ",".join(fmt(x) for x in t) + ")"
    return str(t)


def parse(text: str) -> PyIntTuple:
    """Invert `fmt`: nested ``(a,b,...)``, integer leaves, ``v@m@...`` bases (path innermost-first)."""
    pos = 0

    def peek() -> str:
        return text[pos] if pos < len(text) else ""

    def skip() -> None:
        nonlocal pos
        while pos < len(text) and text[pos].isspace():
            pos += 1

    def integer() -> int:
        nonlocal pos
        skip()
        start = pos
        if peek() == "-":
            pos += 1
        while pos < len(text) and text[pos].isdigit():
            pos += 1
        check(pos > start + (1 if text[start:start + 1] == "-" else 0),
              f"expected an integer at position {start} of {text!r}")
        return int(text[start:pos])

    def term() -> PyIntTuple:
        nonlocal pos
        skip()
        value: PyIntTuple
        if peek() == "(":
            pos += 1
            fields = []
            skip()
            while peek() != ")":
                check(peek() != "", f"unbalanced parentheses in {text!r}")
                fields.append(term())
                skip()
                if peek() == ",":
                    pos += 1
                else:
                    check(peek() == ")", f"expected ',' or ')' at position {pos} of {text!r}")
                skip()
            pos += 1
            value = tuple(fields)
        else:
            value = integer()
        skip()
        path = []
        while peek() == "@":
            pos += 1
            path.append(integer())
            skip()
        if not path:
            return value
        return mul(value, ScaledBasis(1, tuple(reversed(path))))

    result = term()
    skip()
    check(pos == len(text), f"trailing characters in {text!r}: {text[pos:]!r}")
    return result


# ---------------------------------------------------------------------------------------------- FFI form
@py_class("tl.cute.IntTuple", structural_eq="tree", repr=False)
class IntTuple(Object):
    """An integer tuple as an IR object (see the module docstring)."""

    def __add__(self, other: Any) -> IntTuple:
        return from_python(add(to_python(self), _coerce(other)))

    def __radd__(self, other: Any) -> IntTuple:
        return from_python(add(_coerce(other), to_python(self)))

    def __mul__(self, other: Any) -> IntTuple:
        return from_python(mul(to_python(self), _coerce(other)))

    def __rmul__(self, other: Any) -> IntTuple:
        return from_python(mul(_coerce(other), to_python(self)))

    def __str__(self) -> str:
        return fmt(to_python(self))

    def __repr__(self) -> str:
        return fmt(to_python(self))

    @staticmethod
    def parse(text: str) -> IntTuple:
        return from_python(parse(str(text)))


@py_class("tl.cute.IntTupleConst", structural_eq="tree", repr=False)
class IntTupleConst(IntTuple):
    value: int


@py_class("tl.cute.IntTuplePrimExpr", structural_eq="tree", repr=False)
class IntTuplePrimExpr(IntTuple):
    value: Any


@py_class("tl.cute.IntTupleScaledBasis", structural_eq="tree", repr=False)
class IntTupleScaledBasis(IntTuple):
    value: IntTuple
    basis: list


@py_class("tl.cute.IntTupleTuple", structural_eq="tree", repr=False)
class IntTupleTuple(IntTuple):
    fields: list


def to_python(t: Any) -> PyIntTuple:
    """Unpack an `IntTuple`: branches become tuples, leaves ints, PrimExprs or `ScaledBasis`."""
    if isinstance(t, IntTupleTuple):
        return tuple(to_python(c) for c in t.fields)
    if isinstance(t, IntTupleConst):
        return int(t.value)
    if isinstance(t, IntTuplePrimExpr):
        return _fold(t.value)
    if isinstance(t, IntTupleScaledBasis):
        return ScaledBasis(to_python(t.value), tuple(int(m) for m in t.basis))
    raise TypeError(f"not an IntTuple: {t!r}")


def from_python(value: Any) -> IntTuple:
    """Build an `IntTuple` from its Python form (nested tuples / lists, ints, PrimExprs, `ScaledBasis`)."""
    if isinstance(value, IntTuple):
        return value
    if isinstance(value, (tuple, list)):
        return IntTupleTuple([from_python(v) for v in value])
    if isinstance(value, ScaledBasis):
        return IntTupleScaledBasis(from_python(value.value), list(value.mode))
    leaf = _norm_leaf(value)
    if is_int(leaf):
        return IntTupleConst(leaf)
    return IntTuplePrimExpr(leaf)


def python_form(value: Any) -> PyIntTuple:
    """Any accepted integer-tuple spelling (FFI object, list, tuple, leaf) in Python form."""
    return _coerce(value)
