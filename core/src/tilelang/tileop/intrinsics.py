"""Core's generic lowerings of the scalar intrinsics (`tilelang.ir.ops.INTRINSICS`), and their call-site context.

An intrinsic implementation is a `tilelang.backend.TileOpImpl` whose ``op`` is the intrinsic's name; the
`LowerIntrinsics` pass calls ``lower(ctx)`` with an `IntrinsicContext` and takes either the replacement
expression or a `Lowered` (statements to run just before the statement holding the call, and the value).
The highest-priority implementation registered for the target wins, as for tile operators; an intrinsic that
no implementation serves is a `LoweringError` naming the construct, the target and what to use instead.

Generic lowerings here (priority 0, any target):

- element atomics: on targets with threads, an extern call on the element's address named by
  ``pipeline_options["atomic_functions"]`` (default ``atomicAdd`` / ``atomicMax`` / ``atomicMin`` /
  ``atomicOr`` / ``atomicAnd`` / ``atomicXor``), which returns the previous value; an atomic load is an atomic
  add of 0, an atomic store a plain store (both single-copy atomic for aligned words); x2 / x4 adds are
  per-lane atomics. On targets without threads (the block grid emulated on a host) a plain read-modify-write
  under ``AttrStmt("tl.atomic")``, which the backend runs without racing blocks (see `tilelang.tileop.atomic`).
  The memory order is accepted and not otherwise honoured by these lowerings.
- fast math (``T.__exp`` ...): the precise function (an exact result is a valid approximation); IEEE operations
  with rounding mode ``"rn"``: plain arithmetic; packed x2 operations: vector arithmetic; ``T.dp4a``: four
  widened int32 products added to the accumulator.
- ``T.get_lane_idx`` / ``T.get_warp_idx`` from the linear thread index.
- ``T.device_assert`` on targets without threads: an ``AssertStmt`` (the call raises with the message).
- ``T.ptx_cp_async`` as a synchronous element copy between its ``T.access_ptr`` operands; the group markers
  ``T.ptx_commit_group`` / ``T.ptx_wait_group`` and the hint ``T.no_set_max_nreg`` then lower to nothing.
- ``T.access_ptr`` as ``tvm_access_ptr`` at the element's linear offset.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import tvm
from tvm import tirx

from tilelang.backend.tile_ops import TileOpImpl
from tilelang.tileop.atomic import ATOMIC_ATTR
from tilelang.tileop.atomic import DEFAULT_ATOMIC_FUNCTIONS as TILE_ATOMIC_FUNCTIONS
from tilelang.transform import utils as C

DEFAULT_WARP_SIZE = 32


@dataclass
class Lowered:
    """An intrinsic's lowering: `prefix` statements run before the statement that holds the call, whose place
    `value` takes (``None`` for a call whose result is unused)."""

    value: Any
    prefix: Sequence[Any] = field(default_factory=tuple)


@dataclass
class IntrinsicContext:
    """One intrinsic call being lowered.

    op / call / args: the ``tl.*`` name, the Call and its arguments; dtype: the call's result dtype.
    target / options: the tvm Target and its `TargetKind.pipeline_options`. thread_vars / thread_extents: the
    enclosing ``T.Kernel``'s ``threadIdx`` vars (x, y, z) and constant extents; block_vars its ``blockIdx`` vars.
    in_statement: the call is the whole of an ``Evaluate`` (its value is unused).
    """

    op: str
    call: Any
    target: Any
    options: Mapping[str, Any]
    func: Any = None
    thread_vars: list[Any] = field(default_factory=list)
    thread_extents: list[int] = field(default_factory=list)
    in_statement: bool = False
    block_vars: list[Any] = field(default_factory=list)

    @property
    def args(self) -> list[Any]:
        return list(self.call.args)

    @property
    def dtype(self) -> str:
        return str(self.call.ty.dtype) if hasattr(self.call.ty, "dtype") else "handle"

    @property
    def has_threads(self) -> bool:
        return bool(self.options.get("has_threads", True))

    @property
    def target_kind(self) -> str:
        from tilelang.backend.target import kind_of

        return str(kind_of(self.target))

    @property
    def warp_size(self) -> int:
        return int(self.options.get("warp_size", DEFAULT_WARP_SIZE))

    def int_arg(self, index: int, default: int = 0) -> int:
        args = self.args
        if index >= len(args):
            return default
        value = C.as_int(args[index])
        if value is None:
            raise self.error(f"argument {index} must be a constant integer, got {args[index]}")
        return value

    def str_arg(self, index: int, default: str = "") -> str:
        args = self.args
        if index >= len(args):
            return default
        arg = args[index]
        return str(arg.value) if isinstance(arg, tvm.ir.StringImm) else str(arg)

    def linear_thread(self) -> Any:
        """The block-linear thread index (x fastest)."""
        out: Any = tirx.const(0, "int32")
        for v, e in reversed(list(zip(self.thread_vars, self.thread_extents))):
            out = out * e + v
        return out

    def error(self, message: str, hint: str = "") -> Exception:
        """A LoweringError naming the construct and the target."""
        text = f"{dsl_name(self.op)} on target {self.target_kind!r}: {message}"
        return C.lowering_error(self.func, text + (f"; {hint}" if hint else ""))


_DSL_NAMES = {
    "tl.atomic_load_elem_op": "T.atomic_load", "tl.atomic_store_elem_op": "T.atomic_store",
    "tl.warp_reduce": "T.warp_reduce_*", "tl.shfl_xor_sync": "T.shfl_xor", "tl.shfl_down_sync": "T.shfl_down",
    "tl.shfl_up_sync": "T.shfl_up",
}


def dsl_name(op: str) -> str:
    """How the user wrote intrinsic `op` (``tl.atomic_add_ret_elem_op`` -> ``T.atomic_add(..., return_prev=True)``)."""
    if op in _DSL_NAMES:
        return _DSL_NAMES[op]
    name = op[len("tl."):] if op.startswith("tl.") else op
    if name.endswith("_ret_elem_op"):
        return f"T.{name[:-len('_ret_elem_op')]}(..., return_prev=True)"
    if name.endswith("_elem_op"):
        return f"T.{name[:-len('_elem_op')]}"
    return f"T.{name}"


# ------------------------------------------------------------------------------------------------ atomics
DEFAULT_ATOMIC_FUNCTIONS = {**TILE_ATOMIC_FUNCTIONS, "or": "atomicOr", "and": "atomicAnd", "xor": "atomicXor"}


def atomic_function(ctx: IntrinsicContext, kind: str) -> str:
    names = {**DEFAULT_ATOMIC_FUNCTIONS, **dict(ctx.options.get("atomic_functions", {}))}
    if kind not in names:
        raise ctx.error(f"the target has no atomic {kind}")
    return str(names[kind])


def _combine(kind: str, cur: Any, v: Any) -> Any:
    if kind == "add":
        return cur + v
    if kind == "max":
        return tirx.Max(cur, v)
    if kind == "min":
        return tirx.Min(cur, v)
    if kind == "or":
        return tirx.bitwise_or(cur, v)
    if kind == "and":
        return tirx.bitwise_and(cur, v)
    if kind == "xor":
        return tirx.bitwise_xor(cur, v)
    raise ValueError(kind)


def _rmw_kind(op: str) -> str:
    return op[len("tl.atomic_"):].split("_", 1)[0]


def _shifted(load: Any, lane: int) -> Any:
    """Element ``lane`` places after `load` along its last index (consecutive memory)."""
    idx = list(load.indices)
    idx[-1] = C.add(idx[-1], lane)
    return tirx.BufferLoad(load.source, idx)


def lower_atomic_rmw(ctx: IntrinsicContext) -> Lowered:
    """add / max / min / or, with or without the previous value."""
    kind = _rmw_kind(ctx.op)
    dst, value = ctx.args[0], ctx.args[1]
    dtype = str(dst.source.ty.dtype)
    if ctx.has_threads:
        call = tirx.call_extern(dtype, atomic_function(ctx, kind), tirx.address_of(dst), value)
        return Lowered(call)
    indices = list(dst.indices)
    if ctx.in_statement or "_ret_" not in ctx.op:  # the previous value is not used: one read-modify-write
        store = tirx.BufferStore(dst.source, _combine(kind, dst, value), indices)
        return Lowered(None if ctx.in_statement else tirx.const(0, "int32"),
                       [tirx.AttrStmt(tvm.ir.StringImm(kind), ATOMIC_ATTR, 0, store)])
    # the previous value in a register of the calling thread (a `local` scalar: per thread where threads are
    # emulated), then the update
    prev = tirx.decl_buffer((1,), dtype, name="atomic_prev", scope="local")
    old = tirx.BufferLoad(prev, [0])
    update = C.seq([tirx.BufferStore(prev, dst, [0]),
                    tirx.BufferStore(dst.source, _combine(kind, old, value), indices)])
    return Lowered(old, [tirx.AllocBuffer(prev), tirx.AttrStmt(tvm.ir.StringImm(kind), ATOMIC_ATTR, 0, update)])


def lower_atomic_vector_add(ctx: IntrinsicContext) -> Lowered:
    """``T.atomic_addx2`` / ``x4``: one atomic add per lane; the previous vector is not available."""
    lanes = 2 if "addx2" in ctx.op else 4
    if "_ret_" in ctx.op:
        raise ctx.error(f"return_prev is not supported: lanes are added one by one, so no {lanes}-lane previous "
                        "value exists", "drop return_prev, or use T.atomic_add(dst[i], v, return_prev=True) per "
                        "element")
    dst, src = ctx.args[0], ctx.args[1]
    dtype = str(dst.source.ty.dtype)
    stmts = []
    for lane in range(lanes):
        d, s = _shifted(dst, lane), _shifted(src, lane)
        if ctx.has_threads:
            call = tirx.call_extern(dtype, atomic_function(ctx, "add"), tirx.address_of(d), s)
            stmts.append(tirx.Evaluate(call))
        else:
            store = tirx.BufferStore(d.source, d + s, list(d.indices))
            stmts.append(tirx.AttrStmt(tvm.ir.StringImm("add"), ATOMIC_ATTR, 0, store))
    return Lowered(None, stmts)


def lower_atomic_load(ctx: IntrinsicContext) -> Lowered:
    src = _access_ptr_element(ctx.args[0])  # T.atomic_load's T.access_ptr(element, "r")
    if src is None:
        src = ctx.args[0]
    if not ctx.has_threads:
        return Lowered(src)
    dtype = str(src.source.ty.dtype)
    zero = tirx.const(0, dtype)
    return Lowered(tirx.call_extern(dtype, atomic_function(ctx, "add"), tirx.address_of(src), zero))


def lower_atomic_store(ctx: IntrinsicContext) -> Lowered:
    dst, value = ctx.args[0], ctx.args[1]
    store = tirx.BufferStore(dst.source, value, list(dst.indices))
    if not ctx.has_threads:
        store = tirx.AttrStmt(tvm.ir.StringImm("store"), ATOMIC_ATTR, 0, store)
    return Lowered(None, [store])


# ------------------------------------------------------------------------------------------------ math
_FAST_MATH = {"tl.__exp": tirx.exp, "tl.__exp10": tirx.exp10, "tl.__log": tirx.log, "tl.__log2": tirx.log2,
              "tl.__log10": tirx.log10, "tl.__tan": tirx.tan, "tl.__cos": tirx.cos, "tl.__sin": tirx.sin}


def lower_fast_math(ctx: IntrinsicContext) -> Any:
    if ctx.op == "tl.fast_rcp":
        x = ctx.args[0]
        return tirx.const(1.0, str(x.ty.dtype)) / x
    return _FAST_MATH[ctx.op](ctx.args[0])


def lower_ieee(ctx: IntrinsicContext) -> Any:
    """IEEE arithmetic with round-to-nearest (the only mode the generic lowering offers)."""
    name = ctx.op[len("tl.ieee_"):]
    args = ctx.args
    if name != "frsqrt":
        mode = str(args[-1].value) if isinstance(args[-1], tvm.ir.StringImm) else "rn"
        if mode != "rn":
            raise ctx.error(f"rounding mode {mode!r} is not available", "use rounding_mode='rn' (round to nearest)")
        args = args[:-1]
    x = args[0]
    one = tirx.const(1.0, str(x.ty.dtype))
    if name == "add":
        return x + args[1]
    if name == "sub":
        return x - args[1]
    if name == "mul":
        return x * args[1]
    if name == "fdiv":
        return x / args[1]
    if name == "fmaf":
        return x * args[1] + args[2]
    if name == "frcp":
        return one / x
    if name == "fsqrt":
        return tirx.sqrt(x)
    if name == "frsqrt":
        return one / tirx.sqrt(x)
    raise ctx.error(f"unknown IEEE operation {name!r}")


def lower_packed_x2(ctx: IntrinsicContext) -> Any:
    name = ctx.op[len("tl."):-1]
    a = ctx.args
    if name == "add":
        return a[0] + a[1]
    if name == "sub":
        return a[0] - a[1]
    if name == "mul":
        return a[0] * a[1]
    if name == "fma":
        return a[0] * a[1] + a[2]
    if name == "max":
        return tirx.Max(a[0], a[1])
    if name == "min":
        return tirx.Min(a[0], a[1])
    if name == "abs":
        return tirx.abs(a[0])
    raise ctx.error(f"unknown packed operation {name!r}")


def lower_cast(ctx: IntrinsicContext) -> Any:
    """A conversion with the target's default rounding (round to nearest): modes ``""`` and ``"rn"`` only."""
    value = ctx.args[0]
    mode = ctx.str_arg(1, "")
    if mode not in ("", "rn"):
        raise ctx.error(f"rounding mode {mode!r} is not available", "use round='rn' (or the default)")
    return tirx.Cast(ctx.dtype, value)


