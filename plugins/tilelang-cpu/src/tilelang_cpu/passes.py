"""The CPU backend's passes: run a block grid of GPU-style threads on host cores.

`LowerLaunchToCPU` (extension point ``post_storage``): the block grid becomes ONE loop over the fused block index
(``ForKind.PARALLEL``: TVM's thread pool spreads blocks over cores; serial when the kernel holds emulated atomics,
which are plain read-modify-writes on the CPU); the launch attributes disappear; code that reads a thread index
(``T.get_thread_binding``) runs inside ``for tx in range(threads)`` loops, split at every barrier so the
barrier's ordering holds, with per-thread ``local`` buffers widened by a thread dimension; shared tiles become
block-local workspace (``global`` scope inside the block loop); barriers are dropped.
"""

from __future__ import annotations

import math
from typing import Any

from tilelang.backend import PipelinePass


def _is_barrier(stmt: Any) -> bool:
    import tvm
    from tvm import tirx

    return (isinstance(stmt, tirx.Evaluate) and isinstance(stmt.value, tvm.ir.Call)
            and isinstance(stmt.value.op, tvm.ir.Op) and stmt.value.op.name == "tirx.tvm_storage_sync")


def _has_barrier(stmt: Any) -> bool:
    from tvm import tirx

    from tilelang.transform import _common as C

    return any(_is_barrier(e) for e in C.collect(stmt, tirx.Evaluate))


def per_thread_buffers(body: Any) -> set[Any]:
    """Buffers each thread owns: ``local`` / ``local.var`` allocations that are not a block's fragment tile."""
    from tilelang.transform import _common as C

    return {a.buffer for a in C.allocations(body) if C.scope_of(a.buffer) in ("local", "local.var")
            and not (a.annotations and C.FRAGMENT_ANN in a.annotations)}


def _touches(stmt: Any, buffers: set[Any]) -> bool:
    import tvm
    from tvm import tirx

    from tilelang.transform import _common as C

    if not buffers:
        return False
    return bool({ld.source for ld in C.collect(stmt, tvm.ir.TensorLoad)} & buffers
                or {st.buffer for st in C.collect(stmt, tirx.BufferStore)} & buffers)


def emulate_threads(stmt: Any, tvars: list[Any], extents: list[int], per_thread: set[Any] | None = None) -> Any:
    """Wrap the per-thread parts of a block body in thread loops, split at barriers.

    A statement is per-thread when it reads a thread index or touches a per-thread buffer (reference semantics:
    every thread runs it on its own registers); other statements run once for the block. Nothing changes when
    no statement reads a thread index.
    """
    from tvm import tirx

    from tilelang.transform import _common as C

    if not tvars or not C.uses_var(stmt, tvars):
        return stmt
    per_thread = set() if per_thread is None else per_thread

    def threaded(s: Any) -> bool:
        return C.uses_var(s, tvars) or _touches(s, per_thread)

    def thread_loop(body: Any) -> Any:
        for v, e in zip(reversed(tvars), reversed(extents)):
            body = tirx.For(v, 0, e, tirx.ForKind.SERIAL, body)
        return body

    if isinstance(stmt, tirx.SeqStmt):
        out: list[Any] = []
        group: list[Any] = []

        def flush() -> None:
            if group:
                out.append(thread_loop(C.seq(group)))
                group.clear()

        for child in stmt.seq:
            if _is_barrier(child):
                flush()
            elif isinstance(child, tirx.AllocBuffer):
                flush()
                out.append(child)
            elif _has_barrier(child):
                flush()
                out.append(emulate_threads(child, tvars, extents, per_thread))
            elif threaded(child):
                group.append(child)
            else:
                flush()
                out.append(child)
        flush()
        return C.seq(out)
    if isinstance(stmt, tirx.For) and _has_barrier(stmt.body):
        return tirx.For(stmt.loop_var, stmt.min, stmt.extent, stmt.kind,
                        emulate_threads(stmt.body, tvars, extents, per_thread), stmt.thread_binding,
                        stmt.annotations)
    if isinstance(stmt, tirx.AttrStmt) and _has_barrier(stmt.body):
        return tirx.AttrStmt(stmt.node, stmt.attr_key, stmt.value,
                             emulate_threads(stmt.body, tvars, extents, per_thread))
    if isinstance(stmt, tirx.IfThenElse) and _has_barrier(stmt):
        return tirx.IfThenElse(stmt.condition, emulate_threads(stmt.then_case, tvars, extents, per_thread),
                               emulate_threads(stmt.else_case, tvars, extents, per_thread)
                               if stmt.else_case else None)
    return thread_loop(stmt)


