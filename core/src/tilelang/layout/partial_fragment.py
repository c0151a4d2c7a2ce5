"""`PartialFragment`: the layout of a reducer's per-thread partial results.

The same map as a `Fragment`, but its replicas are addends that a finalize collective still has to combine,
not equal copies: with ``replicate = R`` and ``combine = C`` (C divides R), ``_rep % C`` numbers the threads
whose partials are summed and ``_rep // C`` numbers groups that each compute the same partials.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tilelang.layout.fragment import Fragment
from tilelang.layout.indexing import const_int, linearize

__all__ = ["PartialFragment", "make_fully_replicated_partial_fragment"]


class PartialFragment(Fragment):
    """A `Fragment` whose first `combine` replicas hold partials to be combined (default: all of them)."""

    kind = "partial_fragment"

    def __init__(self, shape: Sequence[Any], forward_fn: Callable[..., Any] | None = None,
                 forward_thread_fn: Callable[..., Any] | None = None, replicate: int = 1,
                 forward_index_fn: Callable[..., Any] | None = None, combine: int | None = None):
        if combine is None:
            combine = replicate
        if isinstance(combine, bool) or not isinstance(combine, int) or combine < 1 or replicate % combine:
            raise ValueError(f"PartialFragment: combine ({combine}) must be >= 1 and evenly divide replicate "
                             f"({replicate}); `_rep % combine` are addend lanes, `_rep // combine` are "
                             "equal-value copy groups.")
        super().__init__(shape, forward_fn, forward_thread_fn, replicate, forward_index_fn)
        self.combine = combine

    @staticmethod
    def from_fragment(fragment: Fragment) -> PartialFragment:
        """Read a solved `Fragment` as per-thread partials: every replica is an addend."""
        if not isinstance(fragment, Fragment):
            raise TypeError(f"expected a Fragment, got {type(fragment).__name__}")
        out = PartialFragment.__new__(PartialFragment)
        out._init_fragment(list(fragment.shape), fragment.index, fragment.thread, fragment.replicate_size)
        out.combine = const_int(fragment.replicate_size) or 1
        return out

    def as_post_collective(self) -> Fragment:
        """The same map read as a plain `Fragment` (the values after the finalize collective)."""
        return Fragment._of_fragment(self.shape, self.index, self.thread, self.replicate_size)

    def is_equal(self, other: Any) -> bool:
        return isinstance(other, PartialFragment) and other.combine == self.combine and super().is_equal(other)


def make_fully_replicated_partial_fragment(shape: Sequence[Any], thread_extent: int) -> PartialFragment:
    """Every one of `thread_extent` threads holds a full-shape partial."""
    shape = list(shape)
    if isinstance(thread_extent, bool) or not isinstance(thread_extent, int) or thread_extent < 1:
        raise ValueError(f"thread_extent must be a positive int, got {thread_extent!r}")
    return PartialFragment(shape, forward_thread_fn=lambda *idx: idx[-1] if thread_extent > 1 else 0,
                           forward_index_fn=lambda *idx: linearize(list(idx), shape) if shape else 0,
                           replicate=thread_extent)