def lower_dp4a(ctx: IntrinsicContext) -> Lowered:
    """``C += sum_k A[k] * B[k]`` over four consecutive int8 elements, in int32."""
    a, b, c = ctx.args
    acc = c
    for k in range(4):
        acc = acc + tirx.Cast("int32", _shifted(a, k)) * tirx.Cast("int32", _shifted(b, k))
    return Lowered(None, [tirx.BufferStore(c.source, acc, list(c.indices))])


# ------------------------------------------------------------------------------------------------ threads
def _warp_size_arg(ctx: IntrinsicContext) -> Any:
    return ctx.args[0] if ctx.args else tirx.const(ctx.warp_size, "int32")


def lower_lane_idx(ctx: IntrinsicContext) -> Any:
    return tirx.floormod(ctx.linear_thread(), _warp_size_arg(ctx))


def lower_warp_idx(ctx: IntrinsicContext) -> Any:
    return tirx.floordiv(ctx.linear_thread(), _warp_size_arg(ctx))


def lower_host_assert(ctx: IntrinsicContext) -> Lowered:
    """``T.device_assert`` where the kernel runs on the host: an AssertStmt, raised to the caller."""
    cond = ctx.args[0]
    message = ctx.str_arg(1, "") or "device assertion failed"
    if str(cond.ty.dtype) != "bool":
        cond = cond != tirx.const(0, str(cond.ty.dtype))
    # apache-tvm 0.27's AssertStmt takes (condition, error kind, message parts) positionally
    return Lowered(None, [tirx.AssertStmt(cond, tvm.ir.StringImm("RuntimeError"), [tvm.ir.StringImm(message)])])


