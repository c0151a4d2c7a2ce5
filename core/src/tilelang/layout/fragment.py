"""`Fragment`: how the elements of a register tile are spread over the threads of a block.

A fragment maps each logical index to ``(thread, local index)``: ``forward_thread`` says which thread holds the
element, the forward index where it sits in that thread's registers. With ``replicate = R > 1`` every element
lives in R threads; the thread expression then also depends on the replication placeholder ``_rep`` (0..R-1).
When no index function is given, the local index numbers the parts of the input indices that the thread
expression does not use (the reference's inference).

`CyclicFragment` is the distribution the pipeline's LayoutInference picks for a ``local.fragment`` tile
(element ``f`` on thread ``f % T``, or runs of V elements with vector lanes); `as_fragment` gives its
`Fragment` form.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from tilelang.layout.indexing import (
    analyzer_for,
    as_expr,
    const_int,
    evaluate_index,
    input_placeholder,
    linearize,
    replication_placeholder,
    simplify,
    substitute,
    unravel,
)
from tilelang.layout.layout import (
    Layout,
    _check_same_size,
    _check_shape,
    _extents,
    _index_list,
    _numeric,
    _provably_equal,
    _same_exprs,
)

__all__ = ["CyclicFragment", "Fragment", "fragment_vector_lanes", "make_fully_replicated_layout_fragment"]


class Fragment(Layout):
    """A thread distribution of a tile of logical shape `shape` (see the module docstring).

    Give either ``forward_fn(*vars[, rep]) -> (thread, index)`` or ``forward_thread_fn(*vars[, rep]) -> thread``
    with an optional ``forward_index_fn(*vars) -> index``; `replicate` copies of every element.
    """

    kind = "fragment"

    def __init__(self, shape: Sequence[Any], forward_fn: Callable[..., Any] | None = None,
                 forward_thread_fn: Callable[..., Any] | None = None, replicate: int = 1,
                 forward_index_fn: Callable[..., Any] | None = None):
        shape = _check_shape(shape)
        rep_extent = _check_replicate(replicate)
        vars_ = [input_placeholder(k) for k in range(len(shape))]
        rep = replication_placeholder() if const_int(rep_extent) != 1 else None
        extra = [rep] if rep is not None else []
        if forward_fn is not None:
            out = forward_fn(*vars_, *extra)
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                raise TypeError("Fragment forward_fn must return a pair (forward_thread, forward_index)")
            thread, index = out
        else:
            if forward_thread_fn is None:
                raise TypeError("Fragment needs forward_fn or forward_thread_fn")
            index = forward_index_fn(*vars_) if forward_index_fn is not None else None
            thread = forward_thread_fn(*vars_, *extra)
        index_list = _index_list(index, "forward_index_fn") if index is not None else None
        (thread_expr,) = _index_list(thread, "forward_thread_fn")
        self._init_fragment(shape, index_list, thread_expr, rep_extent)

    def _init_fragment(self, shape: list[Any], index: list[Any] | None, thread: Any, replicate: Any) -> None:
        self.replicate_size = replicate
        ranges = {input_placeholder(k): s for k, s in enumerate(shape)}
        if const_int(replicate) != 1:
            ranges[replication_placeholder()] = replicate
        self._thread = simplify(as_expr(thread), analyzer_for(ranges))
        if index is None or len(index) == 0:
            index = [_unused_index(self._thread, ranges, [input_placeholder(k) for k in range(len(shape))])]
        self._thread_size: Any = None
        self._init(shape, index)

    @classmethod
    def _of_fragment(cls, shape: Sequence[Any], index: Sequence[Any] | None, thread: Any,
                     replicate: Any = 1) -> Fragment:
        out = Fragment.__new__(Fragment)
        out._init_fragment(_check_shape(shape), list(index) if index is not None else None, thread, replicate)
        return out

    def _full_ranges(self) -> dict[Any, Any]:
        ranges = self._var_ranges()
        if const_int(self.replicate_size) != 1:
            ranges[replication_placeholder()] = self.replicate_size
        return ranges

    # ------------------------------------------------------------------------------------------ accessors
    @property
    def thread(self) -> Any:
        """The thread expression, over the input placeholders (and ``_rep`` when replicated)."""
        return self._thread

    @property
    def forward_thread(self) -> Any:
        return self._thread

    def get_forward_thread(self) -> Any:
        return self._thread

    def get_thread_size(self) -> Any:
        """Threads the fragment spans: the largest thread index plus one."""
        if self._thread_size is None:
            ranges = self._full_ranges()
            (self._thread_size,) = _extents([self._thread], ranges, [*self.shape, self.replicate_size])
        return self._thread_size

    def get_replicate_size(self) -> Any:
        return self.replicate_size

    def map_forward_thread(self, indices: Sequence[Any], rep: Any = None) -> Any:
        """The thread holding the element at `indices` (replica `rep`; left symbolic as ``_rep`` when None)."""
        import tvm

        indices = list(indices)
        if len(indices) != len(self.shape):
            raise ValueError(f"fragment over {len(self.shape)} dims applied to {len(indices)} indices")
        env: dict[Any, Any] = dict(zip(self.forward_vars, indices))
        if rep is not None:
            env[replication_placeholder()] = rep
        if _numeric(list(env.values())) and (rep is not None or const_int(self.replicate_size) == 1):
            return evaluate_index(self._thread, env)
        return simplify(as_expr(evaluate_index(self._thread, env, keep_unbound=True)), tvm.sym.Analyzer())

    # ------------------------------------------------------------------------------------------ algebra
    def repeat(self, repeats: Any, repeat_on_thread: bool = False, lower_dim_first: bool = True) -> Fragment:
        """Tile the fragment ``repeats[d]`` times along every input dim: the copies go to new registers (or,
        with `repeat_on_thread`, to new threads). `lower_dim_first` makes the last dim's copy index fastest."""
        if isinstance(repeats, int):
            repeats = [repeats] + [1] * (len(self.shape) - 1) if self.shape else [repeats]
        repeats = list(repeats)
        if len(repeats) != len(self.shape):
            raise ValueError(f"repeats needs one factor per input dim ({len(self.shape)}), got {repeats}")
        for r in repeats:
            if const_int(r) is not None and const_int(r) < 1:
                raise ValueError(f"repeat factors must be >= 1, got {repeats}")
        wrap = {v: v % s for v, s in zip(self.forward_vars, self.shape)}
        order = range(len(self.shape) - 1, -1, -1) if lower_dim_first else range(len(self.shape))
        copy: Any = 0
        stride: Any = 1
        for d in order:
            copy = copy + stride * (input_placeholder(d) // self.shape[d])
            stride = stride * repeats[d]
        shape = [s * r for s, r in zip(self.shape, repeats)]
        index = [substitute(e, wrap) for e in self._index]
        thread = substitute(self._thread, wrap)
        if repeat_on_thread:
            thread = thread + self.get_thread_size() * copy
        else:
            if len(index) != 1:
                raise ValueError("repeating a fragment over registers needs a 1-d forward index")
            index = [index[0] + self.get_output_shape()[0] * copy]
        return Fragment._of_fragment(shape, index, thread, self.replicate_size)

    def replicate(self, replicate: int) -> Fragment:
        """Hold every element in `replicate` times as many threads (the copies on new thread ranges)."""
        if isinstance(replicate, bool) or not isinstance(replicate, int) or replicate < 1:
            raise ValueError(f"replicate must be a positive int, got {replicate!r}")
        rep = replication_placeholder()
        old = self.replicate_size
        thread = substitute(self._thread, {rep: rep % old}) + self.get_thread_size() * (rep // old)
        return Fragment._of_fragment(self.shape, self._index, thread, old * replicate)

    def condense_rep_var(self) -> Fragment:
        """Drop the parts of the replication index that the thread expression does not use (they only
        duplicated threads): the replicate extent shrinks to the parts that pick distinct threads."""
        rep_extent = const_int(self.replicate_size)
        if rep_extent == 1:
            return self
        rep = replication_placeholder()
        splits = _split_usage(self._thread, self._full_ranges())
        if splits is None or rep_extent is None:
            return self
        used = sorted(splits.get(rep, []))
        if not used:
            return Fragment._of_fragment(self.shape, self._index, substitute(self._thread, {rep: 0}), 1)
        size = math.prod(ext for _, ext in used)
        if size == rep_extent:
            return self
        new_rep: Any = 0
        place = 1
        for lf, ext in used:  # rep' enumerates the used digits of rep, lowest first
            new_rep = new_rep + (rep // place % ext) * lf
            place *= ext
        return Fragment._of_fragment(self.shape, self._index, substitute(self._thread, {rep: new_rep}), size)

    def expand(self, leading_shape: Any) -> Fragment:
        base = Layout.expand(self, leading_shape)
        if base is self:
            return self
        n = len(base.shape) - len(self.shape)
        shift = {input_placeholder(k): input_placeholder(k + n) for k in range(len(self.shape))}
        lead = linearize([input_placeholder(k) for k in range(n)], base.shape[:n])
        index = [substitute(e, shift) for e in self._index]
        out_size = self.get_output_shape()[0] if len(index) == 1 else None
        if out_size is None:
            raise ValueError("expanding a fragment needs a 1-d forward index")
        return Fragment._of_fragment(base.shape, [lead * out_size + index[0]], substitute(self._thread, shift),
                                     self.replicate_size)

    def reshape(self, shape: Sequence[Any], rescale_num: int = 1, rescale_den: int = 1) -> Fragment:
        new_shape = _check_shape(shape, "new shape")
        num, den = int(rescale_num), int(rescale_den)
        g = math.gcd(num, den)
        num, den = num // g, den // g
        if num == den == 1 and [const_int(s) for s in new_shape] == [const_int(s) for s in self.shape] \
                and None not in [const_int(s) for s in new_shape]:
            return self
        _check_same_size(self.shape, new_shape, num, den)
        flat = linearize([input_placeholder(k) for k in range(len(new_shape))], new_shape)
        index = self._reindexed(flat, num, den)
        old_flat = flat // den if num == 1 else flat * num
        thread = substitute(self._thread, dict(zip(self.forward_vars, unravel(old_flat, self.shape))))
        return Fragment._of_fragment(new_shape, index, thread, self.replicate_size)

    def inverse(self) -> Layout:
        """``(*index, thread) -> input index`` for a bijective, unreplicated affine fragment."""
        if const_int(self.replicate_size) != 1:
            raise ValueError(f"{self!r} is replicated: its inverse is not a function")
        both = Layout._of(self.shape, [*self._index, self._thread])
        return both.inverse()

    def is_equal(self, other: Layout) -> bool:
        if not isinstance(other, Fragment):
            return False
        if not _same_exprs(self.shape, other.shape) or not _same_exprs([self.replicate_size],
                                                                         [other.replicate_size]):
            return False
        if len(self._index) != len(other._index):
            return False
        if not _same_exprs(self.get_output_shape(), other.get_output_shape()):
            return False
        if not _same_exprs([self.get_thread_size()], [other.get_thread_size()]):
            return False
        ranges = self._full_ranges()
        return _provably_equal([*self._index, self._thread], [*other._index, other._thread], ranges)

    # ------------------------------------------------------------------------------------------ IR form
    def to_ir(self) -> dict[str, Any]:
        from tvm import tirx

        vars_ = self.forward_vars
        rep = [replication_placeholder()] if const_int(self.replicate_size) != 1 else []
        return {"kind": self.kind, "shape": [const_int(s) if const_int(s) is not None else s for s in self.shape],
                "index_map": tirx.IndexMap(vars_, [as_expr(e) for e in self._index], None),
                "thread_map": tirx.IndexMap(vars_ + rep, [as_expr(self._thread)], None),
                "replicate": self.replicate_size}

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({list(self.shape)} -> {self.get_output_shape()}, replicate: "
                f"{self.replicate_size}, thread: {self.get_thread_size()}, forward_thread: {self._thread}, "
                f"forward_index: {self._index})")


def _check_replicate(replicate: Any) -> Any:
    if isinstance(replicate, bool):
        raise TypeError("replicate must be an int, got bool")
    c = const_int(replicate)
    if c is not None:
        if c < 1:
            raise ValueError(f"replicate must be >= 1, got {c}")
        return c
    if not hasattr(replicate, "ty"):
        raise TypeError(f"replicate must be an int or a PrimExpr, got {type(replicate).__name__}")
    return replicate


def _split_usage(expr: Any, ranges: dict[Any, Any]) -> dict[Any, list[tuple[int, int]]] | None:
    """Which digit ranges ``(lower_factor, extent)`` of each variable `expr` uses, by iterator analysis; None
    when the analysis fails."""
    import tvm

    dom = {v: tvm.ir.Range.from_min_extent(0, s) for v, s in ranges.items()}
    try:
        res = tvm.sym.detect_iter_map([as_expr(expr)], dom,
                                      check_level=tvm.sym.iter_affine_map.IterMapLevel.NoCheck)
    except Exception:
        return None
    if len(res.errors) or not len(res.indices):
        return None
    used: dict[Any, list[tuple[int, int]]] = {}

    def whole(mark_source: Any) -> None:
        for split in getattr(mark_source, "args", []):
            visit(split)

    def visit(split: Any) -> None:
        mark = split.source
        src = mark.source
        lf, ext, mext = const_int(split.lower_factor), const_int(split.extent), const_int(mark.extent)
        if type(src).__name__ == "IterSumExpr":
            whole(src)  # a fused iterator: count its parts as used
            return
        if lf is None or ext is None:
            used.setdefault(src, []).append((1, mext or 0))
            return
        used.setdefault(src, []).append((lf, ext))

    whole(res.indices[0])
    return used


def _unused_index(thread: Any, ranges: dict[Any, Any], inputs: list[Any]) -> Any:
    """The row-major number of the input-index digits that `thread` does not use (0 when it uses them all)."""
    splits = _split_usage(thread, ranges)
    terms: list[tuple[Any, Any]] = []  # (digit expression, extent), most significant first
    for var in inputs:
        extent = ranges[var]
        n = const_int(extent)
        if splits is None:
            if not _mentions(thread, var):
                terms.append((var, extent))
            continue
        used = sorted(splits.get(var, []))
        if n is None:
            if not used:
                terms.append((var, extent))
            continue
        gaps: list[tuple[int, int]] = []
        cursor = 1
        for lf, ext in used:
            if lf > cursor:
                gaps.append((cursor, lf // cursor))
            cursor = max(cursor, lf * ext)
        if cursor < n:
            gaps.append((cursor, -(-n // cursor)))
        for lf, ext in reversed(gaps):
            digit = var // lf if lf > 1 else var
            if lf * ext < n:
                digit = digit % ext
            terms.append((digit, ext))
    index: Any = 0
    for digit, ext in terms:
        index = index * ext + digit
    return simplify(as_expr(index), analyzer_for(ranges))


def _mentions(expr: Any, var: Any) -> bool:
    import tvm
    import tvm_ffi

    found = []
    tvm_ffi.structural_walk(expr, [(tvm.ir.Var, lambda v: found.append(v) if v.same_as(var) else None)])
    return bool(found)


def make_fully_replicated_layout_fragment(buffer: Any, threads: int) -> Fragment:
    """A fragment where every one of `threads` threads holds the whole tile (e.g. an index or mask buffer)."""
    from tilelang.layout.buffers import buffer_info

    _, shape, _ = buffer_info(buffer)  # type: ignore[misc]
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive int, got {threads!r}")
    return Fragment(shape, forward_thread_fn=lambda *idx: idx[-1] if threads > 1 else 0,
                    forward_index_fn=lambda *idx: linearize(list(idx[:len(shape)]), shape) if shape else 0,
                    replicate=threads)


def fragment_vector_lanes(extents: Sequence[Any], num_threads: int, lanes: int) -> int:
    """The vector width a partitioned fragment (or a parallel nest) over `extents` gets when `lanes` are asked for.

    `lanes` when the innermost non-unit extent is a constant multiple of it, the element count is constant and
    at least ``lanes * num_threads`` (so no thread idles), else 1 (the cyclic layout). LayoutInference and
    PartitionParallel both decide through this, so a fragment and every nest touching it agree.
    """
    if isinstance(lanes, bool) or not isinstance(lanes, int) or lanes < 1:
        raise ValueError(f"fragment_vector_lanes must be a positive int, got {lanes!r}")
    if lanes == 1 or num_threads <= 1:
        return 1
    consts = [const_int(e) for e in extents]
    if not consts or None in consts:
        return 1
    inner = [c for c in consts if c != 1]
    if not inner or inner[-1] % lanes:  # type: ignore[operator]
        return 1
    return lanes if math.prod(consts) >= lanes * num_threads else 1  # type: ignore[arg-type]


class CyclicFragment:
    """The distribution LayoutInference gives a ``local.fragment`` tile over the threads of a block.

    ``partitioned``: element with row-major offset ``f`` lives in thread ``f % num_threads`` at local index
    ``f // num_threads`` (consecutive elements on consecutive threads, so a parallel loop over the tile walks
    each thread's registers in order). With ``vector_lanes = V > 1`` each thread holds runs of V consecutive
    elements instead: ``f`` lives in thread ``(f // V) % num_threads`` at local index
    ``(f // (V * num_threads)) * V + f % V`` (so a thread's V-element runs can move as one vector access).
    ``replicated``: every thread holds the whole tile. A fragment used only inside a branch on the thread index
    is spread over that branch's threads: ``thread_begin`` is the first of them (thread indices here count from
    it), ``num_threads`` their count.
    """

    KINDS = ("partitioned", "replicated")

    def __init__(self, shape: Sequence[Any], num_threads: int, kind: str = "partitioned", vector_lanes: int = 1):
        if kind not in self.KINDS:
            raise ValueError(f"fragment kind must be one of {self.KINDS}, got {kind!r}")
        if isinstance(vector_lanes, bool) or not isinstance(vector_lanes, int) or vector_lanes < 1:
            raise ValueError(f"vector_lanes must be a positive int, got {vector_lanes!r}")
        self.shape = list(shape)
        self.num_threads = int(num_threads)
        self.kind = kind
        self.thread_begin = 0
        self.vector_lanes = 1 if self.replicated else vector_lanes
        if self.vector_lanes > 1:
            inner = [const_int(s) for s in self.shape if const_int(s) != 1]
            if not inner or inner[-1] is None or inner[-1] % self.vector_lanes:
                raise ValueError(f"a fragment of shape {self.shape} cannot take {self.vector_lanes} vector lanes: "
                                 "its innermost extent must be a constant multiple of them")

    @property
    def replicated(self) -> bool:
        return self.kind == "replicated" or self.num_threads == 1

    @property
    def num_elements(self) -> int:
        return math.prod(int(s) for s in self.shape)

    @property
    def local_size(self) -> int:
        """Registers per thread."""
        if self.replicated:
            return self.num_elements
        step = self.vector_lanes * self.num_threads
        return -(-self.num_elements // step) * self.vector_lanes

    def thread(self, indices: Sequence[Any]) -> Any:
        """The thread that holds the element at `indices` (0 for a replicated fragment: every thread does)."""
        if self.replicated:
            return 0
        offset = linearize(indices, self.shape)
        if self.vector_lanes == 1:
            return offset % self.num_threads
        return offset // self.vector_lanes % self.num_threads

    def local(self, indices: Sequence[Any]) -> Any:
        """The element's index in its thread's local storage."""
        offset = linearize(indices, self.shape)
        if self.replicated:
            return offset
        if self.vector_lanes == 1:
            return offset // self.num_threads
        v = self.vector_lanes
        return offset // (v * self.num_threads) * v + offset % v

    def ownership(self) -> tuple[Any, Any]:
        """``(thread, local)`` numpy arrays over the (constant-shape) tile: who holds each element, and where."""
        import numpy as np

        grids = np.meshgrid(*[np.arange(int(s), dtype=np.int64) for s in self.shape], indexing="ij")
        thread = np.broadcast_to(np.asarray(self.thread(grids), dtype=np.int64), grids[0].shape)
        return thread, np.asarray(self.local(grids), dtype=np.int64)

    def as_fragment(self) -> Fragment:
        """This distribution as a `Fragment` (a replicated one is held by all `num_threads` threads)."""
        if self.replicated:
            return Fragment(self.shape, forward_thread_fn=lambda *idx: idx[-1] if self.num_threads > 1 else 0,
                            forward_index_fn=lambda *idx: self.local(list(idx[:len(self.shape)])),
                            replicate=max(1, self.num_threads))
        return Fragment(self.shape, forward_thread_fn=lambda *idx: self.thread(list(idx)),
                        forward_index_fn=lambda *idx: self.local(list(idx)))

    def to_ir(self) -> str:
        return self.kind

    @classmethod
    def from_ir(cls, shape: Sequence[Any], num_threads: int, value: Any, vector_lanes: Any = 1) -> CyclicFragment:
        """The fragment of an allocation annotated ``{"tl.fragment": value, "tl.vector_lanes": vector_lanes}``."""
        return cls(shape, num_threads, str(value), int(const_int(vector_lanes) or 1))

    def __repr__(self) -> str:
        lanes = f", lanes={self.vector_lanes}" if self.vector_lanes > 1 else ""
        return f"CyclicFragment(shape={self.shape}, threads={self.num_threads}, {self.kind}{lanes})"

