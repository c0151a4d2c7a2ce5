"""`MergeGemmKSteps` (CPU, extension point ``pre_layout``, after `ElideTileCopies`): fewer, longer gemm K steps.

A tiled GEMM walks K in ``block_K`` steps (``for k in T.Pipelined(K // block_K)``: copy the A / B tiles, one
``T.gemm``). On a GPU the short step feeds the software pipeline; on a CPU (no software pipeline) each step
reloads and stores the whole accumulator tile in the micro-kernel and pays per-step copy loops. This pass merges
``f`` consecutive steps into one: the loop runs ``n / f`` times, each tile copied in the loop is ``f`` times longer
along K, and the gemm reads ``f * block_K`` of K at once, with ``f`` the largest divisor of ``n`` such that
``f * block_K <= `` the K block of the gemm on the target (`tilelang_cpu.gemm_plan.k_block`: by the ISA's
registers, longer for a gemm on AMX tiles; pass config ``tl.cpu.gemm_k_block`` overrides it, 1 turns the rewrite
off). The sum runs over k in the same order, so results are bit-identical. A loop merged into a single step is no
loop at all, and a ``T.fill(R, 0)`` (``T.clear``) followed by a gemm accumulating into the same region R (only
tile copies not touching R in between) becomes that gemm with ``clear_accum`` (the micro-kernel starts from zero
instead of loading the zeros). When anything changed, `ElideTileCopies` runs again on gemm accumulators: one
now written once by a clearing gemm and copied out whole is the output itself.

Applied only when every condition holds (else the loop is left alone):

* the target has no software pipeline; the loop is serial, starts at 0 and has a constant trip count ``n``;
* its body is only ``T.copy(global region -> tile)`` statements followed by one ``T.gemm`` with ``clear_accum``
  false, and the accumulator is neither copied in the loop nor one of those tiles;
* each copied tile is used nowhere but in this loop (its copy and as a whole gemm operand), and has a constant
  shape;
* the loop variable appears only in the K offsets of the gemm operands and of the copy sources, as
  ``k * block_K + c`` (``block_K`` the operand's K extent), and in no other dimension.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any


def _k_dim(call: Any, pos: int, ndim: int) -> int:
    """The K dimension (negative index) of gemm operand `pos`."""
    from tilelang.transform import utils as C

    trans = C.as_int(call.args[3 + pos]) if len(call.args) > 3 + pos else 0
    if pos == 0:
        return -2 if trans else -1
    return -1 if trans else -2


def _step(region: Any, kdim: int, var: Any, ana: Any) -> int | None:
    """``block_K`` when `region` has K offset ``var * block_K + c`` and no other use of `var`, else None."""
    import tvm

    from tilelang.transform import utils as C

    ranges = list(region.region)
    kd = len(ranges) + kdim
    if kd < 0 or C.collect(region.region, tvm.ir.TensorLoad):
        return None
    if any(C.uses_var(r.min, [var]) or C.uses_var(r.extent, [var]) for i, r in enumerate(ranges) if i != kd):
        return None
    ext = C.as_int(ranges[kd].extent)
    if ext is None or C.uses_var(ranges[kd].extent, [var]):
        return None
    m = ranges[kd].min
    diff = ana.simplify(C.substitute(m, {var: var + 1}) - m)
    base = ana.simplify(C.substitute(m, {var: tvm.tirx.const(0, str(var.ty.dtype))}))
    if C.as_int(diff) != ext or C.uses_var(base, [var]):
        return None
    return ext


def _widen(region: Any, kdim: int, var: Any, new_var: Any, f: int, buf: Any = None) -> Any:
    """`region` over ``f`` steps: K offset at step ``new_var * f``, K extent times ``f``."""
    import tvm
    from tvm import tirx

    from tilelang.transform import utils as C

    ranges = list(region.region)
    kd = len(ranges) + kdim
    out = []
    for i, r in enumerate(ranges):
        if i == kd:
            start = C.substitute(r.min, {var: new_var * f})
            if C.as_int(new_var) is not None:  # the one step of an unwrapped loop
                start = tvm.sym.Analyzer().simplify(start)
            out.append(tvm.ir.Range.from_min_extent(start, r.extent * f))
        else:
            out.append(r)
    return tirx.BufferRegion(region.source if buf is None else buf, out)


def _merge(loop: Any, func: Any, uses: dict[Any, int], ana: Any,
           k_for: Callable[[Any], int]) -> tuple[Any, dict[Any, Any]] | None:
    """The merged loop and ``{old tile: widened tile}``, or None when the loop does not qualify."""
    import tvm
    from tvm import tirx

    from tilelang.ir import region_extents, to_region
    from tilelang.transform import utils as C

    n = C.as_int(loop.extent)
    if loop.kind != tirx.ForKind.SERIAL or not C.is_const(loop.min, 0) or n is None or n < 2:
        return None
    stmts = list(loop.body.seq) if isinstance(loop.body, tirx.SeqStmt) else [loop.body]
    ops = [C.tile_op_of(s) for s in stmts]
    if any(o is None for o in ops) or ops[-1][0] != "tl.gemm" or any(o[0] != "tl.copy" for o in ops[:-1]):
        return None
    gemm = ops[-1][1]
    gargs = list(gemm.args)
    if len(gargs) < 7 or C.as_int(gargs[6]) != 0:
        return None
    operands = [to_region(gargs[0]), to_region(gargs[1])]
    acc = to_region(gargs[2]).source
    if C.uses_var(gargs[2], [loop.loop_var]) or C.uses_var(gargs[3:], [loop.loop_var]):
        return None
    kdims = [_k_dim(gemm, p, len(operands[p].region)) for p in (0, 1)]
    tiles: dict[Any, int] = {}  # copied tile -> operand position
    copies = []
    for _, call in ops[:-1]:
        args = list(call.args)
        dst = to_region(args[1])
        src = to_region(args[0], region_extents(dst))
        tile = dst.source
        pos = [p for p in (0, 1) if operands[p].source.same_as(tile)]
        if (tile.same_as(acc) or len(pos) != 1 or tile in tiles or not C.scope_of(src.source) == "global"
                or C.scope_of(tile) == "global" or any(C.as_int(s) is None for s in tile.ty.shape)
                or uses.get(tile, 0) != 2 or len(src.region) != len(dst.region)
                or any(not (C.is_const(r.min, 0) and C.as_int(r.extent) == C.as_int(s))
                       for r, s in zip(dst.region, tile.ty.shape))
                or any(not (C.is_const(r.min, 0) and C.as_int(r.extent) == C.as_int(s))
                       for r, s in zip(operands[pos[0]].region, tile.ty.shape))):
            return None
        tiles[tile] = pos[0]
        copies.append((src, tile, pos[0], call))
    steps = [_step(src, kdims[pos], loop.loop_var, ana) for src, _, pos, _ in copies]
    steps += [_step(operands[p], kdims[p], loop.loop_var, ana) for p in (0, 1) if operands[p].source not in tiles]
    if len(steps) < 2 or steps[0] is None or any(s != steps[0] for s in steps):
        return None
    block_k = steps[0]
    target_k = k_for(gemm)
    f = max(d for d in range(1, n + 1) if n % d == 0 and d * block_k <= max(target_k, block_k))
    if f == 1:
        return None
    ko = tirx.Var(str(loop.loop_var.name) + "_o", str(loop.loop_var.ty.dtype))
    # one step: no loop, so that a clear before it can fold into the gemm (`_fold_clears`)
    step = ko if n // f > 1 else tirx.const(0, str(ko.ty.dtype))
    wide: dict[Any, Any] = {}
    for tile, pos in tiles.items():
        shape = [C.as_int(s) for s in tile.ty.shape]
        shape[len(shape) + kdims[pos]] *= f
        wide[tile] = C.buffer_with(tile, shape=shape)
    body = []
    for src, tile, pos, call in copies:
        kd = kdims[pos]
        new_src = _widen(src, kd, loop.loop_var, step, f)
        dst = tirx.BufferRegion(wide[tile], [tvm.ir.Range.from_min_extent(0, s) for s in wide[tile].ty.shape])
        body.append(tirx.Evaluate(tvm.ir.Call(call.op, [new_src, dst, *list(call.args)[2:]], ret_ty="void")))
    new_ops = []
    for p in (0, 1):
        r = operands[p]
        new_ops.append(_widen(r, kdims[p], loop.loop_var, step, f, wide.get(r.source)))
    body.append(tirx.Evaluate(tvm.ir.Call(gemm.op, [*new_ops, *gargs[2:]], ret_ty="void")))
    if C.uses_var(C.seq(body), [loop.loop_var]):
        return None
    if n // f == 1:
        return C.seq(body), wide
    return tirx.For(ko, 0, n // f, tirx.ForKind.SERIAL, C.seq(body)), wide


def merge_gemm_k_steps(func: Any, target: Any = None) -> Any:
    """Apply the rewrite of the module docstring to every qualifying loop of a tile-level PrimFunc; `target`
    (default: the function's, else this machine's CPU) sets the K block."""
    from tvm import tirx

    from tilelang.ir import to_region
    from tilelang.transform import utils as C
    from tilelang_cpu.gemm_plan import k_block
    from tilelang_cpu.isa import vector_isa
    from tilelang_cpu.passes.elide_tile_copies import elide_tile_copies
    from tilelang_cpu.tileops.gemm_amx import amx_kind
    from tilelang_cpu.tileops.gemm_dot import dot_kind

    if target is None:
        target = (func.attrs.get("target") if func.attrs else None) or {"kind": "llvm"}
    isa = vector_isa(target)

    def k_for(gemm: Any) -> int:
        dtypes = [str(to_region(arg).source.ty.dtype) for arg in list(gemm.args)[:3]]
        b_bytes = 1 if dtypes[1] == "int8" and dot_kind(target, *dtypes) is not None else 4  # vpdpbusd / vpdpbssd
        return k_block(isa, tiles=amx_kind(target, *dtypes) is not None, b_bytes=b_bytes)

    loops = [lp for lp in C.collect(func.body, tirx.For) if any(C.tile_op_of(s) and C.tile_op_of(s)[0] == "tl.gemm"
                                                               for s in _children(lp.body))]
    merged = _merge_loops(func, loops, k_for) if loops else func
    body = _fold_clears(merged.body)
    if body is None and merged.same_as(func):
        return func
    # an accumulator now written by one clearing gemm may be the output itself (`ElideTileCopies`)
    return elide_tile_copies(merged if body is None else C.with_body(merged, body), target, accumulators_only=True)


def _merge_loops(func: Any, loops: list[Any], k_for: Callable[[Any], int]) -> Any:
    import tvm
    import tvm_ffi
    from tvm import tirx

    from tilelang.transform import utils as C
    from tilelang_cpu.passes.elide_tile_copies import _analyzer, _Uses

    u = _Uses(func.body)
    uses = {b: u.count(b) for b in set(u.loads) | set(u.stores) | set(u.tile)}
    ana = _analyzer(func)
    done: dict[Any, Any] = {}
    wide: dict[Any, Any] = {}
    for lp in loops:
        merged = _merge(lp, func, uses, ana, k_for)
        if merged is not None:
            done[lp] = merged[0]
            wide |= merged[1]
    if not done:
        return func

    def on_for(lp: Any) -> Any:
        for old, new in done.items():
            if lp.same_as(old):
                return new
        return lp

    def on_alloc(a: Any) -> Any:
        new = wide.get(a.buffer)
        return tirx.AllocBuffer(new) if new is not None else a

    body = tvm_ffi.structural_map(func.body, [(tirx.For, on_for), (tirx.AllocBuffer, on_alloc)])
    assert not C.collect(body, tvm.ir.TensorLoad, lambda ld: ld.source in wide)
    return C.with_body(func, body)


def _fold_clears(body: Any) -> Any:
    """`body` with each ``T.fill(R, 0)`` folded into the ``T.gemm`` accumulating into the same region R that
    follows it (A and B elsewhere; only tile copies that touch neither R's buffer in between) as ``clear_accum``:
    the micro-kernel starts its accumulators at zero instead of loading the zeros back (the same sums, bit for
    bit); None when there is none to fold."""
    import tvm
    import tvm_ffi
    from tvm import tirx

    from tilelang.ir import to_region
    from tilelang.transform import utils as C
    from tilelang_cpu.passes.elide_tile_copies import _Uses

    def zero_fill(stmt: Any) -> Any | None:
        """The region a ``T.fill(region, 0)`` statement clears, else None."""
        found = C.tile_op_of(stmt)
        if found is None or found[0] != "tl.fill" or len(found[1].args) != 2:
            return None
        value = found[1].args[1]
        # +0 only: a clearing gemm starts from +0, and -0.0 + -0.0 would keep the sign
        zero = isinstance(value, (tirx.IntImm, tirx.FloatImm)) and value.value == 0 and \
            math.copysign(1.0, value.value) > 0
        return to_region(found[1].args[0]) if zero else None

    def cleared(stmt: Any, region: Any) -> Any | None:
        """`stmt` as a clearing gemm when it is a gemm accumulating into exactly `region`, else None."""
        found = C.tile_op_of(stmt)
        if found is None or found[0] != "tl.gemm" or len(found[1].args) < 7 or C.as_int(found[1].args[6]) != 0:
            return None
        args = list(found[1].args)
        acc = to_region(args[2])
        if (not acc.source.same_as(region.source) or not tvm_ffi.structural_equal(acc.region, region.region)
                or any(to_region(a).source.same_as(acc.source) for a in args[:2])):
            return None
        return tirx.Evaluate(tvm.ir.Call(found[1].op, [*args[:6], tirx.const(1, str(args[6].ty.dtype)), *args[7:]],
                                         ret_ty="void"))

    def unrelated_copy(stmt: Any, buf: Any) -> bool:
        found = C.tile_op_of(stmt)
        return found is not None and found[0] == "tl.copy" and not _Uses(stmt).count(buf)

    folds = 0

    def on_seq(s: Any) -> Any:
        nonlocal folds
        flat = C.seq(list(s.seq))  # nested sequences (an unwrapped K loop) flattened
        stmts = list(flat.seq) if isinstance(flat, tirx.SeqStmt) else [flat]
        out, i = [], 0
        while i < len(stmts):
            region = zero_fill(stmts[i])
            j = i + 1
            while region is not None and j < len(stmts) and unrelated_copy(stmts[j], region.source):
                j += 1
            gemm = cleared(stmts[j], region) if region is not None and j < len(stmts) else None
            if gemm is None:
                out.append(stmts[i])
                i += 1
                continue
            out += [*stmts[i + 1:j], gemm]
            folds += 1
            i = j + 1
        return C.seq(out)

    body = tvm_ffi.structural_map(body, (tirx.SeqStmt, on_seq))
    return body if folds else None


def _children(stmt: Any) -> list[Any]:
    from tvm import tirx

    return list(stmt.seq) if isinstance(stmt, tirx.SeqStmt) else [stmt]


def MergeGemmKSteps(target: Any = None) -> Any:
    """The ``pre_layout`` pass (see the module docstring); does nothing on targets with a software pipeline."""
    from tilelang.transform import utils as C

    @C.prim_func_pass("cpu.merge_gemm_k_steps")
    def merge(func: Any, mod: Any, ctx: Any) -> Any:
        tgt = target if target is not None else (func.attrs.get("target") if func.attrs else None)
        if tgt is not None and C.pipeline_options(tgt).get("software_pipeline", False):
            return func
        return merge_gemm_k_steps(func, tgt)

    return merge
