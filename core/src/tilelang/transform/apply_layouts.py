"""Shared-tile storage layouts from ``T.annotate_layout``: `AttachLayouts` checks them, `ApplyLayouts` applies them.

`AttachLayouts` (right after CheckSemantics, before the ``pre_layout`` point) reads every ``tl.layout_map``
AttrStmt, rebuilds each shared tile's `tilelang.layout.Layout` from its IR form (`Layout.from_ir`), checks it
(shape equal to the buffer's, storage indices in range and one-to-one on constant tiles) and moves it onto the
tile's ``AllocBuffer`` as the annotation ``{"tl.layout": <IR form>}``; the AttrStmt goes away. Fragment entries
are dropped: fragment layouts are performance-only here (LayoutInference decides the distribution). A global
tensor's layout (a kernel argument's) goes into the function attribute ``tl.global_layouts``. A tensor-memory
tile's (``shared.tmem``) goes onto its allocation like a shared tile's, for the backend that owns tensor memory
to check and consume at ``pre_layout``; ApplyLayouts never rewrites it. A layout on any other scope raises.
Backends' ``pre_layout`` .. ``post_parallel`` passes see the annotation and may consume it (drop it after
implementing the layout themselves).

`ApplyLayouts` (after PartitionParallel / LegalizeSafeMemoryAccess and the ``post_parallel`` point, when tile
operators are loads and stores with logical indices; before PlanSharedMemory) rewrites every annotated tile to
its storage form: the buffer gets the layout's storage shape and every ``BufferLoad`` / ``BufferStore`` index
goes through the layout's forward map (leading dimensions a layout does not cover -- the stage index that
InjectSoftwarePipeline adds -- pass through). Results are unchanged: the map is one-to-one. A tile whose
address is taken (``address_of(tile[..])``, ``tvm_access_ptr``: a backend's pointer-based tile op that reads
rows as contiguous runs) keeps row-major storage, which is always correct; the layout is then performance-only.
So does every tile when the target's ``pipeline_options["shared_layouts"]`` is false (a target without banked
shared memory, where a swizzle only costs) or the pass config ``tl.disable_shared_layouts`` is set; the
layouts are still checked. A global tensor's layout is its memory format (other kernels and the host see it), so
ApplyLayouts applies it on every target, through a view of the tensor's memory in the storage shape.
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
GLOBAL_LAYOUTS_ATTR = "tl.global_layouts"  # PrimFunc attribute written by AttachLayouts: {tensor: IR form}
GLOBAL_SCOPE = "global"
SHARED_SCOPES = ("shared", "shared.dyn")
FRAGMENT_SCOPES = ("local.fragment",)
TMEM_SCOPES = ("shared.tmem",)  # the backend owning tensor memory consumes these layouts before ApplyLayouts
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

        def on_attr(s: Any) -> Any:
            if str(s.attr_key) != LAYOUT_MAP_ATTR:
                return s
            for buf, value in s.node.items():
                scope = C.scope_of(buf)
                if scope in FRAGMENT_SCOPES:
                    continue
                if scope not in (*SHARED_SCOPES, *TMEM_SCOPES, GLOBAL_SCOPE):
                    raise C.lowering_error(
                        func, f"T.annotate_layout: buffer {buf.name} is in scope {scope!r}; only shared tiles "
                              "(T.alloc_shared), tensor-memory tiles (T.alloc_tmem), global tensors and fragments "
                              "(T.alloc_fragment) take a layout")
                _checked(func, buf, value)
                if scope == GLOBAL_SCOPE:
                    if buf in global_found and not tvm_ffi.structural_equal(global_found[buf], value):
                        raise C.lowering_error(func, f"T.annotate_layout: tensor {buf.name} has two layouts")
                    global_found[buf] = value
                else:
                    found[buf] = value
            return s.body

        global_found: dict[Any, Any] = {}
        body = tvm_ffi.structural_map(func.body, (tirx.AttrStmt, on_attr))
        if global_found:
            func = func.with_attr(GLOBAL_LAYOUTS_ATTR, global_found)
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


def pointer_uses(body: Any, buffers: set[Any], element_calls: frozenset[str] = frozenset()) -> set[Any]:
    """Those of `buffers` whose address is taken, or that appear anywhere but as the buffer of a load, a store
    or an allocation. ``address_of(A[i])`` handed straight to an extern call of `element_calls` (the target's
    element atomics: they update the one element the pointer addresses) is an access of that element, not a
    pointer use."""
    found: set[Any] = set()
    direct: dict[Any, int] = {}
    elementwise: set[Any] = set()

    def on_extern(call: Any) -> None:
        if (isinstance(call.op, tvm.ir.Op) and str(call.op.name) == "tirx.call_extern" and call.args
                and isinstance(call.args[0], tvm.ir.StringImm) and str(call.args[0].value) in element_calls):
            elementwise.update(a for a in call.args[1:] if _element_address(a))

    def on_call(call: Any) -> None:
        if call in elementwise:
            return
        if isinstance(call.op, tvm.ir.Op) and str(call.op.name) in _POINTER_OPS:
            for arg in call.args:
                C.walk(arg, [(tvm.ir.Var, lambda v: found.add(v) if v in buffers else None)])

    def count(buf: Any) -> None:
        if buf in buffers:
            direct[buf] = direct.get(buf, 0) + 1

    if element_calls:
        C.walk(body, [(tvm.ir.Call, on_extern)])
    C.walk(body, [(tvm.ir.Call, on_call), (tvm.ir.TensorLoad, lambda ld: count(ld.source)),
                  (tirx.BufferStore, lambda st: count(st.buffer)), (tirx.AllocBuffer, lambda a: count(a.buffer))])
    total: dict[Any, int] = {}
    C.walk(body, [(tvm.ir.Var, lambda v: total.__setitem__(v, total.get(v, 0) + 1) if v in buffers else None)])
    return found | {b for b in buffers if total.get(b, 0) != direct.get(b, 0)}


def _element_address(arg: Any) -> bool:
    """Whether `arg` is ``address_of`` one element (scalar indices) of a buffer."""
    if not (isinstance(arg, tvm.ir.Call) and isinstance(arg.op, tvm.ir.Op)
            and str(arg.op.name) in ("tirx.address_of", "tir.address_of") and len(arg.args) == 1):
        return False
    load = arg.args[0]
    return isinstance(load, tvm.ir.TensorLoad) and all(int(i.ty.dtype.lanes) == 1 for i in load.indices)


def _atomic_functions(target: Any) -> frozenset[str]:
    """The extern names the target's element atomics are lowered to (`tilelang.tileop`'s defaults and the
    target's ``pipeline_options["atomic_functions"]``)."""
    from tilelang.tileop.intrinsics import DEFAULT_ATOMIC_FUNCTIONS

    options = C.pipeline_options(target) if target is not None else {}
    return frozenset(str(n) for n in {**DEFAULT_ATOMIC_FUNCTIONS, **dict(options.get("atomic_functions", {}))}
                     .values())


