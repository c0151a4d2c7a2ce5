"""Reducers: a tile many threads combine contributions into (``T.alloc_reducer``).

::

    acc = T.alloc_reducer((M,), T.float32, op="sum")
    T.reducer_init(acc)                       # or T.reducer_init(acc, start_value)
    for i, j in T.Parallel(M, N):
        T.reducer_update(acc[i], x[i, j])     # every logical iteration contributes once
    out = T.alloc_fragment((M,), T.float32)
    T.finalize_reducer(acc, out)              # out = the combined result (start value included once)

A reducer lives in shared memory; each contribution is an element atomic of the reducer's op (``sum``, ``max``,
``min``, ``bitand``, ``bitor``, ``bitxor``), so the result is exact whatever the thread layout, and barriers
order the epoch's phases. The reference's legacy form (``alloc_reducer(..., replication=...)``, ``acc[i] += v``
in a ``T.Parallel`` loop, ``T.finalize_reducer(acc)`` in place) is accepted: a compound assignment to a reducer
element is a contribution.
"""

from __future__ import annotations

from typing import Any

from tilelang.errors import KernelTypeError
from tilelang.frontend import state as _state
from tilelang.ir import ops as _ops
from tilelang.ir import region as R

OPS = ("sum", "max", "min", "bitand", "bitor", "bitxor")
_BITWISE = ("bitand", "bitor", "bitxor")
_ATOMIC = {"sum": "add", "max": "max", "min": "min", "bitand": "and", "bitor": "or", "bitxor": "xor"}
REDUCER_ATTR = "tl.reducer"


def _reducers(st: Any) -> dict[int, tuple[Any, str, Any]]:
    """id(buffer) -> (buffer, op, start value or None) of the kernel being parsed."""
    if not hasattr(st, "reducers"):
        st.reducers = {}
    return st.reducers


def reducer_of(buf: Any) -> tuple[Any, str, Any] | None:
    """``(buffer, op, start value)`` when `buf` is a reducer of the kernel being parsed."""
    st = _state.current()
    if st is None or not R.is_buffer(buf):
        return None
    table = _reducers(st)
    found = table.get(id(buf))
    if found is None:
        found = next((entry for entry in table.values() if entry[0].same_as(buf)), None)
    return found


def alloc_reducer(shape: Any, dtype: Any, op: str = "sum", replication: Any = None) -> Any:
    """A reducer tile of `shape` and `dtype` combining with `op` (see the module docstring)."""
    from tilelang.language.allocate import _alloc
    from tilelang.language.dtypes import canonical

    assert op in OPS, f"alloc_reducer op must be one of {', '.join(OPS)}, got {op!r}"
    dtype = canonical(dtype)
    if op in _BITWISE:
        assert dtype.startswith(("int", "uint")) or dtype == "bool", (
            f"bitwise reducer op '{op}' requires an integer dtype, got {dtype}")
        assert replication is None, "the legacy reducer (replication=...) only supports sum/max/min"
    assert replication in (None, "all", "none"), f"replication must be 'all' or 'none', got {replication!r}"
    st = _state.require("T.alloc_reducer")
    buf = _alloc("T.alloc_reducer", shape, dtype, "shared.dyn")
    _reducers(st)[id(buf)] = (buf, op, None)
    return buf


def _sync() -> None:
    from tilelang.language.kernel import sync_threads

    sync_threads()


def _fill_identity(buf: Any, op: str) -> None:
    from tilelang.language.tileops import fill
    from tilelang.tileop.reduce import identity_value

    fill(buf, identity_value(op, R.buffer_dtype(buf)))


def reducer_init(reducer: Any, init: Any = None) -> None:
    """Open an epoch: the reducer holds the identity of its op; `init` is combined once into every result."""
    from tvm.script.ir_builder import tirx as B

    from tilelang.language.dtypes import cast

    st = _state.require("T.reducer_init")
    entry = reducer_of(reducer)
    if entry is None:
        raise KernelTypeError(f"T.reducer_init expects a T.alloc_reducer buffer, got {R.describe(reducer)}")
    buf, op, _ = entry
    start = None
    if init is not None:
        start = B.Bind(cast(init, R.buffer_dtype(buf)))  # captured now: later writes cannot change it
    _reducers(st)[id(buf)] = (buf, op, start)
    _fill_identity(buf, op)
    _sync()


def update(buf: Any, op: str, target: Any, value: Any) -> Any:
    """The element atomic that combines `value` into reducer element `target`."""
    from tilelang.language.dtypes import cast

    dtype = R.buffer_dtype(buf)
    from tvm import tirx

    return _ops.intrin_call(f"tl.atomic_{_ATOMIC[op]}_elem_op", "handle",
                            [target, cast(value, dtype), tirx.IntImm("int32", 0)])


def reducer_update(target: Any, value: Any) -> Any:
    """Contribute `value` to the logical output ``acc[indices]`` (`target`, written as ``acc[...]``)."""
    _state.require("T.reducer_update")
    if not R.is_load(target):
        raise ValueError(f"reducer_update expects `acc[indices]` as its first argument, got {type(target)}; the "
                         "reducer cannot be read or aliased.")
    entry = reducer_of(target.source)
    if entry is None:
        raise KernelTypeError(f"T.reducer_update: {R.describe(target)} is not an element of a T.alloc_reducer buffer")
    return update(entry[0], entry[1], target, value)


def finalize_reducer(reducer: Any, dst: Any = None, batch: int = 1, annotations: dict | None = None) -> None:
    """Close the epoch: ``dst`` (or, in the legacy form, the reducer itself) receives the combined result."""
    from tvm import tirx
    from tvm.script.ir_builder import tirx as B

    from tilelang.tileop.reduce import combine

    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ValueError(f"finalize_reducer: batch must be >= 1, got {batch}")
    _state.require("T.finalize_reducer")
    entry = reducer_of(reducer)
    if entry is None:
        raise KernelTypeError(f"T.finalize_reducer expects a T.alloc_reducer buffer, got {R.describe(reducer)}")
    buf, op, start = entry
    _sync()
    out = buf if dst is None else dst
    if dst is not None and [str(s) for s in R.buffer_shape(dst)] != [str(s) for s in R.buffer_shape(buf)]:
        raise KernelTypeError(f"T.finalize_reducer: dst {R.describe(dst)} must have the reducer's shape "
                              f"{R.format_extents(R.buffer_shape(buf))}")
    if dst is None and start is None:
        return
    from tilelang.language.loops import Parallel

    loop = Parallel(*R.buffer_shape(buf))
    frames = []
    kw = {"annotations": dict(loop.annotations)}
    for start_, stop, _ in loop.ranges:
        frames.append(B.parallel(start_, stop, **kw))
    idx = [f.__enter__() for f in frames]
    value: Any = tirx.BufferLoad(buf, idx)
    if start is not None:
        value = combine(op, start, value)
    if str(value.ty.dtype) != R.buffer_dtype(out):
        value = tirx.Cast(R.buffer_dtype(out), value)
    B.buffer_store(out, value, idx)
    for f in reversed(frames):
        f.__exit__(None, None, None)
    if dst is None:
        _sync()
