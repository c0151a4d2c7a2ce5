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
    """A storage layout: ``forward(indices) -> storage indices`` over a buffer of logical shape `shape`."""

    kind = "layout"

    def __init__(self, shape: Sequence[Any], forward: IndexFn, *, storage_shape: Sequence[Any] | None = None,
                 params: dict[str, Any] | None = None):
        self.shape = list(shape)
        self._forward = forward
        self.storage_shape = list(storage_shape) if storage_shape is not None else list(shape)
        self.params = dict(params or {})

    def forward(self, indices: Sequence[Any]) -> list[Any]:
        if len(indices) != len(self.shape):
            raise ValueError(f"layout over {len(self.shape)} dims applied to {len(indices)} indices")
        return list(self._forward(list(indices)))

    def __call__(self, *indices: Any) -> list[Any]:
        return self.forward(indices)

    def to_ir(self) -> dict[str, Any]:
        """A dict of plain values (kind, shape, params) that can sit in an IR annotation."""
        return {"kind": self.kind, "shape": [int(s) for s in self.shape], **self.params}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(shape={self.shape}, {self.params})"


def identity_layout(shape: Sequence[Any]) -> Layout:
    return Layout(shape, lambda idx: list(idx))


class Fragment:
    """How a fragment tile is spread over the threads of a block.

    ``partitioned``: element with row-major offset ``f`` lives in thread ``f % num_threads`` at local index
    ``f // num_threads`` (a cyclic layout: consecutive elements on consecutive threads, so a parallel loop
    over the tile walks each thread's registers in order). ``replicated``: every thread holds the whole tile.
    """

    KINDS = ("partitioned", "replicated")

    def __init__(self, shape: Sequence[Any], num_threads: int, kind: str = "partitioned"):
        if kind not in self.KINDS:
            raise ValueError(f"fragment kind must be one of {self.KINDS}, got {kind!r}")
        self.shape = list(shape)
        self.num_threads = int(num_threads)
        self.kind = kind

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
        return -(-self.num_elements // self.num_threads)

    def thread(self, indices: Sequence[Any]) -> Any:
        """The thread that holds the element at `indices` (0 for a replicated fragment: every thread does)."""
        return 0 if self.replicated else linearize(indices, self.shape) % self.num_threads

    def local(self, indices: Sequence[Any]) -> Any:
        """The element's index in its thread's local storage."""
        offset = linearize(indices, self.shape)
        return offset if self.replicated else offset // self.num_threads

    def to_ir(self) -> str:
        return self.kind

    @classmethod
    def from_ir(cls, shape: Sequence[Any], num_threads: int, value: Any) -> Fragment:
        return cls(shape, num_threads, str(value))

    def __repr__(self) -> str:
        return f"Fragment(shape={self.shape}, threads={self.num_threads}, {self.kind})"
