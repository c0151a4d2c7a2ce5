"""`ElideTileCopies` (CPU, extension point ``pre_layout``): read and write global memory in place of staging tiles.

On a CPU a ``shared`` or ``fragment`` tile is plain memory: ``T.copy(A[tile], A_shared)`` followed by reads of
``A_shared`` only moves data. Two rewrites, each applied to one tile at a time until none applies:

* input tile: a tile whose only write is ``T.copy(P[region], tile)`` from a kernel parameter ``P`` and whose every
  other use is a read -- an element read ``tile[idx]`` anywhere, or the A operand of ``T.gemm`` (B too when the
  gemm micro-kernel packs B anyway: `tilelang_cpu.gemm_plan.packs_b`) -- is replaced by ``P`` at the region's
  corner;
* output tile: a tile whose only uses are element reads / writes followed by ``T.copy(tile, P[region])`` as its
  last use, where ``P`` is a parameter that nothing else in the kernel touches, is replaced by ``P``; so is a
  gemm accumulator whose first use is one ``T.gemm(A, B, tile, clear_accum=True)`` into the whole tile (then
  element reads / writes, e.g. an epilogue, then the copy): the gemm accumulates straight into the output. That
  is the form a K loop takes once `MergeGemmKSteps` made it one step and folded the ``T.clear`` into the gemm
  (that pass runs this one again); an accumulator still updated by several gemm steps, or cleared by a separate
  fill, keeps its tile (measured on Zen 4: C reloaded from the strided tensor each step ran 2-3 % slower than
  the compact tile and its copy; written once, the int8 GEMM at 1024^3 ran 2-3 % faster).

The copy and the tile's allocation disappear. Kept (the copy stays) whenever any of these fails:

* the parameter region is provably inside the tensor (the copy would zero-fill / skip an overhang otherwise);
* dtypes are equal (a converting copy stays);
* the copy is the tile's only write (input) / only tile operator (output), the copy region is the whole tile, and
  the copy region's extents are the tile's shape (trailing dimensions aligned, leading ones extent 1);
* input: the parameter is never written in the kernel; output: the parameter is used by nothing else;
* accumulator: it is the tile's only tile operator but the copy, and the blocks of the launch write disjoint
  parts of the parameter (each block index steps the region's corner by at least its extent in some dimension):
  the tile was private to its block, the output is shared;
* every other use of the tile sits after the copy (input) / before it (output) in the same statement sequence,
  so each read sees the copied values, and the corner expressions read no memory and use no value bound later.

Pass config ``tl.cpu.elide_copies=False`` turns the rewrite off (part of the kernel cache key, as every pass
config is).
"""

from __future__ import annotations

from typing import Any

_TILE_SCOPES = ("shared", "shared.dyn", "local.fragment")
# tile operators and the positions of the arguments they write; unknown operators count as writing everything
_WRITES = {"tl.copy": (1,), "tl.fill": (0,), "tl.gemm": (2,), "tl.reduce": (1,), "tl.cumsum": (1,),
           "tl.atomic": (0,)}


def _tile_args(call: Any) -> list[tuple[int, Any]]:
    """``(position, buffer)`` of every buffer / region / element argument of a tile-op call."""
    import tvm

    from tilelang.ir import buffer_of, is_buffer

    out = []
    for i, a in enumerate(call.args):
        if isinstance(a, (tvm.ir.TensorRegion, tvm.ir.TensorLoad)) or is_buffer(a):
            out.append((i, buffer_of(a)))
    return out


