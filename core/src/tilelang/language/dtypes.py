"""Data types: ``T.float16``, ``T.float32``, ``T.float32x4``, ``T.int4``, ... are `dtype` values.

`dtype` is a subclass of ``tvm.DataType`` (itself a ``str``): a dtype is accepted wherever a dtype string is,
equals its canonical name (``T.float16 == "float16"``, ``T.int == "int32"``), and calling it casts
(``T.float32(x)``), makes a constant (``T.float32(1.0)``), packs lanes (``T.float16x2(a, b)``) or, without an
argument, makes a fresh scalar Var (``n = T.int32()``). As a parameter annotation (``n: T.int32``) it declares a
scalar parameter.

The dtype objects are made on first access (PEP 562): ``import tilelang.language`` imports no TVM.
"""

from __future__ import annotations

import re
from typing import Any

from tilelang.errors import KernelTypeError

_SCALARS = (
    "bool",
    "int4", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64",
    "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
    "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn",
)
#: scalar dtypes of the first release, the ones every backend handles
SUPPORTED = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64",
    "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn",
)
_LANES = (2, 4, 8, 16, 32, 64)
_VECTOR_BASES = (
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64",
    "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
    "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn",
)
#: the reference's custom dtypes: name -> (TVM custom type code, canonical string)
CUSTOM_TYPES = {"tfloat32": (130, "custom[tfloat32]"), "float4_e2m1_unpacked": (131, "custom[float4_e2m1_unpacked]8")}

#: spellings that are not TVM dtype names -> canonical dtype
ALIASES = {
    "float": "float32", "half": "float16", "double": "float64", "int": "int32", "long": "int64", "short": "int16",
    "uint": "uint32", "ulong": "uint64", "bool_": "bool", "boolean": "bool",
    "bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp64": "float64",
    "e4m3_float8": "float8_e4m3fn", "e5m2_float8": "float8_e5m2", "e4m3fnuz_float8": "float8_e4m3fnuz",
    "tfloat32": "custom[tfloat32]", "float4_e2m1_unpacked": "custom[float4_e2m1_unpacked]8",
    **{f"tfloat32x{n}": f"custom[tfloat32]x{n}" for n in _LANES},
}
_PYTHON_TYPES = {bool: "bool", int: "int32", float: "float32"}
_NUMPY_NAMES = {"bool_": "bool", "bool": "bool", "half": "float16", "single": "float32", "double": "float64",
                "longlong": "int64", "int_": "int64", "short": "int16"}

#: every ``T.<name>`` dtype of the reference, in its order (``_all_dtypes``)
_all_dtypes: list[str] = [
    "bool", "short", "int", "uint", "long", "half", "float", "double", "int4",
    "int8", "int16", "int32", "int64",
    *[f"{b}x{n}" for n in _LANES for b in ("int8", "int16", "int32", "int64")],
    "uint8", "uint16", "uint32", "uint64",
    *[f"{b}x{n}" for n in _LANES for b in ("uint8", "uint16", "uint32", "uint64")],
    "float16", "float32", "float64",
    *[f"{b}x{n}" for n in _LANES for b in ("float16", "float32", "float64")],
    *[name for b in ("float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
                     "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn",
                     "float4_e2m1fn")
      for name in (b, *[f"{b}x{n}" for n in _LANES])],
    "float4_e2m1_unpacked", "bfloat16", "bfloat16x2",
    "tfloat32", *[f"tfloat32x{n}" for n in _LANES],
]
_ALL = frozenset(_all_dtypes)
_KNOWN = frozenset(_SCALARS) | frozenset(f"{b}x{n}" for b in _VECTOR_BASES for n in _LANES) | {
    "bfloat16x2", "bfloat16x4", "bfloat16x8", "handle", "void"} | {c for _, c in CUSTOM_TYPES.values()}
_GRAMMAR = re.compile(r"^(u?int\d+|float\d+(_e\d+m\d+\w*)?|bfloat16|bool|handle|custom\[\w+\]\d*)(x\d+)?$")

_TORCH_NAMES = {"float4_e2m1fn_x2": "float4_e2m1fnx2", "half": "float16", "float": "float32", "double": "float64",
                "int": "int32", "long": "int64", "short": "int16", "bool": "bool"}


