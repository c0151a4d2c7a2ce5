"""Layouts: index maps from a buffer's logical indices to where the element lives.

`Layout` maps logical indices to storage indices (shared-memory swizzles, padded tiles). `Fragment` maps the
logical indices of a ``local.fragment`` tile to ``(thread, local index)``: which thread of the block holds the
element and where in that thread's registers. Both are plain Python objects holding expression builders; the
passes apply them to tirx index expressions. In the IR they travel as annotations (`to_ir` / `from_ir`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

IndexFn = Callable[[Sequence[Any]], list[Any]]


def linearize(indices: Sequence[Any], shape: Sequence[Any]) -> Any:
    """Row-major linear offset of `indices` in `shape`."""
    offset: Any = 0
    for i, (index, extent) in enumerate(zip(indices, shape)):
        offset = index if i == 0 else offset * extent + index
    return offset


def unravel(offset: Any, shape: Sequence[Any]) -> list[Any]:
    """Inverse of `linearize` (row-major)."""
    out: list[Any] = []
    for extent in reversed(list(shape)[1:]):
        out.append(offset % extent)
        offset = offset // extent
    out.append(offset)
    return out[::-1]


class Layout:
    """A storage layout: ``forward(indices) -> storage indices`` over a buffer of logical shape `shape`.

    `forward` must work on tirx index expressions (the passes rewrite accesses with it) and on integers or numpy
    integer arrays (`verify` enumerates the tile). The storage shape defaults to the logical shape.
    """

    kind = "layout"

    def __init__(self, shape: Sequence[Any], forward: IndexFn, *, storage_shape: Sequence[Any] | None = None,
                 params: dict[str, Any] | None = None):
        self.shape = _ints(shape)
        self._forward = forward
        self.storage_shape = _ints(storage_shape) if storage_shape is not None else list(self.shape)
        self.params = dict(params or {})

    def forward(self, indices: Sequence[Any]) -> list[Any]:
        if len(indices) != len(self.shape):
            raise ValueError(f"layout over {len(self.shape)} dims applied to {len(indices)} indices")
        return list(self._forward(list(indices)))

    def __call__(self, *indices: Any) -> list[Any]:
        return self.forward(indices)

    def to_ir(self) -> dict[str, Any]:
        """A dict of plain values (kind, shape, params) that can sit in an IR annotation; `from_ir` inverts it.

        A layout built from a Python function travels as a ``tirx.IndexMap`` traced from it (``index_map``).
        """
        out: dict[str, Any] = {"kind": self.kind, "shape": [int(s) for s in self.shape], **self.params}
        if self.kind == "layout":
            out["index_map"] = self.index_map()
            out["storage_shape"] = [int(s) for s in self.storage_shape]
        return out

    def index_map(self) -> Any:
        """The layout as a ``tirx.IndexMap`` over int32 index variables."""
        from tvm import tirx

        names = "ijklmn"
        vs = [tirx.Var(names[n] if n < len(names) else f"i{n}", "int32") for n in range(len(self.shape))]
        return tirx.IndexMap(vs, [_as_expr(e) for e in self.forward(vs)], None)

    @classmethod
    def from_ir(cls, value: Any, shape: Sequence[Any] | None = None, dtype: str | None = None) -> Layout:
        """Rebuild a layout from its IR form: a `to_ir` dict or a ``tirx.IndexMap``.

        `shape` / `dtype` (the annotated buffer's) fill in what the IR form leaves out: an IndexMap carries no
        shape, a swizzle without ``dtype`` takes the buffer's. Raises ValueError for an unknown form.
        """
        from tvm import tirx

        if isinstance(value, tirx.IndexMap):
            if shape is None:
                raise ValueError("an index-map layout needs the buffer shape")
            return from_index_map(value, shape)
        if not hasattr(value, "items"):
            raise ValueError(f"not a layout: {type(value).__name__}")
        fields = {str(k): _plain(v) for k, v in value.items()}
        kind = str(fields.get("kind", ""))
        if "shape" in fields:
            shape = [int(s) for s in fields["shape"]]
        if shape is None:
            raise ValueError(f"layout {kind!r} carries no shape")
        builder = _FROM_IR.get(kind)
        if builder is None:
            raise ValueError(f"unknown layout kind {kind!r} (known: {sorted(_FROM_IR)})")
        return builder(fields, list(shape), dtype)

    def verify(self, max_elements: int = 1 << 20) -> None:
        """Check on every index of a constant-shape tile that storage indices are in range and distinct.

        Raises ValueError describing the first problem. Silently passes when the check is not cheap: a
        symbolic shape, more than `max_elements` elements, or a map the integer evaluator cannot run.
        """
        import numpy as np

        shape = [_const(s) for s in self.shape]
        storage = [_const(s) for s in self.storage_shape]
        if None in shape or None in storage or math.prod(shape) > max_elements:  # type: ignore[arg-type]
            return
        if not shape or math.prod(shape) == 0:  # type: ignore[arg-type]
            return
        grids = np.meshgrid(*[np.arange(s, dtype=np.int64) for s in shape], indexing="ij")
        try:
            out = [np.broadcast_to(np.asarray(o, dtype=np.int64), grids[0].shape)
                   for o in self.forward([g for g in grids])]
        except (_NotEvaluable, TypeError):  # a forward written for tirx expressions only
            return
        if len(out) != len(storage):
            raise ValueError(f"maps {len(shape)}-d indices to {len(out)} storage indices, but the storage shape "
                             f"{storage} has {len(storage)} dims")
        for d, (o, extent) in enumerate(zip(out, storage)):
            bad = np.nonzero((o < 0) | (o >= extent))
            if bad[0].size:
                at = tuple(int(b[0]) for b in bad)
                raise ValueError(f"maps {list(at)} to storage index {int(o[at])} in dim {d}, outside "
                                 f"[0, {extent})")
        offsets = linearize(out, storage).reshape(-1)
        uniq, counts = np.unique(offsets, return_counts=True)
        if uniq.size != offsets.size:
            dup = uniq[np.argmax(counts > 1)]
            hits = np.nonzero(offsets == dup)[0][:2]
            a, b = (list(int(x) for x in np.unravel_index(h, shape)) for h in hits)
            raise ValueError(f"is not one-to-one: {a} and {b} both map to storage "
                             f"{[int(x) for x in np.unravel_index(int(dup), storage)]}")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(shape={self.shape}, {self.params})"


class _NotEvaluable(Exception):
    """An index expression the integer evaluator does not know."""


def _const(e: Any) -> int | None:
    if isinstance(e, int):
        return e
    value = getattr(e, "value", None)
    return int(value) if isinstance(value, int) else None


def _ints(shape: Sequence[Any]) -> list[Any]:
    """`shape` with constant extents as Python ints (symbolic ones kept)."""
    return [s if _const(s) is None else _const(s) for s in shape]


def _plain(v: Any) -> Any:
    """An FFI value (IntImm, String, Array) as a Python value; other objects unchanged."""
    if isinstance(v, (list, tuple)) or type(v).__name__ == "Array":
        return [_plain(x) for x in v]
    c = _const(v)
    if c is not None and not isinstance(v, bool):
        return c
    if isinstance(v, str) or type(v).__name__ in ("String", "StringImm"):
        return str(getattr(v, "value", v))
    return v


def _as_expr(e: Any) -> Any:
    from tvm import tirx

    return tirx.IntImm("int32", e) if isinstance(e, int) else e


_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mul": lambda a, b: a * b,
    "FloorDiv": lambda a, b: a // b, "FloorMod": lambda a, b: a % b,
    "BitwiseXor": lambda a, b: a ^ b, "BitwiseAnd": lambda a, b: a & b, "BitwiseOr": lambda a, b: a | b,
    "LShift": lambda a, b: a << b, "RShift": lambda a, b: a >> b,
    "LT": lambda a, b: a < b, "LE": lambda a, b: a <= b, "GT": lambda a, b: a > b, "GE": lambda a, b: a >= b,
    "EQ": lambda a, b: a == b, "NE": lambda a, b: a != b, "And": lambda a, b: a & b, "Or": lambda a, b: a | b,
}


def evaluate_index(expr: Any, env: dict[Any, Any]) -> Any:
    """Evaluate a tirx integer index expression with its variables bound by `env`: to integers / numpy arrays
    when they are numbers, to a freshly built tirx expression (dtypes following the bound values) otherwise."""
    import numpy as np

    c = _const(expr)
    if c is not None:
        return c
    name = type(expr).__name__
    args = [evaluate_index(getattr(expr, f), env) for f in ("a", "b") if hasattr(expr, f)] if name != "Select" else []
    symbolic = any(not isinstance(x, (int, np.ndarray, np.integer, np.bool_)) for x in args)
    if name in ("And", "Or") and symbolic:
        from tvm import tirx

        return (tirx.And if name == "And" else tirx.Or)(*[_as_expr(x) for x in args])
    if name in _BINARY:
        return _BINARY[name](*args)
    if name in ("Min", "Max"):
        if symbolic:
            from tvm import tirx

            return (tirx.min if name == "Min" else tirx.max)(*[_as_expr(x) for x in args])
        return (np.minimum if name == "Min" else np.maximum)(*args)
    if name in ("Div", "Mod"):  # truncating
        if symbolic:
            from tvm import tirx

            return (tirx.truncdiv if name == "Div" else tirx.truncmod)(*[_as_expr(x) for x in args])
        q = np.trunc(np.asarray(args[0]) / args[1]).astype(np.int64)
        return q if name == "Div" else args[0] - q * args[1]
    if name == "Select":
        cond, t, f = (evaluate_index(x, env) for x in (expr.condition, expr.true_value, expr.false_value))
        if any(not isinstance(x, (int, np.ndarray, np.integer, np.bool_)) for x in (cond, t, f)):
            from tvm import tirx

            return tirx.Select(cond, _as_expr(t), _as_expr(f))
        return np.where(cond, t, f)
    if name == "Call" and str(getattr(expr.op, "name", "")).endswith("if_then_else"):
        cond, t, f = (evaluate_index(x, env) for x in expr.args)
        if any(not isinstance(x, (int, np.ndarray, np.integer, np.bool_)) for x in (cond, t, f)):
            from tvm import tirx

            return tirx.if_then_else(cond, _as_expr(t), _as_expr(f))
        return np.where(cond, t, f)
    if name == "Not":
        inner = evaluate_index(expr.a, env)
        if isinstance(inner, (np.ndarray, np.bool_, bool)):
            return ~np.asarray(inner, dtype=bool)
        from tvm import tirx

        return tirx.Not(inner)
    if name == "Cast":
        return evaluate_index(expr.value, env)
    for var, value in env.items():
        if expr.same_as(var):
            return value
    raise _NotEvaluable(name)


def from_index_map(index_map: Any, shape: Sequence[Any]) -> Layout:
    """A `Layout` over `shape` from a ``tirx.IndexMap``; the storage shape is the exact bounding box of the
    image (evaluated on every index: the shape must be constant)."""
    import numpy as np

    initial = list(index_map.initial_indices)
    final = list(index_map.final_indices)
    if len(initial) != len(shape):
        raise ValueError(f"the index map takes {len(initial)} indices, the buffer has {len(shape)} dims")

    def forward(idx: list[Any]) -> list[Any]:
        env = dict(zip(initial, idx))
        return [evaluate_index(e, env) for e in final]

    consts = [_const(s) for s in shape]
    if None in consts:
        raise ValueError(f"an index-map layout needs a constant buffer shape, got {list(shape)}")
    grids = np.meshgrid(*[np.arange(s, dtype=np.int64) for s in consts], indexing="ij")
    try:
        image = [np.asarray(o, dtype=np.int64) for o in forward(list(grids))]
    except _NotEvaluable as exc:
        raise ValueError(f"cannot evaluate the index map {index_map} (unsupported {exc})") from None
    storage = [int(o.max()) + 1 if o.size else 1 for o in image]
    return Layout(shape, forward, storage_shape=storage)


def _generic_from_ir(fields: dict[str, Any], shape: list[Any], dtype: str | None) -> Layout:
    if "index_map" not in fields:
        raise ValueError("a 'layout' IR form needs its index_map")
    layout = from_index_map(fields["index_map"], shape)
    if "storage_shape" in fields:
        layout.storage_shape = [int(s) for s in fields["storage_shape"]]
    return layout


# kind -> builder(fields, shape, buffer dtype); the swizzle and padded kinds register in their modules
_FROM_IR: dict[str, Callable[[dict[str, Any], list[Any], str | None], Layout]] = {"layout": _generic_from_ir}


def register_layout_kind(kind: str, builder: Callable[[dict[str, Any], list[Any], str | None], Layout]) -> None:
    """Teach `Layout.from_ir` a layout kind: ``builder(fields, shape, buffer dtype) -> Layout``."""
    _FROM_IR[kind] = builder


def identity_layout(shape: Sequence[Any]) -> Layout:
    return Layout(shape, lambda idx: list(idx))


class PaddedLayout(Layout):
    """Row-major storage with `pad` extra elements after every row: ``storage shape = (..., cols + pad)``.

    Rows stay contiguous; a column walk lands in a different bank on every row.
    """

    kind = "padded"

    def __init__(self, shape: Sequence[Any], pad: int):
        if isinstance(pad, bool) or not isinstance(pad, int) or pad < 0:
            raise ValueError(f"the padding must be a non-negative int, got {pad!r}")
        if not shape:
            raise ValueError("cannot pad a 0-d tile")
        shape = _ints(shape)
        super().__init__(shape, lambda idx: list(idx), storage_shape=[*shape[:-1], shape[-1] + pad],
                         params={"pad": pad})


def tile_shape_and_dtype(buffer_or_shape: Any, dtype: str | None) -> tuple[list[Any], str | None]:
    """``(shape, dtype)`` of a tile given as a buffer (its own dtype wins) or as a shape with an optional dtype."""
    ty = getattr(buffer_or_shape, "ty", None)
    if ty is not None:
        return list(ty.shape), str(ty.dtype)
    return list(buffer_or_shape), dtype


def make_padded_layout(buffer_or_shape: Any, pad: int | None = None, dtype: str | None = None) -> Layout:
    """Pad every row of a shared tile (a buffer, or a shape) by `pad` elements (default: 16 bytes of `dtype`,
    which keeps 16-byte vector accesses aligned)."""
    shape, dtype = tile_shape_and_dtype(buffer_or_shape, dtype)
    if pad is None:
        if dtype is None:
            raise ValueError("make_padded_layout needs `pad` or a dtype")
        from tilelang.layout.swizzle import dtype_bytes

        pad = max(1, 16 // dtype_bytes(dtype))
    return PaddedLayout(shape, pad)


register_layout_kind("padded", lambda f, shape, dtype: PaddedLayout(shape, int(f.get("pad", 0))))


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
    consts = [_const(e) for e in extents]
    if not consts or None in consts:
        return 1
    inner = [c for c in consts if c != 1]
    if not inner or inner[-1] % lanes:  # type: ignore[operator]
        return 1
    return lanes if math.prod(consts) >= lanes * num_threads else 1  # type: ignore[arg-type]


class Fragment:
    """How a fragment tile is spread over the threads of a block.

    ``partitioned``: element with row-major offset ``f`` lives in thread ``f % num_threads`` at local index
    ``f // num_threads`` (a cyclic layout: consecutive elements on consecutive threads, so a parallel loop
    over the tile walks each thread's registers in order). With ``vector_lanes = V > 1`` each thread holds
    runs of V consecutive elements instead: ``f`` lives in thread ``(f // V) % num_threads`` at local index
    ``(f // (V * num_threads)) * V + f % V`` (so a thread's V-element runs can move as one vector access).
    ``replicated``: every thread holds the whole tile.
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
        self.vector_lanes = 1 if self.replicated else vector_lanes
        if self.vector_lanes > 1:
            inner = [_const(s) for s in self.shape if _const(s) != 1]
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

    def to_ir(self) -> str:
        return self.kind

    @classmethod
    def from_ir(cls, shape: Sequence[Any], num_threads: int, value: Any, vector_lanes: Any = 1) -> Fragment:
        """The fragment of an allocation annotated ``{"tl.fragment": value, "tl.vector_lanes": vector_lanes}``."""
        return cls(shape, num_threads, str(value), int(_const(vector_lanes) or 1))

    def __repr__(self) -> str:
        lanes = f", lanes={self.vector_lanes}" if self.vector_lanes > 1 else ""
        return f"Fragment(shape={self.shape}, threads={self.num_threads}, {self.kind}{lanes})"