class _Uses:
    """Every use of the buffers in a statement: element loads, element stores, tile-op arguments."""

    def __init__(self, node: Any) -> None:
        import tvm
        from tvm import tirx

        from tilelang.transform import utils as C

        self.loads: dict[Any, int] = {}
        self.stores: dict[Any, int] = {}
        self.tile: dict[Any, list[tuple[str, int, bool, Any]]] = {}  # buf -> (op, position, writes, call)
        for ld in C.collect(node, tvm.ir.TensorLoad):
            self.loads[ld.source] = self.loads.get(ld.source, 0) + 1
        for st in C.collect(node, tirx.BufferStore):
            self.stores[st.buffer] = self.stores.get(st.buffer, 0) + 1
        for ev in C.collect(node, tirx.Evaluate):
            found = C.tile_op_of(ev)
            if found is None:
                continue
            name, call = found
            for pos, buf in _tile_args(call):
                writes = pos in _WRITES.get(name, range(len(call.args)))
                self.tile.setdefault(buf, []).append((name, pos, writes, call))
                # a tile-op region argument also shows up as a TensorLoad/Region node: count it once, as a tile use
                if isinstance(call.args[pos], tvm.ir.TensorLoad):
                    self.loads[buf] -= 1

        for decl in C.collect(node, tirx.DeclBuffer):  # a view of a tile (T.reshape / T.view) keeps the tile
            for src in C.collect(decl.data, tvm.ir.Var, tirx.is_buffer_var):
                self.tile.setdefault(src, []).append(("view", -1, True, decl))

    def count(self, buf: Any) -> int:
        return self.loads.get(buf, 0) + self.stores.get(buf, 0) + len(self.tile.get(buf, []))

    def written(self, buf: Any) -> bool:
        return self.stores.get(buf, 0) > 0 or any(w for _, _, w, _ in self.tile.get(buf, []))


def _analyzer(func: Any) -> Any:
    import tvm
    from tvm import tirx

    from tilelang.transform import utils as C

    ana = tvm.sym.Analyzer()
    for var, extent in C.launch_extents(func).values():
        ana.bind(var, tvm.ir.Range.from_min_extent(0, extent))
    for loop in C.collect(func.body, tirx.For):
        ana.bind(loop.loop_var, tvm.ir.Range.from_min_extent(loop.min, loop.extent))
    return ana


def _aligned(region: Any, tile: Any) -> bool:
    """Whether `region`'s extents are `tile`'s shape on the trailing dimensions and 1 on the leading ones."""
    from tilelang.transform import utils as C

    shape = [C.as_int(s) for s in tile.ty.shape]
    ranges = list(region.region)
    if len(ranges) < len(shape) or any(s is None for s in shape):
        return False
    lead = len(ranges) - len(shape)
    return (all(C.is_const(r.extent, 1) for r in ranges[:lead])
            and all(C.as_int(r.extent) == s for r, s in zip(ranges[lead:], shape)))


def _in_bounds(region: Any, ana: Any) -> bool:
    import tvm

    from tilelang.transform import utils as C

    if C.collect(region.region, tvm.ir.TensorLoad):
        return False  # corner read from memory: it could change between the copy and the uses
    return all(ana.can_prove(r.min >= 0) and ana.can_prove(r.min + r.extent <= s)
               for r, s in zip(region.region, region.source.ty.shape))


def _full(region: Any) -> bool:
    from tilelang.transform import utils as C

    return all(C.is_const(r.min, 0) and C.as_int(r.extent) == C.as_int(s)
               for r, s in zip(region.region, region.source.ty.shape))


def _mapper(region: Any) -> Any:
    """``indices of the tile -> indices of region.source`` (trailing dimensions aligned)."""
    from tilelang.transform import utils as C

    mins = [r.min for r in region.region]

    def index(indices: Any) -> list[Any]:
        lead = len(mins) - len(indices)
        return [*mins[:lead], *(C.add(m, i) for m, i in zip(mins[lead:], indices))]

    return index


def _remap_region(tile_region: Any, region: Any) -> Any:
    """A region of the tile as the same region of `region.source`."""
    import tvm
    from tvm import tirx

    from tilelang.transform import utils as C

    mins = [r.min for r in region.region]
    lead = len(mins) - len(tile_region.region)
    ranges = [tvm.ir.Range.from_min_extent(m, 1) for m in mins[:lead]]
    ranges += [tvm.ir.Range.from_min_extent(C.add(m, r.min), r.extent)
               for m, r in zip(mins[lead:], tile_region.region)]
    return tirx.BufferRegion(region.source, ranges)


def _gemm_reads_in_place(call: Any, pos: int, isa: Any) -> bool:
    """Whether `pos` of a gemm call is an operand that may be read in place from global memory.

    A is: the micro-kernel reads one scalar per row and k (or packs A itself). B only when the micro-kernel
    packs B into panels on `isa` (`tilelang_cpu.gemm_plan.packs_b`): otherwise B is read a K x NR panel at a
    time, and its rows in a large tensor are far apart (one 4 KiB-aliased row per k), which the compact copy
    avoids.
    """
    from tilelang.ir import buffer_of
    from tilelang.transform import utils as C
    from tilelang_cpu.gemm_plan import packs_b

    if pos == 0:
        return True
    if pos == 1:
        trans_b = C.as_int(call.args[4]) if len(call.args) > 4 else 0
        return packs_b(isa, bool(trans_b), str(buffer_of(call.args[1]).ty.dtype))
    return False


