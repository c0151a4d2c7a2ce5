"""`Layout`: an index map from a buffer's logical indices to where the element lives.

``Layout(shape, forward_fn)`` calls ``forward_fn(*index_vars)`` once and keeps the returned expression(s) over
canonical placeholder variables, simplified with each variable bounded by its extent (the reference TileLang's
semantics): layouts built from different functions compare (`is_equal`), compose (`repeat`, `expand`,
`reshape`, `inverse`) and map concrete indices (`map_forward_index`, ``layout(i, j)``).

A layout on a shared tile is a storage map: the pipeline rewrites every access through it and gives the tile
its storage shape (the output shape by default; `PaddedLayout` pads it). In the IR a layout travels as an
annotation (`to_ir` / `from_ir`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from tilelang.layout.indexing import (
    MAX_EXACT_DOMAIN,
    NotEvaluable,
    analyzer_for,
    as_expr,
    const_int,
    enumerate_exprs,
    evaluate_index,
    input_placeholder,
    ints,
    linearize,
    simplify,
    substitute,
    unravel,
)

__all__ = ["Layout", "PaddedLayout", "evaluate_index", "from_index_map", "identity_layout", "linearize",
           "make_padded_layout", "register_layout_kind", "tile_shape_and_dtype", "unravel"]


def _check_shape(shape: Any, what: str = "shape") -> list[Any]:
    if isinstance(shape, (int, str)) or (not isinstance(shape, Sequence) and not hasattr(shape, "__iter__")):
        raise TypeError(f"the layout {what} must be a sequence of extents, got {shape!r}")
    out = ints(list(shape))
    for k, s in enumerate(out):
        if isinstance(s, bool) or (isinstance(s, int) and s < 0):
            raise ValueError(f"the layout {what} has a bad extent at dim {k}: {s!r}")
        if not isinstance(s, int) and not hasattr(s, "ty"):
            raise TypeError(f"the layout {what} must hold ints or PrimExprs, got {type(s).__name__} at dim {k}")
    return out


def _index_list(out: Any, who: str) -> list[Any]:
    """What a forward function returned, as a list of index expressions."""
    if isinstance(out, (list, tuple)) or type(out).__name__ in ("Array", "List"):
        items = list(out)
    else:
        items = [out]
    result = []
    for e in items:
        if isinstance(e, bool) or not (isinstance(e, int) or hasattr(e, "ty") or type(e).__name__ == "IterVar"):
            raise TypeError(f"{who} must return index expressions (ints or PrimExprs), got {type(e).__name__}")
        result.append(as_expr(e))
    return result


def _numeric(values: Sequence[Any]) -> bool:
    import numpy as np

    return all(isinstance(v, (int, np.integer, np.ndarray)) and not isinstance(v, bool) for v in values)


class Layout:
    """An index map over a buffer of logical shape `shape` (see the module docstring).

    ``forward_fn(*vars)`` returns one index expression or a list of them. `storage_shape` (keyword, default
    the output shape) is the shape of the storage a shared tile gets; `params` are extra fields of `to_ir`.
    """

    kind = "layout"

    def __init__(self, shape: Sequence[Any], forward_fn: Callable[..., Any], *,
                 storage_shape: Sequence[Any] | None = None, params: dict[str, Any] | None = None):
        if not callable(forward_fn):
            raise TypeError(f"forward_fn must be a function of the {len(shape)} indices, got {forward_fn!r}")
        shape = _check_shape(shape)
        vars_ = [input_placeholder(k) for k in range(len(shape))]
        self._init(shape, _index_list(forward_fn(*vars_), "forward_fn"), storage_shape, params)

    def _init(self, shape: list[Any], index: list[Any], storage_shape: Sequence[Any] | None = None,
              params: dict[str, Any] | None = None) -> None:
        self.shape = list(shape)
        ana = analyzer_for(self._var_ranges())
        self._index = [simplify(e, ana) for e in index]
        self._storage = ints(storage_shape) if storage_shape is not None else None
        self.params = dict(params or {})
        self._output_shape: list[Any] | None = None

    @classmethod
    def _of(cls, shape: Sequence[Any], index: Sequence[Any]) -> Layout:
        """A plain `Layout` over `shape` from index expressions over the input placeholders."""
        out = Layout.__new__(Layout)
        out._init(_check_shape(shape), [as_expr(e) for e in index])
        return out

    # ------------------------------------------------------------------------------------------ accessors
    def _var_ranges(self) -> dict[Any, Any]:
        return {input_placeholder(k): s for k, s in enumerate(self.shape)}

    @property
    def forward_vars(self) -> list[Any]:
        return [input_placeholder(k) for k in range(len(self.shape))]

    @property
    def index(self) -> list[Any]:
        """The forward index expressions, over `get_forward_vars()`."""
        return list(self._index)

    def get_input_shape(self) -> list[Any]:
        return list(self.shape)

    def get_output_shape(self) -> list[Any]:
        """The extent of every output index: its largest value plus one."""
        if self._output_shape is None:
            self._output_shape = _extents(self._index, self._var_ranges(), self.shape)
        return list(self._output_shape)

    @property
    def storage_shape(self) -> list[Any]:
        return list(self._storage) if self._storage is not None else self.get_output_shape()

    @storage_shape.setter
    def storage_shape(self, value: Sequence[Any]) -> None:
        self._storage = ints(value)

    def get_forward_vars(self) -> list[Any]:
        return self.forward_vars

    def get_forward_index(self) -> list[Any]:
        return self.index

    def get_linearized_forward_index(self) -> Any:
        """The row-major linear offset of the output index in the output shape."""
        out_shape = self.get_output_shape()
        ana = analyzer_for(self._var_ranges())
        return simplify(linearize(self._index, out_shape), ana) if self._index else as_expr(0)

    # ------------------------------------------------------------------------------------------ mapping
    def forward(self, indices: Sequence[Any]) -> list[Any]:
        """The output index of the element at `indices` (ints or numpy arrays give numbers, expressions give
        expressions, unsimplified)."""
        indices = list(indices)
        if len(indices) != len(self.shape):
            raise ValueError(f"layout over {len(self.shape)} dims applied to {len(indices)} indices")
        env = dict(zip(self.forward_vars, indices))
        if _numeric(indices):
            return [evaluate_index(e, env) for e in self._index]
        return [as_expr(evaluate_index(e, env, keep_unbound=True)) for e in self._index]

    def map_forward_index(self, indices: Sequence[Any]) -> list[Any]:
        """`forward` on the trailing ``ndim`` of `indices`; leading extra indices pass through unchanged."""
        import tvm

        indices = list(indices)
        n = len(self.shape)
        if len(indices) < n:
            raise ValueError(f"layout over {n} dims applied to {len(indices)} indices")
        lead, rest = indices[:len(indices) - n], indices[len(indices) - n:]
        out = self.forward([const_int(x) if const_int(x) is not None else x for x in rest])
        if not _numeric(out):
            ana = tvm.sym.Analyzer()
            out = [simplify(e, ana) for e in out]
        return lead + [int(x) if const_int(x) is not None else x for x in out]

    def __call__(self, *args: Any) -> list[Any]:
        if len(args) == 1 and isinstance(args[0], (list, tuple)) and len(self.shape) != 1:
            args = tuple(args[0])
        return self.map_forward_index(list(args))

    # ------------------------------------------------------------------------------------------ algebra
    def repeat(self, dim: int, factor: int) -> Layout:
        """Tile this layout `factor` times along input `dim` (a new leading output index numbers the copies):
        ``L'(..idx..) = [idx[dim] // extent] + L(idx with idx[dim] % extent)``."""
        if isinstance(dim, bool) or not isinstance(dim, int):
            raise TypeError(f"dim must be an int, got {type(dim)!r}")
        if isinstance(factor, bool) or not isinstance(factor, int):
            raise TypeError(f"factor must be an int, got {type(factor)!r}")
        if factor < 1:
            raise ValueError(f"factor must be >= 1, got {factor}")
        ndim = len(self.shape)
        if ndim == 0:
            raise ValueError("cannot repeat a 0-dim layout")
        if not -ndim <= dim < ndim:
            raise ValueError(f"dim out of range: dim={dim}, ndim={ndim}")
        if factor == 1:
            return self
        dim %= ndim
        var, extent = input_placeholder(dim), self.shape[dim]
        index = [substitute(e, {var: var % extent}) for e in self._index]
        shape = list(self.shape)
        shape[dim] = extent * factor
        return Layout._of(shape, [var // extent, *index])

    def expand(self, leading_shape: Any) -> Layout:
        """Prepend input dims that pass straight through: ``[*lead, *idx] -> [*lead, *L(idx)]``."""
        if isinstance(leading_shape, bool):
            raise TypeError("leading_shape must be an int or a sequence, got bool")
        if isinstance(leading_shape, int):
            leading_shape = [leading_shape]
        if not isinstance(leading_shape, (list, tuple)):
            raise TypeError(f"leading_shape must be an int or a sequence, got {type(leading_shape)!r}")
        lead = list(leading_shape)
        if not lead:
            return self
        for k, extent in enumerate(lead):
            if isinstance(extent, int) and not isinstance(extent, bool):
                if extent <= 0:
                    raise ValueError(f"leading_shape[{k}] must be > 0, got {extent}")
            elif not hasattr(extent, "ty"):
                raise TypeError(f"leading_shape elements must be int or PrimExpr, got {type(extent)!r} at index {k}")
        n = len(lead)
        shift = {input_placeholder(k): input_placeholder(k + n) for k in range(len(self.shape))}
        index = [substitute(e, shift) for e in self._index]
        return Layout._of(lead + list(self.shape), [input_placeholder(k) for k in range(n)] + index)

    def inverse(self) -> Layout:
        """The inverse map (output index -> input index) of a bijective affine layout.

        Raises ValueError when the forward map is not a bijection the iterator analysis can invert (e.g. an
        XOR swizzle)."""
        import tvm

        out_shape = self.get_output_shape()
        static = all(const_int(s) is not None for s in list(self.shape) + out_shape)
        level = tvm.sym.iter_affine_map.IterMapLevel
        dom = {v: tvm.ir.Range.from_min_extent(0, s) for v, s in self._var_ranges().items()}
        res = tvm.sym.detect_iter_map(self._index, dom, check_level=level.Bijective if static else level.NoCheck)
        if len(res.errors):
            raise ValueError(f"{self!r} is not an invertible affine layout: {list(res.errors)}")
        outs = [input_placeholder(k) for k in range(len(self._index))]
        inv = tvm.sym.inverse_affine_iter_map(res.indices, outs)
        backward = [inv[v] if v in inv else as_expr(0) for v in self.forward_vars]
        return Layout._of(out_shape, backward)

    def reshape(self, shape: Sequence[Any], rescale_num: int = 1, rescale_den: int = 1) -> Layout:
        """The same map seen through a buffer of another shape (row-major flat index preserved).

        ``rescale_num / rescale_den`` is the element size of the new view relative to the old (``1/2``: each
        old element becomes two new ones; ``2``: two old elements make one new one); the storage map stays
        the same bytes."""
        new_shape = _check_shape(shape, "new shape")
        num, den = int(rescale_num), int(rescale_den)
        if num < 1 or den < 1:
            raise ValueError(f"rescale factors must be positive, got {rescale_num}/{rescale_den}")
        g = math.gcd(num, den)
        num, den = num // g, den // g
        if num == den == 1 and [const_int(s) for s in new_shape] == [const_int(s) for s in self.shape] \
                and None not in [const_int(s) for s in new_shape]:
            return self
        _check_same_size(self.shape, new_shape, num, den)
        flat = linearize([input_placeholder(k) for k in range(len(new_shape))], new_shape)
        return Layout._of(new_shape, self._reindexed(flat, num, den))

    def _reindexed(self, flat: Any, num: int, den: int) -> list[Any]:
        """The forward index at the element whose flat position in the new view is `flat`, in new elements."""
        if num == 1 and den == 1:
            old = dict(zip(self.forward_vars, unravel(flat, self.shape)))
            return [substitute(e, old) for e in self._index]
        if num == 1:  # narrowing: an old element holds `den` new ones
            old = dict(zip(self.forward_vars, unravel(flat // den, self.shape)))
            index = [substitute(e, old) for e in self._index]
            if not index:
                raise ValueError("cannot rescale a layout with no output index")
            return [*index[:-1], index[-1] * den + flat % den]
        if den == 1:  # widening: `num` old elements make one new one
            old = dict(zip(self.forward_vars, unravel(flat * num, self.shape)))
            index = [substitute(e, old) for e in self._index]
            if not index:
                raise ValueError("cannot rescale a layout with no output index")
            self._check_packs(num)
            return [*index[:-1], index[-1] // num]
        raise ValueError(f"rescale {num}/{den}: one of the two factors must be 1")

    def _check_packs(self, num: int) -> None:
        """Widening by `num` needs every aligned group of `num` old elements stored together, in order."""
        shape = [const_int(s) for s in self.shape]
        if None in shape:
            return
        outs = enumerate_exprs(self._index, self.forward_vars, shape)  # type: ignore[arg-type]
        if outs is None:
            return
        flat_last = [o.reshape(-1) for o in outs]
        if flat_last[-1].size % num:
            raise ValueError(f"cannot widen a layout of {flat_last[-1].size} elements by {num}")
        groups = [o.reshape(-1, num) for o in flat_last]
        last = groups[-1]
        ok = ((last[:, 0] % num) == 0).all() and (last - last[:, :1] == list(range(num))).all()
        ok = ok and all((g == g[:, :1]).all() for g in groups[:-1])
        if not ok:
            raise ValueError(f"cannot reinterpret {self!r} with {num}x wider elements: it interleaves storage "
                             "below the new element width")

    def is_equal(self, other: Layout) -> bool:
        """Same input shape, same output shape and the same map (proved over the whole input domain)."""
        if not isinstance(other, Layout) or isinstance(other, _fragment_cls()) != isinstance(self, _fragment_cls()):
            return False
        if not _same_exprs(self.shape, other.shape) or len(self._index) != len(other._index):
            return False
        if not _same_exprs(self.get_output_shape(), other.get_output_shape()):
            return False
        return _provably_equal(self._index, other._index, self._var_ranges())

    # ------------------------------------------------------------------------------------------ IR form
    def to_ir(self) -> dict[str, Any]:
        """A dict of plain values (kind, shape, params) that can sit in an IR annotation; `from_ir` inverts it.

        A generic layout travels as a ``tirx.IndexMap`` (``index_map``) plus its ``storage_shape``."""
        out: dict[str, Any] = {"kind": self.kind, "shape": [_plain_extent(s) for s in self.shape], **self.params}
        if self.kind == "layout":
            out["index_map"] = self.index_map()
            out["storage_shape"] = [_plain_extent(s) for s in self.storage_shape]
        return out

    def index_map(self) -> Any:
        """The layout as a ``tirx.IndexMap`` over its placeholder variables."""
        from tvm import tirx

        return tirx.IndexMap(self.forward_vars, [as_expr(e) for e in self._index], None)

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
        fields = {str(k): plain(v) for k, v in value.items()}
        kind = str(fields.get("kind", ""))
        if "shape" in fields:
            shape = list(fields["shape"])
        if shape is None:
            raise ValueError(f"layout {kind!r} carries no shape")
        builder = _FROM_IR.get(kind)
        if builder is None:
            raise ValueError(f"unknown layout kind {kind!r} (known: {sorted(_FROM_IR)})")
        return builder(fields, list(shape), dtype)

    def verify(self, max_elements: int = MAX_EXACT_DOMAIN) -> None:
        """Check on every index of a constant-shape tile that storage indices are in range and distinct.

        Raises ValueError describing the first problem. Silently passes when the check is not cheap: a
        symbolic shape, more than `max_elements` elements, or a map the integer evaluator cannot run.
        """
        import numpy as np

        shape = [const_int(s) for s in self.shape]
        storage = [const_int(s) for s in self.storage_shape]
        if None in shape or None in storage or math.prod(shape) > max_elements:  # type: ignore[arg-type]
            return
        if not shape or math.prod(shape) == 0:  # type: ignore[arg-type]
            return
        out = enumerate_exprs(self._index, self.forward_vars, shape)  # type: ignore[arg-type]
        if out is None:
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
        extra = f", {self.params}" if self.params else ""
        return (f"{type(self).__name__}({list(self.shape)} -> {self.get_output_shape()}, "
                f"{self.forward_vars} -> {self._index}{extra})")


def _fragment_cls() -> type:
    from tilelang.layout.fragment import Fragment

    return Fragment


def _plain_extent(s: Any) -> Any:
    c = const_int(s)
    return c if c is not None else s


def _same_exprs(a: Sequence[Any], b: Sequence[Any]) -> bool:
    import tvm_ffi

    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        cx, cy = const_int(x), const_int(y)
        if cx is not None or cy is not None:
            if cx != cy:
                return False
        elif not tvm_ffi.structural_equal(x, y):
            return False
    return True


def _provably_equal(a: Sequence[Any], b: Sequence[Any], ranges: dict[Any, Any]) -> bool:
    import tvm_ffi

    ana = analyzer_for(ranges)
    for x, y in zip(a, b):
        if tvm_ffi.structural_equal(as_expr(x), as_expr(y)):
            continue
        if not ana.can_prove_equal(as_expr(x), as_expr(y)):
            return False
    return True


def _check_same_size(old: Sequence[Any], new: Sequence[Any], num: int, den: int) -> None:
    """Raise ValueError unless `new` holds as many elements as `old` (scaled by num/den)."""
    import tvm

    old_n = math.prod(const_int(s) for s in old) if all(const_int(s) is not None for s in old) else None
    new_n = math.prod(const_int(s) for s in new) if all(const_int(s) is not None for s in new) else None
    if old_n is not None and new_n is not None:
        if old_n * den != new_n * num:
            raise ValueError(f"cannot reshape a layout over {list(old)} ({old_n} elements) to {list(new)} "
                             f"({new_n} elements)" + (f" at element scale {num}/{den}" if num != den else ""))
        return
    prod_old, prod_new = as_expr(1), as_expr(1)
    for s in old:
        prod_old = prod_old * as_expr(s)
    for s in new:
        prod_new = prod_new * as_expr(s)
    if not tvm.sym.Analyzer().can_prove_equal(prod_old * den, prod_new * num):
        raise ValueError(f"cannot prove that {list(old)} and {list(new)} hold the same number of elements")


def _extents(index: Sequence[Any], ranges: dict[Any, Any], input_shape: Sequence[Any]) -> list[Any]:
    """Largest value plus one of every expression of `index` over `ranges` (exact on small constant domains)."""
    shape = [const_int(s) for s in ranges.values()]
    exact = None
    if None not in shape:
        exact = enumerate_exprs(index, list(ranges), shape)  # type: ignore[arg-type]
    if exact is not None:
        return [int(o.max()) + 1 if o.size else 1 for o in exact]
    ana = analyzer_for(ranges)
    out: list[Any] = []
    for k, e in enumerate(index):
        iset = ana.int_set(as_expr(e) + 1)
        lo, hi = str(iset.min_value), str(iset.max_value)
        if "inf" not in lo and "inf" not in hi:
            out.append(_plain_extent(ana.simplify(iset.max_value)))
            continue
        bound = ana.const_int_bound(as_expr(e))
        if 0 <= int(bound.min_value) and int(bound.max_value) < (1 << 62):
            out.append(int(bound.max_value) - int(bound.min_value) + 1)
        else:  # unbounded (e.g. bitwise ops over a symbolic domain): the input extent, as the reference does
            out.append(input_shape[k] if k < len(input_shape) else 1)
    return out


def plain(v: Any) -> Any:
    """An FFI value (IntImm, String, Array) as a Python value; other objects unchanged."""
    if isinstance(v, (list, tuple)) or type(v).__name__ in ("Array", "List"):
        return [plain(x) for x in v]
    c = const_int(v)
    if c is not None and not isinstance(v, bool):
        return c
    if isinstance(v, str) or type(v).__name__ in ("String", "StringImm"):
        return str(getattr(v, "value", v))
    return v


_plain = plain  # the name transform/apply_layouts.py imports


def from_index_map(index_map: Any, shape: Sequence[Any]) -> Layout:
    """A `Layout` over `shape` from a ``tirx.IndexMap``; its storage shape is the exact bounding box of the
    image (evaluated on every index when the shape is constant)."""
    initial = list(index_map.initial_indices)
    final = list(index_map.final_indices)
    if len(initial) != len(shape):
        raise ValueError(f"the index map takes {len(initial)} indices, the buffer has {len(shape)} dims")
    consts = [const_int(s) for s in shape]
    if None in consts:
        raise ValueError(f"an index-map layout needs a constant buffer shape, got {list(shape)}")
    try:
        layout = Layout(shape, lambda *v: [substitute(e, dict(zip(initial, v))) for e in final])
    except NotEvaluable as exc:
        raise ValueError(f"cannot evaluate the index map {index_map} (unsupported {exc})") from None
    if enumerate_exprs(layout.index, layout.forward_vars, consts) is None and \
            math.prod(consts) <= MAX_EXACT_DOMAIN:  # type: ignore[arg-type]
        raise ValueError(f"cannot evaluate the index map {index_map} on integers")
    return layout


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
    """The layout that stores every element where it is."""
    return Layout(shape, lambda *idx: list(idx))


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
        shape = _check_shape(shape)
        super().__init__(shape, lambda *idx: list(idx), storage_shape=[*shape[:-1], shape[-1] + pad],
                         params={"pad": pad})


def tile_shape_and_dtype(buffer_or_shape: Any, dtype: str | None) -> tuple[list[Any], str | None]:
    """``(shape, dtype)`` of a tile given as a buffer, buffer region or load (its own dtype wins) or as a shape
    with an optional dtype."""
    from tilelang.layout.buffers import buffer_info

    info = buffer_info(buffer_or_shape, required=False)
    if info is not None:
        return list(info[1]), info[2]
    return list(buffer_or_shape), dtype


def make_padded_layout(buffer_or_shape: Any, pad: int | None = None, dtype: str | None = None) -> Layout:
    """Pad every row of a shared tile (a buffer, or a shape) by `pad` elements (default: 16 bytes of `dtype`,
    which keeps 16-byte vector accesses aligned)."""
    shape, dtype = tile_shape_and_dtype(buffer_or_shape, dtype)
    if pad is None:
        if dtype is None:
            raise ValueError("make_padded_layout needs `pad` or a dtype")
        from tilelang.layout.buffers import dtype_bits

        pad = max(1, 128 // dtype_bits(dtype))
    return PaddedLayout(shape, pad)


register_layout_kind("padded", lambda f, shape, dtype: PaddedLayout(shape, int(f.get("pad", 0))))
