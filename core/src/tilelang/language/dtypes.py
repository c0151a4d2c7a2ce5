"""Data types: ``T.float16``, ``T.float32``, ... are `dtype` values (a ``str`` subclass).

A dtype is accepted wherever a dtype string is; calling it casts (``T.float32(x)``) or makes a constant
(``T.float32(1.0)``); as a parameter annotation (``n: T.int32``) it declares a scalar parameter.
"""

from __future__ import annotations

from typing import Any

from tilelang.errors import KernelTypeError

SUPPORTED = (
    "bool",
    "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64",
    "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn",
)
ALIASES = {
    "float": "float32", "half": "float16", "double": "float64", "int": "int32", "long": "int64",
    "bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp64": "float64",
    "float8_e4m3": "float8_e4m3fn", "e4m3_float8": "float8_e4m3fn", "e5m2_float8": "float8_e5m2",
}


class dtype(str):
    """A DSL data type; equal to its canonical name (``T.float16 == "float16"``)."""

    __slots__ = ()

    def __new__(cls, name: Any) -> dtype:
        return str.__new__(cls, canonical(name))

    def __call__(self, value: Any = None) -> Any:
        """``T.float32(1.0)`` is a constant, ``T.float32(expr)`` a cast, ``T.int32()`` a fresh scalar Var."""
        from tvm import tirx

        if value is None:
            return tirx.Var("v", str(self))
        return cast(value, self)

    @property
    def bits(self) -> int:
        import tvm

        return tvm.DataType(str(self)).bits

    def __repr__(self) -> str:
        return f"T.{self!s}"


def canonical(name: Any) -> str:
    """The canonical dtype name of a dtype, string, torch dtype or numpy dtype; KernelTypeError when unknown."""
    text = str(name)
    if text.startswith("torch."):
        text = text[len("torch."):]
    text = ALIASES.get(text, text)
    if text not in SUPPORTED:
        raise KernelTypeError(f"unsupported dtype {name!r}; supported: {', '.join(SUPPORTED)}")
    return text


def as_dtype(name: Any) -> dtype:
    return name if isinstance(name, dtype) else dtype(name)


def is_dtype_like(x: Any) -> bool:
    if isinstance(x, dtype):
        return True
    try:
        canonical(x)
    except KernelTypeError:
        return False
    return isinstance(x, str) or type(x).__module__ in ("torch", "numpy")


def cast(value: Any, target: Any) -> Any:
    """`value` as `target` dtype: a constant for Python numbers, a Cast (or nothing) for expressions."""
    import tvm
    from tvm import tirx

    target = canonical(target)
    if isinstance(value, bool | int | float):
        return tirx.const(value, target)
    if hasattr(value, "asobject"):  # lazy == / != results
        value = value.asobject()
    if isinstance(value, tvm.ir.Expr) and tvm.ir.is_prim_expr(value):
        return value if str(value.ty.dtype) == target else value.astype(target)
    raise KernelTypeError(f"cannot cast {type(value).__name__} {value!r} to {target}")


bool_ = dtype("bool")
int8 = dtype("int8")
int16 = dtype("int16")
int32 = dtype("int32")
int64 = dtype("int64")
uint8 = dtype("uint8")
uint16 = dtype("uint16")
uint32 = dtype("uint32")
uint64 = dtype("uint64")
float16 = dtype("float16")
bfloat16 = dtype("bfloat16")
float32 = dtype("float32")
float64 = dtype("float64")
float8_e4m3fn = dtype("float8_e4m3fn")
float8_e5m2 = dtype("float8_e5m2")
float8_e4m3fnuz = dtype("float8_e4m3fnuz")
float8_e5m2fnuz = dtype("float8_e5m2fnuz")
float8_e8m0fnu = dtype("float8_e8m0fnu")
float4_e2m1fn = dtype("float4_e2m1fn")
