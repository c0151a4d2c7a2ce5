"""``tl.reduce`` of a partitioned fragment along its last dimension on WebGPU: every thread busy, no full rows.

Core's generic reduction stages the whole tile through workgroup memory and then has *every* thread fold every
row (a replicated destination is computed whole by each thread): for a 4 x 1024 softmax tile on 128 threads
that is 4096 workgroup loads per thread. Here, with the tile ``M x N`` spread cyclically over ``T`` threads
(element ``i * N + j`` in thread ``(i * N + j) % T``, see `tilelang.transform.layout_inference`):

1. each thread folds its own elements of each row in registers (a parallel nest over the tile, which core's
   PartitionParallel maps onto the thread's registers);
2. the per-thread partials go to a ``M x W`` workgroup tile (``W = T`` when ``T`` divides ``N``; ``W = N``
   when ``N`` divides ``T``, each row then being spread over ``N`` threads) and a tree halves ``W`` per step,
   the ``M * s`` pair folds of a step shared out over all threads (core's barrier pass orders the steps);
3. every thread reads the row results into its (replicated) destination.

That is ``N / T + log2(W)`` steps per row instead of ``N``. Under a vector fragment layout (``tl.vector_lanes =
V``: runs of V consecutive elements per thread) the same holds with rows of ``N / V`` runs: ``W = T`` when
``T`` divides ``N / V``, ``W = N / V`` when ``N / V`` divides ``T``. It applies to a 2-D partitioned fragment source
reduced along dimension 1 into a replicated fragment of ``M`` (or ``M x 1``) elements, with ``W`` a power of
two (or, with subgroups, ``W = T``); anything else goes to core's generic implementation.

With subgroups (the target attribute ``supports_subgroups``, off by default: set it in the target, e.g.
``{"kind": "webgpu", "supports_subgroups": True}``; the detector sets it from the adapter) and ``W = T``, step 2
starts with one ``subgroupAdd`` / ``subgroupMax`` / ``subgroupMin`` per row: invocation 0 of each subgroup stores
the subgroup's result at column ``subgroup_id`` and the tree folds only the ``ceil(T / subgroup_size)`` columns
(at most ``ceil(T / 4)``, WebGPU's smallest subgroup size being 4), so it is correct for any subgroup size,
including a last subgroup that the workgroup does not fill (the count comes from ``subgroup_size``, not from the
``num_subgroups`` builtin, which lavapipe reports without that partial subgroup).

Floating-point max / min keep NaN as torch does (core's `nan_max` / `nan_min` in the folds); a subgroup with a
NaN partial (``subgroupAny``) takes ``subgroupAdd``'s result, a NaN, as ``subgroupMax`` / ``subgroupMin`` may
drop it.
"""

from __future__ import annotations

from typing import Any

from tilelang.backend.sdk import TileOpImpl

_KINDS = ("sum", "max", "min", "abssum", "absmax")
SUBGROUP_MIN_SIZE = 4  # WebGPU's lower bound on an adapter's subgroupMinSize
# extern calls the WGSL post-processing (`tilelang_webgpu.subgroups`) turns into the subgroup builtins
SUBGROUP_ID, SUBGROUP_SIZE, SUBGROUP_INVOCATION_ID = "tl_subgroup_id", "tl_subgroup_size", "tl_subgroup_invocation_id"
_SUBGROUP_OPS = {"sum": "subgroupAdd", "max": "subgroupMax", "min": "subgroupMin"}
SCRATCH_BYTES = 4096  # workgroup memory one reduction uses at most (WebGPU guarantees only 32 KiB in all)