def _from_object(name: Any) -> str | None:
    """The dtype string of a Python type, torch dtype or numpy dtype / scalar type, else None."""
    if isinstance(name, type) and name in _PYTHON_TYPES:
        return _PYTHON_TYPES[name]
    module = type(name).__module__
    if module == "torch":  # torch.dtype
        text = str(name)[len("torch."):]
        return _TORCH_NAMES.get(text, text)
    if module.startswith("numpy") or (isinstance(name, type) and name.__module__.startswith("numpy")):
        import numpy as np

        text = np.dtype(name).name
        return _NUMPY_NAMES.get(text, text)
    if module.startswith("ml_dtypes") or getattr(name, "__module__", "").startswith("ml_dtypes"):
        import numpy as np

        return np.dtype(name).name
    return None


def canonical(name: Any) -> str:
    """The canonical dtype string of a dtype, string, Python type, torch or numpy dtype.

    Raises KernelTypeError naming the supported dtypes when `name` is not one.
    """
    marked = getattr(name, "__tilelang_dtype__", None)  # T.ptr as a tensor dtype: an int64 address
    if isinstance(marked, str):
        return marked
    if isinstance(name, str):
        text = str.__str__(name)
    else:
        text = _from_object(name)
        if text is None:
            raise KernelTypeError(f"unsupported dtype {name!r} ({type(name).__name__}); use a dtype such as "
                                  f"T.float16 or one of: {', '.join(SUPPORTED)}")
    if text.startswith("torch."):
        text = _TORCH_NAMES.get(text[len("torch."):], text[len("torch."):])
    text = ALIASES.get(text, text)
    if text in _KNOWN:
        return text
    if _GRAMMAR.match(text):
        try:
            _register_custom_types()
            import tvm_ffi

            return str.__str__(tvm_ffi.dtype(text))
        except Exception:
            pass
    raise KernelTypeError(f"unsupported dtype {name!r}; supported: {', '.join(SUPPORTED)} "
                          "(and their vector forms such as float32x4)")


def is_dtype_like(x: Any) -> bool:
    """Whether `x` names a dtype (a dtype object, dtype string, torch or numpy dtype)."""
    if isinstance(x, str) or type(x).__module__ in ("torch", "numpy") or (
            isinstance(x, type) and x in _PYTHON_TYPES):
        try:
            canonical(x)
        except KernelTypeError:
            return False
        return True
    return False


def cast(value: Any, target: Any) -> Any:
    """`value` as `target` dtype: a constant for Python numbers, a Cast (or nothing) for expressions."""
    import tvm
    from tvm import tirx

    target = canonical(target)
    if isinstance(value, bool | int | float):
        _check_representable(value, target)
        return tirx.const(value, target)
    if hasattr(value, "asobject"):  # lazy == / != results
        value = value.asobject()
    if isinstance(value, tvm.ir.Expr) and tvm.ir.is_prim_expr(value):
        return value if str(value.ty.dtype) == target else value.astype(target)
    raise KernelTypeError(f"cannot cast {type(value).__name__} {value!r} to {target}")


_FLOAT_MAX = {"float32": 3.4028234663852886e38}  # float16 constants saturate (-1e30 as "minus infinity" is common)


def _check_representable(value: bool | int | float, dtype: str) -> None:
    """ValueError for a Python number the constant of `dtype` cannot hold (finite floats beyond its range)."""
    import math

    if isinstance(value, float) and math.isfinite(value) and dtype in _FLOAT_MAX and abs(value) > _FLOAT_MAX[dtype]:
        raise ValueError(f"{value!r} exceeds maximum of {dtype} ({_FLOAT_MAX[dtype]!r})")


# ------------------------------------------------------------------------------------------- custom types
_CUSTOM_REGISTERED = False


def _register_custom_types() -> None:
    """Teach TVM's dtype parser the reference's custom dtypes (``custom[tfloat32]``, ...), once per process."""
    global _CUSTOM_REGISTERED
    if _CUSTOM_REGISTERED:
        return
    import tvm_ffi

    codes = {name: code for name, (code, _) in CUSTOM_TYPES.items()}
    names = {code: name for name, code in codes.items()}
    if tvm_ffi.get_global_func("dtype.get_custom_type_code", allow_missing=True) is None:
        def type_code(name: str) -> int:
            if name not in codes:
                raise ValueError(f"unknown custom dtype {name!r}; known: {', '.join(codes)}")
            return codes[name]

        def type_name(code: int) -> str:
            if int(code) not in names:
                raise ValueError(f"unknown custom dtype code {code}")
            return names[int(code)]

        tvm_ffi.register_global_func("dtype.get_custom_type_code", type_code)
        tvm_ffi.register_global_func("dtype.get_custom_type_name", type_name)
    _CUSTOM_REGISTERED = True