def linear_index(buf: Any, indices: Sequence[Any]) -> Any:
    """The element offset of `indices` in `buf` (its strides, else row-major over its shape)."""
    strides = list(buf.ty.strides) if buf.ty.strides else []
    if not strides:
        acc: Any = 1
        for extent in reversed(list(buf.ty.shape)):
            strides.insert(0, acc)
            acc = acc * extent
    out: Any = tirx.const(0, "int32")
    for index, stride in zip(indices, strides):
        out = out + index * stride
    return out


def lower_access_ptr(ctx: IntrinsicContext) -> Any:
    """``tirx.tvm_access_ptr`` of the element's buffer at its linear offset."""
    load, extent = ctx.args[0], ctx.args[1]
    buf = load.source
    return buf.access_ptr(ctx.int_arg(2), offset=linear_index(buf, list(load.indices)), extent=extent)


def _unravel(buf: Any, flat: Any) -> list[Any]:
    shape = list(buf.ty.shape)
    out = []
    for extent in reversed(shape[1:]):
        out.append(tirx.floormod(flat, extent))
        flat = tirx.floordiv(flat, extent)
    return [flat, *reversed(out)]


def _access_ptr_element(ptr: Any) -> Any:
    """The element a ``T.access_ptr`` call points at, or None when `ptr` is no such call."""
    if isinstance(ptr, tvm.ir.Call) and isinstance(ptr.op, tvm.ir.Op) and ptr.op.name == "tl.access_ptr":
        return ptr.args[0]
    return None


