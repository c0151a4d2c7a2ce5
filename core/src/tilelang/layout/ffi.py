"""The reference's ``_ffi_api.Layout_*`` / ``Fragment_*`` entry points over this package's classes
(`tilelang._ffi_api` resolves those names here). Errors match the reference's: bad arguments raise ValueError."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tilelang.layout.fragment import Fragment
from tilelang.layout.layout import Layout


def layout_repeat(layout: Layout, dim: int, factor: int) -> Layout:
    return layout.repeat(int(dim), int(factor))


def layout_expand(layout: Layout, leading_shape: Sequence[Any]) -> Layout:
    return layout.expand(list(leading_shape))


def layout_inverse(layout: Layout) -> Layout:
    return layout.inverse()


def layout_reshape(layout: Layout, shape: Sequence[Any], rescale_num: int = 1, rescale_den: int = 1) -> Layout:
    return layout.reshape(shape, rescale_num, rescale_den)


def layout_is_equal(a: Layout, b: Layout) -> bool:
    return a.is_equal(b)


def layout_index(layout: Layout) -> list[Any]:
    return layout.index


def layout_input_shape(layout: Layout) -> list[Any]:
    return layout.get_input_shape()


def layout_output_shape(layout: Layout) -> list[Any]:
    return layout.get_output_shape()


def layout_forward_vars(layout: Layout) -> list[Any]:
    return layout.get_forward_vars()


def layout_linearized_index(layout: Layout) -> Any:
    return layout.get_linearized_forward_index()


def fragment_thread(fragment: Fragment) -> Any:
    return fragment.thread


def fragment_thread_size(fragment: Fragment) -> Any:
    return fragment.get_thread_size()


def fragment_repeat(fragment: Fragment, repeats: Any, repeat_on_thread: bool, lower_dim_first: bool) -> Fragment:
    return fragment.repeat(repeats, repeat_on_thread, lower_dim_first)


def fragment_replicate(fragment: Fragment, replicate: int) -> Fragment:
    return fragment.replicate(int(replicate))


def fragment_condense_rep_var(fragment: Fragment) -> Fragment:
    return fragment.condense_rep_var()


def make_linear_layout(shape: Sequence[Any]) -> Layout:
    from tilelang.layout.indexing import linearize

    shape = list(shape)
    return Layout(shape, lambda *idx: linearize(list(idx), shape) if shape else 0)


def make_fully_replicated_layout_fragment(shape: Sequence[Any], threads: int) -> Fragment:
    from tilelang.layout.indexing import linearize

    shape = list(shape)
    return Fragment(shape, forward_thread_fn=lambda *idx: idx[-1] if threads > 1 else 0,
                    forward_index_fn=lambda *idx: linearize(list(idx), shape) if shape else 0, replicate=threads)