# ------------------------------------------------------------------------------------------- the dtype class
_DTYPE_CLASS: type | None = None
_FLOAT4_E2M1FN_CODE = 17
_FLOAT4_UNPACKED_CODE = CUSTOM_TYPES["float4_e2m1_unpacked"][0]


def _dtype_is_float4_e2m1fn(self: Any) -> bool:
    """Whether this is the packed fp4 type ``float4_e2m1fn`` (4 bits)."""
    return self.bits == 4 and int(self.type_code) == _FLOAT4_E2M1FN_CODE


def _dtype_is_float4_e2m1_unpacked(self: Any) -> bool:
    """Whether this is ``custom[float4_e2m1_unpacked]8``: one fp4 value per byte."""
    return self.bits == 8 and int(self.type_code) == _FLOAT4_UNPACKED_CODE


def _dtype_is_float4(self: Any) -> bool:
    """Whether this is an fp4 type, packed or unpacked."""
    return _dtype_is_float4_e2m1fn(self) or _dtype_is_float4_e2m1_unpacked(self)


_FP4_PREDICATES = {"is_float4_e2m1fn": _dtype_is_float4_e2m1fn,
                   "is_float4_e2m1_unpacked": _dtype_is_float4_e2m1_unpacked, "is_float4": _dtype_is_float4}


def _make_dtype_class() -> type:
    import tvm_ffi

    _register_custom_types()

    class dtype(tvm_ffi.dtype):
        """A DSL data type: a ``tvm.DataType`` that equals its canonical name and builds values when called."""

        __slots__ = ()

        def __new__(cls, value: Any) -> dtype:
            if type(value) is cls:
                return value
            return tvm_ffi.dtype.__new__(cls, canonical(value))

        def __call__(self, *args: Any, is_size_var: bool = False) -> Any:
            """``T.float32(1.0)`` a constant, ``T.float32(expr)`` a cast, ``T.float16x2(a, b)`` a vector,
            ``T.int32()`` a fresh scalar Var."""
            from tvm import tirx

            if len(args) > 1:
                lanes = [cast(a, self.element_of) for a in args]
                return tirx.Shuffle(lanes, list(range(len(lanes))))
            if not args or args[0] is None:
                return tirx.Var("v", str(self))
            if self.lanes > 1 and isinstance(args[0], (bool, int, float)):  # a constant in every lane
                return tirx.Broadcast(as_dtype(self.element_of)(args[0]), self.lanes)
            if str(self).startswith("custom[") and isinstance(args[0], (bool, int, float)):
                # TVM makes no constants of custom types: the value is a float32 constant converted to it
                return tirx.Cast(str(self), tirx.const(float(args[0]), "float32"))
            return cast(args[0], self)

        @property
        def element_of(self) -> str:
            """The scalar dtype of one lane."""
            return str(self.with_lanes(1))

        @property
        def bytes(self) -> int:
            return self.itemsize

        def as_torch(self) -> Any:
            """The torch dtype that stores this dtype (sub-byte and custom types map to their storage)."""
            return torch_dtype(self)

    # The fork's DataType has the fp4 predicates: every dtype TVM hands out (``expr.dtype``) gets them too.
    for name, predicate in _FP4_PREDICATES.items():
        if not hasattr(tvm_ffi.dtype, name):
            setattr(tvm_ffi.dtype, name, predicate)
    dtype.__module__ = __name__
    dtype.__qualname__ = "dtype"
    return dtype


def _dtype_class() -> type:
    global _DTYPE_CLASS
    if _DTYPE_CLASS is None:
        _DTYPE_CLASS = _make_dtype_class()
    return _DTYPE_CLASS


def as_dtype(name: Any) -> Any:
    """`name` as a `dtype` object."""
    return _dtype_class()(name)


get_tvm_dtype = as_dtype


