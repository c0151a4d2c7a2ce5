"""The CPU backend's lowerings of the scalar intrinsics that need a host or the block's threads.

- ``T.print`` / buffer prints: a call of the host function `tilelang_cpu.debug.PRINT` with the message, the
  value and the block and thread indices (the kernel runs on the host, so it prints to the process's stdout).
- Warp and block collectives (votes, ballots, shuffles, warp reductions, ``T.syncthreads_*``, ``T.sync_warp``,
  ``T.activemask``): emulated over the threads the CPU backend runs as loops (`tilelang_cpu.passes.lower_launch`). Each
  thread writes its operand to a block-wide scratch row, a barrier orders the writes before the reads, and the
  result is read back (a shuffle) or folded over the lanes of the thread's warp (32 lanes) or over the block.
  The barrier splits the thread loops there, so a collective must not sit under a condition that differs
  between threads, as on a GPU.
- Named barriers (``T.sync_threads(id, n)``, the threads of one branch): a barrier that splits the thread loops
  under the branch's condition (`tilelang.backend.sdk.emulate_threads`).
- ``T.sync_grid`` has no CPU lowering: the blocks of a CPU kernel run one after another on each core.
- Transaction barriers and TMA (``T.alloc_barrier`` / ``T.mbarrier_*`` / ``T.barrier_*``, ``T.tma_copy``):
  a block's warp-specialised roles (``T.ws``) run one after another in program order
  (`tilelang_cpu.passes.warp_groups`), so a copy is complete when it returns and a wait that program order
  reaches has been satisfied: ``T.tma_copy`` is a synchronous element copy and the barrier operations do nothing.
"""

from __future__ import annotations

from typing import Any

from tilelang.backend import TileOpImpl

WARP = 32


def _packed_value(value: Any) -> Any:
    from tvm import tirx

    dtype = str(value.ty.dtype)
    if dtype.startswith(("float", "bfloat")):
        return value if dtype == "float64" else tirx.Cast("float64", value)
    return value if dtype == "int64" else tirx.Cast("int64", value)


def _indices(ctx: Any) -> list[Any]:
    from tvm import tirx

    def three(vs: list[Any]) -> list[Any]:
        return [*vs, *[tirx.const(0, "int32")] * (3 - len(vs))][:3]

    return three(list(ctx.block_vars)) + three(list(ctx.thread_vars))


def lower_print(ctx: Any) -> Any:
    """``T.print`` on the host: ``PRINT(msg, buffer, dtype, bx, by, bz, tx, ty, tz, index, value)``."""
    import tvm
    from tvm import tirx

    from tilelang.backend.sdk import Lowered
    from tilelang_cpu.debug import PRINT, register

    register()
    args = ctx.args
    msg = args[0]
    if ctx.op == "tl.print_buffer_value":
        name, index, value = args[1], args[2], args[3]
    else:
        name, index = tvm.ir.StringImm(""), tirx.const(0, "int32")
        value = args[1] if len(args) > 1 else None
    dtype = tvm.ir.StringImm("" if value is None else str(value.ty.dtype))
    packed_value = tirx.const(0, "int64") if value is None else _packed_value(value)
    call = tirx.call_packed(PRINT, msg, name, dtype, *_indices(ctx), tirx.Cast("int64", index), packed_value)
    return Lowered(None, [tirx.Evaluate(call)])


# ------------------------------------------------------------------------------------------ collectives
_WARP_FOLDS = {"tl.any_sync": "any", "tl.all_sync": "all", "tl.ballot_sync": "ballot", "tl.ballot": "ballot",
               "tl.match_any_sync": "match_any", "tl.match_all_sync": "match_all", "tl.warp_reduce": None}
_BLOCK_FOLDS = {"tl.syncthreads_count": "count", "tl.syncthreads_and": "all", "tl.syncthreads_or": "any"}
_SHUFFLES = ("tl.shfl_sync", "tl.shfl_xor_sync", "tl.shfl_down_sync", "tl.shfl_up_sync")


def _barrier() -> Any:
    from tvm import tirx

    return tirx.Evaluate(tirx.call_intrin("int32", "tirx.tvm_storage_sync", "shared"))


def _threads(ctx: Any) -> int:
    total = 1
    for e in ctx.thread_extents:
        total *= int(e)
    return total


