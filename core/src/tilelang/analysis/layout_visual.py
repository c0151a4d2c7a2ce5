"""LayoutVisual: print (and optionally plot) the thread distribution LayoutInference chose for each fragment.

Enabled during lowering with ``pass_configs={"tl.layout_visualization_enable": True}``;
``"tl.layout_visualization_formats"`` adds pictures (``"png"``, ``"svg"``, ``"pdf"``, ``"all"`` or a comma
list; ``"txt"`` is text only) written by `tilelang.tools.plot_layout` to ``./tmp/<buffer>_layout.<fmt>``::

    C_local inferred layout:
      Shape: [64, 64] -> [32]
      Thread: (_i0 * 64 + _i1) % 128
      Index:  [(_i0 * 64 + _i1) // 128]
      Replicate:  1
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from tilelang.analysis import _ir

__all__ = ["LayoutVisual", "fragment_of_allocation", "print_fragment_format"]


def print_fragment_format(layout: Any) -> None:
    """Print a ``T.Fragment``'s shape, thread map, local index map and replication."""
    from tilelang.layout import Fragment

    if not isinstance(layout, Fragment):
        raise ValueError(f"Expected T.Fragment, but got {type(layout).__name__}")
    print("\n".join([
        f"  Shape: {list(layout.get_input_shape())} -> {list(layout.get_output_shape())}",
        f"  Thread: {layout.forward_thread}",
        f"  Index:  {list(layout.get_forward_index())}",
        f"  Replicate:  {layout.replicate_size}",
    ]))


def fragment_of_allocation(alloc: Any, threads: int) -> Any:
    """The ``T.Fragment`` LayoutInference chose for a fragment `AllocBuffer` in a block of `threads` threads."""
    from tilelang.layout import Fragment
    from tilelang.transform.layout_inference import fragment_of

    cyclic = fragment_of(alloc, threads)
    shape = list(alloc.buffer.ty.shape)
    if cyclic.replicated and threads > 1:
        return Fragment(shape, forward_thread_fn=lambda *ix: ix[-1], replicate=threads,
                        forward_index_fn=lambda *ix: cyclic.local(list(ix)))
    return Fragment(shape, forward_thread_fn=lambda *ix: cyclic.thread(list(ix)),
                    forward_index_fn=lambda *ix: cyclic.local(list(ix)))


def _formats(formats: str | Sequence[str] | None) -> list[str]:
    if formats is None:
        return []
    items = formats.split(",") if isinstance(formats, str) else [str(f) for f in formats]
    items = [f.strip().lower() for f in items if f.strip()]
    out = ["pdf", "png", "svg"] if "all" in items else items
    return [f for f in out if f != "txt"]


def LayoutVisual(formats: str | Sequence[str] = "", save_directory: str = "./tmp") -> Any:
    """A pass printing every fragment's inferred layout and plotting the 2-D ones in `formats`."""
    wanted = _formats(formats)

    def show(func: Any) -> None:
        from tilelang.tools.plot_layout import plot_layout
        from tilelang.transform import utils as C

        threads = C.block_threads(func) if C.launch_extents(func) else 1
        for alloc in C.allocations(func.body):
            if C.scope_of(alloc.buffer) != "local.fragment":
                continue
            name = _ir.buffer_name(alloc.buffer)
            layout = fragment_of_allocation(alloc, threads)
            print(f"{name} inferred layout:")
            print_fragment_format(layout)
            for fmt in wanted:
                if len(alloc.buffer.ty.shape) != 2:
                    warnings.warn(f"not plotting {name}: its shape {list(alloc.buffer.ty.shape)} is not 2-D",
                                  stacklevel=2)
                    break
                plot_layout(layout, save_directory=save_directory, name=f"{name}_layout", formats=fmt)

    return _ir.checker_pass("tl.LayoutVisual", show)
