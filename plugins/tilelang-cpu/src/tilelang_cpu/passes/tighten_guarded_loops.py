"""`TightenGuardedLoops` (CPU, LLVM only): a loop whose body is ``if <bound on its variable> and ...`` runs over
the bound's range instead, without the guard.

Why: boundary guards of tiled kernels (``if bx * 32 + j < N: C[...] = ...``) sit in the innermost loop, which
LLVM's loop vectoriser if-converts into masked loads and stores. When the guard is a compile-time bound and the
vector loop is fully unrolled, the masks fold to constants, and ``N % VF == 1`` leaves a vector store with ONE
active lane. LLVM 22's x86 backend (AVX-512) folds a narrowing ``trunc`` into such a masked store (a truncating
masked store, ``vpmovdw``) and then turns the one-lane masked store into a scalar store of the *un-truncated*
element: a bfloat16 store (``trunc`` of the rounded fp32 bits) writes 4 bytes, one element past its own
(llvm/llvm-project#179489, fixed upstream after 22.1 by #179853). Clipping the loop to the guard's range leaves
no guard and no masks: the vectoriser sees a plain loop with a scalar remainder (also the faster code).

What: for a ``SERIAL`` loop whose whole body is an ``IfThenElse`` without else, each conjunct of the condition
that is linear in the loop variable ``j`` (``c*j + b`` compared with ``<``, ``<=``, ``>``, ``>=``, ``==``; ``c``
a non-zero constant) whose other terms are loop-invariant and side-effect free (no loads, no calls) becomes a
bound of the loop's range; conjuncts that do not mention ``j`` (and are equally pure) move out of the loop as a
guard around it, so the enclosing loop can be clipped in turn. Whatever else remains stays as the guard inside.
The guard's conjuncts are pure, so evaluating them once outside the loop (or not at all for an empty range) does
not change what the loop does; an empty range becomes a zero-trip loop.
"""

from __future__ import annotations

from typing import Any


def _conjuncts(cond: Any) -> list[Any]:
    from tvm import tirx

    if isinstance(cond, tirx.And):
        return _conjuncts(cond.a) + _conjuncts(cond.b)
    return [cond]


def _pure(expr: Any) -> bool:
    """No loads and no calls: its value depends on variables only (so it may be moved or evaluated once)."""
    import tvm

    from tilelang.transform import utils as C

    return not C.collect(expr, tvm.ir.TensorLoad) and not C.collect(expr, tvm.ir.Call)


def _bounds(cmp: Any, var: Any) -> tuple[Any, Any] | None:
    """``(lower, upper)`` (inclusive / exclusive, either None) that comparison `cmp` puts on integer `var`, or
    None when it is not ``c*var + b OP 0`` with a constant non-zero ``c`` and a pure, `var`-free ``b``."""
    from tvm import sym, tirx

    from tilelang.transform import utils as C

    if not isinstance(cmp, (tirx.LT, tirx.LE, tirx.GT, tirx.GE, tirx.EQ)):
        return None
    if str(cmp.a.dtype) != str(var.dtype) or str(cmp.b.dtype) != str(var.dtype):
        return None
    if not (_pure(cmp.a) and _pure(cmp.b)):
        return None
    # as ``d OP 0`` with d = lhs - rhs; ``>`` / ``>=`` flip to ``<`` / ``<=`` on the negation
    if isinstance(cmp, (tirx.GT, tirx.GE)):
        diff, strict = cmp.b - cmp.a, isinstance(cmp, tirx.GT)
    else:
        diff, strict = cmp.a - cmp.b, isinstance(cmp, tirx.LT)
    linear = sym.detect_linear_equation(diff, [var])
    if len(linear) != 2:
        return None
    c, b = C.as_int(linear[0]), linear[1]
    if not c or C.uses_var(b, [var]):
        return None
    one = tirx.const(1, str(var.dtype))
    if isinstance(cmp, tirx.EQ):  # c*j == -b: only when c divides -b, j = -b / c
        if c not in (1, -1):
            return None
        at = -b if c == 1 else b
        return at, at + one
    if not strict:  # c*j + b <= 0  <=>  c*j + (b - 1) < 0
        b = b - one
    # c*j + b < 0
    if c > 0:  # j < ceil(-b / c)
        return None, tirx.floordiv(-b + (c - 1), c) if c != 1 else -b
    k = -c  # k*j > b  <=>  j >= floor(b / k) + 1
    return (tirx.floordiv(b, k) if k != 1 else b) + one, None


def tighten_loop(loop: Any) -> Any:
    """`loop` clipped to the bounds its guard puts on its variable (see the module docstring), or itself."""
    from tvm import sym, tirx

    from tilelang.transform import utils as C

    body = loop.body
    if (loop.kind != tirx.ForKind.SERIAL or not isinstance(body, tirx.IfThenElse) or body.else_case is not None
            or not str(loop.loop_var.dtype).startswith("int")):
        return loop
    var = loop.loop_var
    lows: list[Any] = []
    highs: list[Any] = []
    inner: list[Any] = []
    hoisted: list[Any] = []
    for part in _conjuncts(body.condition):
        found = _bounds(part, var)
        if found is not None:
            lo, hi = found
            lows += [lo] if lo is not None else []
            highs += [hi] if hi is not None else []
        elif not C.uses_var(part, [var]) and _pure(part):
            hoisted.append(part)
        else:
            inner.append(part)
    if not lows and not highs and not hoisted:
        return loop
    ana = sym.Analyzer()
    start, end = loop.min, loop.min + loop.extent
    for lo in lows:
        start = tirx.max(start, lo)
    for hi in highs:
        end = tirx.min(end, hi)
    start = ana.simplify(start)
    extent = ana.simplify(tirx.max(end - start, tirx.const(0, str(var.dtype)))) if lows or highs else loop.extent
    then = body.then_case
    if inner:
        cond = inner[0]
        for part in inner[1:]:
            cond = tirx.And(cond, part)
        then = tirx.IfThenElse(cond, then, None)
    new = tirx.For(var, start if lows else loop.min, extent, loop.kind, then, loop.thread_binding,
                   loop.annotations)
    if hoisted:
        cond = hoisted[0]
        for part in hoisted[1:]:
            cond = tirx.And(cond, part)
        return tirx.IfThenElse(cond, new, None)
    return new


def TightenGuardedLoops(target: Any = None) -> Any:
    """Clip guarded loops to their guards' ranges (see the module docstring)."""
    import tvm_ffi
    from tvm import tirx

    from tilelang.transform import utils as C

    def on_for(loop: Any, mutator: Any) -> Any:
        return tighten_loop(mutator.default_mutate(loop))

    @C.prim_func_pass("cpu.tighten_guarded_loops")
    def tighten(func: Any, mod: Any, ctx: Any) -> Any:
        body = tvm_ffi.structural_mutate(func.body, [(tirx.For, on_for)])
        return func if body.same_as(func.body) else C.with_body(func, body)

    return tighten