def _publish(ctx: Any, value: Any, name: str) -> tuple[Any, list[Any]]:
    """A scratch row holding every thread's `value`: ``(scratch, [alloc, store, barrier])``."""
    from tvm import tirx

    threads = _threads(ctx)
    if str(value.ty.dtype) == "bool":  # predicates are kept as int32 (0 / 1)
        value = tirx.Cast("int32", value)
    scratch = tirx.decl_buffer((threads,), str(value.ty.dtype), name=name, scope="shared.dyn")
    tid = ctx.linear_thread()
    return scratch, [tirx.AllocBuffer(scratch), tirx.BufferStore(scratch, value, [tid]), _barrier()]


def _warp_lanes(ctx: Any) -> tuple[Any, Any, Any]:
    """``(warp base, lane, lanes in this warp)`` of the calling thread."""
    from tvm import tirx

    threads = _threads(ctx)
    tid = ctx.linear_thread()
    base = tirx.floordiv(tid, WARP) * WARP
    size = tirx.min(tirx.const(WARP, "int32"), threads - base)
    return base, tirx.floormod(tid, WARP), size


def _in_mask(mask: Any, lane: Any) -> Any:
    from tvm import tirx

    bit = tirx.shift_left(tirx.const(1, "uint32"), tirx.Cast("uint32", lane))
    return tirx.bitwise_and(tirx.Cast("uint32", mask), bit) != tirx.const(0, "uint32")


def _step(kind: str, dtype: str, cur: Any, x: Any, lane: Any, own: Any) -> tuple[Any, Any]:
    """``(identity, combined)`` of one lane `lane` (value `x`) into accumulator `cur`."""
    from tvm import tirx

    from tilelang.backend.sdk import identity_value, reduce_combine

    zero = tirx.const(0, str(x.ty.dtype))
    one, none = tirx.const(1, "int32"), tirx.const(0, "int32")
    if kind == "any":
        return none, tirx.Select(x != zero, one, cur)
    if kind == "all":
        return one, tirx.Select(x != zero, cur, none)
    if kind == "count":
        return none, cur + tirx.Select(x != zero, one, none)
    if kind == "ballot":
        bit = tirx.shift_left(tirx.const(1, "uint64"), tirx.Cast("uint64", lane))
        return tirx.const(0, "uint64"), tirx.Select(x != zero, tirx.bitwise_or(cur, bit), cur)
    if kind in ("match_any", "match_all"):  # the mask of the lanes holding this lane's value
        bit = tirx.shift_left(tirx.const(1, "uint32"), tirx.Cast("uint32", lane))
        return tirx.const(0, "uint32"), tirx.Select(x == own, tirx.bitwise_or(cur, bit), cur)
    if kind in ("max", "min") and dtype.startswith(("float", "bfloat")):
        return identity_value(kind, dtype), tirx.Select(x > cur if kind == "max" else x < cur, x, cur)
    return identity_value(kind, dtype), reduce_combine(kind, cur, x)


_RESULT_DTYPES = {"any": "int32", "all": "int32", "count": "int32", "ballot": "uint64", "match_any": "uint32",
                  "match_all": "uint32"}


def _fold_loop(kind: str, dtype: str, scratch: Any, start: Any, count: Any, mask: Any, own: Any,
               write: Any) -> list[Any]:
    """``acc = identity; for lane < count: acc = step(scratch[start + lane]); write(acc)``."""
    from tvm import tirx

    acc = tirx.decl_buffer((1,), dtype, name=f"{kind}_acc", scope="local")
    lane = tirx.Var("lane", "int32")
    cur = tirx.BufferLoad(acc, [0])
    init, new = _step(kind, dtype, cur, tirx.BufferLoad(scratch, [start + lane]), lane, own)
    if mask is not None:
        new = tirx.Select(_in_mask(mask, lane), new, cur)
    return [tirx.AllocBuffer(acc), tirx.BufferStore(acc, init, [0]),
            tirx.For(lane, 0, count, tirx.ForKind.SERIAL, tirx.BufferStore(acc, new, [0])), write(cur)]


