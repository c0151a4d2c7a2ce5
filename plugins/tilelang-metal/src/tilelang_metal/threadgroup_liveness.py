"""Liveness planning of a kernel's threadgroup tiles: which tiles may share storage, at which offsets, and where
a reuse needs a barrier.

Statements are numbered in program order (a loop header, then its body; an ``if`` or ``while`` is one position).
A tile's live interval runs from its first to its last access, widened until it respects loops:

- a tile used both inside and outside a loop is live across the whole loop;
- a tile used only inside a loop is live across the whole loop unless every iteration starts by overwriting it:
  the first statement of the loop body that touches it must be a plain store nest (no reads of the tile, no
  conditions) whose indices, over its loops and the block's threads, cover every element exactly once (checked
  with TVM's iter-map analysis). Anything it cannot prove keeps the tile live across the loop.

Tiles whose intervals overlap get disjoint bytes; the others are placed first-fit (largest first) at 16-byte
aligned offsets. When a tile takes bytes another tile used earlier (or later in the same loop: the next
iteration's write follows this iteration's reads), a threadgroup barrier goes before the statement of its
innermost loop body holding its first access, unless that body already has one between the two.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import tvm
import tvm.sym
from tvm import tirx

from tilelang.transform import utils as C

ALIGN = 16


@dataclass
class Scope:
    """The kernel body or one loop: its position span and its body's statements with their spans."""

    node: Any
    start: int
    end: int
    children: list[tuple[Any, int, int]] = field(default_factory=list)


@dataclass
class Plan:
    """`offsets` (bytes) and live intervals per live range's var, `total` bytes, the statements that need a
    threadgroup barrier before them, the kernel-level statements whose tile vars a later live range renames, and
    the new ranges' allocations (and views) to place after their tile's allocation."""

    offsets: dict[Any, int]
    total: int
    intervals: dict[Any, tuple[int, int] | None]
    barriers_before: list[Any]
    renames: list[tuple[Any, dict[Any, Any]]] = field(default_factory=list)
    declared: list[tuple[Any, list[Any]]] = field(default_factory=list)


def _is_sync(stmt: Any) -> bool:
    return (isinstance(stmt, tirx.Evaluate) and isinstance(stmt.value, tvm.ir.Call)
            and isinstance(stmt.value.op, tvm.ir.Op) and stmt.value.op.name == "tirx.tvm_storage_sync")


def barrier() -> Any:
    """``tvm_storage_sync("shared")``: a threadgroup barrier."""
    return tirx.Evaluate(tirx.call_intrin("int32", "tirx.tvm_storage_sync", "shared"))


