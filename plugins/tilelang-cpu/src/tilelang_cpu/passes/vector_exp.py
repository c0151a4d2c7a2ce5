"""Vectorisable float32 ``exp`` / ``exp2`` for the LLVM CPU target (pass ``cpu.vector_exp``, point ``post_storage``).

TVM's LLVM codegen turns ``T.exp`` / ``T.exp2`` into ``llvm.exp*`` intrinsics, which the x86 backend lowers to one
scalar ``expf`` / ``exp2f`` libm call per lane: a softmax loop runs at scalar speed. This pass replaces every
float32 ``tirx.exp`` / ``tirx.exp2`` call with plain arithmetic that LLVM vectorises:

    exp2(x): n = rint(x), f = x - n in [-1/2, 1/2] (exact)
    exp(x):  n = rint(x * log2(e)), f = x - n * ln2_hi - n * ln2_lo (Cody-Waite, exact first product)
    result = p(f) * 2^(n >> 1) * 2^(n - (n >> 1))

``p`` is a degree-6 near-minimax polynomial (relative error 1.9e-9 in exact arithmetic, so the float32 result is
within ~1-2 ulp). The argument is first clamped so that ``n`` stays within [-160, 160]: the scale is split in two
exponent-field powers of two, each a normal float, so overflow gives ``inf``, deep underflow (and ``-inf``) gives
0 and subnormal results come out right. NaN passes through.
"""

from __future__ import annotations

from typing import Any

# p(f) ~ 2^f on [-0.5, 0.5] and q(r) ~ e^r on [-ln2/2, ln2/2], lowest degree first
EXP2_POLY = (1.00000000055215, 0.6931472057445277, 0.2402264690562616, 0.05550328765258543,
             0.009618487331182757, 0.001339993497939538, 0.00015346249870939847)
EXP_POLY = (1.0000000005521568, 1.00000003633368, 0.49999992111023456, 0.1666642013467763,
            0.041668218524769624, 0.008374818156018413, 0.0013837240881836976)
LOG2E = 1.4426950408889634
LN2_HI = 0.693359375  # 9 significant bits: n * LN2_HI is exact for |n| < 2^15
LN2_LO = -2.1219444005469058e-4
_EXP2_LIMIT = 160.0
_EXP_LIMIT = 110.0  # exp(110) overflows, exp(-110) underflows to 0; |n| <= 159


def _horner(coeffs: tuple[float, ...], x: Any) -> Any:
    from tvm import tirx

    acc: Any = tirx.const(coeffs[-1], "float32")
    for c in reversed(coeffs[:-1]):
        acc = acc * x + tirx.const(c, "float32")
    return acc


def _clamp(x: Any, limit: float) -> Any:
    """``x`` limited to [-limit, limit]; NaN stays NaN (each comparison with NaN is false)."""
    from tvm import tirx

    lo, hi = tirx.const(-limit, "float32"), tirx.const(limit, "float32")
    x = tirx.Select(x < lo, lo, x)
    return tirx.Select(x > hi, hi, x)


def _pow2(n: Any) -> Any:
    """``2^n`` for an int32 ``n`` with ``-126 <= n <= 127``, built in the exponent field."""
    from tvm import tirx

    return tirx.reinterpret("float32", tirx.shift_left(n + tirx.const(127, "int32"), tirx.const(23, "int32")))


def _scale(p: Any, n_float: Any) -> Any:
    """``p * 2^n`` for an integral float ``n`` in [-160, 160], in two normal steps."""
    from tvm import tirx

    n = tirx.Var("exp_n", "int32")
    half = tirx.shift_right(n, tirx.const(1, "int32"))
    return tirx.Let(n, tirx.Cast("int32", n_float), p * _pow2(half) * _pow2(n - half))


def _expand(x: Any, limit: float, make: Any) -> Any:
    """``make(clamped x)`` with NaN passed through; `x` is a float32 variable."""
    from tvm import tirx

    xc = tirx.Var("exp_x", "float32")
    return tirx.Select(tirx.isnan(x), x, tirx.Let(xc, _clamp(x, limit), make(xc)))


def exp2_f32(x: Any) -> Any:
    """A float32 ``2^x`` expression (x a float32 variable) made of vectorisable arithmetic."""
    from tvm import tirx

    def make(xc: Any) -> Any:
        n = tirx.Var("exp_rint", "float32")
        return tirx.Let(n, tirx.nearbyint(xc), _scale(_horner(EXP2_POLY, xc - n), n))

    return _expand(x, _EXP2_LIMIT, make)


def exp_f32(x: Any) -> Any:
    """A float32 ``e^x`` expression (x a float32 variable) made of vectorisable arithmetic (Cody-Waite)."""
    from tvm import tirx

    def make(xc: Any) -> Any:
        n = tirx.Var("exp_rint", "float32")
        r = xc - n * tirx.const(LN2_HI, "float32") - n * tirx.const(LN2_LO, "float32")
        return tirx.Let(n, tirx.nearbyint(xc * tirx.const(LOG2E, "float32")), _scale(_horner(EXP_POLY, r), n))

    return _expand(x, _EXP_LIMIT, make)


_EXPANSIONS = {"tirx.exp": exp_f32, "tirx.exp2": exp2_f32}


def _is_llvm(target: Any) -> bool:
    kind = getattr(getattr(target, "kind", None), "name", None)
    if kind is None and isinstance(target, dict):
        kind = target.get("kind")
    return str(kind) == "llvm"


def VectorizableExp(target: Any = None) -> Any:
    """The pass: float32 ``tirx.exp`` / ``tirx.exp2`` calls become `exp_f32` / `exp2_f32` expressions."""
    import tvm
    import tvm_ffi
    from tvm import tirx

    from tilelang.transform import utils as C
    from tilelang_cpu.gemm_plan import FAST_EXP, config

    def expand(call: Any) -> Any:
        op = call.op
        if not isinstance(op, tvm.ir.Op) or op.name not in _EXPANSIONS or str(call.ty) != "float32":
            return call
        x = call.args[0]
        if C.collect(x, tvm.ir.TensorLoad, lambda ld: str(ld.source.ty.dtype) == "bfloat16"):
            # TVM's BF16ComputeLegalize leaves loads inside a Let's value pointing at the old bfloat16 buffer
            # ("Load/Store of buffer .. occurred before its declaration"): keep the libm call there
            return call
        # bind the argument once: the expansion reads it several times
        v = tirx.Var("exp_arg", "float32")
        return tirx.Let(v, x, _EXPANSIONS[op.name](v))

    @C.prim_func_pass("cpu.vector_exp")
    def vector_exp(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        if not config(FAST_EXP, True):
            return func
        body = tvm_ffi.structural_map(func.body, (tvm.ir.Call, expand))
        return func if body.same_as(func.body) else C.with_body(func, body)

    return vector_exp


def supports(target: Any) -> bool:
    """The expansion targets LLVM: the C target keeps libm calls (its compiler does not vectorise them anyway)."""
    return _is_llvm(target)