def _fold(ctx: Any, kind: str, scratch: Any, group: int, mask: Any, own: Any) -> tuple[Any, list[Any]]:
    """The fold of `kind` over the caller's group of `group` lanes of `scratch` (a warp, or the block):
    ``(its value, the statements computing it)``.

    A fold that is the same for every lane of the group is computed once per group, in a loop that reads no
    thread index (so it runs once per block, between the thread loops) into a row the threads then read; one
    that depends on the calling lane (``match``, or a mask computed per thread) is computed by every thread.
    """
    from tvm import tirx

    from tilelang.transform import utils as C

    threads = _threads(ctx)
    dtype = _RESULT_DTYPES.get(kind, str(scratch.ty.dtype))
    tid = ctx.linear_thread()
    per_lane = kind in ("match_any", "match_all") or (mask is not None and C.uses_var(mask, ctx.thread_vars))
    if per_lane:
        base = tirx.floordiv(tid, group) * group
        count = tirx.min(tirx.const(group, "int32"), threads - base)
        acc_out = tirx.decl_buffer((1,), dtype, name=f"{kind}_value", scope="local")
        stmts = [tirx.AllocBuffer(acc_out), *_fold_loop(
            kind, dtype, scratch, base, count, mask, own, lambda v: tirx.BufferStore(acc_out, v, [0]))]
        value = tirx.BufferLoad(acc_out, [0])
    else:
        groups = -(-threads // group)
        result = tirx.decl_buffer((groups,), dtype, name=f"{kind}_result", scope="shared.dyn")
        g = tirx.Var("group", "int32")
        count = tirx.min(tirx.const(group, "int32"), threads - g * group)
        body = C.seq(_fold_loop(kind, dtype, scratch, g * group, count, mask, own,
                                lambda v: tirx.BufferStore(result, v, [g])))
        stmts = [tirx.AllocBuffer(result), tirx.For(g, 0, groups, tirx.ForKind.SERIAL, body), _barrier()]
        value = tirx.BufferLoad(result, [tirx.floordiv(tid, group)])
    if kind == "match_all":
        full = tirx.bitwise_and(tirx.Cast("uint32", mask), tirx.Cast("uint32", tirx.shift_left(
            tirx.const(1, "uint64"), tirx.Cast("uint64", count)) - tirx.const(1, "uint64")))
        value = tirx.Select(value == full, full, tirx.const(0, "uint32"))
    return value, stmts


def lower_collective(ctx: Any) -> Any:
    """A vote, ballot, match, warp reduction or predicate barrier over the emulated threads."""
    from tilelang.backend.sdk import Lowered

    if not ctx.thread_vars:
        raise ctx.error("it needs the threads of a T.Kernel launch")
    op, args = ctx.op, ctx.args
    if op in _BLOCK_FOLDS:
        scratch, pre = _publish(ctx, args[0], "vote")
        value, fold = _fold(ctx, _BLOCK_FOLDS[op], scratch, _threads(ctx), None, None)
        return Lowered(value, [*pre, *fold])
    if op == "tl.warp_reduce":
        operand, kind, mask = args[0], ctx.str_arg(1), None
    elif op == "tl.ballot":
        operand, kind, mask = args[0], "ballot", None
    else:
        mask, operand, kind = args[0], args[1], _WARP_FOLDS[op]
    scratch, pre = _publish(ctx, operand, "warp_vote")
    value, fold = _fold(ctx, kind, scratch, WARP, mask, operand)
    return Lowered(value, [*pre, *fold])


def lower_shuffle(ctx: Any) -> Any:
    """``T.shfl_*``: every thread publishes its value, then reads the one of the lane the shuffle names."""
    from tvm import tirx

    from tilelang.backend.sdk import Lowered

    if not ctx.thread_vars:
        raise ctx.error("it needs the threads of a T.Kernel launch")
    _, value, arg, width = ctx.args
    scratch, pre = _publish(ctx, value, "shfl")
    base, lane, size = _warp_lanes(ctx)
    group = lane - tirx.floormod(lane, width)  # first lane of this lane's group of `width`
    pos = tirx.floormod(lane, width)
    if ctx.op == "tl.shfl_sync":
        src = group + tirx.floormod(arg, width)
    elif ctx.op == "tl.shfl_xor_sync":
        src = group + tirx.bitwise_xor(pos, arg)
        src = tirx.Select(tirx.bitwise_xor(pos, arg) < width, src, lane)
    elif ctx.op == "tl.shfl_down_sync":
        src = tirx.Select(pos + arg < width, lane + arg, lane)
    else:
        src = tirx.Select(pos >= arg, lane - arg, lane)
    src = tirx.Select(src < size, src, lane)  # a lane past the block's threads: keep our own value
    return Lowered(tirx.BufferLoad(scratch, [base + src]), pre)


def lower_activemask(ctx: Any) -> Any:
    """Every emulated lane of the warp is active."""
    from tvm import tirx

    _, _, size = _warp_lanes(ctx)
    return tirx.shift_left(tirx.const(1, "uint64"), tirx.Cast("uint64", size)) - tirx.const(1, "uint64")


def lower_sync_warp(ctx: Any) -> Any:
    """A barrier (the thread loops split there)."""
    from tilelang.backend.sdk import Lowered

    return Lowered(None, [_barrier()])


def lower_barrier_op(ctx: Any) -> Any:
    """An mbarrier operation: nothing to do, the roles it orders run in program order on the CPU."""
    from tilelang.backend.sdk import Lowered

    return Lowered(None, [])


def lower_tma_copy(ctx: Any) -> Any:
    """``T.tma_copy(src, dst, barrier, ...)``: the box copied element by element, complete on return; as TMA
    does, a load reads 0 outside the global tensor and a store skips what falls outside it."""
    from tvm import tirx

    from tilelang.backend.sdk import Lowered, tileop_utils
    from tilelang.errors import LoweringError
    from tilelang.transform import utils as C

    cast, nonunit_dims, region_indices = (tileop_utils.cast, tileop_utils.nonunit_dims,
                                          tileop_utils.region_indices)

    src, dst = ctx.args[0], ctx.args[1]
    sdims, ddims = nonunit_dims(src), nonunit_dims(dst)
    if len(sdims) != len(ddims):
        raise LoweringError(f"T.tma_copy: the source box {src.source.name} and the destination box "
                            f"{dst.source.name} have different numbers of non-unit dimensions")
    ext = [dst.region[d].extent for d in ddims]
    loop_vars = [tirx.Var(f"i{k}", "int32") for k in range(len(ext))]
    dtype = str(dst.source.ty.dtype)
    si, di = region_indices(src, sdims, loop_vars), region_indices(dst, ddims, loop_vars)

    def inside(buf: Any, idx: list[Any]) -> Any:
        conds = [i < n for i, n in zip(idx, buf.ty.shape)]
        out = conds[0]
        for c in conds[1:]:
            out = tirx.And(out, c)
        return out

    value: Any = cast(dtype, tirx.BufferLoad(src.source, si))
    if C.scope_of(src.source) == "global":
        value = tirx.if_then_else(inside(src.source, si), value, tirx.const(0, dtype))
    body: Any = tirx.BufferStore(dst.source, value, di)
    if C.scope_of(dst.source) == "global":
        body = tirx.IfThenElse(inside(dst.source, di), body, None)
    for v, e in reversed(list(zip(loop_vars, ext))):
        body = tirx.For(v, 0, e, tirx.ForKind.SERIAL, body)
    return Lowered(None, [body])


def lower_named_barrier(ctx: Any) -> Any:
    """``T.sync_threads(id, n)``: a barrier of the threads that reach it; the thread loops split there as at a
    block barrier, under the condition of the branch that holds it (`tilelang.backend.sdk.emulate_threads`)."""
    from tilelang.backend.sdk import Lowered

    return Lowered(None, [_barrier()])


BARRIER_OPS = ("tl.mbarrier_wait_parity", "tl.mbarrier_arrive", "tl.mbarrier_expect_tx",
               "tl.mbarrier_arrive_expect_tx", "tl.mbarrier_init", "tl.tma_store_arrive", "tl.tma_store_wait")


def _impls() -> tuple[TileOpImpl, ...]:
    out = [TileOpImpl("tl.print", "cpu_host_print", lower_print, priority=1),
           TileOpImpl("tl.print_buffer_value", "cpu_host_print", lower_print, priority=1)]
    for op in (*_WARP_FOLDS, *_BLOCK_FOLDS):
        out.append(TileOpImpl(op, "cpu_emulated", lower_collective, priority=1))
    for op in _SHUFFLES:
        out.append(TileOpImpl(op, "cpu_emulated", lower_shuffle, priority=1))
    out.append(TileOpImpl("tl.activemask", "cpu_emulated", lower_activemask, priority=1))
    out.append(TileOpImpl("tl.sync_warp", "cpu_emulated", lower_sync_warp, priority=1))
    for op in BARRIER_OPS:
        out.append(TileOpImpl(op, "cpu_program_order", lower_barrier_op, priority=1))
    out.append(TileOpImpl("tl.tma_copy", "cpu_program_order", lower_tma_copy, priority=1))
    out.append(TileOpImpl("tl.named_barrier_sync", "cpu_emulated", lower_named_barrier, priority=1))
    return tuple(out)


IMPLS = _impls()