class _Walk:
    """Program-order positions of every access to the tiles, the loops' spans, and the block's threads."""

    def __init__(self, body: Any, tiles: list[Any]):
        self.root_of: dict[Any, Any] = {t: t for t in tiles}
        self.uses: dict[Any, list[int]] = {t: [] for t in tiles}
        self.pinned: set[Any] = set()  # tiles reached through a value derived from several: live throughout
        self.bound: set[Any] = set()  # tiles with a pointer bound to them (kept in one live range)
        self.declared_at: dict[Any, int] = {}
        self.threads: dict[Any, Any] = {}
        self.loops: list[Scope] = []
        self.pos = 0
        children = self._children(body)
        self.root = Scope(None, 0, self.pos - 1, children)

    def _roots_in(self, node: Any) -> set[Any]:
        found: set[Any] = set()

        def on_var(v: Any) -> None:
            root = self.root_of.get(v)
            if root is not None:
                found.add(root)

        C.walk(node, [(tvm.ir.Var, on_var)])
        return found

    def _touch(self, node: Any) -> None:
        for root in self._roots_in(node):
            self.uses[root].append(self.pos)
        self.pos += 1

    def _children(self, body: Any) -> list[tuple[Any, int, int]]:
        out: list[tuple[Any, int, int]] = []
        for stmt in self._flat(body):
            first = self.pos
            self._visit(stmt)
            out.append((stmt, first, self.pos - 1))
        return out

    def _flat(self, body: Any) -> list[Any]:
        if isinstance(body, tirx.SeqStmt):
            return [s for part in body.seq for s in self._flat(part)]
        if isinstance(body, tirx.AttrStmt):
            if body.attr_key == "thread_extent" and isinstance(body.node, tirx.IterVar):
                self.threads[body.node.var] = body.node.dom
            return self._flat(body.body)
        return [body]

    def _visit(self, stmt: Any) -> None:
        if isinstance(stmt, tirx.For):
            start = self.pos
            self._touch(stmt.min + stmt.extent)  # the header: its bounds are read once, at entry
            scope = Scope(stmt, start, 0)
            scope.children = self._children(stmt.body)
            scope.end = self.pos - 1
            self.loops.append(scope)
        elif isinstance(stmt, tirx.DeclBuffer):
            roots = self._roots_in(stmt.data) if stmt.data is not None else set()
            if len(roots) == 1:
                self.root_of[stmt.buffer] = roots.pop()
                self.declared_at[stmt.buffer] = self.pos
        elif isinstance(stmt, tirx.Bind):
            roots = self._roots_in(stmt.value)
            if len(roots) == 1:  # a pointer (or value) derived from a tile: its later uses are uses of the tile
                self.root_of[stmt.var] = next(iter(roots))
                self.bound |= roots
            elif roots:
                self.pinned |= roots
            self._touch(stmt.value)
        elif isinstance(stmt, tirx.AllocBuffer):
            return
        else:
            self._touch(stmt)


def _covers(walk: _Walk, stmt: Any, tile: Any, tile_bytes: int) -> bool:
    """Whether `stmt` is a plain store nest writing every byte of `tile` exactly once (and reading none)."""
    loops = []
    while True:
        if isinstance(stmt, tirx.For):
            loops.append(stmt)
            stmt = stmt.body
        elif isinstance(stmt, tirx.SeqStmt):
            rest = [s for s in stmt.seq if not isinstance(s, tirx.DeclBuffer)]  # views (the walk knows them)
            if len(rest) != 1:
                return False
            stmt = rest[0]
        else:
            break
    if not isinstance(stmt, tirx.BufferStore) or walk.root_of.get(stmt.buffer) is not tile:
        return False
    if len(stmt.indices) != 1 or tile in walk._roots_in(stmt.value):
        return False
    if any(tile in walk._roots_in(lp.min + lp.extent) for lp in loops):
        return False
    index = stmt.indices[0]
    dom = {lp.loop_var: tvm.ir.Range.from_min_extent(lp.min, lp.extent) for lp in loops}
    dom.update(walk.threads)
    if isinstance(index, tirx.Ramp):
        lane = tirx.Var("lane", "int32")
        dom[lane] = tvm.ir.Range.from_min_extent(0, index.lanes)
        index = index.base + index.stride * lane
    if tile in walk._roots_in(index):
        return False
    used = {v: r for v, r in dom.items() if C.uses_var(index, [v])}
    count = 1
    for r in used.values():
        extent = C.as_int(r.extent)
        if extent is None:
            return False
        count *= extent
    n = C.num_elements(stmt.buffer.ty.shape)
    dt = tvm.DataType(str(stmt.buffer.ty.dtype))
    if n is None or count != n or n * dt.bits * int(dt.lanes) // 8 != tile_bytes:
        return False
    analyzer = tvm.sym.Analyzer()
    for v, r in used.items():
        analyzer.bind(v, r)
    bound = analyzer.const_int_bound(index)
    if bound.min_value != 0 or bound.max_value != n - 1:
        return False
    result = tvm.sym.detect_iter_map([index], used, check_level="bijective", analyzer=analyzer)
    return len(result.indices) == 1