def is_float4_e2m1fn(value: Any) -> bool:
    return as_dtype(value).is_float4_e2m1fn()


def is_float4_e2m1_unpacked(value: Any) -> bool:
    return as_dtype(value).is_float4_e2m1_unpacked()


def is_float4(value: Any) -> bool:
    return as_dtype(value).is_float4()


def is_f8f6f4_family(value: Any) -> bool:
    """Whether `value` is an fp8, fp6 or fp4 dtype."""
    dt = as_dtype(value)
    name = str(dt)
    return dt.is_float4() or (dt.bits == 8 and name.startswith("float8")) or (dt.bits == 6 and name.startswith(
        "float6"))


def validate_gemm_ab_dtypes(a_dtype: Any, b_dtype: Any, *, a_in_tmem: bool = False,
                            allow_f8f6f4_mixed: bool = False) -> None:
    """Raise ValueError when GEMM operands A and B have dtypes that cannot be mixed."""
    if a_in_tmem or canonical(a_dtype) == canonical(b_dtype):
        return
    if allow_f8f6f4_mixed and is_f8f6f4_family(a_dtype) and is_f8f6f4_family(b_dtype):
        return
    raise ValueError(f"Mixed-dtype GEMM only supports f8f6f4 family operands currently, got A={a_dtype}, "
                     f"B={b_dtype}")


_TORCH_STORAGE = {"int4": "int8", "float4_e2m1fn": "float4_e2m1fn_x2", "custom[tfloat32]": "float32",
                  "custom[float4_e2m1_unpacked]8": "uint8", "float4_e2m1fnx2": "float4_e2m1fn_x2",
                  "float8_e4m3": "float8_e4m3fn"}


def torch_dtype(value: Any) -> Any:
    """The torch dtype that stores `value` (None for ``handle``); ValueError when torch has none."""
    import torch

    name = canonical(value)
    if name == "handle":
        return None
    name = _TORCH_STORAGE.get(name, name)
    if name == "float4_e2m1fn_x2" and not hasattr(torch, name):
        name = "int8"
    found = getattr(torch, name, None)
    if not isinstance(found, torch.dtype):
        raise ValueError(f"Cannot convert dtype {value!r} to torch.dtype: torch {torch.__version__} has no "
                         f"torch.{name}")
    return found


def resolve_torch_storage_dtype(value: Any) -> Any:
    """The TileLang dtype describing torch's physical storage of `value`."""
    return as_dtype(torch_dtype(value))


# names that shadow Python builtins are attributes only (never bound in this module's namespace by import *)
_BUILTIN_SHADOWS = frozenset({"bool", "int", "float"})
_SHADOW_CACHE: dict[str, Any] = {}

__all__ = [*_all_dtypes, "dtype", "bool_", "canonical", "cast", "get_tvm_dtype", "is_float4_e2m1fn",  # noqa: F822
           "is_float4_e2m1_unpacked", "is_float4", "is_f8f6f4_family", "validate_gemm_ab_dtypes",
           "resolve_torch_storage_dtype", "AnyDType"]  # dtype / bool_ / AnyDType / the dtypes: made by __getattr__


def _torch_dtype_names() -> dict[Any, str]:
    """Every torch dtype that TileLang has -> its dtype name (the reference's ``_TORCH_DTYPE_TO_STR``)."""
    import torch

    table: dict[Any, str] = {}
    for attr in dir(torch):
        value = getattr(torch, attr, None)
        if isinstance(value, torch.dtype) and value not in table:
            try:
                table[value] = canonical(value)
            except KernelTypeError:
                pass
    return table


def __getattr__(name: str) -> Any:
    if name == "dtype":
        return _dtype_class()
    if name in ("_TORCH_DTYPE_TO_STR", "_STR_TO_TORCH_DTYPE"):
        table = _torch_dtype_names()
        globals()["_TORCH_DTYPE_TO_STR"] = table
        globals()["_STR_TO_TORCH_DTYPE"] = {v: k for k, v in table.items()}
        return globals()[name]
    if name == "AnyDType":
        return Any
    if name == "bool_":
        value = as_dtype("bool")
    elif name in _ALL:
        value = as_dtype(name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name in _BUILTIN_SHADOWS:
        _SHADOW_CACHE[name] = value = _SHADOW_CACHE.get(name, value)
    else:
        globals()[name] = value
    return value
