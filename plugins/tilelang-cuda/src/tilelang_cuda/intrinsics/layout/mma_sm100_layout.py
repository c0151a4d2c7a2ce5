"""Tensor-memory (TMEM) fragments of Blackwell ``tcgen05.mma`` operands, in CuTe layout algebra.

TMEM is 128 datapaths (rows) by 512 columns of 32 bits. A fragment maps a buffer coordinate (batch..., M, N)
to a hierarchical ``(datapath, column)`` pair: a CuTe `Layout` whose strides are scaled bases ``E(0)`` (datapath)
and ``E(1)`` (column, counted in the buffer's value type). It is built the way CUTLASS's ``tmem_frg`` does:

1. an *atom* in virtual TMEM addressing (``address = datapath + 128 * column``): one of the data-path
   organisations of the PTX ISA ("tcgen05 Matrix fragments", Layouts A-G);
2. the atom repeated over the buffer's M and N tiles (and its leading batch modes, which continue along the
   columns) with `cute.blocked_product`; the first tile step is the atom's *tile stride* (1: a second M tile of a
   half-datapath atom fills the free 16-datapath halves; 2: it starts in fresh columns);
3. the virtual addresses re-strided into ``(datapath, column)``; a 16-bit accumulator keeps one value per 32-bit
   column (its column stride is ``storage_bits / value_bits``).

========== ====================== =================================
PTX layout instruction            virtual atom
========== ====================== =================================
A          cta_group::2, M=256    ``(128, N):(1, 128)``
B          cta_group::2, M=128    ``(64, (N/2, 2)):(1, (128, 64))``
C          cta_group::2, M=64     ``(32, (N/4, 4)):(1, (128, 32))``
D          cta_group::1, M=128    ``(128, N):(1, 128)``
E          cta_group::1, M=64 .ws ``(64, (N/2, 2)):(1, (128, 64))``
F          cta_group::1, M=64     ``((16, 4), N):((1, 32), 128)``
G          cta_group::1, M=32 .ws ``(32, (N/4, 4)):(1, (128, 32))``
========== ====================== =================================

`to_tilelang()` of a fragment is the `tilelang.layout.Layout` that travels through layout maps;
``cute.Layout.from_tilelang_hierarchical`` recovers the hierarchical form from it.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["TCGEN05Meta", "TCGEN05TmemAllocMode", "TMEM_COLUMNS", "TMEM_DATAPATHS", "make_tmem_frg",
           "make_tmem_frg_a", "make_tmem_frg_atom", "make_tmem_frg_c", "make_tmem_frg_ws_atom",
           "validate_tcgen05_ts_instruction"]

TMEM_DATAPATHS = 128
TMEM_COLUMNS = 512  # 32-bit columns


class TCGEN05TmemAllocMode(enum.Enum):
    """How the tiles of a fragment share TMEM (CUTLASS ``UMMA::TmemAllocMode``)."""

    INTERLEAVED = "interleaved"
    NON_INTERLEAVED = "non_interleaved"
    DUPLICATED = "duplicated"


@dataclass(frozen=True)
class TCGEN05Meta:
    """One ``tcgen05.mma`` instruction shape: M, N, K of the atom, weight-stationary (``.ws``), two-CTA pair."""

    atom_m: int
    atom_n: int
    atom_k: int
    enable_ws: bool
    enable_2cta: bool

    @classmethod
    def from_ffi(cls, values: Iterable[Any]) -> TCGEN05Meta:
        """From the five-integer form ``(m, n, k, ws, 2cta)``."""
        m, n, k, ws, two = (int(v) for v in values)
        return cls(m, n, k, bool(ws), bool(two))

    @property
    def num_sms(self) -> int:
        return 2 if self.enable_2cta else 1

    @property
    def atom_m_per_cta(self) -> int:
        return self.atom_m // self.num_sms

    @property
    def b_atom_n_per_cta(self) -> int:
        """The N extent of B each CTA of a pair holds (a two-CTA instruction reads half of B from each)."""
        return self.atom_n // self.num_sms


def _cute() -> Any:
    from tilelang.layout import cute

    return cute


def _bits(dtype: Any) -> int:
    from tilelang.backend.sdk import dtype_bits

    return int(dtype_bits(str(dtype)))


def make_tmem_frg_atom(num_sms: int, alloc_mode: TCGEN05TmemAllocMode, atom_m: int,
                       atom_n: int) -> tuple[Any, int]:
    """``(virtual atom, tile stride)`` for an instruction of `num_sms` CTAs whose per-CTA M extent is `atom_m`."""
    cute = _cute()
    if num_sms == 1:
        if alloc_mode not in (TCGEN05TmemAllocMode.INTERLEAVED, TCGEN05TmemAllocMode.NON_INTERLEAVED):
            raise ValueError(f"a one-CTA TMEM fragment cannot use the {alloc_mode.value} allocation")
        if atom_m == 128:  # Layout D
            return cute.make_layout((128, atom_n)), 1
        if atom_m == 64:  # Layout F: datapaths 0-15, 32-47, 64-79, 96-111
            stride = 1 if alloc_mode is TCGEN05TmemAllocMode.INTERLEAVED else 2
            return cute.make_layout(((16, 4), atom_n), ((1, 32), 128)), stride
        raise ValueError(f"a one-CTA TMEM fragment has an M atom of 64 or 128, got {atom_m}")
    if num_sms == 2:
        if alloc_mode not in (TCGEN05TmemAllocMode.INTERLEAVED, TCGEN05TmemAllocMode.DUPLICATED):
            raise ValueError(f"a two-CTA TMEM fragment cannot use the {alloc_mode.value} allocation")
        if atom_m == 128:  # Layout A (half of M=256 per CTA)
            return cute.make_layout((128, atom_n)), 1
        if atom_m == 64:
            if alloc_mode is TCGEN05TmemAllocMode.DUPLICATED:  # both halves hold the whole 64 rows
                return cute.make_layout((128, atom_n)), 1
            if atom_n % 2:
                raise ValueError(f"a two-CTA M64 TMEM fragment needs an even N atom, got {atom_n}")
            return cute.make_layout((64, (atom_n // 2, 2)), (1, (128, 64))), 1  # Layout B
        if atom_m == 32:
            if alloc_mode is not TCGEN05TmemAllocMode.INTERLEAVED:
                raise ValueError("a two-CTA M32 TMEM fragment is only allocated interleaved")
            if atom_n % 4:
                raise ValueError(f"a two-CTA M32 TMEM fragment needs an N atom divisible by 4, got {atom_n}")
            return cute.make_layout((32, (atom_n // 4, 4)), (1, (128, 32))), 1  # Layout C
        raise ValueError(f"a two-CTA TMEM fragment has an M atom of 32, 64 or 128, got {atom_m}")
    raise ValueError(f"tcgen05 instructions span one or two CTAs, got {num_sms}")


def make_tmem_frg_ws_atom(atom_m: int, atom_n: int) -> Any:
    """The accumulator atom of a one-CTA weight-stationary (``.ws``) instruction: N folded onto the upper
    datapaths (Layout E for M=64, G for M=32; M=128 is Layout D)."""
    cute = _cute()
    if atom_n not in (64, 128, 256):
        raise ValueError(f"a weight-stationary TMEM fragment has an N atom of 64, 128 or 256, got {atom_n}")
    folds = {128: 1, 64: 2, 32: 4}
    if atom_m not in folds:
        raise ValueError(f"a weight-stationary TMEM fragment has an M atom of 32, 64 or 128, got {atom_m}")
    f = folds[atom_m]
    if f == 1:
        return cute.make_layout((128, atom_n))
    return cute.make_layout((atom_m, (atom_n // f, f)), (1, (128, atom_m)))


def _tile(buffer: Any, atom: Any, tile_stride: int, atom_m: int, atom_n: int, storage_bits: int) -> Any:
    cute = _cute()
    shape = [int(s) for s in buffer.shape]
    name = buffer.name
    if len(shape) < 2:
        raise ValueError(f"TMEM buffer {name} needs at least two modes, has shape {shape}")
    m, n = shape[-2:]
    if m % atom_m:
        raise ValueError(f"TMEM buffer {name}: M extent {m} is not a multiple of the fragment's M atom {atom_m}")
    if n % atom_n:
        raise ValueError(f"TMEM buffer {name}: N extent {n} is not a multiple of the fragment's N atom {atom_n}")
    value_bits = _bits(buffer.dtype)
    if storage_bits < value_bits or storage_bits % value_bits:
        raise ValueError(f"TMEM buffer {name}: {value_bits}-bit values do not pack into {storage_bits}-bit columns")
    batch = list(reversed(shape[:-2]))  # the last batch axis repeats fastest
    count = 1
    for b in batch:
        count *= b
    if count * m * n * storage_bits > TMEM_DATAPATHS * TMEM_COLUMNS * 32:
        raise ValueError(f"TMEM buffer {name} of shape {shape} does not fit in 128 x 512 32-bit columns")
    tiles = [m // atom_m, n // atom_n, *batch]
    strides, step = [], tile_stride
    for t in tiles:
        strides.append(step)
        step *= t
    tiled = cute.blocked_product(atom, cute.make_layout(tuple(tiles), tuple(strides)))
    r = cute.rank(tiled)
    ordered = cute.make_layout([tiled[i] for i in [*range(r - 1, 1, -1), 0, 1]])  # (batch..., M, N)
    to_physical = cute.make_layout((TMEM_DATAPATHS, 128 * TMEM_COLUMNS),
                                   (cute.E(0), (storage_bits // value_bits) * cute.E(1)))
    return cute.composition(to_physical, ordered)


def make_tmem_frg(buffer: Any, num_sms: int, alloc_mode: TCGEN05TmemAllocMode, atom_m: int, atom_n: int,
                  storage_bits: int) -> Any:
    """The fragment of `buffer` built from `make_tmem_frg_atom` (a duplicated two-CTA M64 allocation maps two
    datapaths to one element, which a one-to-one TileLang layout cannot express: ValueError)."""
    if alloc_mode is TCGEN05TmemAllocMode.DUPLICATED and atom_m == 64:
        raise ValueError(f"TMEM buffer {buffer.name}: the duplicated 2SM M64 allocation stores every element twice, "
                         "which a TileLang layout cannot express; keep two explicit copies of the operand instead")
    atom, stride = make_tmem_frg_atom(num_sms, alloc_mode, atom_m, atom_n)
    return _tile(buffer, atom, stride, atom_m, atom_n, storage_bits)


def make_tmem_frg_a(buffer: Any, meta: TCGEN05Meta) -> Any:
    """The fragment of a TMEM A operand (TS form): one-CTA non-interleaved, two-CTA duplicated."""
    mode = TCGEN05TmemAllocMode.DUPLICATED if meta.enable_2cta else TCGEN05TmemAllocMode.NON_INTERLEAVED
    return make_tmem_frg(buffer, meta.num_sms, mode, meta.atom_m_per_cta, meta.atom_k, _bits(buffer.dtype))


def make_tmem_frg_c(buffer: Any, meta: TCGEN05Meta, *, is_ts: bool) -> Any:
    """The fragment of an accumulator: interleaved for SS instructions, the weight-stationary atoms for ``.ws``,
    non-interleaved (one CTA) / interleaved (two CTAs) for TS instructions; 32-bit columns."""
    if meta.enable_ws and not is_ts:
        if meta.enable_2cta:
            raise ValueError("weight-stationary tcgen05.mma runs on one CTA")
        return _tile(buffer, make_tmem_frg_ws_atom(meta.atom_m, meta.atom_n), 1, meta.atom_m, meta.atom_n, 32)
    if is_ts and not meta.enable_2cta:
        mode = TCGEN05TmemAllocMode.NON_INTERLEAVED
    else:
        mode = TCGEN05TmemAllocMode.INTERLEAVED
    return make_tmem_frg(buffer, meta.num_sms, mode, meta.atom_m_per_cta, meta.atom_n, 32)


def validate_tcgen05_ts_instruction(meta: TCGEN05Meta, a_dtype: Any, transposed: bool) -> None:
    """ValueError unless `meta` is a legal TS (A in TMEM) instruction shape for A of `a_dtype`."""
    if transposed:
        raise ValueError("tcgen05.mma with A in TMEM needs a K-major A (transpose_A=False)")
    m, n = meta.atom_m, meta.atom_n
    if meta.enable_2cta:
        if m not in (128, 256):
            raise ValueError(f"2CTA tcgen05.mma (TS) has M 128 or 256, got {m}")
        if not (32 <= n <= 256 and n % 32 == 0):
            raise ValueError(f"2CTA tcgen05.mma (TS) has N a multiple of 32 in [32, 256], got {n}")
        return
    if m not in (64, 128):
        raise ValueError(f"1CTA tcgen05.mma (TS) has M 64 or 128, got {m}")
    if str(a_dtype) in ("int8", "uint8"):
        ok, rule = n == 8 or (16 <= n <= 256 and n % 16 == 0), "8 or a multiple of 16 in [16, 256]"
    elif m == 64:
        ok, rule = 8 <= n <= 256 and n % 8 == 0, "a multiple of 8 in [8, 256] for M=64"
    else:
        ok, rule = 16 <= n <= 256 and n % 16 == 0, "a multiple of 16 in [16, 256] for M=128"
    if not ok:
        raise ValueError(f"1CTA tcgen05.mma (TS) has N {rule}, got {n}")
