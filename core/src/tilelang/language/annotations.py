"""Block annotations: ``T.annotate_layout`` and ``T.use_swizzle`` (``AttrStmt`` over the rest of the block)."""

from __future__ import annotations

from typing import Any

from tilelang.errors import KernelTypeError
from tilelang.frontend import state as _state
from tilelang.ir import region as R

LAYOUT_MAP_ATTR = "tl.layout_map"
SWIZZLE_ATTR = "tl.swizzle"


def _layout(buf: Any, layout: Any) -> Any:
    import tvm_ffi
    from tvm import tirx

    if hasattr(layout, "to_ir"):  # tilelang.layout objects travel as their plain-value form
        return tvm_ffi.convert(layout.to_ir())
    if isinstance(layout, tvm_ffi.Object):
        return layout
    if callable(layout):
        return tirx.IndexMap.from_func(layout, ndim=len(R.buffer_shape(buf)))
    raise KernelTypeError(f"T.annotate_layout: the layout of {R.describe(buf)} must be a layout object or a "
                          f"function of the indices, got {type(layout).__name__}")


def annotate_layout(layout_map: dict[Any, Any]) -> None:
    """Fix buffer layouts: ``{buffer: layout}`` with ``tilelang.layout`` objects, index maps or ``lambda i, j: ...``."""
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
    if order not in ("row", "col"):
        raise KernelTypeError(f"T.use_swizzle order must be 'row' or 'col', got {order!r}")
    if isinstance(panel_size, bool) or not isinstance(panel_size, int) or panel_size < 1:
        raise KernelTypeError(f"T.use_swizzle panel_size must be a positive int, got {panel_size!r}")
    st.enter_block_frame(B.attr(tvm.ir.StringImm(order), SWIZZLE_ATTR, panel_size))
