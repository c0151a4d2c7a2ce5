"""IEEE-754 float arithmetic with an explicit rounding mode (CUDA's ``__fadd_rn``, ``__fdiv_rz`` ...) on the
CuTe DSL: one PTX instruction each, so the compiler neither contracts nor approximates them.

`rounding` is "rn" (to nearest even), "rz" (toward zero), "rm" (toward -inf) or "rp" (toward +inf). Float64
operands give the f64 instruction; anything else is computed in float32.
"""

from __future__ import annotations

from cutlass.base_dsl.typing import Float32, Float64
from cutlass.cutlass_dsl import T

from tilelang_cuda.contrib.cutedsl._dsl._asm import asm

_ROUNDINGS = ("rn", "rz", "rm", "rp")


def _op(name, rounding, *args):
    if rounding not in _ROUNDINGS:
        raise ValueError(f"ieee_{name}: rounding must be one of {_ROUNDINGS}, got {rounding!r}")
    wide = any(isinstance(a, Float64) for a in args)
    dtype, suffix, reg, mlir = (Float64, "f64", "d", T.f64()) if wide else (Float32, "f32", "f", T.f32())
    regs = ", ".join(f"${i}" for i in range(len(args) + 1))
    out = asm(mlir, [dtype(a).ir_value() for a in args], f"{name}.{rounding}.{suffix} {regs};",
              ",".join([f"={reg}"] + [reg] * len(args)), side_effects=False)
    return dtype(out)


def ieee_fadd(a, b, rounding="rn"):
    """a + b rounded as `rounding` (``add.<rounding>.f32``)."""
    return _op("add", rounding, a, b)


def ieee_fsub(a, b, rounding="rn"):
    """a - b (``sub.<rounding>``)."""
    return _op("sub", rounding, a, b)


def ieee_fmul(a, b, rounding="rn"):
    """a * b (``mul.<rounding>``)."""
    return _op("mul", rounding, a, b)


def ieee_fmaf(a, b, c, rounding="rn"):
    """a * b + c with one rounding (``fma.<rounding>``)."""
    return _op("fma", rounding, a, b, c)


def ieee_frcp(a, rounding="rn"):
    """1 / a (``rcp.<rounding>``)."""
    return _op("rcp", rounding, a)


def ieee_fsqrt(a, rounding="rn"):
    """sqrt(a) (``sqrt.<rounding>``)."""
    return _op("sqrt", rounding, a)


def ieee_fdiv(a, b, rounding="rn"):
    """a / b (``div.<rounding>``)."""
    return _op("div", rounding, a, b)