def _find(func: Any, params: set[Any], tiles: set[Any], isa: Any,
          accumulators_only: bool = False) -> tuple[Any, ...] | None:
    """The first elidable ``(kind, seq, index, tile, param region)`` (only gemm accumulators when
    `accumulators_only`), or None."""
    from tvm import tirx

    from tilelang.ir import region_extents, to_region
    from tilelang.transform import utils as C

    uses = _Uses(func.body)
    ana = None
    for seq in C.collect(func.body, tirx.SeqStmt):
        stmts = list(seq.seq)
        for c, stmt in enumerate(stmts):
            found = C.tile_op_of(stmt)
            if found is None or found[0] != "tl.copy" or len(found[1].args) < 2:
                continue
            args = list(found[1].args)
            dst = to_region(args[1])
            src = to_region(args[0], region_extents(dst))
            if dst.source in tiles and src.source in params:
                kind, tile, glob = "input", dst.source, src
                tile_region = dst
            elif src.source in tiles and dst.source in params:
                dst = to_region(args[1], region_extents(src))
                kind, tile, glob = "output", src.source, dst
                tile_region = src
            else:
                continue
            if accumulators_only and (kind == "input" or not any(
                    name == "tl.gemm" for name, _, _, _ in uses.tile.get(tile, []))):
                continue
            if (str(tile.ty.dtype) != str(glob.source.ty.dtype) or not _full(tile_region)
                    or not _aligned(glob, tile)):
                continue
            ana = ana or _analyzer(func)
            if not _in_bounds(glob, ana):
                continue
            if kind == "input":
                ok = _input_ok(uses, stmts, c, tile, glob, isa)
            else:
                ok = _output_ok(uses, stmts, c, tile, glob, func, ana)
            if ok:
                return kind, seq, c, tile, glob
    return None


def _input_ok(uses: _Uses, stmts: list[Any], c: int, tile: Any, glob: Any, isa: Any) -> bool:
    from tilelang.transform import utils as C

    if uses.written(glob.source) or uses.stores.get(tile, 0):
        return False
    tile_uses = uses.tile.get(tile, [])
    if sum(1 for _, _, w, _ in tile_uses if w) != 1:  # the copy itself
        return False
    for name, pos, writes, call in tile_uses:
        if not writes and not (name == "tl.gemm" and _gemm_reads_in_place(call, pos, isa)):
            return False
    after = _Uses(C.seq(stmts[c + 1:])) if c + 1 < len(stmts) else None
    return uses.count(tile) == 1 + (after.count(tile) if after else 0)


def _output_ok(uses: _Uses, stmts: list[Any], c: int, tile: Any, glob: Any, func: Any, ana: Any) -> bool:
    from tvm import tirx

    from tilelang.transform import utils as C

    if uses.count(glob.source) != 1:  # the copy is the only use of the parameter
        return False
    copy = C.tile_op_of(stmts[c])[1]
    ops = [call for _, _, _, call in uses.tile.get(tile, []) if not call.same_as(copy)]
    before = [_Uses(s).count(tile) for s in stmts[:c]]
    if uses.count(tile) != 1 + sum(before):
        return False
    first = next((i for i, n in enumerate(before) if n), c)
    if ops and not (len(ops) == 1 and _clearing_gemm(stmts[first], tile) and _disjoint_blocks(glob, func, ana)):
        return False
    bound_later = [s.var for s in stmts[first:c] if isinstance(s, tirx.Bind)]
    return not C.uses_var(glob.region, bound_later)


def _clearing_gemm(stmt: Any, tile: Any) -> bool:
    """Whether `stmt` is a ``T.gemm(A, B, tile, clear_accum=True)`` into the whole of `tile`, A and B elsewhere."""
    from tilelang.ir import to_region
    from tilelang.transform import utils as C

    found = C.tile_op_of(stmt)
    if found is None or found[0] != "tl.gemm" or len(found[1].args) < 7 or not C.as_int(found[1].args[6]):
        return False
    a, b, acc = (to_region(x) for x in list(found[1].args)[:3])
    return acc.source.same_as(tile) and _full(acc) and not (a.source.same_as(tile) or b.source.same_as(tile))


