"""Buffer indexing with the wrong number of indices: TileLang's front end raises a ``KernelTypeError`` naming the
buffer, its dimensions and the kernel line (`tilelang.frontend.rewrite.tl_index`); `check_indices` is the same
check for code outside a kernel."""

from __future__ import annotations

from typing import Any


def check_indices(buffer: Any, indices: Any) -> None:
    """IndexError when `indices` does not give one index per dimension of `buffer`."""
    items = list(indices) if isinstance(indices, (tuple, list)) else [indices]
    ndim = len(buffer.ty.shape)
    if len(items) != ndim:
        raise IndexError(f"Buffer {buffer.name} is {ndim}-dimensional (shape={list(buffer.ty.shape)}), but "
                         f"{len(items)} index(es) were provided. Please provide exactly {ndim} index/indices.")
