"""CUDA math functions (``exp2f``, ``rsqrtf``, ``__habs`` ...) on the CuTe DSL, scalar or element-wise.

Each takes ``fastmath``: False lowers to the IEEE-accurate sequence, True lets NVVM pick the approximate
instruction (``ex2.approx``, ``rsqrt.approx``, ``lg2.approx`` ...) as ``--use_fast_math`` does.
"""

from __future__ import annotations

import cutlass
import cutlass.cute as cute
from cutlass._mlir.dialects import arith, llvm
from cutlass.base_dsl.typing import BFloat16, Float16, Float32, Numeric, Uint16, Uint32
from cutlass.cute.tensor import TensorSSA
from cutlass.cutlass_dsl import T, dsl_user_op

from tilelang_cuda.contrib.cutedsl._dsl._asm import asm

_LOG2_10 = 3.321928094887362  # log2(10)


def _dtype(args):
    """The one DSL float type of the scalar `args` (Python numbers adopt it)."""
    found = None
    for arg in args:
        if isinstance(arg, Numeric):
            kind = type(arg)
        elif hasattr(arg, "type"):
            kind = Numeric.from_mlir_type(arg.type)
        else:
            continue
        if found is not None and kind is not found:
            raise TypeError(f"math helper: mixed scalar types {found.__name__} and {kind.__name__}; cast one first")
        found = kind
    if found is None:
        return Float32
    if not found.is_float:
        raise TypeError(f"math helper: expected floating-point inputs, got {found.__name__}")
    return found


def _apply(op, fastmath, *args):
    """`op` (a ``cute.math`` function name, or an MLIR op builder) of `args` in their one float type."""
    if any(isinstance(arg, TensorSSA) for arg in args):
        return getattr(cute.math, op)(*args, fastmath=fastmath)
    dtype = _dtype(args)
    values = [arg if isinstance(arg, dtype) else dtype(arg.ir_value() if hasattr(arg, "ir_value") else arg)
              for arg in args]
    if isinstance(op, str):
        return getattr(cute.math, op)(*values, fastmath=fastmath)
    flags = arith.FastMathFlags.fast if fastmath else arith.FastMathFlags.none
    return dtype(op(*(v.ir_value() for v in values), fastmath=flags))


def exp(x, fastmath: bool = False):
    """e**x."""
    return _apply("exp", fastmath, x)


def exp2(x, fastmath: bool = False):
    """2**x (``ex2.approx`` with `fastmath`)."""
    return _apply("exp2", fastmath, x)


def exp10(x, fastmath: bool = False):
    """10**x, as ``exp2(x * log2(10))``."""
    return exp2(x * _LOG2_10, fastmath=fastmath)


def log(x, fastmath: bool = False):
    """Natural logarithm."""
    return _apply("log", fastmath, x)


def log1p(x, fastmath: bool = False):
    """log(1 + x), accurate near 0."""
    return _apply("log1p", fastmath, x)


def log2(x, fastmath: bool = False):
    """Base-2 logarithm (``lg2.approx`` with `fastmath`)."""
    return _apply("log2", fastmath, x)


def log10(x, fastmath: bool = False):
    """Base-10 logarithm."""
    return _apply("log10", fastmath, x)


def tan(x, fastmath: bool = False):
    """Tangent."""
    return _apply("tan", fastmath, x)


def cos(x, fastmath: bool = False):
    """Cosine (``cos.approx`` with `fastmath`)."""
    return _apply("cos", fastmath, x)


def sin(x, fastmath: bool = False):
    """Sine (``sin.approx`` with `fastmath`)."""
    return _apply("sin", fastmath, x)


def sqrt(x, fastmath: bool = False):
    """Square root (``sqrt.rn``; ``sqrt.approx`` with `fastmath`)."""
    return _apply("sqrt", fastmath, x)


def rsqrt(x, fastmath: bool = False):
    """1 / sqrt(x) (``rsqrt.approx``)."""
    return _apply("rsqrt", fastmath, x)


def fabsf(x, fastmath: bool = False):
    """|x|."""
    return _apply("absf", fastmath, x)


def abs2(x):
    """|x| (``fabsf``)."""
    return fabsf(x)


def max2(x, y):
    """The larger of `x` and `y` (element-wise for tensors)."""
    if isinstance(x, TensorSSA) or isinstance(y, TensorSSA):
        return cute.where(x > y, x, y)
    return cutlass.max(x, y)


def min2(x, y):
    """The smaller of `x` and `y` (element-wise for tensors)."""
    if isinstance(x, TensorSSA) or isinstance(y, TensorSSA):
        return cute.where(x < y, x, y)
    return cutlass.min(x, y)


def divf(x, y, fastmath: bool = False):
    """x / y (``div.rn``; ``div.approx``/``div.full`` with `fastmath`)."""
    if isinstance(x, TensorSSA) or isinstance(y, TensorSSA):
        return x / y
    return _apply(arith.divf, fastmath, x, y)


def copysignf(x, y, fastmath: bool = False):
    """|x| with the sign of `y` (float32 scalars by bit operations; tensors through ``math.copysign``)."""
    if isinstance(x, TensorSSA) or isinstance(y, TensorSSA):
        return cute.math.copysign(x, y, fastmath=fastmath)
    if _dtype((x, y)) is not Float32:
        raise TypeError("copysignf: scalars must be Float32")
    bits = (Float32(x).bitcast(Uint32) & Uint32(0x7FFFFFFF)) | (Float32(y).bitcast(Uint32) & Uint32(0x80000000))
    return bits.bitcast(Float32)


def isfinite(x) -> cutlass.Boolean:
    """Whether the float32 `x` is neither infinite nor NaN (its exponent is not all ones)."""
    _dtype((x,))
    return (Float32(x).bitcast(Uint32) & Uint32(0x7F800000)) != Uint32(0x7F800000)


def __habs(x):
    """|x| of a Float16 or BFloat16 (clears the sign bit)."""
    dtype = _dtype((x,))
    if dtype not in (Float16, BFloat16):
        raise TypeError(f"__habs: expected Float16 or BFloat16, got {dtype.__name__}")
    return (dtype(x).bitcast(Uint16) & Uint16(0x7FFF)).bitcast(dtype)


@dsl_user_op
def __float2half_rz(x, *, loc=None, ip=None) -> Float16:
    """The float32 `x` as a Float16, rounded toward zero (``cvt.rz.f16.f32``)."""
    bits = asm(T.i16(), [Float32(x).ir_value(loc=loc, ip=ip)], "cvt.rz.f16.f32 $0, $1;", "=h,f",
               side_effects=False, loc=loc, ip=ip)
    return Float16(llvm.bitcast(T.f16(), bits, loc=loc, ip=ip))


@dsl_user_op
def _tanh_approx(x, *, fastmath=None, loc=None, ip=None):
    return asm(T.f32(), [x], "tanh.approx.f32 $0, $1;", "=f,f", side_effects=False, loc=loc, ip=ip)


def tanh(x, fastmath: bool = False):
    """Hyperbolic tangent (``tanh.approx.f32``, sm_75+, with `fastmath`)."""
    if fastmath and not isinstance(x, TensorSSA):
        return _apply(_tanh_approx, False, x)
    return _apply("tanh", fastmath, x)
