"""WarpSpecialize: on sm_90a a pipelined main loop of tile copies feeding tensor-core GEMMs becomes a producer
warpgroup issuing TMA loads and the block's own warpgroups consuming them, stage by stage through mbarriers (the
reference TileLang's default structure on Hopper).

A kernel of ``T`` threads (a multiple of 128) whose ``T.Pipelined(n, num_stages=s)`` loop (s >= 1) holds only
``T.copy`` global -> shared tiles (each one TMA box, `_box_copy`) followed by ``T.gemm`` calls gets ``T + 128``
threads::

    for k in range(n):
        with T.ws(T // 128):                       # the producer: the block's last warpgroup
            T.mbarrier_wait_parity(empty[k % s], (k // s & 1) ^ 1)
            T.tma_copy(A[...], A_s[k % s], barrier=full[k % s]) ...
            T.mbarrier_arrive(full[k % s])
        with T.ws(0, ..., T // 128 - 1):           # the consumers: the block's threads as written
            T.mbarrier_wait_parity(full[k % s], k // s & 1)
            T.gemm(A_s[k % s], B_s[k % s], C) ...
            T.mbarrier_arrive(empty[k % s])

Every other statement of the kernel runs on the consumers only, so they keep the thread indices, fragments and
results the program was written for. The copied tiles get ``s`` versions (written by TMA only: the GEMM reads them
after the mbarrier wait, with no block barrier or proxy fence, `ASYNC_TILE`); the producer gives its registers to
the consumers (``setmaxnreg``). Kernels that already use warp roles, barriers or TMA, loops with a stage order,
and copies that are not one TMA box keep the cp.async pipeline. ``tl.disable_warp_specialized`` or
``tl.disable_tma_lower`` (the reference's pass configs) turn the pass off.
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.backend.sdk import WARP_ROLES_ATTR, dtype_bytes
from tilelang.transform import utils as C

DISABLE_KEY = "tl.disable_warp_specialized"
ASYNC_TILE = "tl.cuda.async_written"  # AllocBuffer annotation: only TMA writes this tile, mbarriers publish it
WARP_GROUP = 128
WARP = 32
MAX_BOX = 256
PRODUCER_REGS, CONSUMER_REGS = 24, 240


def enabled(target: Any) -> bool:
    """sm_90a (TMA and wgmma), not switched off by ``tl.disable_warp_specialized`` / ``tl.disable_tma_lower``."""
    from tilelang.backend.sdk import current_tl_config
    from tilelang_cuda import tma
    from tilelang_cuda.tileops.common import arch_number

    arch = str(target.attrs.get("arch", "")) if hasattr(target, "attrs") else str(target.get("arch", ""))
    if arch_number(target) < 90 or not arch.endswith("a"):
        return False
    return not (current_tl_config(DISABLE_KEY, False) or current_tl_config(tma.DISABLE_KEY, False))


def _box_copy(call: Any) -> tuple[Any, Any] | None:
    """``(src, dst)`` regions of a ``tl.copy`` that one TMA load does: a static-shaped global tensor whose rows are
    a multiple of 16 bytes, a static box of dims <= 256 (its innermost dim the tensor's, a multiple of 16 bytes)
    whose non-unit extents are, in order, a whole 2-D shared tile of the same dtype."""
    if len(call.args) != 2 or not all(isinstance(a, tvm.ir.TensorRegion) for a in call.args):
        return None
    src, dst = call.args
    if C.scope_of(src.source) != "global" or C.scope_of(dst.source) not in ("shared", "shared.dyn"):
        return None
    dtype = str(src.source.ty.dtype)
    if dtype != str(dst.source.ty.dtype) or dtype_bytes(dtype) not in (1, 2, 4):
        return None
    gshape = [C.as_int(d) for d in src.source.ty.shape]
    box = [C.as_int(r.extent) for r in src.region]
    dshape = [C.as_int(d) for d in dst.source.ty.shape]
    if None in gshape or None in box or None in dshape or len(dshape) != 2 or not 2 <= len(gshape) <= 5:
        return None
    elem = dtype_bytes(dtype)
    if (gshape[-1] * elem) % 16 or (box[-1] * elem) % 16 or not all(1 <= b <= MAX_BOX for b in box[:-1]):
        return None
    if box[-1] > MAX_BOX and not _split_by_swizzle(dshape, elem):
        return None
    if [b for b in box if b != 1] != dshape or box[-1] == 1:
        return None
    if [C.as_int(r.extent) for r in dst.region] != dshape or not all(C.is_const(r.min, 0) for r in dst.region):
        return None
    return src, dst


def _split_by_swizzle(shape: list[int], elem: int) -> bool:
    """Whether a tile with rows wider than one TMA box takes wgmma's 128-byte swizzle, whose column blocks (64
    16-bit elements) the box is split into (`passes.swizzle_shared_operands`): the only wide tiles the pass takes
    (MLA's 512-wide latent rows)."""
    from tilelang_cuda.wgmma_layout import tile_layout

    tile = tile_layout(shape, elem)
    return tile is not None and tile.width == 128


class _Unsupported(Exception):
    """The kernel's shape is not one this pass rewrites (it is left as it is)."""


class _Loop:
    """The pipelined loop split into the TMA copies its producer takes over (global -> shared tiles, each one box
    into a tile nothing else in the loop writes) and the rest, which the consumers run in order; supported when
    every global -> shared copy of the loop is such a box and a GEMM consumes them."""

    def __init__(self, loop: Any):
        self.loop = loop
        self.copies: list[tuple[Any, Any]] = []
        self.rest: list[Any] = []
        stmts = list(loop.body.seq) if isinstance(loop.body, tirx.SeqStmt) else [loop.body]
        self.ok = True
        for s in stmts:
            found = C.tile_op_of(s)
            if found is not None and found[0] == "tl.copy" and _loads_global_to_shared(found[1]):
                pair = _box_copy(found[1])
                if pair is None:
                    self.ok = False
                else:
                    self.copies.append(pair)
            else:
                self.rest.append(s)
        tiles = [dst.source for _, dst in self.copies]
        rest = C.seq(self.rest) if self.rest else tirx.Evaluate(0)
        calls = C.collect(rest, tvm.ir.Call)
        gemms = [c for c in calls if str(getattr(c.op, "name", "")) == "tl.gemm"]
        nested = [c for c in calls if str(getattr(c.op, "name", "")) == "tl.copy" and _loads_global_to_shared(c)]
        self.ok = self.ok and bool(self.copies) and bool(gemms) and not nested and len(set(tiles)) == len(tiles)
        self.ok = self.ok and all(_gemm_operand_only(rest, calls, t) for t in tiles)
        self.tiles = tiles


def _loads_global_to_shared(call: Any) -> bool:
    args = list(call.args)
    return (len(args) >= 2 and all(isinstance(a, tvm.ir.TensorRegion) for a in args[:2])
            and C.scope_of(args[0].source) == "global" and C.scope_of(args[1].source) in ("shared", "shared.dyn"))


def _gemm_operand_only(rest: Any, calls: list[Any], tile: Any) -> bool:
    """Whether the consumers use `tile` only as a GEMM's A or B (read through wgmma descriptors): the TMA box lands
    in the swizzle the descriptors read, which generic loads and stores know nothing of (and a tile laid out for
    them, e.g. a packed operand dequantised in the loop, is no TMA box)."""
    if any(ld.source.same_as(tile) for ld in C.collect(rest, tvm.ir.TensorLoad)):
        return False
    if any(st.buffer.same_as(tile) for st in C.collect(rest, tirx.BufferStore)):
        return False
    for call in calls:
        name = str(getattr(call.op, "name", ""))
        for i, arg in enumerate(call.args):
            if isinstance(arg, tvm.ir.TensorRegion) and arg.source.same_as(tile) and not (
                    name == "tl.gemm" and i in (0, 1)):
                return False
    return True


def _find_loop(body: Any) -> Any:
    loops = [lp for lp in C.collect(body, tirx.For) if any(k in lp.annotations for k in C.PIPELINE_KEYS)]
    if len(loops) != 1:
        return None
    loop = loops[0]
    stages, order, stage = C.PIPELINE_KEYS
    if order in loop.annotations or stage in loop.annotations or not C.is_const(loop.min, 0):
        return None
    if (C.as_int(loop.annotations.get(stages, 0)) or 0) < 1:
        return None
    return loop


def _uses_outside(body: Any, loop: Any, tiles: list[Any]) -> bool:
    """Whether a tile the loop writes is touched anywhere else."""
    outside = []

    def on_for(s: Any, m: Any) -> Any:
        return tirx.Evaluate(0) if s.same_as(loop) else m.default_mutate(s)

    rest = tvm_ffi.structural_mutate(body, [(tirx.For, on_for)])
    for node in C.collect(rest, tvm.ir.TensorRegion) + C.collect(rest, tvm.ir.TensorLoad):
        outside.append(node.source)
    outside += [st.buffer for st in C.collect(rest, tirx.BufferStore)]
    return any(any(t.same_as(o) for o in outside) for t in tiles)


def _already_specialised(body: Any) -> bool:
    attrs = C.collect(body, tirx.AttrStmt, lambda a: str(a.attr_key) == "tl.cuda.warp_group")
    barriers = [a for a in C.allocations(body) if C.scope_of(a.buffer) in ("shared.barrier",)]
    calls = [c for c in C.collect(body, tvm.ir.Call) if isinstance(c.op, tvm.ir.Op) and str(c.op.name) in (
        "tl.tma_copy", "tl.mbarrier_wait_parity", "tl.mbarrier_arrive", "tl.wgmma_gemm", "tl.tma_load")]
    return bool(attrs or barriers or calls)


def _producer_can_address(func: Any, loop: Any, found: _Loop) -> bool:
    """Whether the producer can compute every copy's box on its own: its coordinates read only the loop index,
    the block index, the kernel's scalars and global tensors (not a value the consumers compute, e.g. a block
    index a block-sparse kernel reads into a register)."""
    inner = {b.var for b in C.collect(func.body, tirx.Bind)} | {lp.loop_var for lp in C.collect(func.body, tirx.For)}
    inner.discard(loop.loop_var)
    for src, _ in found.copies:
        exprs = [e for r in src.region for e in (r.min, r.extent)]
        for e in exprs:
            if any(C.scope_of(ld.source) != "global" for ld in C.collect(e, tvm.ir.TensorLoad)):
                return False
            if C.uses_var(e, list(inner)):
                return False
    return True


def _calls_op(body: Any, name: str) -> bool:
    return bool(C.collect(body, tvm.ir.Call, lambda c: str(getattr(c.op, "name", "")) == name))


def _call(name: str, args: list[Any]) -> Any:
    from tilelang.ir import intrin_call, register_intrinsic

    register_intrinsic(name, "opaque", f"CUDA dialect: {name}")
    return tirx.Evaluate(intrin_call(name, "handle", args))


def _specialise(func: Any) -> Any:
    from tilelang.backend.sdk import single_thread_var

    tid = single_thread_var(func)
    launches = C.collect(func.body, tirx.AttrStmt, lambda a: str(a.attr_key) == "thread_extent"
                         and str(a.node.thread_tag) == "threadIdx.x")
    if tid is None or len(launches) != 1:  # one launch of a 1-D block
        return func
    threads = C.block_threads(func)
    if threads % WARP_GROUP or threads + WARP_GROUP > 1024 or _already_specialised(func.body):
        return func
    loop = _find_loop(func.body)
    if loop is None:
        return func
    found = _Loop(loop)
    if not found.ok or _uses_outside(func.body, loop, found.tiles) or not _producer_can_address(func, loop, found):
        return func
    stages = int(C.as_int(loop.annotations[C.PIPELINE_KEYS[0]]))
    k = loop.loop_var
    slot = tirx.floormod(k, stages)
    phase = tirx.bitwise_and(tirx.floordiv(k, stages), 1)
    i32 = lambda v: tirx.IntImm("int32", v)

    versions = {t: C.buffer_with(t, shape=[stages, *t.ty.shape]) for t in found.tiles}
    full = tirx.decl_buffer((stages,), "uint64", name="tl_ws_full", scope="shared.barrier")
    empty = tirx.decl_buffer((stages,), "uint64", name="tl_ws_empty", scope="shared.barrier")

    def versioned(region: Any) -> Any:
        new = versions.get(region.source)
        if new is None:
            return region
        return tirx.BufferRegion(new, [tvm.ir.Range.from_min_extent(slot, 1), *region.region])

    issue = [_call("tl.tma_copy", [src, versioned(dst), tirx.BufferLoad(full, [slot]), i32(-1), i32(0), i32(0)])
             for src, dst in found.copies]
    issue.append(_call("tl.mbarrier_arrive", [tirx.BufferLoad(full, [slot])]))
    # the producer warp waits as a whole and one lane it elects (elect.sync) issues the stage: ptxas then knows one
    # lane issues each TMA copy (a copy under a plain thread test is a loop over the lanes that may reach it)
    produce = [_call("tl.mbarrier_wait_parity", [tirx.BufferLoad(empty, [slot]), tirx.bitwise_xor(phase, 1)]),
               tirx.IfThenElse(tirx.call_extern("bool", "tl_elect_one"), C.seq(issue), None)]
    consume = [_call("tl.mbarrier_wait_parity", [tirx.BufferLoad(full, [slot]), phase])]

    def on_load(ld: Any, m: Any) -> Any:
        new = versions.get(ld.source)
        ld = m.default_mutate(ld)
        return ld if new is None else tirx.BufferLoad(new, [slot, *ld.indices])

    consume += [tvm_ffi.structural_mutate(x, [(tvm.ir.TensorRegion, lambda r, m: versioned(r)),
                                              (tvm.ir.TensorLoad, on_load)]) for x in found.rest]
    consume.append(_call("tl.mbarrier_arrive", [tirx.BufferLoad(empty, [slot])]))
    consumers = list(range(threads // WARP_GROUP))
    producer = [threads // WARP_GROUP]
    ann = {key: v for key, v in loop.annotations.items() if key not in C.PIPELINE_KEYS}
    # two loops, one a role (as the reference): each warpgroup runs only its own loop
    k_p = tirx.Var(f"{k.name}_produce", k.ty)
    produce_loop = tirx.For(k_p, loop.min, loop.extent, tirx.ForKind.SERIAL, C.substitute(C.seq(produce), {k: k_p}),
                            None, ann or None)
    # the first warp of the producer warpgroup runs its loop (the block coordinates, divisions once block
    # rasterisation remaps them, are computed once before it).
    # The block coordinates are bound before it through an opaque identity (`tl_keep_int`): TVM inlines pure
    # bindings and ptxas rematerialises cheap-looking values, and block rasterisation makes them divisions.
    for tag in ("blockIdx.z", "blockIdx.y", "blockIdx.x"):
        var = C.launch_extents(func).get(tag, (None, None))[0]
        if var is not None and C.uses_var(produce_loop, [var]):
            bound = tirx.Var(f"{var.name}_produce", var.ty)
            kept = tirx.call_extern(str(var.ty.dtype), "tl_keep_int", var)
            produce_loop = C.seq([tirx.Bind(bound, kept), C.substitute(produce_loop, {var: bound})])
    produce_loop = tirx.IfThenElse(tirx.floordiv(tid, WARP) == threads // WARP, produce_loop, None)
    consume_loop = tirx.For(k, loop.min, loop.extent, tirx.ForKind.SERIAL, C.seq(consume), None, ann or None)
    extended = threads + WARP_GROUP

    def ws(groups: list[int], body: list[Any]) -> Any:
        node = tvm.ir.StringImm(",".join(str(g) for g in groups))
        return tirx.AttrStmt(node, "tl.cuda.warp_group", i32(WARP_GROUP), C.seq(body))

    def split(parts: list[Any]) -> Any:
        """The statement sequence holding the loop: ``if producer: ... else: <the sequence, the loop consuming>``
        (one branch a role, so ptxas sees that neither reaches the other's code after ``setmaxnreg``)."""
        head = [x for x in parts if isinstance(x, (tirx.AllocBuffer, tirx.DeclBuffer))]
        work = [consume_loop if x.same_as(loop) else x for x in parts if x not in head]
        bound = [b.var for b in work if isinstance(b, tirx.Bind)]
        if bound and C.uses_var(produce_loop, bound):
            raise _Unsupported
        set_regs = "tl.set_max_nreg"
        producer_role = ws(producer, [_call(set_regs, [i32(PRODUCER_REGS), i32(0)]), produce_loop])
        consumer_role = ws(consumers, [_call(set_regs, [i32(CONSUMER_REGS), i32(1)]), *work])
        roles = tirx.IfThenElse(tirx.floordiv(tid, WARP_GROUP) == producer[0], producer_role, consumer_role)
        # shared-memory planning sees both branches' statements as the kernel's own, in order (else the if is one
        # statement using every tile, and no tile reuses another's bytes, e.g. an epilogue tile the stage
        # buffers'): as WARP_ROLES_ATTR requires, the producer touches only the copied tiles, which the consumers
        # use until their loop has waited for the last TMA write
        return C.seq([*head, tirx.AttrStmt(i32(0), WARP_ROLES_ATTR, i32(0), roles)])

    def rebuild(node: Any) -> Any:
        """The launch body down to the loop rebuilt: only attributes and sequences whose other statements declare
        (buffers, pure bindings) may lie on the way, as everything executed must be the consumers'."""
        if node.same_as(loop):
            return split([loop])
        if isinstance(node, tirx.AttrStmt):
            if str(node.attr_key) == "thread_extent" and node.node.var.same_as(tid):
                iv = node.node
                iv = tirx.IterVar(tvm.ir.Range.from_min_extent(0, extended), iv.var, iv.iter_type, iv.thread_tag)
                return tirx.AttrStmt(iv, node.attr_key, i32(extended), rebuild(node.body))
            return tirx.AttrStmt(node.node, node.attr_key, node.value, rebuild(node.body))
        if isinstance(node, tirx.SeqStmt):
            parts = list(node.seq)
            holder = [x for x in parts if x.same_as(loop) or C.collect(x, tirx.For, lambda lp: lp.same_as(loop))]
            if len(holder) != 1:
                raise _Unsupported
            if holder[0].same_as(loop):
                return split(parts)
            for x in parts:
                if x is not holder[0] and not isinstance(x, (tirx.AllocBuffer, tirx.DeclBuffer, tirx.Bind)):
                    raise _Unsupported
            return C.seq([rebuild(x) if x is holder[0] else x for x in parts])
        raise _Unsupported

    def on_alloc(a: Any, m: Any) -> Any:
        new = versions.get(a.buffer)
        if new is None:
            return a
        ann = dict(a.annotations or {})
        ann[ASYNC_TILE] = 1
        return tirx.AllocBuffer(new, ann)

    try:
        body = rebuild(func.body)
    except _Unsupported:
        return func
    body = tvm_ffi.structural_mutate(body, [(tirx.AllocBuffer, on_alloc)])
    allocs = [tirx.AllocBuffer(full, {"tl.barrier_init": [1] * stages}),
              tirx.AllocBuffer(empty, {"tl.barrier_init": [threads] * stages})]
    # one block an SM, as ptxas needs to honour ``setmaxnreg`` (else it keeps every warp at the launch bound's
    # count: `__launch_bounds__(threads, 1)`), unless the kernel asks for more blocks itself
    if not _calls_op(func.body, "tl.min_blocks_per_sm"):
        allocs.append(_call("tl.min_blocks_per_sm", [i32(1)]))
    body = _inside_launch(body, tid, allocs)
    return C.with_body(func, body)


def _inside_launch(body: Any, tid: Any, head: list[Any]) -> Any:
    """`body` with `head` placed first under the thread launch."""

    def on_attr(s: Any, m: Any) -> Any:
        if str(s.attr_key) == "thread_extent" and s.node.var.same_as(tid):
            return tirx.AttrStmt(s.node, s.attr_key, s.value, C.seq([*head, s.body]))
        return m.default_mutate(s)

    return tvm_ffi.structural_mutate(body, [(tirx.AttrStmt, on_attr)])


def WarpSpecialize(target: Any = None) -> tvm.transform.Pass:
    """See the module docstring."""

    @C.prim_func_pass("cuda.warp_specialize")
    def warp_specialize(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        tgt = target if target is not None else tvm.target.Target.current()
        if tgt is None or not enabled(tgt):
            return func
        return _specialise(func)

    return warp_specialize