def _plan(ctx: Any) -> tuple[Any, Any, str, bool, int, int, int] | None:
    """``(src, dst, kind, clear, M, N, W)`` when this implementation serves the call."""
    from tilelang.transform import utils as C

    if not ctx.has_threads or ctx.num_threads <= 1 or ctx.func is None or len(ctx.args) < 4:
        return None
    src, dst = ctx.region(0), ctx.region(1)
    kind = ctx.str_arg(2)
    if kind not in _KINDS or len(src.region) != 2:
        return None
    dim = ctx.int_arg(3)
    if (dim + 2 if dim < 0 else dim) != 1:
        return None
    clear = bool(ctx.int_arg(4, 1))
    sbuf, dbuf = src.source, dst.source
    if C.scope_of(sbuf) != "local.fragment" or not ctx.is_partitioned(sbuf):
        return None
    if C.scope_of(dbuf) != "local.fragment" or ctx.is_partitioned(dbuf):
        return None
    shape = [C.as_int(s) for s in sbuf.ty.shape]
    if None in shape or [C.as_int(r.extent) for r in src.region] != shape:
        return None
    if any(not C.is_const(r.min, 0) for r in src.region):
        return None
    m, n = shape
    dshape = [C.as_int(s) for s in dbuf.ty.shape]
    if dshape not in ([m], [m, 1]) or [C.as_int(r.extent) for r in dst.region] != dshape:
        return None
    if any(not C.is_const(r.min, 0) for r in dst.region):
        return None
    threads = ctx.num_threads
    runs = n // fragment_lanes(ctx, sbuf)  # a row's runs of consecutive elements held by one thread
    if runs % threads == 0:
        width = threads
    elif threads % runs == 0 and m % (threads // runs) == 0:
        width = runs
    else:
        return None
    if width & (width - 1) and not (width == threads and uses_subgroups(ctx.target)):
        return None  # the tree needs a power of two (with subgroups it folds only the per-subgroup partials)
    return src, dst, kind, clear, m, n, width


def fragment_lanes(ctx: Any, buf: Any) -> int:
    """The vector width LayoutInference gave the fragment `buf` (1: the cyclic layout)."""
    from tilelang.backend.sdk import fragment_of
    from tilelang.transform import utils as C

    for alloc in C.allocations(ctx.func.body):
        if alloc.buffer.same_as(buf):
            return fragment_of(alloc, ctx.num_threads).vector_lanes
    return 1


def applies(ctx: Any) -> bool:
    """A partitioned 2-D fragment reduced along dim 1 into a replicated fragment (see the module docstring)."""
    try:
        return _plan(ctx) is not None
    except Exception:
        return False


def uses_subgroups(target: Any) -> bool:
    """Whether `target` asks for subgroup operations (the ``supports_subgroups`` target attribute)."""
    if target is None:
        return False
    try:
        value = target.get("supports_subgroups", False) if hasattr(target, "get") else False
        if not value and hasattr(target, "attrs"):
            value = target.attrs.get("supports_subgroups", False)
    except Exception:
        return False
    return bool(value)


def _tree(scratch: Any, rows: int, width: int, threads: int, tid: Any, kind: str,
          count: Any = None) -> list[Any]:
    """Fold each row of the ``rows x width`` workgroup tile into its column 0, halving the width per step.

    With `count` (an expression), only the first `count` columns hold values: a fold reading past them is skipped.
    """
    from tvm import tirx

    from tilelang.backend.sdk import reduce_combine
    from tilelang.transform import utils as C

    stmts = []
    s = width // 2
    while s >= 1:
        pairs = rows * s
        u = tirx.Var("u", "int32")
        w = u * threads + tid
        row, col = tirx.floordiv(w, s), tirx.floormod(w, s)
        fold: Any = tirx.BufferStore(scratch, reduce_combine(kind, tirx.BufferLoad(scratch, [row, col]),
                                                      tirx.BufferLoad(scratch, [row, col + s])), [row, col])
        if count is not None:
            fold = tirx.IfThenElse(col + s < count, fold, None)
        if pairs % threads:
            fold = tirx.IfThenElse(w < pairs, fold, None)
        iters = (pairs + threads - 1) // threads
        stmts.append(tirx.For(u, 0, iters, tirx.ForKind.SERIAL, fold) if iters > 1 else
                     C.substitute(fold, {u: tirx.const(0, "int32")}))
        s //= 2
    return stmts


def lower_reduce(ctx: Any) -> Any:
    from tvm import tirx

    from tilelang.backend.sdk import dtype_bytes, identity_value, reduce_combine, tileop_utils
    from tilelang.transform import utils as C

    src, dst, kind, clear, m, n, width = _plan(ctx)  # type: ignore[misc]
    threads = ctx.num_threads
    dtype = str(dst.source.ty.dtype)
    group = threads // width  # rows a pass of the threads covers (1 when T divides N)
    rows = m // group  # partial rows per thread
    tid = C.linear_thread(ctx.func)
    name = str(dst.source.name)
    tree_kind = {"abssum": "sum", "absmax": "max"}.get(kind, kind)

    part = tirx.decl_buffer((rows,), dtype, name=f"{name}_part", scope="local")
    stmts: list[Any] = [tirx.AllocBuffer(part)]
    stmts += [tirx.BufferStore(part, identity_value(kind, dtype), [r]) for r in range(rows)]
    # 1. fold the thread's own elements of each row (row i of the tile is partial row i // group)
    stmts.append(C.make_parallel_nest([m, n], lambda vs: tirx.BufferStore(
        part, reduce_combine(kind, tirx.BufferLoad(part, [tirx.floordiv(vs[0], group)]),
                      tileop_utils.cast(dtype, tirx.BufferLoad(src.source, vs))), [tirx.floordiv(vs[0], group)])))
    # 2. partials into the workgroup tile: partial row r of thread t is tile row r * group + t // W, slot t % W;
    # the tile holds `batch` rows at a time (at most SCRATCH_BYTES), the batches one after the other
    slot = tirx.floormod(tid, width) if group > 1 else tid
    first_row = tirx.floordiv(tid, width) if group > 1 else 0
    subgroups = group == 1 and width > 1 and uses_subgroups(ctx.target)
    tree_width = width
    if subgroups:  # one column per subgroup: at most ceil(T / 4) of them, rounded up to a power of two
        tree_width = 1
        while tree_width < min(width, (threads + SUBGROUP_MIN_SIZE - 1) // SUBGROUP_MIN_SIZE):
            tree_width *= 2
    elem = dtype_bytes(dtype)
    batch = group
    while batch * 2 <= m and m % (batch * 2) == 0 and batch * 2 * tree_width * elem <= SCRATCH_BYTES:
        batch *= 2
    scratch = tirx.decl_buffer((batch, tree_width), dtype, name=f"{name}_red", scope="shared.dyn")
    stmts.insert(1, tirx.AllocBuffer(scratch))
    if subgroups:
        sg_id = tirx.call_pure_extern("int32", SUBGROUP_ID)
        # the subgroups in use: from the subgroup size, as lavapipe's num_subgroups misses a partial last one
        sg_size = tirx.call_pure_extern("int32", SUBGROUP_SIZE)
        sg_count = tirx.floordiv(threads + sg_size - 1, sg_size)
        leader = tirx.call_pure_extern("int32", SUBGROUP_INVOCATION_ID) == 0
    for b in range(m // batch):
        rows_b = range(b * batch // group, (b + 1) * batch // group)
        if subgroups:
            for r in rows_b:  # all invocations run the subgroup op (uniform control flow), then leaders store
                own = tirx.BufferLoad(part, [r])
                op = tirx.call_pure_extern(dtype, _SUBGROUP_OPS[tree_kind], own)
                if tree_kind != "sum":  # subgroupMax / subgroupMin may drop a NaN: then take subgroupAdd's NaN
                    any_nan = tirx.call_pure_extern("bool", "subgroupAny", tirx.isnan(own))
                    op = tirx.Select(any_nan, tirx.call_pure_extern(dtype, "subgroupAdd", own), op)
                stmts.append(tirx.BufferStore(part, op, [r]))
                stmts.append(tirx.IfThenElse(leader, tirx.BufferStore(scratch, tirx.BufferLoad(part, [r]),
                                                                      [r % batch, sg_id]), None))
            stmts += _tree(scratch, batch, tree_width, threads, tid, tree_kind, count=sg_count)
        else:
            stmts += [tirx.BufferStore(scratch, tirx.BufferLoad(part, [r]),
                                       [(r % (batch // group)) * group + first_row, slot]) for r in rows_b]
            stmts += _tree(scratch, batch, width, threads, tid, tree_kind)
        # 3. every thread takes the row results
        for i in range(b * batch, (b + 1) * batch):
            di = [tirx.const(i, "int32")] + ([tirx.const(0, "int32")] if len(dst.region) == 2 else [])
            total = tirx.BufferLoad(scratch, [i - b * batch, 0])
            value = total if clear else reduce_combine(tree_kind, tirx.BufferLoad(dst.source, di), total)
            stmts.append(tirx.BufferStore(dst.source, value, di))
    return C.seq(stmts)


REDUCE = TileOpImpl("tl.reduce", "webgpu_tree", lower_reduce, applies=applies, priority=10)