def _pointer_element(ctx: IntrinsicContext, ptr: Any, k: Any) -> Any:
    """Element `k` from a ``T.access_ptr`` pointer (consecutive in the buffer's row-major storage)."""
    load = _access_ptr_element(ptr)
    if load is None:
        raise ctx.error(f"its pointers must be T.access_ptr(...) values, got {ptr}")
    buf = load.source
    return tirx.BufferLoad(buf, _unravel(buf, linear_index(buf, list(load.indices)) + k))


def lower_cp_async_sync(ctx: IntrinsicContext) -> Lowered:
    """``ptx_cp_async`` as a synchronous copy (zeros where the predicate is false)."""
    dst, src, count = ctx.args[0], ctx.args[1], ctx.args[2]
    k = tirx.Var("k", "int32")
    d, s = _pointer_element(ctx, dst, k), _pointer_element(ctx, src, k)
    value: Any = s if str(s.ty.dtype) == str(d.ty.dtype) else tirx.Cast(str(d.ty.dtype), s)
    if len(ctx.args) > 3:
        value = tirx.if_then_else(ctx.args[3], value, tirx.const(0, str(d.ty.dtype)))
    copy = tirx.For(k, 0, count, tirx.ForKind.SERIAL, tirx.BufferStore(d.source, value, list(d.indices)))
    return Lowered(None, [copy])