def _disjoint_blocks(glob: Any, func: Any, ana: Any) -> bool:
    """Whether blocks of the launch write disjoint parts of `glob`: for every block index of more than one value,
    some dimension of the region starts at ``index * step + c`` (nothing else varying) with ``|step|`` at least
    the region's extent there. Blocks run concurrently, and an accumulator updated in place must be private."""
    import tvm

    from tilelang.transform import utils as C

    for tag in C.BLOCK_TAGS:
        var, extent = C.launch_extents(func).get(tag, (None, 1))
        if var is None or C.is_const(extent, 1):
            continue
        if not any(_steps_over(r, var, ana) for r in glob.region):
            return False
    others = [v for tag, (v, _) in C.launch_extents(func).items() if tag not in C.BLOCK_TAGS]
    return not C.collect(glob.region, tvm.ir.TensorLoad) and not C.uses_var(glob.region, others)


def _steps_over(r: Any, var: Any, ana: Any) -> bool:
    import tvm

    from tilelang.transform import utils as C

    if any(not v.same_as(var) for v in C.collect(r.min, tvm.ir.Var)):
        return False
    step = C.as_int(ana.simplify(C.substitute(r.min, {var: var + 1}) - r.min))
    extent = C.as_int(r.extent)
    return step is not None and extent is not None and abs(step) >= extent


def _rewrite(func: Any, kind: str, seq: Any, c: int, tile: Any, glob: Any) -> Any:
    import tvm
    import tvm_ffi
    from tvm import tirx

    from tilelang.ir import to_region
    from tilelang.transform import utils as C

    copy = seq.seq[c]
    index = _mapper(glob)
    param = glob.source

    def on_eval(ev: Any) -> Any:
        if ev.same_as(copy):
            return tirx.Evaluate(0)
        found = C.tile_op_of(ev)
        if found is None or not any(b.same_as(tile) for _, b in _tile_args(found[1])):
            return ev
        at = {i for i, b in _tile_args(found[1]) if b.same_as(tile)}
        args = [_remap_region(to_region(a), glob) if i in at else a for i, a in enumerate(found[1].args)]
        return tirx.Evaluate(tvm.ir.Call(found[1].op, args, ret_ty="void"))

    # the copy and the tile-op operands first: their region nodes are loads of the tile too
    body = tvm_ffi.structural_map(func.body, (tirx.Evaluate, on_eval))
    body = tvm_ffi.structural_map(body, [
        (tvm.ir.TensorLoad, lambda ld: tirx.BufferLoad(param, index(list(ld.indices))) if ld.source.same_as(tile)
         else ld),
        (tirx.BufferStore, lambda st: tirx.BufferStore(param, st.value, index(list(st.indices)))
         if st.buffer.same_as(tile) else st),
    ])
    body = tvm_ffi.structural_map(body, (tirx.AllocBuffer, lambda a: tirx.Evaluate(0) if a.buffer.same_as(tile)
                                         else a))
    return C.with_body(func, body)


def elide_tile_copies(func: Any, target: Any = None, accumulators_only: bool = False) -> Any:
    """Apply the rewrites of the module docstring to a tile-level PrimFunc until none applies (only to gemm
    accumulators when `accumulators_only`); `target` (default: the function's, else this machine's CPU) decides
    whether the gemm micro-kernel packs B."""
    from tvm import tirx

    from tilelang.transform import utils as C
    from tilelang_cpu.gemm_plan import ELIDE_COPIES, check_configs, config
    from tilelang_cpu.isa import vector_isa

    check_configs()
    if not config(ELIDE_COPIES, True):
        return func
    if target is None:
        target = (func.attrs.get("target") if func.attrs else None) or {"kind": "llvm"}
    isa = vector_isa(target)
    params = {p for p in func.params if tirx.is_buffer_var(p)}
    for _ in range(len(C.allocations(func.body))):
        tiles = {a.buffer for a in C.allocations(func.body) if C.scope_of(a.buffer) in _TILE_SCOPES}
        found = _find(func, params, tiles, isa, accumulators_only)
        if found is None:
            break
        func = _rewrite(func, *found)
    return func


def ElideTileCopies(target: Any = None) -> Any:
    """The ``pre_layout`` pass (see the module docstring)."""
    from tilelang.transform import utils as C

    @C.prim_func_pass("cpu.elide_tile_copies")
    def elide(func: Any, mod: Any, ctx: Any) -> Any:
        return elide_tile_copies(func, target)

    return elide
