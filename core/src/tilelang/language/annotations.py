"""Annotations: ``T.annotate_layout`` and ``T.use_swizzle`` (``AttrStmt`` over the rest of the block), and the
kernel-level ``T.func_attr``, ``T.annotate_pass_configs`` and ``T.annotate_compile_flags`` (PrimFunc attributes)."""

from __future__ import annotations

from typing import Any

from tilelang.errors import KernelTypeError
from tilelang.frontend import state as _state
from tilelang.ir import region as R

LAYOUT_MAP_ATTR = "tl.layout_map"
SWIZZLE_ATTR = "tl.swizzle"
SHARED_SCOPES = ("shared", "shared.dyn")
FRAGMENT_SCOPES = ("local.fragment",)
TMEM_SCOPES = ("shared.tmem",)  # tensor memory: the backend that allocates it checks and consumes its layout


def _user_layout(buf: Any, fn: Any) -> Any:
    """A `tilelang.layout.Layout` over `buf` from ``lambda i, j: storage indices``."""
    from tilelang.layout import Layout

    return Layout(R.buffer_shape(buf), fn)


def shared_layout(buf: Any, layout: Any) -> Any:
    """The checked `tilelang.layout.Layout` of shared tile `buf` from what the user wrote (a layout object,
    its IR form, a ``tirx.IndexMap`` or a function of the indices). Raises ValueError naming the problem."""
    import tvm_ffi

    from tilelang.layout import Layout

    if isinstance(layout, Layout):
        built = layout
    elif hasattr(layout, "to_ir"):
        built = Layout.from_ir(tvm_ffi.convert(layout.to_ir()), R.buffer_shape(buf), R.buffer_dtype(buf))
    elif isinstance(layout, tvm_ffi.Object):
        built = Layout.from_ir(layout, R.buffer_shape(buf), R.buffer_dtype(buf))
    elif callable(layout):
        from tilelang.layout import from_index_map

        built = from_index_map(_user_layout(buf, layout).index_map(), R.buffer_shape(buf))
    else:
        raise ValueError(f"must be a tilelang.layout object or a function of the indices, got {type(layout).__name__}")
    shape = [getattr(s, "value", s) for s in R.buffer_shape(buf)]
    if [getattr(s, "value", s) for s in built.shape] != shape:
        raise ValueError(f"the layout is over shape {list(built.shape)}, the buffer has shape {shape}")
    built.verify()
    return built


def _layout(buf: Any, layout: Any) -> Any:
    import tvm_ffi

    scope = R.buffer_scope(buf)
    if scope in FRAGMENT_SCOPES:  # performance-only: the pipeline chooses fragment distributions itself
        if hasattr(layout, "to_ir"):
            return tvm_ffi.convert(layout.to_ir())
        if isinstance(layout, tvm_ffi.Object):
            return layout
        if callable(layout):
            return tvm_ffi.convert(_user_layout(buf, layout).to_ir())
        raise KernelTypeError(f"T.annotate_layout: the layout of {R.describe(buf)} must be a layout object or a "
                              f"function of the indices, got {type(layout).__name__}")
    if scope not in (*SHARED_SCOPES, *TMEM_SCOPES, "global"):
        raise KernelTypeError(f"T.annotate_layout: {R.describe(buf)} is in scope {scope!r}; only shared tiles "
                              f"(T.alloc_shared), tensor-memory tiles (T.alloc_tmem), global tensors and fragments "
                              f"(T.alloc_fragment) take a layout")
    try:
        built = shared_layout(buf, layout)
    except ValueError as exc:
        raise KernelTypeError(f"T.annotate_layout: bad layout for {R.describe(buf)}: {exc}") from None
    if hasattr(layout, "to_ir"):
        return tvm_ffi.convert(layout.to_ir())
    if isinstance(layout, tvm_ffi.Object):
        return layout
    return built.index_map()  # a user function travels as a tirx.IndexMap (docs/ir.md)


def annotate_layout(layout_map: dict[Any, Any]) -> None:
    """Fix the storage layouts of shared tiles and global tensors: ``{buffer: layout}`` with `tilelang.layout`
    objects (`make_swizzled_layout`, `make_padded_layout`), index maps or ``lambda i, j: storage indices``.

    Shared-tile and global-tensor layouts are checked here (shape, one-to-one on constant tiles) and applied by
    the pipeline (a global tensor's on every target: it is the tensor's memory format); a tensor-memory tile's
    layout (e.g. ``T.make_blockscaled_gemm_layout``) is checked likewise and left to the backend that owns tensor
    memory, which refuses one it does not store; fragment layouts are accepted and ignored (the pipeline
    distributes fragments itself).
    """
    import tvm_ffi
    from tvm.script.ir_builder import tirx as B

    st = _state.require("T.annotate_layout")
    if not isinstance(layout_map, dict) or not layout_map:
        raise KernelTypeError("T.annotate_layout expects a non-empty dict {buffer: layout}")
    entries = {}
    for buf, layout in layout_map.items():
        if not R.is_buffer(buf):
            raise KernelTypeError(f"T.annotate_layout keys must be buffers, got {R.describe(buf)}")
        entries[buf] = _layout(buf, layout)
    st.enter_block_frame(B.attr(tvm_ffi.convert(entries), LAYOUT_MAP_ATTR, 0))


def use_swizzle(panel_size: int, order: str = "row", enable: bool = True) -> None:
    """Rasterise the grid in panels of `panel_size` blocks (``order`` "row" or "col") for L2 reuse."""
    import tvm
    from tvm.script.ir_builder import tirx as B

    st = _state.require("T.use_swizzle")
    if not enable:
        return
    if order not in ("row", "col", "mlx"):
        raise KernelTypeError(f"T.use_swizzle order must be 'row', 'col' or 'mlx', got {order!r}")
    if isinstance(panel_size, bool) or not isinstance(panel_size, int) or panel_size < 1:
        raise KernelTypeError(f"T.use_swizzle panel_size must be a positive int, got {panel_size!r}")
    st.enter_block_frame(B.attr(tvm.ir.StringImm(order), SWIZZLE_ATTR, panel_size))


def annotate_pass_configs(configs: dict[str, Any]) -> None:
    """Pass configurations for this kernel (``{PassConfigKey: value}``), the PrimFunc attribute
    ``tilelang_pass_configs``; configurations given to the compiler take precedence."""
    st = _state.require("T.annotate_pass_configs")
    if not isinstance(configs, dict):
        raise KernelTypeError(f"T.annotate_pass_configs expects a dict, got {type(configs).__name__}")
    st.func_attrs["tilelang_pass_configs"] = {str(getattr(k, "value", k)): v for k, v in configs.items()}


def annotate_compile_flags(flags: list[str] | str) -> None:
    """Extra device-compiler flags for this kernel (the PrimFunc attribute ``tilelang_compile_flags``)."""
    st = _state.require("T.annotate_compile_flags")
    flags = [flags] if isinstance(flags, str) else list(flags)
    if not all(isinstance(f, str) for f in flags):
        raise KernelTypeError(f"T.annotate_compile_flags expects a string or a list of strings, got {flags!r}")
    st.func_attrs["tilelang_compile_flags"] = flags


def func_attr(attrs: dict[str, Any]) -> None:
    """Attributes of the kernel's PrimFunc (``T.func_attr({"tir.noalias": True})``)."""
    st = _state.require("T.func_attr")
    if not isinstance(attrs, dict):
        raise KernelTypeError(f"T.func_attr expects a dict, got {type(attrs).__name__}")
    st.func_attrs.update(attrs)
