"""`TensorCoreIntrinEmitterSM120`: consumer Blackwell (sm_120) ``mma.sync``, dense or block-scaled.

The dense shapes emit like `TensorCoreIntrinEmitter`. With ``is_blockscaled=True`` the emitter issues
``mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3``
(sm_120a): packed e2m1 operands (A row-major ``[M, K]``, B K-major ``[N, K]``), an fp32 accumulator and one
32-bit scale word per row and 64 K elements holding four ue4m3 factors (one per 16 K elements).

Scale operands are ``uint32`` tiles in one of two layouts (`SF_LAYOUTS`):

- ``"rowmajor"``: ``SF[row, word]``, word ``(k_start + 64 * ki) // 64``;
- ``"blockscaled_chunk_kmajor"``: CUTLASS's BlockScaledBasicChunk K-major order inside a tile, flat word
  ``kblock * rows + (row % 32) * (rows // 32) + row // 32`` of the ``[rows, words]`` tile.

Per lane the instruction reads the scale word of A row ``8 * (lane % 2) + lane // 4`` of the atom from the
lanes its thread selector picks (``(lane & ~3) | 2 * sel_a | (lane & 1)``) and the word of B column
``lane // 4`` from lane ``(lane & ~3) | sel_b``. `SM120BlockScaleTile` is the tile contract of the full-tile
path (`TensorCoreIntrinEmitterSM120.mma_blockscaled_fulltile`): each lane keeps one scale word per pair of
atoms (lanes with ``lane % 4 < 2`` the even atom's, the others the odd one's) and selects with the selectors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tilelang_cuda.intrinsics.layout.mma_layout import (
    ldmatrix_32x16_to_shared_8x64_layout_b,
    ldmatrix_32x32_to_shared_16x64_layout_a,
    ldmatrix_32x32_to_shared_16x64_layout_b,
)
from tilelang_cuda.intrinsics.macro.mma_macro_generator import (
    TensorCoreIntrinEmitter,
    _alloc_registers,
    _bits,
    _emit,
)

__all__ = ["SF_LAYOUTS", "BlockScaleMmaConfig", "SM120BlockScaleTile", "TensorCoreIntrinEmitterSM120",
           "block_scale_mma_config"]

SF_LAYOUTS = ("rowmajor", "blockscaled_chunk_kmajor")


@dataclass(frozen=True)
class BlockScaleMmaConfig:
    """One block-scaled ``mma.sync`` form: PTX kind, shape, scale vector and operand types."""

    kind: str
    mma_prefix: str
    atom_k: int
    scale_vec_size: int
    sf_vec_size: int  # K elements one scale factor covers
    scale_type: str
    a_dtype_abbrv: str
    b_dtype_abbrv: str
    accum_dtype: str = "float32"


_CONFIGS = {
    ("mxf4nvf4", 4, "ue4m3"): BlockScaleMmaConfig("mxf4nvf4", "m16n8k64", 64, 4, 16, "ue4m3", "e2m1", "e2m1"),
}


def block_scale_mma_config(kind: str, scale_vec_size: int, stype: str) -> BlockScaleMmaConfig:
    """The configuration of ``(kind, scale_vec_size, stype)``; ValueError listing the supported ones."""
    key = (str(kind), int(scale_vec_size), str(stype))
    if key not in _CONFIGS:
        supported = ", ".join(str(k) for k in sorted(_CONFIGS))
        raise ValueError(f"Unsupported SM120 block-scale MMA config {key}; supported: {supported}")
    return _CONFIGS[key]


def _kmajor_word(row: Any, kblock: Any, tile_rows: int) -> Any:
    """Flat uint32 offset of (`row`, `kblock`) in a BlockScaledBasicChunk K-major tile of `tile_rows` rows."""
    return kblock * tile_rows + (row % 32) * (tile_rows // 32) + row // 32


@dataclass(frozen=True)
class SM120BlockScaleTile:
    """Geometry of the full-tile block-scaled path: the block tile, its warp grid, the compact scale packages
    each lane holds per K block (`sfa_words` / `sfb_words`) and the MMA issues per warp and per block."""

    tile_m: int
    tile_n: int
    tile_k: int
    block_row_warps: int
    block_col_warps: int
    warp_rows: int
    warp_cols: int
    warp_row_tiles: int
    warp_col_tiles: int
    kblocks: int
    micro_size_m: int
    micro_size_n: int
    micro_size_k: int
    sf_layout: str
    sfa_words: int
    sfb_words: int
    warp_issues: int
    warpgroup_issues: int

    @classmethod
    def from_emitter(cls, emitter: TensorCoreIntrinEmitterSM120, *, sf_layout: str,
                     kblocks: int | None = None) -> SM120BlockScaleTile:
        """The contract of block-scaled `emitter`'s tile (ValueError when the tile cannot take this path)."""
        if not getattr(emitter, "is_blockscaled", False):
            raise ValueError("SM120BlockScaleTile needs a block-scaled emitter (is_blockscaled=True)")
        wr, wc = int(emitter.warp_rows), int(emitter.warp_cols)
        brw, bcw = int(emitter.block_row_warps), int(emitter.block_col_warps)
        mk = int(emitter.micro_size_k)
        kb = int(emitter.chunk) // mk if kblocks is None else int(kblocks)
        tile = cls(tile_m=brw * int(emitter.warp_row_tiles), tile_n=bcw * int(emitter.warp_col_tiles),
                   tile_k=kb * mk, block_row_warps=brw, block_col_warps=bcw, warp_rows=wr, warp_cols=wc,
                   warp_row_tiles=int(emitter.warp_row_tiles), warp_col_tiles=int(emitter.warp_col_tiles),
                   kblocks=kb, micro_size_m=int(emitter.micro_size_x), micro_size_n=int(emitter.micro_size_y),
                   micro_size_k=mk, sf_layout=str(sf_layout), sfa_words=wr // 2, sfb_words=wc // 2,
                   warp_issues=wr * wc * 2, warpgroup_issues=wr * wc * 2 * brw * bcw)
        tile.validate()
        return tile

    def validate(self) -> None:
        """ValueError naming the first broken rule of this tile."""
        if self.warp_rows <= 0 or self.warp_cols <= 0 or self.warp_rows % 2 or self.warp_cols % 2:
            raise ValueError("SM120 compact scale packages need a positive even MMA atom grid per warp (each "
                             f"scale word serves two atoms), got {self.warp_rows} x {self.warp_cols} atoms; use "
                             "warp tiles that are multiples of 32 x 32")
        if self.block_row_warps <= 0 or self.block_col_warps <= 0:
            raise ValueError(f"SM120 full-tile warp grid must be positive, got {self.block_row_warps} x "
                             f"{self.block_col_warps}")
        if (self.micro_size_m, self.micro_size_n) != (16, 16):
            raise ValueError("SM120 full-tile MMA needs 16 x 16 atoms (two n8 halves per atom), got "
                             f"{self.micro_size_m} x {self.micro_size_n}")
        if self.tile_m != self.block_row_warps * self.warp_rows * self.micro_size_m or (
                self.tile_n != self.block_col_warps * self.warp_cols * self.micro_size_n):
            raise ValueError(f"SM120 full-tile shape {self.tile_m} x {self.tile_n} does not match its warp grid "
                             f"{self.block_row_warps} x {self.block_col_warps} of {self.warp_rows} x "
                             f"{self.warp_cols} atoms")
        if self.kblocks <= 0 or self.tile_k != self.kblocks * self.micro_size_k:
            raise ValueError(f"SM120 full-tile K {self.tile_k} must be a positive multiple of the atom K "
                             f"{self.micro_size_k}")
        if self.sf_layout != "blockscaled_chunk_kmajor":
            raise ValueError("SM120 full-tile package contract requires sf_layout='blockscaled_chunk_kmajor', got "
                             f"{self.sf_layout!r}")

    def _check_lane(self, lane: int, warp_m: int, warp_n: int) -> None:
        if not 0 <= lane < 32:
            raise ValueError(f"lane must be in [0, 32), got {lane}")
        if not 0 <= warp_m < self.block_row_warps:
            raise ValueError(f"warp_m must be in [0, {self.block_row_warps}), got {warp_m}")
        if not 0 <= warp_n < self.block_col_warps:
            raise ValueError(f"warp_n must be in [0, {self.block_col_warps}), got {warp_n}")

    def compact_selector_scale_rows(self, lane: int, warp_m: int, warp_n: int
                                    ) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The tile rows of SFA and of SFB whose words `lane` of warp (`warp_m`, `warp_n`) holds, per word."""
        self._check_lane(lane, warp_m, warp_n)
        q = lane % 4
        a0 = warp_m * self.warp_row_tiles + 8 * (lane % 2) + lane // 4
        b0 = warp_n * self.warp_col_tiles + lane // 4
        sfa = tuple(a0 + 32 * g + 16 * (q // 2) for g in range(self.sfa_words))
        sfb = tuple(b0 + 32 * g + 8 * q for g in range(self.sfb_words))
        return sfa, sfb

    def compact_selector_scale_word_offsets(self, lane: int, warp_m: int, warp_n: int, kblock: int
                                            ) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """`compact_selector_scale_rows` as flat word offsets of K block `kblock` in the K-major scale tiles."""
        if not 0 <= kblock < self.kblocks:
            raise ValueError(f"kblock must be in [0, {self.kblocks}), got {kblock}")
        sfa, sfb = self.compact_selector_scale_rows(lane, warp_m, warp_n)
        return (tuple(_kmajor_word(r, kblock, self.tile_m) for r in sfa),
                tuple(_kmajor_word(r, kblock, self.tile_n) for r in sfb))

    def package_pingpong_lifecycle(self) -> tuple[tuple[str, int, int], ...]:
        """``(op, package, kblock)`` in issue order: two register packages alternate; package ``p`` is refilled
        with K block ``k + 2`` right after its K block ``k`` is consumed."""
        steps = [("copy", k, k) for k in range(min(self.kblocks, 2))]
        for k in range(self.kblocks):
            steps.append(("gemm", k % 2, k))
            if k + 2 < self.kblocks:
                steps.append(("copy", k % 2, k + 2))
        return tuple(steps)

    def omma_sf_issue_schedule_per_warp(self) -> tuple[tuple[int, int, int, int, int, int, int], ...]:
        """Per-warp MMA issues of one K block: ``(mma_i, mma_j, n8_half, sfa_word, sfb_word, scale_a_thread_id,
        scale_b_thread_id)``."""
        return tuple((i, j, h, i // 2, j // 2, i % 2, (j % 2) * 2 + h)
                     for i in range(self.warp_rows) for j in range(self.warp_cols) for h in range(2))


def _scale_value(x: Any) -> Any:
    """A scale operand (``uint32`` element, or ``T.access_ptr`` of one) as the loaded word."""
    import tvm
    from tvm import tirx

    from tilelang.ir import region as R

    if isinstance(x, tvm.ir.Call) and isinstance(x.op, tvm.ir.Op) and x.op.name == "tl.access_ptr":
        x = x.args[0]
    if R.is_load(x):
        return x if str(x.ty.dtype) == "uint32" else tirx.Cast("uint32", x)
    return x


class TensorCoreIntrinEmitterSM120(TensorCoreIntrinEmitter):
    """sm_120 ``mma.sync``; with `is_blockscaled` the block-scaled form of the module docstring."""

    def __init__(self, a_dtype: Any = "float16", b_dtype: Any = "float16", accum_dtype: Any = "float16",
                 a_transposed: bool = False, b_transposed: bool = False, block_row_warps: int = 2,
                 block_col_warps: int = 2, warp_row_tiles: int = 8, warp_col_tiles: int = 8, chunk: int = 16,
                 reduce_k: int = 1, num_elems_per_byte: int = 1, is_m_first: bool | None = False,
                 thread_var: Any = None, is_blockscaled: bool = False, kind: str = "mxf4nvf4",
                 scale_vec_size: int = 4, stype: str = "ue4m3"):
        self.is_blockscaled = bool(is_blockscaled)
        if self.is_blockscaled:
            cfg = block_scale_mma_config(kind, scale_vec_size, stype)
            got = (self._get_dtype_abbrv(str(a_dtype)), self._get_dtype_abbrv(str(b_dtype)), str(accum_dtype))
            if got != (cfg.a_dtype_abbrv, cfg.b_dtype_abbrv, cfg.accum_dtype):
                raise ValueError(f"{cfg.kind} expects a_dtype={cfg.a_dtype_abbrv}, b_dtype={cfg.b_dtype_abbrv}, "
                                 f"accum_dtype={cfg.accum_dtype}; got a_dtype={a_dtype}, b_dtype={b_dtype}, "
                                 f"accum_dtype={accum_dtype}")
            self.block_scale_config = cfg
            self.kind, self.scale_vec_size, self.stype = cfg.kind, cfg.scale_vec_size, cfg.scale_type
            self.sf_vec_size = cfg.sf_vec_size
        super().__init__(a_dtype=a_dtype, b_dtype=b_dtype, accum_dtype=accum_dtype, a_transposed=a_transposed,
                         b_transposed=b_transposed, block_row_warps=block_row_warps,
                         block_col_warps=block_col_warps, warp_row_tiles=warp_row_tiles,
                         warp_col_tiles=warp_col_tiles, chunk=chunk, reduce_k=reduce_k,
                         num_elems_per_byte=num_elems_per_byte, is_m_first=is_m_first, thread_var=thread_var)
        if self.is_blockscaled and self.chunk % self.micro_size_k:
            raise ValueError(f"block-scaled chunk {self.chunk} must be a multiple of the atom K {self.micro_size_k}")

    #: atoms of a warp interleave with the other row warps' (`atom_row0`): the accumulator layout of the backend's
    #: ``T.gemm`` (`tilelang_cuda.mma_layout`); False (the reference's) gives each warp contiguous rows
    interleave_warp_rows: bool = False

    def atom_row0(self, warp_m: Any, i: Any) -> Any:
        """First tile row of A atom `i` of row warp `warp_m`."""
        if self.interleave_warp_rows:
            return i * (self.micro_size_x * self.block_row_warps) + warp_m * self.micro_size_x
        return warp_m * self.warp_row_tiles + i * self.micro_size_x

    # ------------------------------------------------------------------------------------ shape policy
    def _initialize_k_dim(self, a_dtype: str = "float16") -> None:
        if self.is_blockscaled:
            self.k_dim = self.block_scale_config.atom_k
        else:
            super()._initialize_k_dim(a_dtype)

    def _initialize_abbrev(self, a_dtype: str, b_dtype: str, accum_dtype: str) -> None:
        super()._initialize_abbrev(a_dtype, b_dtype, accum_dtype)
        if self.is_blockscaled:
            self.a_dtype_abbrv = self.block_scale_config.a_dtype_abbrv
            self.b_dtype_abbrv = self.block_scale_config.b_dtype_abbrv

    def _initialize_mma_prefix(self, k_dim: int = 16) -> None:
        if self.is_blockscaled:
            self.mma_prefix = self.block_scale_config.mma_prefix
        else:
            super()._initialize_mma_prefix(k_dim)

    # ------------------------------------------------------------------------------------ scale addressing
    @staticmethod
    def _sfa_row_in_atom(tx: Any) -> Any:
        """The A row (of the 16-row atom) whose scale word lane `tx` supplies (CuTe's SFA layout for k64)."""
        return 8 * (tx % 2) + tx // 4

    @staticmethod
    def _sfb_col_in_atom(tx: Any) -> Any:
        """The B column (of the n8 atom) whose scale word lane `tx` supplies (every lane of a quad the same)."""
        return tx // 4

    def _scale_word_k(self, k_start: Any, ki: Any, sf_granularity_k: int | None) -> Any:
        """The row-major scale word column of K step `ki` of a tile starting at K `k_start`."""
        from tilelang_cuda.language._emit import expr

        g = self.sf_vec_size if sf_granularity_k is None else int(sf_granularity_k)
        if g != self.sf_vec_size:
            raise ValueError(f"{self.kind} scale factors each cover {self.sf_vec_size} K elements (a uint32 word "
                             f"{self.sf_vec_size * 4}); got sf_granularity_k={sf_granularity_k}")
        return (expr(k_start) + self.micro_size_k * ki) // (g * 4)

    @staticmethod
    def _kmajor_scale_word(idx: Any, word_k: Any) -> Any:
        """Flat K-major word offset of row `idx` in a 128-row scale tile."""
        return _kmajor_word(idx, word_k, 128)

    @staticmethod
    def _tile_kmajor_scale_word(idx: Any, word_k: Any, tile_rows: int) -> Any:
        """Flat K-major word offset of row `idx` in a `tile_rows`-row scale tile."""
        return _kmajor_word(idx, word_k, tile_rows)

    def _scale_load(self, sf: Any, row: Any, word_k: Any, sf_layout: str, tile_rows: int | None = None) -> Any:
        """The ``uint32`` scale word of `row` at word column `word_k` of scale tile `sf` in `sf_layout`."""
        from tvm import tirx

        buf, mins = self._region(sf)
        if len(mins) < 2:
            raise ValueError(f"scale operand {buf.name} must be 2-D ([rows, words]), got {len(mins)}-D")
        other, base_r, base_w = mins[:-2], mins[-2], mins[-1]
        if sf_layout == "rowmajor":
            idx = [*other, base_r + row, base_w + word_k]
        elif sf_layout == "blockscaled_chunk_kmajor":
            from tilelang.ir import region as R

            words = int(R.buffer_shape(buf)[-1])
            flat = _kmajor_word(row, word_k, 128 if tile_rows is None else tile_rows)
            idx = [*other, base_r + flat // words, base_w + flat % words]
        else:
            raise ValueError(f"Unsupported SM120 scale layout: {sf_layout}; use one of {', '.join(SF_LAYOUTS)}")
        load = tirx.BufferLoad(buf, idx)
        return load if str(load.ty.dtype) == "uint32" else tirx.Cast("uint32", load)

    # ------------------------------------------------------------------------------------ operands
    def _reg_offset(self, local_buf: Any, elems: int, operand_dtype: str) -> Any:
        """`elems` operand elements as an offset in `local_buf`'s own elements (registers may be ``uint32``)."""
        from tvm import tirx

        from tilelang.ir import region as R

        lb = _bits(R.buffer_dtype(local_buf))
        return tirx.IntImm("int32", elems * _bits(operand_dtype) // lb)

    def _check_kmajor(self) -> None:
        if self.a_transposed or not self.b_transposed:
            raise ValueError("block-scaled sm_120 MMA reads packed 4-bit operands K-major: A as [M, K] "
                             "(transpose_A=False) and B as [N, K] (transpose_B=True)")

    def _ld_blockscaled(self, matrix: str, local_buf: Any, shared: Any, ki: Any, rk: Any) -> None:
        from tvm import tirx

        from tilelang.language import access_ptr
        from tilelang_cuda.language.tir import ptx_ldmatrix

        self._check_kmajor()
        is_a = matrix == "A"
        buf, mins = self._region(shared)
        other, base0, base1 = mins[:-2], mins[-2], mins[-1]
        lane, warp_n, warp_m = self.extract_thread_binding(self.get_thread_binding())
        if is_a:
            tiles, micro, warp_tiles, warp, size = (self.warp_rows, self.micro_size_x, self.warp_row_tiles, warp_m,
                                                    self.local_size_a)
            row_off, col_off = ldmatrix_32x32_to_shared_16x64_layout_a(lane)
            num = 4
        else:
            tiles, micro, warp_tiles, warp, size = (self.warp_cols, self.micro_size_y, self.warp_col_tiles, warp_n,
                                                    self.local_size_b)
            full = self.n_dim == 16
            row_off, col_off = (ldmatrix_32x32_to_shared_16x64_layout_b(lane) if full
                                else ldmatrix_32x16_to_shared_8x64_layout_b(lane))
            num = 4 if full else 2
        dtype = self.a_dtype if is_a else self.b_dtype
        wk = rk * self.chunk + ki * self.micro_size_k
        for i in range(tiles):
            ws = self.atom_row0(warp, i) if is_a else warp * warp_tiles + i * micro
            src = tirx.BufferLoad(buf, [*other, base0 + ws + row_off, base1 + wk + col_off])
            dst = tirx.BufferLoad(local_buf, [self._reg_offset(local_buf, i * size, dtype)])
            _emit(ptx_ldmatrix(False, num, access_ptr(src, "r", extent=size), access_ptr(dst, "w", extent=size)))

    def ldmatrix_a(self, A_local_buf: Any, A_shared_buf: Any, ki: Any, rk: Any = 0) -> None:
        """Load this warp's A fragments of K step `ki` (of chunk `rk`) from the shared tile."""
        if not self.is_blockscaled:
            return super().ldmatrix_a(A_local_buf, A_shared_buf, ki, rk)
        self._ld_blockscaled("A", A_local_buf, A_shared_buf, ki, rk)

    def ldmatrix_b(self, B_local_buf: Any, B_shared_buf: Any, ki: Any, rk: Any = 0) -> None:
        """Load this warp's B fragments of K step `ki` (of chunk `rk`) from the shared tile."""
        if not self.is_blockscaled:
            return super().ldmatrix_b(B_local_buf, B_shared_buf, ki, rk)
        self._ld_blockscaled("B", B_local_buf, B_shared_buf, ki, rk)

    # ------------------------------------------------------------------------------------ compute
    def _issue(self, A_local_buf: Any, a_elems: int, B_local_buf: Any, b_elems: int, C_local_buf: Any,
               c_elems: int, scale_a: Any, scale_b: Any, sel_a: int = 0, sel_b: int = 0) -> None:
        from tilelang_cuda.language.tir import ptx_mma_block_scale

        _emit(ptx_mma_block_scale(self.accum_dtype, self.mma_prefix, "row", "col", self.kind, self.scale_vec_size,
                                  self.a_dtype_abbrv, self.b_dtype_abbrv, self.stype, A_local_buf,
                                  self._reg_offset(A_local_buf, a_elems, self.a_dtype), B_local_buf,
                                  self._reg_offset(B_local_buf, b_elems, self.b_dtype), C_local_buf,
                                  self._reg_offset(C_local_buf, c_elems, self.accum_dtype), scale_a, scale_b, 0,
                                  sel_a, 0, sel_b))

    def mma(self, A_local_buf: Any, B_local_buf: Any, C_local_buf: Any, k_inner: Any = 0, *, SFA_buf: Any = None,
            SFB_buf: Any = None, k_start: Any = 0, sf_a_granularity_k: int | None = None,
            sf_b_granularity_k: int | None = None, sf_layout: str = "rowmajor") -> None:
        """Every atom of the warp: C += A * B for the loaded K step; block-scaled emitters read each lane's
        scale words from `SFA_buf` / `SFB_buf` (keyword-only, so the dense positional form is unchanged)."""
        if not self.is_blockscaled:
            if SFA_buf is not None or SFB_buf is not None:
                raise ValueError("scale buffers need a block-scaled emitter (is_blockscaled=True)")
            return super().mma(A_local_buf, B_local_buf, C_local_buf, k_inner)
        if SFA_buf is None or SFB_buf is None:
            raise ValueError("block-scaled MMA needs SFA_buf and SFB_buf")
        if sf_layout not in SF_LAYOUTS:
            raise ValueError(f"Unsupported SM120 scale layout: {sf_layout}; use one of {', '.join(SF_LAYOUTS)}")
        wk_a = self._scale_word_k(k_start, k_inner, sf_a_granularity_k)
        wk_b = self._scale_word_k(k_start, k_inner, sf_b_granularity_k)
        lane, warp_n, warp_m = self.extract_thread_binding(self.get_thread_binding())
        halves = 2 if self.n_dim == 16 else 1
        for i in range(self.warp_rows):
            row = self.atom_row0(warp_m, i) + self._sfa_row_in_atom(lane)
            scale_a = self._scale_load(SFA_buf, row, wk_a, sf_layout)
            for j in range(self.warp_cols):
                for h in range(halves):
                    col = warp_n * self.warp_col_tiles + j * self.micro_size_y + 8 * h + self._sfb_col_in_atom(lane)
                    scale_b = self._scale_load(SFB_buf, col, wk_b, sf_layout)
                    self._issue(A_local_buf, i * self.local_size_a, B_local_buf,
                                j * self.local_size_b + h * (self.local_size_b // halves), C_local_buf,
                                (i * self.warp_cols + j) * self.local_size_out + h * (self.local_size_out // halves),
                                scale_a, scale_b)

    def mma_blockscaled_fulltile(self, A_shared_buf: Any, B_shared_buf: Any, C_local_buf: Any, SFA_buf: Any,
                                 SFB_buf: Any, sf_layout: str = "blockscaled_chunk_kmajor") -> None:
        """The whole K chunk of the block tile from shared A / B and K-major scale tiles: two register packages
        (operands and compact scale words) alternate as `SM120BlockScaleTile.package_pingpong_lifecycle`
        says, and each K block issues `SM120BlockScaleTile.omma_sf_issue_schedule_per_warp`."""
        from tvm import tirx

        tile = SM120BlockScaleTile.from_emitter(self, sf_layout=sf_layout)
        self._check_kmajor()
        lane, warp_n, warp_m = self.extract_thread_binding(self.get_thread_binding())
        q = lane % 4
        sfa_row = self._sfa_row_in_atom(lane)
        b0 = warp_n * self.warp_col_tiles + self._sfb_col_in_atom(lane)
        regs_a = self.warp_rows * self.local_size_a * _bits(self.a_dtype) // 32
        regs_b = self.warp_cols * self.local_size_b * _bits(self.b_dtype) // 32
        packages = []
        for p in range(min(2, tile.kblocks)):
            packages.append(tuple(_alloc_registers(n, "uint32", f"{what}_pkg{p}") for n, what in (
                (regs_a, "A"), (regs_b, "B"), (tile.sfa_words, "SFA"), (tile.sfb_words, "SFB"))))

        def load(p: int, kblock: int) -> None:
            a_regs, b_regs, sfa, sfb = packages[p]
            self.ldmatrix_a(a_regs, A_shared_buf, kblock)
            self.ldmatrix_b(b_regs, B_shared_buf, kblock)
            for g in range(tile.sfa_words):
                # lanes with q < 2 hold atom 2g's row, the others atom 2g+1's (selector thread-id-a = atom % 2)
                row = tirx.Select(q < 2, self.atom_row0(warp_m, 2 * g), self.atom_row0(warp_m, 2 * g + 1)) + sfa_row
                _emit(tirx.BufferStore(sfa, self._scale_load(SFA_buf, row, kblock, sf_layout, tile.tile_m), [g]))
            for g in range(tile.sfb_words):
                row = b0 + 32 * g + 8 * q
                _emit(tirx.BufferStore(sfb, self._scale_load(SFB_buf, row, kblock, sf_layout, tile.tile_n), [g]))

        def compute(p: int) -> None:
            a_regs, b_regs, sfa, sfb = packages[p]
            for i, j, h, wa, wb, sel_a, sel_b in tile.omma_sf_issue_schedule_per_warp():
                self._issue(a_regs, i * self.local_size_a, b_regs, j * self.local_size_b + h * self.local_size_b // 2,
                            C_local_buf, (i * self.warp_cols + j) * self.local_size_out + h * self.local_size_out // 2,
                            tirx.BufferLoad(sfa, [wa]), tirx.BufferLoad(sfb, [wb]), sel_a, sel_b)

        for op, p, kblock in tile.package_pingpong_lifecycle():
            (load(p, kblock) if op == "copy" else compute(p))
