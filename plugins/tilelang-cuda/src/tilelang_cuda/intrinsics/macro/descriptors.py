"""Shared-memory matrix descriptors of wgmma (sm_90a) and tcgen05 (sm_100a), computed from a tile's layout.

Both instructions read an operand tile through a descriptor: start address, swizzle mode, and two byte strides
in 16-byte units: the *leading* (LBO) and *stride* (SBO) offsets between the 8 x 16-byte core matrices of the
canonical layouts (CuTe ``make_gmma_desc`` / ``make_umma_desc``). In 128-bit units, with ``W = 2^b`` the
swizzle's width in 16-byte vectors (1, 2, 4, 8 for none, 32B, 64B, 128B):

- K-major ``((8, m), (2, k)) : ((W, SBO), (1, LBO))`` -- LBO is 1 when swizzled;
- MN-major ``((W, m), (8, k)) : ((1, LBO), (W, SBO))`` (swizzled; unswizzled tiles swap the two roles).

`analyze` recovers ``Sw o layout`` from a TileLang layout (`cute.ComposedLayout.from_tilelang`), restricts it to
the operand's region (a pipeline stage or a K slice becomes a byte offset of the slice origin), recasts it to
128-bit units and reads the strides off `cute.logical_divide` by the canonical tiler. A layout that is not
canonical is a programming error (AssertionError), as CuTe's static assertions are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DescriptorAnalysis:
    swizzle_mode: Any
    leading_byte_offset: int
    stride_byte_offset: int
    mn_extent: int
    elem_bits: int
    is_k_major: bool
    slice_byte_offset: Any


def _leaves(stride: Any) -> list[int]:
    if isinstance(stride, tuple):
        return [x for s in stride for x in _leaves(s)]
    return [int(stride)]


def _bits(buffer: Any) -> int:
    from tilelang.backend.sdk import buffer_info, dtype_bits

    return int(dtype_bits(buffer_info(buffer)[2]))


def analyze(tl_layout: Any, buffer: Any, transposed: bool, region: Any = None, what: str = "WGMMA") -> \
        DescriptorAnalysis:
    """The descriptor fields of `buffer` stored through `tl_layout`, as operand ``[MN, K]`` (``[K, MN]`` when
    `transposed`), restricted to `region` (one Range per buffer mode) when given."""
    import tvm

    from tilelang.layout import cute

    bits = _bits(buffer)
    composed = cute.ComposedLayout.from_tilelang(tl_layout)
    if composed is None:
        raise AssertionError(f"{what} operand layout is not decodable by the CuTe analyzer: {tl_layout}")
    byte_swizzle = composed.recast(bits, 8).swizzle
    mode = byte_swizzle.to_swizzle_mode()
    tile, slice_bytes = composed.layout, 0
    if region is not None:
        origin, tile = cute.restrict(composed.layout, list(region))
        slice_bytes = origin * bits // 8 if isinstance(origin, int) else tvm.sym.Analyzer().simplify(origin * bits // 8)
    if cute.rank(tile) != 2:
        raise AssertionError(f"{what} operand tile must be rank-2 (MN, K), got rank {cute.rank(tile)}")
    mn_i, k_i = (1, 0) if transposed else (0, 1)
    mn_extent = int(cute.size(tile[mn_i]))
    ordered = cute.make_layout([tile[mn_i], tile[k_i]])
    u128 = cute.ComposedLayout(composed.swizzle, composed.offset, ordered).recast(bits, 128)
    mn_mode, k_mode = u128.layout[0], u128.layout[1]
    k_major = not transposed
    if (min(_leaves(k_mode.stride)) == 1) != k_major:
        raise AssertionError(f"{what} operand layout is {'MN' if k_major else 'K'}-major but the operand is "
                             f"{'K' if k_major else 'MN'}-major (transposed={transposed}); only row-major operand "
                             "layouts are supported")
    w = 1 << byte_swizzle.b_bits
    swizzled = not mode.is_none()
    if k_major:
        d_mn = cute.logical_divide(mn_mode, cute.make_layout(8, 1))
        d_k = cute.logical_divide(k_mode, cute.make_layout(2, 1))
    else:
        d_mn = cute.logical_divide(mn_mode, cute.make_layout(w, 1))
        d_k = cute.logical_divide(k_mode, cute.make_layout(8, 1))
    if not (cute.congruent(d_mn.shape, (1, 1)) and cute.congruent(d_k[0].shape, 1)):
        raise AssertionError(f"{what} operand is not a canonical layout: divided MN={d_mn.shape}, "
                             f"K-tile={d_k[0].shape}")
    mn_tile_stride, mn_rest_stride = (int(s) for s in d_mn.stride)
    k_tile_stride = int(d_k.stride[0])
    if k_major:
        if mn_tile_stride != w:
            raise AssertionError(f"Not a canonical {what} K-major layout: stride<0,0>={mn_tile_stride} != W={w}")
        if swizzled and k_tile_stride != 1:
            raise AssertionError(f"Not a canonical {what} K-major layout: stride<1,0>={k_tile_stride} != 1")
        sbo, lbo = mn_rest_stride, k_tile_stride
    else:
        if not cute.congruent(d_k.shape, (1, 1)):
            raise AssertionError(f"{what} MN-major operand is not a canonical layout: divided K={d_k.shape}")
        k_rest_stride = int(d_k.stride[1])
        if swizzled and mn_tile_stride != 1:
            raise AssertionError(f"Not a canonical {what} MN-major layout: stride<0,0>={mn_tile_stride} != 1")
        if k_tile_stride != w:
            raise AssertionError(f"Not a canonical {what} MN-major layout: stride<1,0>={k_tile_stride} != W={w}")
        sbo, lbo = (k_rest_stride, mn_rest_stride) if swizzled else (mn_rest_stride, k_rest_stride)
    return DescriptorAnalysis(mode, int(lbo), int(sbo), mn_extent, bits, k_major, slice_bytes)