def _interval(walk: _Walk, tile: Any, uses: list[int], nbytes: int) -> tuple[int, int] | None:
    """The live interval of `tile` over `uses` (positions), widened to respect loops (see the module docstring)."""
    if tile in walk.pinned:
        return walk.root.start, walk.root.end
    if not uses:
        return None
    lo, hi = min(uses), max(uses)
    changed = True
    while changed:  # used inside and outside a loop: live across all of it
        changed = False
        for lp in walk.loops:
            if lo < lp.start <= hi < lp.end or lp.start < lo <= lp.end < hi:
                lo, hi, changed = min(lo, lp.start), max(hi, lp.end), True
    for lp in sorted((lp for lp in walk.loops if lp.start <= lo and hi <= lp.end), key=lambda s: s.end - s.start):
        if (lo, hi) == (lp.start, lp.end):
            continue
        first = next(c for c, a, b in lp.children if any(a <= u <= b for u in uses))
        if _covers(walk, first, tile, nbytes):
            break  # overwritten before use in every iteration (so in every iteration of the outer loops too)
        lo, hi = lp.start, lp.end  # carried across iterations
    return lo, hi


def _innermost(walk: _Walk, lo: int, hi: int) -> Scope:
    inside = [lp for lp in walk.loops if lp.start < lo and hi <= lp.end]
    return min(inside, key=lambda s: s.end - s.start) if inside else walk.root


@dataclass
class _Range:
    """One live range of a tile: the var that names it (the tile's own for its first range), its uses, and the
    kernel-level statements it spans (``[first, last)`` indices into the kernel body)."""

    tile: Any
    var: Any
    uses: list[int]
    first: int
    last: int
    interval: tuple[int, int] | None = None


def _ranges(walk: _Walk, tile: Any, nbytes: int) -> list[_Range]:
    """`tile`'s live ranges: a kernel-level statement that overwrites all of it (with no reads) starts a new one,
    as when TVM's StorageRewrite gave a tile's bytes to a later tile (a flash attention's output staged in the K
    tile's storage after the loop)."""
    kids = walk.root.children
    uses = walk.uses[tile]
    cuts = [n for n, (c, a, b) in enumerate(kids)
            if any(a <= u <= b for u in uses) and _covers(walk, c, tile, nbytes)]
    if tile in walk.bound:
        cuts = []
    bounds = [0, *[n for n in cuts if any(u < kids[n][1] for u in uses)], len(kids)]
    out = []
    for i in range(len(bounds) - 1):
        lo = kids[bounds[i]][1] if bounds[i] < len(kids) else walk.pos
        hi = kids[bounds[i + 1]][1] if bounds[i + 1] < len(kids) else walk.pos
        var = tile if i == 0 else tirx.decl_buffer(list(tile.ty.shape), str(tile.ty.dtype),
                                                    name=f"{tile.name}_{i}", scope=C.scope_of(tile))
        out.append(_Range(tile, var, [u for u in uses if lo <= u < hi], bounds[i], bounds[i + 1]))
    return out


