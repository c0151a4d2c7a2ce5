"""Symbolic sizes: ``T.dynamic`` / ``T.symbolic`` (runtime dims) and ``T.const`` (eager compile-time dims)."""

from __future__ import annotations

from typing import Any

from tilelang.errors import KernelSyntaxError, KernelTypeError
from tilelang.language.dtypes import canonical


def dynamic(name: str, dtype: Any = "int32") -> Any:
    """A runtime dimension: a ``tirx.Var`` usable in tensor shapes, bound from the argument's shape at call time.
    Several names (``T.dynamic("batch, seq_len")``, commas or spaces) give a tuple of them."""
    from tvm import tirx

    names = [n for n in name.replace(",", " ").split()] if isinstance(name, str) else []
    if len(names) > 1:
        if not all(n.isidentifier() for n in names):
            raise KernelSyntaxError(f"T.dynamic expects identifiers such as \"batch, seq_len\", got {name!r}")
        return tuple(tirx.Var(n, canonical(dtype)) for n in names)
    return tirx.Var(name, canonical(dtype))


symbolic = dynamic


def _names(spec: str | tuple[str, ...] | list[str]) -> list[str]:
    if isinstance(spec, str):
        names = [n.strip() for n in spec.replace(",", " ").split()]
    else:
        names = [str(n) for n in spec]
    if not names or not all(n.isidentifier() for n in names):
        raise KernelSyntaxError(f"T.const expects identifiers such as \"M, N, K\", got {spec!r}")
    return names


def const(spec: str | tuple[str, ...] | list[str], dtype: Any = "int32") -> Any:
    """``M, N, K = T.const("M, N, K")``: sizes fixed per call of an eager ``@tilelang.jit`` kernel.

    Each name is bound from the shape of the tensor annotation it first appears in (or from a keyword of the
    same name given to the JIT); the kernel is specialised for those values, which are plain Python ints in the
    body. Returns one value for one name, else a tuple.
    """
    from tilelang.frontend import state as _state

    st = _state.require("T.const")
    if st.eager is None:
        raise KernelSyntaxError("T.const is only valid in an eager @tilelang.jit kernel; use T.dynamic in T.prim_func")
    names = _names(spec)
    values = [_lookup(st.eager, n, canonical(dtype)) for n in names]
    return values[0] if len(values) == 1 else tuple(values)


def _lookup(eager: Any, name: str, dtype: str) -> Any:
    from tvm import tirx

    value = eager.consts.get(name)
    if isinstance(value, int):
        return value
    if eager.phase == "build":
        raise KernelTypeError(
            f"T.const {name!r} has no value: no tensor annotation before the kernel binds it and no {name}=... "
            "keyword was given"
        )
    var = eager.const_vars.get(name)
    if var is None:
        var = eager.const_vars[name] = tirx.Var(name, dtype)
        eager.consts[name] = var
    return var
