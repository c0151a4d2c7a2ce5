"""Shared-tile storage layouts from ``T.annotate_layout``: `AttachLayouts` checks them, `ApplyLayouts` applies them.

`AttachLayouts` (right after CheckSemantics, before the ``pre_layout`` point) reads every ``tl.layout_map``
AttrStmt, rebuilds each shared tile's `tilelang.layout.Layout` from its IR form (`Layout.from_ir`), checks it
(shape equal to the buffer's, storage indices in range and one-to-one on constant tiles) and moves it onto the
tile's ``AllocBuffer`` as the annotation ``{"tl.layout": <IR form>}``; the AttrStmt goes away. A global tensor's
layout (a kernel parameter) goes into the PrimFunc attribute ``tl.global_layouts`` ({buffer: IR form}). Fragment
entries are dropped: fragment layouts are performance-only here (LayoutInference decides the distribution). A
layout on any other scope raises. Backends' ``pre_layout`` .. ``post_parallel`` passes see the annotation and may
consume it (drop it after implementing the layout themselves).

`ApplyLayouts` (after PartitionParallel / LegalizeSafeMemoryAccess and the ``post_parallel`` point, when tile
operators are loads and stores with logical indices; before PlanSharedMemory) rewrites every annotated tile to
its storage form: the buffer gets the layout's storage shape and every ``BufferLoad`` / ``BufferStore`` index
goes through the layout's forward map (leading dimensions a layout does not cover -- the stage index that
InjectSoftwarePipeline adds -- pass through). Results are unchanged: the map is one-to-one. A tile whose
address is taken (``address_of(tile[..])``, ``tvm_access_ptr``: a backend's pointer-based tile op that reads
rows as contiguous runs) keeps row-major storage, which is always correct; the layout is then performance-only.
So does every tile when the target's ``pipeline_options["shared_layouts"]`` is false (a target without banked
shared memory, where a swizzle only costs) or the pass config ``tl.disable_shared_layouts`` is set; the
layouts are still checked.

A global tensor's layout is observable (it is the order its elements have in the caller's memory, which another
kernel annotated with the same layout reads back), so it is always applied, on every target: the tensor's loads
and stores in the body go through the forward map into a view of the same data with the layout's storage shape
(the parameter keeps its shape). A global tensor with a layout whose address a backend's tile op takes cannot
keep that promise and raises.
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C
from tilelang.transform.config import current_tl_config

LAYOUT_MAP_ATTR = "tl.layout_map"
LAYOUT_ANN = "tl.layout"  # AllocBuffer annotation written by AttachLayouts: the layout's IR form
SHARED_SCOPES = ("shared", "shared.dyn")
GLOBAL_SCOPES = ("global",)
GLOBAL_LAYOUTS_ATTR = "tl.global_layouts"  # PrimFunc attribute written by AttachLayouts: {buffer: IR form}
FRAGMENT_SCOPES = ("local.fragment",)
_POINTER_OPS = ("tirx.address_of", "tirx.tvm_access_ptr", "tir.address_of", "tir.tvm_access_ptr")


def rebuild(buf: Any, value: Any, shape: list[Any] | None = None) -> Any:
    """The `tilelang.layout.Layout` of the IR form `value` over `shape` (default: `buf`'s shape)."""
    from tilelang.layout import Layout

    return Layout.from_ir(value, list(buf.ty.shape) if shape is None else shape, str(buf.ty.dtype))


def _checked(func: Any, buf: Any, value: Any) -> Any:
    name = str(buf.name)
    try:
        layout = rebuild(buf, value)
        shape = [C.as_int(s) if C.as_int(s) is not None else s for s in buf.ty.shape]
        if [C.as_int(s) if C.as_int(s) is not None else s for s in layout.shape] != shape:
            raise ValueError(f"the layout is over shape {list(layout.shape)}, the buffer has shape {shape}")
        layout.verify()
    except ValueError as exc:
        raise C.lowering_error(func, f"T.annotate_layout: bad layout for buffer {name}: {exc}") from None
    return layout


def AttachLayouts(target: Any = None) -> tvm.transform.Pass:
    """Check ``tl.layout_map`` entries and move shared-tile layouts onto allocations (see the module docstring)."""

    @C.prim_func_pass("tl.AttachLayouts")
    def attach_layouts(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        found: dict[Any, Any] = {}
        global_found: dict[Any, Any] = {}
        params = set(func.params)

        def on_attr(s: Any) -> Any:
            if str(s.attr_key) != LAYOUT_MAP_ATTR:
                return s
            for buf, value in s.node.items():
                scope = C.scope_of(buf)
                if scope in FRAGMENT_SCOPES:
                    continue
                if scope in GLOBAL_SCOPES and buf in params:
                    _checked(func, buf, value)
                    global_found[buf] = value
                    continue
                if scope not in SHARED_SCOPES:
                    raise C.lowering_error(
                        func, f"T.annotate_layout: buffer {buf.name} is in scope {scope!r}; only shared tiles "
                              "(T.alloc_shared), fragments (T.alloc_fragment) and the kernel's global tensors "
                              "take a layout")
                _checked(func, buf, value)
                found[buf] = value
            return s.body

        body = tvm_ffi.structural_map(func.body, (tirx.AttrStmt, on_attr))
        if global_found:
            func = func.with_attr(GLOBAL_LAYOUTS_ATTR, tvm_ffi.convert(global_found))
        if not found:
            return C.with_body(func, body) if not body.same_as(func.body) else func

        def on_alloc(a: Any) -> Any:
            if a.buffer in found:
                ann = dict(a.annotations or {})
                ann[LAYOUT_ANN] = found[a.buffer]
                return tirx.AllocBuffer(a.buffer, ann)
            return a

        return C.with_body(func, tvm_ffi.structural_map(body, (tirx.AllocBuffer, on_alloc)))

    return attach_layouts


def pointer_uses(body: Any, buffers: set[Any]) -> set[Any]:
    """Those of `buffers` whose address is taken, or that appear anywhere but as the buffer of a load, a store
    or an allocation."""
    found: set[Any] = set()
    direct: dict[Any, int] = {}

    def on_call(call: Any) -> None:
        if isinstance(call.op, tvm.ir.Op) and str(call.op.name) in _POINTER_OPS:
            for arg in call.args:
                C.walk(arg, [(tvm.ir.Var, lambda v: found.add(v) if v in buffers else None)])

    def count(buf: Any) -> None:
        if buf in buffers:
            direct[buf] = direct.get(buf, 0) + 1

    C.walk(body, [(tvm.ir.Call, on_call), (tvm.ir.TensorLoad, lambda ld: count(ld.source)),
                  (tirx.BufferStore, lambda st: count(st.buffer)), (tirx.AllocBuffer, lambda a: count(a.buffer))])
    total: dict[Any, int] = {}
    C.walk(body, [(tvm.ir.Var, lambda v: total.__setitem__(v, total.get(v, 0) + 1) if v in buffers else None)])
    return found | {b for b in buffers if total.get(b, 0) != direct.get(b, 0)}


def ApplyLayouts(target: Any = None) -> tvm.transform.Pass:
    """Rewrite annotated shared tiles to their storage layout (see the module docstring)."""

    @C.prim_func_pass("tl.ApplyLayouts")
    def apply_layouts(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        annotated = {a.buffer: a.annotations[LAYOUT_ANN] for a in C.allocations(func.body)
                     if a.annotations and LAYOUT_ANN in a.annotations}
        global_layouts = dict(func.attrs.get(GLOBAL_LAYOUTS_ATTR) or {}) if func.attrs else {}
        if not annotated and not global_layouts:
            return func
        tgt = target if target is not None else (func.attrs.get("target") if func.attrs else None)
        enabled = (tgt is None or bool(C.pipeline_options(tgt).get("shared_layouts", True))) and not bool(
            current_tl_config("tl.disable_shared_layouts", False))
        opaque = pointer_uses(func.body, set(annotated)) if enabled else set(annotated)
        analyzer = tvm.sym.Analyzer()
        plans: dict[Any, tuple[int, Any]] = {}  # buffer -> (leading dims, layout)
        for buf, value in annotated.items():
            if buf in opaque or C.scope_of(buf) not in SHARED_SCOPES:
                continue
            shape = list(buf.ty.shape)
            layout = _trailing_layout(func, buf, value, shape)
            if layout is not None:
                plans[buf] = (len(shape) - len(layout.shape), layout)
        for buf in pointer_uses(func.body, set(global_layouts)):
            raise C.lowering_error(
                func, f"T.annotate_layout: the layout of global tensor {buf.name} cannot be applied: a tile "
                      "operator of this target takes its address (reads it as contiguous rows); drop the layout")
        for buf, value in global_layouts.items():
            plans[buf] = (0, rebuild(buf, value))

        remap = {}  # the tile in its storage shape (a layout may change the number of dims)
        for buf, (lead, layout) in plans.items():
            storage = list(buf.ty.shape)[:lead] + [tirx.IntImm("int32", s) if isinstance(s, int) else s
                                                   for s in layout.storage_shape]
            remap[buf] = C.buffer_with(buf, shape=storage)
        views = [tirx.DeclBuffer(remap[buf], data=tirx.buffer_data(buf)) for buf in global_layouts]

        def mapped(buf: Any, indices: Any) -> list[Any]:
            lead, layout = plans[buf]
            idx = list(indices)
            return idx[:lead] + [analyzer.simplify(e) for e in layout.forward(idx[lead:])]

        def on_load(ld: Any) -> Any:
            return tirx.BufferLoad(remap[ld.source], mapped(ld.source, ld.indices)) if ld.source in plans else ld

        def on_store(st: Any) -> Any:
            if st.buffer in plans:
                return tirx.BufferStore(remap[st.buffer], st.value, mapped(st.buffer, st.indices))
            return st

        def on_alloc(a: Any) -> Any:
            if a.buffer in annotated:
                rest = {k: v for k, v in a.annotations.items() if str(k) != LAYOUT_ANN}
                return tirx.AllocBuffer(a.buffer, rest or None)
            return a

        body = tvm_ffi.structural_map(func.body, [(tvm.ir.TensorLoad, on_load), (tirx.BufferStore, on_store),
                                                  (tirx.AllocBuffer, on_alloc)])
        if global_layouts:  # the storage views of global tensors, declared inside the thread launches
            func = func.without_attr(GLOBAL_LAYOUTS_ATTR)
            body = _declare_inside_launches(body, views)
            return C.with_body(func, C.substitute(body, {b: v for b, v in remap.items() if b not in global_layouts}))
        return C.with_body(func, C.substitute(body, remap))

    return apply_layouts


def _declare_inside_launches(body: Any, decls: list[Any]) -> Any:
    """`body` with `decls` in front of the statements under its leading thread launches."""
    if isinstance(body, tirx.AttrStmt) and str(body.attr_key) == "thread_extent":
        return tirx.AttrStmt(body.node, body.attr_key, body.value, _declare_inside_launches(body.body, decls))
    return C.seq([*decls, body])


def _trailing_layout(func: Any, buf: Any, value: Any, shape: list[Any]) -> Any:
    """The layout over the trailing dims of `buf` it was written for (a multi-buffered tile has a stage dim in
    front), or None when a backend pass reshaped the tile since AttachLayouts checked it (the tile then keeps
    row-major storage)."""
    from tilelang.layout.layout import _plain

    fields = {str(k): _plain(v) for k, v in value.items()} if hasattr(value, "items") else {}
    if "shape" in fields:
        ndim = len(fields["shape"])
    elif isinstance(value, tirx.IndexMap):
        ndim = len(value.initial_indices)
    else:
        ndim = len(shape)
    trailing = [C.as_int(s) if C.as_int(s) is not None else s for s in shape[len(shape) - ndim:]]
    if ndim > len(shape) or ("shape" in fields and [int(s) for s in fields["shape"]] != trailing):
        return None
    try:
        return rebuild(buf, value, shape[len(shape) - ndim:])
    except ValueError as exc:
        raise C.lowering_error(func, f"T.annotate_layout: bad layout for buffer {buf.name}: {exc}") from None