def ApplyLayouts(target: Any = None) -> tvm.transform.Pass:
    """Rewrite annotated shared tiles to their storage layout (see the module docstring)."""

    @C.prim_func_pass("tl.ApplyLayouts")
    def apply_layouts(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        tgt = target if target is not None else (func.attrs.get("target") if func.attrs else None)
        func = _apply_global_layouts(func, _atomic_functions(tgt))
        annotated = {a.buffer: a.annotations[LAYOUT_ANN] for a in C.allocations(func.body)
                     if a.annotations and LAYOUT_ANN in a.annotations}
        if not annotated:
            return func
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

        remap = {}  # the tile in its storage shape (a layout may change the number of dims)
        for buf, (lead, layout) in plans.items():
            storage = list(buf.ty.shape)[:lead] + [tirx.IntImm("int32", s) if isinstance(s, int) else s
                                                   for s in layout.storage_shape]
            remap[buf] = C.buffer_with(buf, shape=storage)

        def mapped(buf: Any, indices: Any) -> list[Any]:
            lead, layout = plans[buf]
            idx = list(indices)
            return idx[:lead] + [analyzer.simplify(e) for e in layout.forward(idx[lead:])]

        on_load, on_store = _access_rewriters(plans, remap, mapped)

        def on_alloc(a: Any) -> Any:
            if a.buffer in annotated:
                rest = {k: v for k, v in a.annotations.items() if str(k) != LAYOUT_ANN}
                return tirx.AllocBuffer(a.buffer, rest or None)
            return a

        body = tvm_ffi.structural_map(func.body, [(tvm.ir.TensorLoad, on_load), (tirx.BufferStore, on_store),
                                                  (tirx.AllocBuffer, on_alloc)])
        return C.with_body(func, C.substitute(body, remap))

    return apply_layouts


def _access_rewriters(plans: dict[Any, Any], into: dict[Any, Any], mapped: Any) -> tuple[Any, Any]:
    """``(on_load, on_store)``: loads and stores of a buffer of `plans` go to its replacement ``into[buf]`` at the
    indices ``mapped(buf, indices)``; other accesses stay."""

    def on_load(ld: Any) -> Any:
        return tirx.BufferLoad(into[ld.source], mapped(ld.source, ld.indices)) if ld.source in plans else ld

    def on_store(st: Any) -> Any:
        if st.buffer in plans:
            return tirx.BufferStore(into[st.buffer], st.value, mapped(st.buffer, st.indices))
        return st

    return on_load, on_store


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


def _apply_global_layouts(func: Any, element_calls: frozenset[str] = frozenset()) -> Any:
    """Global tensors with a layout (``T.annotate_layout`` on a kernel argument): their elements are stored where
    the layout sends them, whatever the target (the layout is the tensor's memory format, which other kernels and
    the host read too, not a performance hint). Each access goes to a view of the tensor's memory in the
    layout's storage shape, declared at the top of every launch; so does an element atomic's ``address_of``
    (one element; `element_calls` names those calls). Any other address of the tensor is refused: a pointer
    op reads rows as contiguous runs, which the layout does not keep."""
    layouts = dict(func.attrs[GLOBAL_LAYOUTS_ATTR]) if func.attrs and GLOBAL_LAYOUTS_ATTR in func.attrs else {}
    if not layouts:
        return func
    func = func.without_attr(GLOBAL_LAYOUTS_ATTR)
    opaque = pointer_uses(func.body, set(layouts), element_calls)
    if opaque:
        raise C.lowering_error(func, f"T.annotate_layout: tensor {sorted(str(b.name) for b in opaque)[0]} has a "
                                     "layout but an operation here reads it through its address (row-major)")
    analyzer = tvm.sym.Analyzer()
    plans, views = {}, {}
    for buf, value in layouts.items():
        layout = rebuild(buf, value)
        plans[buf] = layout
        storage = [tirx.IntImm("int32", s) if isinstance(s, int) else s for s in layout.storage_shape]
        views[buf] = tirx.decl_buffer(storage, str(buf.ty.dtype), name=f"{buf.name}_stored", scope=GLOBAL_SCOPE)

    def mapped(buf: Any, indices: Any) -> list[Any]:
        return [analyzer.simplify(e) for e in plans[buf].forward(list(indices))]

    on_load, on_store = _access_rewriters(plans, views, mapped)
    body = tvm_ffi.structural_map(func.body, [(tvm.ir.TensorLoad, on_load), (tirx.BufferStore, on_store)])
    declare = [tirx.DeclBuffer(v, data=tirx.buffer_data(b)) for b, v in views.items()]

    def on_launch(s: Any, mutator: Any) -> Any:
        if str(s.attr_key) != "thread_extent" or not str(s.node.thread_tag).startswith("blockIdx"):
            return mutator.default_mutate(s)
        return tirx.AttrStmt(s.node, s.attr_key, s.value, C.seq([*declare, s.body]))

    launched = tvm_ffi.structural_mutate(body, [(tirx.AttrStmt, on_launch)])
    return C.with_body(func, launched if C.launch_extents(func) else C.seq([*declare, body]))