def _widen_thread_locals(body: Any, tvars: list[Any], extents: list[int]) -> Any:
    """Give every per-thread buffer touched in a thread loop a leading thread dimension."""
    import tvm
    import tvm_ffi
    from tvm import tirx

    from tilelang.transform import _common as C

    if not tvars:
        return body
    loops = [lp for lp in C.collect(body, tirx.For) if any(lp.loop_var.same_as(v) for v in tvars)]
    touched: set[Any] = set()
    for lp in loops:
        touched |= {ld.source for ld in C.collect(lp.body, tvm.ir.TensorLoad)}
        touched |= {st.buffer for st in C.collect(lp.body, tirx.BufferStore)}
    inner = {a.buffer for lp in loops for a in C.allocations(lp.body)}
    wide = {}
    for alloc in C.allocations(body):
        buf = alloc.buffer
        if buf in touched and buf not in inner and C.scope_of(buf) in ("local", "local.var"):
            wide[buf] = C.buffer_with(buf, shape=[math.prod(extents), *buf.ty.shape], scope="local")
    if not wide:
        return body
    linear: Any = 0
    for v, e in zip(tvars, extents):
        linear = v if isinstance(linear, int) else linear * e + v

    def index(indices: Any) -> list[Any]:
        return [linear, *indices]

    body = tvm_ffi.structural_map(body, [
        (tvm.ir.TensorLoad, lambda ld: tirx.BufferLoad(wide[ld.source], index(ld.indices)) if ld.source in wide
         else ld),
        (tirx.BufferStore, lambda st: tirx.BufferStore(wide[st.buffer], st.value, index(st.indices))
         if st.buffer in wide else st),
    ])
    return C.substitute(body, wide)


_STACK_BYTES = 1024


def _bytes(buf: Any) -> int | None:
    """Bytes of a constant-shape buffer, else None."""
    from tvm import DataType

    from tilelang.transform import _common as C

    n = C.num_elements(buf.ty.shape)
    dt = DataType(str(buf.ty.dtype))
    return None if n is None else n * max(1, dt.bits * dt.lanes // 8)


def LowerLaunchToCPU(target: Any = None) -> Any:
    """Turn the block grid into a parallel loop and emulate threads (see the module docstring)."""
    import tvm_ffi
    from tvm import tirx

    from tilelang.layout import unravel
    from tilelang.tileop.atomic import ATOMIC_ATTR
    from tilelang.transform import _common as C

    @C.prim_func_pass("tl_cpu.LowerLaunchToCPU")
    def lower_launch(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        ext = C.launch_extents(func)
        if not ext:
            return func
        blocks = [(ext[t][0], ext[t][1]) for t in C.BLOCK_TAGS if t in ext]
        threads = [(ext[t][0], C.as_int(ext[t][1])) for t in C.THREAD_TAGS if t in ext]
        tvars = [v for v, _ in threads]
        textents = [e or 1 for _, e in threads]
        atomics = bool(C.collect(func.body, tirx.AttrStmt, lambda s: str(s.attr_key) == ATOMIC_ATTR))

        def strip(s: Any) -> Any:
            if str(s.attr_key) in ("thread_extent", ATOMIC_ATTR):
                return s.body
            return s

        def drop_barrier(ev: Any) -> Any:
            return tirx.Evaluate(0) if _is_barrier(ev) else ev

        def on_launch(s: Any, mutator: Any) -> Any:
            if str(s.attr_key) != "thread_extent" or not str(s.node.thread_tag).startswith("blockIdx"):
                return mutator.default_mutate(s)
            body = tvm_ffi.structural_map(s.body, (tirx.AttrStmt, strip))
            body = emulate_threads(body, tvars, textents, per_thread_buffers(body))
            body = _widen_thread_locals(body, tvars, textents)
            body = tvm_ffi.structural_map(body, (tirx.Evaluate, drop_barrier))
            # x varies fastest in the fused index (block (x, y, z) -> x + y * gx + z * gx * gy)
            sizes = [e for _, e in blocks][::-1]
            total = sizes[0]
            for e in sizes[1:]:
                total = total * e
            b = tirx.Var("block", "int32")
            idx = unravel(b, sizes)[::-1]
            body = C.substitute(body, {v: i for (v, _), i in zip(blocks, idx)})
            parallel = not atomics and not C.is_const(total, 1)
            return tirx.For(b, 0, total, tirx.ForKind.PARALLEL if parallel else tirx.ForKind.SERIAL, body)

        body = tvm_ffi.structural_mutate(func.body, [(tirx.AttrStmt, on_launch)])
        body = tvm_ffi.structural_map(body, (tirx.AttrStmt, strip))
        remap = {}
        for alloc in C.allocations(body):
            if C.scope_of(alloc.buffer).startswith("shared"):
                remap[alloc.buffer] = C.buffer_with(alloc.buffer, scope="global")
            elif C.scope_of(alloc.buffer) in ("local", "local.var", "local.fragment"):
                # TVM keeps only "global" CPU allocations under 1 KiB on the stack (registers after promotion);
                # any "local" one, even a scalar, becomes a heap workspace call
                small = _bytes(alloc.buffer) is not None and _bytes(alloc.buffer) < _STACK_BYTES
                scope = "global" if small else "local"
                if scope != C.scope_of(alloc.buffer):
                    remap[alloc.buffer] = C.buffer_with(alloc.buffer, scope=scope)
        return C.with_body(func, C.substitute(body, remap))

    return lower_launch


def _elide_copies(target: Any) -> Any:
    from tilelang_cpu.elide_copies import ElideTileCopies

    return ElideTileCopies(target)


def _merge_k(target: Any) -> Any:
    from tilelang_cpu.merge_k import MergeGemmKSteps

    return MergeGemmKSteps(target)


PASSES = (
    PipelinePass("cpu.elide_tile_copies", "pre_layout", _elide_copies, priority=2),
    PipelinePass("cpu.merge_gemm_k_steps", "pre_layout", _merge_k, priority=1),
    PipelinePass("cpu.lower_launch", "post_storage", LowerLaunchToCPU),
)
