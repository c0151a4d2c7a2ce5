"""Register fragments of Blackwell tensor-memory copies (``tcgen05.ld`` / ``tcgen05.st``), by CuTe layout algebra.

Each data-movement shape is an atom: the CUTLASS ``Copy_Traits<...1x>`` thread-value layout of one PTX issue
of one warp, ``(lane.., register..) -> (datapath@0, b32 column@1)``. `expand_tcgen05_layout` tiles an atom over
a tensor-memory tile -- warps one 32-datapath sub-partition apart, a 16-datapath atom issued twice (low and
high half) unless the tile only occupies the low halves (PTX Layout F), ``.xN`` column repetitions,
warpgroups splitting the columns, one issue per contiguous run -- and inverts the result into the fragment
``tile coordinate -> (thread@0, value@1)`` a kernel's registers follow. No plan (None) when the tile does
not divide into whole instructions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Tcgen05CopyPlan", "Tcgen05Meta", "expand_tcgen05_layout", "meta_ld_16dp128b", "meta_ld_16dp256b",
           "meta_ld_16dp64b", "meta_ld_32dp32b", "meta_st_16dp128b", "meta_st_16dp256b", "meta_st_16dp64b",
           "meta_st_32dp32b"]

WARPGROUP = 128


@dataclass(frozen=True)
class Tcgen05Meta:
    """One tcgen05 data-movement shape: the wrapper it lowers to, its one-issue TV atom (CuTe text), and the
    largest ``.xN`` of one issue (0: the wrapper chains repetitions exactly, any N works)."""

    intrinsics_name: str
    tv_text: str
    max_chunks: int

    @property
    def tv(self) -> Any:
        from tilelang.layout import cute

        return cute.Layout.parse(self.tv_text)


# (lane, register) atoms over (datapath@0, b32 column@1), from CUTLASS copy_traits_sm100.hpp:
#   32x32b: lane t -> datapath t, one column per repetition
#   16x64b: lane t -> datapath 8*(t%2) + t/4, column (t/2)%2
#   16x128b: lane t -> datapath t/4, column t%4; two registers 8 datapaths apart
#   16x256b: lane t -> datapath t/4, column 2*(t%4); four registers (adjacent column, 8 datapaths)
_ATOMS = {
    "32dp32b": ("32dp32b", "(32,1):(1@0,0)", 0),
    "16dp64b": ("32dp64b", "((2,2,8),1):((8@0,1@1,1@0),0)", 128),
    "16dp128b": ("32dp128b", "((4,8),2):((1@1,1@0),8@0)", 64),
    "16dp256b": ("32dp256b", "((4,8),(2,2)):((2@1,1@0),(1@1,8@0))", 32),
}


def _meta(shape: str, store: bool) -> Tcgen05Meta:
    suffix, tv, max_chunks = _ATOMS[shape]
    return Tcgen05Meta(f"tl::tcgen05_{'st' if store else 'ld'}_{suffix}Nx", tv, max_chunks)


def meta_ld_32dp32b() -> Tcgen05Meta:
    return _meta("32dp32b", False)


def meta_ld_16dp64b() -> Tcgen05Meta:
    return _meta("16dp64b", False)


def meta_ld_16dp128b() -> Tcgen05Meta:
    return _meta("16dp128b", False)


def meta_ld_16dp256b() -> Tcgen05Meta:
    return _meta("16dp256b", False)


def meta_st_32dp32b() -> Tcgen05Meta:
    return _meta("32dp32b", True)


def meta_st_16dp64b() -> Tcgen05Meta:
    return _meta("16dp64b", True)


def meta_st_16dp128b() -> Tcgen05Meta:
    return _meta("16dp128b", True)


def meta_st_16dp256b() -> Tcgen05Meta:
    return _meta("16dp256b", True)


@dataclass(frozen=True)
class Tcgen05CopyPlan:
    """How a tile moves: `fragment` (tile coordinate -> (thread@0, value@1)), ``.xN`` repetitions per warpgroup,
    `rest_domain` (issue -> flat tile origin), issues, values per thread per issue, datapaths per warp."""

    fragment: Any
    num_chunks_each_wg: int
    rest_domain: Any
    num_issues: int
    vals_per_issue: int
    datapaths_per_warp: int


def _is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def expand_tcgen05_layout(meta: Tcgen05Meta, tmem_tile: Any, num_threads: int,
                          values_per_column: int = 1) -> Tcgen05CopyPlan | None:
    """Plan copying `tmem_tile` (tile coordinate -> (datapath@0, column@1)) with `num_threads` threads through
    the shape `meta` (see the module docstring); None when no plan exists."""
    from tilelang.layout import cute

    if num_threads <= 0 or num_threads % WARPGROUP:
        raise ValueError(f"expand_tcgen05_layout needs a positive multiple of {WARPGROUP} threads, got {num_threads}")
    if values_per_column < 1:
        raise ValueError(f"values_per_column must be >= 1, got {values_per_column}")
    num_wgs = num_threads // WARPGROUP
    tv = meta.tv
    dp_only = cute.Layout.parse("(1,1):(1,0)")
    col_only = cute.Layout.parse("(1,1):(0,1)")
    atom_dp = cute.cosize(cute.composition(dp_only, tv))
    width = cute.cosize(cute.composition(col_only, tv))

    # datapaths a warp covers: the tile's contiguous datapath run, at most one 32-lane sub-partition
    dp_run = cute.size(cute.right_inverse(cute.composition(dp_only, tmem_tile)))
    dp_per_warp = min(dp_run, 32)
    if dp_per_warp % atom_dp:
        return None
    ndup = dp_per_warp // atom_dp
    dp_per_issue = 4 * dp_per_warp
    partial = dp_per_warp < 32  # Layout F: only the low half of each sub-partition

    serialized = cute.composition(cute.Layout.parse("(1,1):(1,128)"), tmem_tile)  # -> datapath + 128 * column
    total = cute.size(serialized)
    inv_prefix = cute.right_inverse(serialized)
    if partial:  # an issue spans the tile's contiguous column run over all of its (gapped) datapaths
        col_run = cute.size(cute.right_inverse(cute.composition(col_only, tmem_tile)))
        per_issue = dp_per_issue * col_run
    else:  # an issue is the tile's longest contiguous run of TMEM
        per_issue = cute.size(inv_prefix)
    if per_issue % dp_per_issue or total % per_issue:
        return None
    num_issues = total // per_issue
    rest_domain = cute.make_layout(1, stride=0)
    if num_issues > 1 and not partial:  # issue -> flat logical origin: what the run leaves of the tile
        rest_domain = cute.logical_divide(cute.make_column_major_layout(cute.size(tmem_tile)), inv_prefix)[1]

    cols_per_issue = per_issue // dp_per_issue
    if cols_per_issue % width:
        return None
    chunks = cols_per_issue // width
    if chunks % num_wgs:
        return None
    chunks_per_wg = chunks // num_wgs
    pack = values_per_column if partial else 1
    if chunks_per_wg % pack:
        return None
    reps = chunks_per_wg // pack
    if meta.max_chunks and (not _is_pow2(reps) or reps > meta.max_chunks):
        return None  # a 16-datapath atom must stay one .xN issue per warpgroup

    # what one wrapper call covers: ((lane, (warp, wg)), (pack, register, (rep, dup))) -> serialized TMEM
    b32_col = 128 * pack
    atom = cute.composition(cute.make_layout((1, 1), stride=(1, b32_col)), tv)
    concat = cute.make_layout
    tiled = concat([concat([atom[0], cute.make_layout((4, num_wgs), stride=(32, b32_col * width * reps))]),
                    concat([cute.make_layout((pack,), stride=(128,)), atom[1],
                            cute.make_layout((reps, ndup), stride=(b32_col * width, 16))])])
    to_logical = cute.left_inverse(serialized) if partial else inv_prefix
    if num_issues > 1 and partial:  # the issues tile what one issue's footprint leaves of the tile
        rest_domain = cute.complement(cute.composition(to_logical, tiled), total)
    if cute.size(rest_domain) != num_issues:
        return None
    tile_tv = concat([cute.composition(to_logical, tiled[0]),
                      concat([cute.composition(to_logical, tiled[1]), rest_domain])])
    num_vals = cute.size(tile_tv[1])
    inv_tv = cute.right_inverse(tile_tv)
    if cute.size(inv_tv) != total:
        return None
    tile_shape = tuple(cute.product(tmem_tile[i].shape) for i in range(cute.rank(tmem_tile)))
    fragment = cute.composition(cute.make_identity_layout((num_threads, num_vals)), inv_tv).with_shape(tile_shape)
    return Tcgen05CopyPlan(fragment, chunks_per_wg, rest_domain, num_issues, per_issue // num_threads, dp_per_warp)