def plan(body: Any, tiles: list[Any], sizes: dict[Any, int]) -> Plan:
    """The liveness plan of `tiles` (vars of threadgroup allocations, `sizes` in bytes) in `body`."""
    walk = _Walk(body, tiles)
    ranges = [r for t in tiles for r in _ranges(walk, t, sizes[t])]
    for r in ranges:
        r.interval = _interval(walk, r.tile, r.uses, sizes[r.tile])

    def overlap(a: tuple[int, int] | None, b: tuple[int, int] | None) -> bool:
        return a is not None and b is not None and not (a[1] < b[0] or b[1] < a[0])

    offsets: dict[Any, int] = {}
    size = {r.var: sizes[r.tile] for r in ranges}
    placed: list[_Range] = []
    for r in sorted(ranges, key=lambda r: -sizes[r.tile]):  # stable: declaration order among equal sizes
        busy = sorted((offsets[o.var], offsets[o.var] + size[o.var]) for o in placed if overlap(o.interval, r.interval))
        off = 0
        for start, end in busy:
            if off + size[r.var] <= start:
                break
            off = max(off, (end + ALIGN - 1) // ALIGN * ALIGN)
        offsets[r.var] = off
        placed.append(r)
    total = max((offsets[v] + size[v] for v in offsets), default=0)
    total = (total + ALIGN - 1) // ALIGN * ALIGN

    barriers: list[Any] = []
    for r in ranges:
        iv = r.interval
        if iv is None:
            continue
        scope = _innermost(walk, iv[0], iv[1])
        idx = next(n for n, (_, a, b) in enumerate(scope.children) if a <= iv[0] <= b)
        need = False
        for o in ranges:
            ov = o.interval
            if o.tile is r.tile or ov is None or not (offsets[o.var] < offsets[r.var] + size[r.var]
                                                      and offsets[r.var] < offsets[o.var] + size[o.var]):
                continue  # (a tile's own ranges were synchronised as one buffer)
            if ov[1] < iv[0]:  # used before: a barrier between its last use and this range's first
                after = [n for n, (_, a, b) in enumerate(scope.children) if a <= ov[1] <= b]
                start = after[0] + 1 if after else 0
            elif any(lp.start <= min(iv[0], ov[0]) and max(iv[1], ov[1]) <= lp.end for lp in walk.loops):
                start = 0  # used later in a common loop: the next iteration's first use follows its last
            else:
                continue
            if not any(_is_sync(c) for c, _, _ in scope.children[start:idx]):
                need = True
        if need and not any(scope.children[idx][0].same_as(b) for b in barriers):
            barriers.append(scope.children[idx][0])

    renames: list[tuple[Any, dict[Any, Any]]] = []
    declared: list[tuple[Any, list[Any]]] = []  # (tile, statements to declare after its allocation)
    for r in ranges:
        if r.var is r.tile:
            continue
        kids = [c for c, _, _ in walk.root.children[r.first:r.last]]
        vmap = {r.tile: r.var}
        decls = []
        for alias, root in walk.root_of.items():  # views declared before this range and used in it
            if root is r.tile and alias is not r.tile and walk.declared_at.get(alias, walk.pos) < \
                    walk.root.children[r.first][1] and C.uses_var(tirx.SeqStmt(kids) if len(kids) > 1 else kids[0],
                                                                   [alias]):
                view = tirx.decl_buffer(list(alias.ty.shape), str(alias.ty.dtype), name=f"{alias.name}_{r.var.name}",
                                        scope=C.scope_of(alias))
                vmap[alias] = view
                decls.append(tirx.DeclBuffer(view, data=r.var.data))
        declared.append((r.tile, [tirx.AllocBuffer(r.var), *decls]))
        renames += [(c, vmap) for c in kids]
    return Plan(offsets, total, {r.var: r.interval for r in ranges}, barriers, renames, declared)


def rewrite(body: Any, layout: Plan) -> Any:
    """`body` with a threadgroup barrier before each statement of ``layout.barriers_before`` and the later live
    ranges' statements renamed."""
    if not layout.barriers_before and not layout.renames:
        return body
    import tvm_ffi

    def on_stmt(stmt: Any, mutator: Any) -> Any:
        new = mutator.default_mutate(stmt)
        for old, vmap in layout.renames:
            if stmt.same_as(old):
                new = C.substitute(new, vmap)
        if any(stmt.same_as(b) for b in layout.barriers_before):
            return tirx.SeqStmt([barrier(), new])
        return new

    def on_seq(stmt: Any, mutator: Any) -> Any:
        return C.seq([mutator.mutate(s) for s in stmt.seq])

    return tvm_ffi.structural_mutate(body, [(tirx.SeqStmt, on_seq), (tirx.Stmt, on_stmt)])