def lower_nothing(ctx: IntrinsicContext) -> Lowered:
    """Nothing to do here: the asynchronous-copy group markers (copies are synchronous) and hints."""
    return Lowered(None, [])


def _no_threads(ctx: Any) -> bool:
    return not bool(ctx.options.get("has_threads", True))


def _impls() -> tuple[TileOpImpl, ...]:
    out: list[TileOpImpl] = []
    for kind in ("add", "max", "min"):
        for ret in ("", "_ret"):
            out.append(TileOpImpl(f"tl.atomic_{kind}{ret}_elem_op", "generic", lower_atomic_rmw))
    for kind in ("or", "and", "xor"):
        out.append(TileOpImpl(f"tl.atomic_{kind}_elem_op", "generic", lower_atomic_rmw))
    for lanes in (2, 4):
        for ret in ("", "_ret"):
            out.append(TileOpImpl(f"tl.atomic_addx{lanes}{ret}_elem_op", "generic", lower_atomic_vector_add))
    out.append(TileOpImpl("tl.atomic_load_elem_op", "generic", lower_atomic_load))
    out.append(TileOpImpl("tl.atomic_store_elem_op", "generic", lower_atomic_store))
    for op in (*_FAST_MATH, "tl.fast_rcp"):
        out.append(TileOpImpl(op, "generic", lower_fast_math))
    for name in ("add", "sub", "mul", "fmaf", "frcp", "fsqrt", "frsqrt", "fdiv"):
        out.append(TileOpImpl(f"tl.ieee_{name}", "generic", lower_ieee))
    for name in ("add", "sub", "mul", "fma", "max", "min", "abs"):
        out.append(TileOpImpl(f"tl.{name}2", "generic", lower_packed_x2))
    out.append(TileOpImpl("tl.dp4a", "generic", lower_dp4a))
    out.append(TileOpImpl("tl.cast", "generic", lower_cast))
    out.append(TileOpImpl("tl.get_lane_idx", "generic", lower_lane_idx))
    out.append(TileOpImpl("tl.get_warp_idx", "generic", lower_warp_idx))
    out.append(TileOpImpl("tl.get_warp_idx_sync", "generic", lower_warp_idx))
    out.append(TileOpImpl("tl.device_assert", "host_assert", lower_host_assert, applies=_no_threads))
    out.append(TileOpImpl("tl.access_ptr", "generic", lower_access_ptr))
    out.append(TileOpImpl("tl.ptx_cp_async", "generic_synchronous", lower_cp_async_sync))
    for op in ("tl.ptx_commit_group", "tl.ptx_wait_group", "tl.no_set_max_nreg"):
        out.append(TileOpImpl(op, "generic_synchronous", lower_nothing))
    return tuple(out)


GENERIC_INTRINSICS = _impls()

#: what to use instead, per intrinsic family, when a target lacks an implementation
HINTS = {
    "tl.any_sync": "keep the predicate in shared memory and reduce it with T.reduce_max, or use a target with warps",
    "tl.print": "copy the values to an output tensor and print them on the host",
    "tl.device_assert": "check the condition on the host, or write a flag into an output tensor",
    "tl.mbarrier_wait_parity": "synchronise with T.sync_threads (or let T.Pipelined place the waits)",
}


def hint_for(op: str) -> str:
    if op in HINTS:
        return HINTS[op]
    if op.startswith(("tl.shfl", "tl.ballot", "tl.all_sync", "tl.activemask", "tl.match", "tl.warp_reduce",
                      "tl.syncthreads_")):
        return HINTS["tl.any_sync"]
    if op.startswith("tl.mbarrier"):
        return HINTS["tl.mbarrier_wait_parity"]
    return "rewrite the kernel without it for this target"
