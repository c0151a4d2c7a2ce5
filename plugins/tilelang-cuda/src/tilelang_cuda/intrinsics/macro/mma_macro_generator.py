"""`TensorCoreIntrinEmitter`: writes a warp-level ``mma.sync`` GEMM into a kernel body, for hand-written
tensor-core kernels (the reference's intrinsic emitter).

The block computes a ``(block_row_warps * warp_row_tiles) x (block_col_warps * warp_col_tiles)`` tile; warp
``w`` of the block (``lane = tid % 32``, ``warp_m = (tid // 32) % block_row_warps``, ``warp_n = tid // (32 *
block_row_warps)``) owns ``warp_rows x warp_cols`` atoms of ``micro_size_x x micro_size_y``. Per K step of
``micro_size_k``:

- `ldmatrix_a` / `ldmatrix_b` load each warp's operand fragments from shared memory (``ldmatrix.x4`` / ``.x2``,
  ``.trans`` as the operand's storage needs; element-wise loads where ldmatrix cannot serve: 8-bit transposed
  operands, 64-bit types) into per-thread register buffers (``T.alloc_local``);
- `mma` issues one ``mma.sync`` per atom (two for a 16-wide n tile: ``n8`` instructions) into the accumulators;
- `stmatrix` writes the accumulators to a shared or global tile.

The emitter's methods are called inside a kernel body; they emit statements where they are called.
"""

from __future__ import annotations

import enum
from typing import Any

from tilelang.backend.sdk import WarpMatrixEmitter, alloc_registers, collecting, emit
from tilelang_cuda.intrinsics.layout.mma_layout import (
    a_fragment,
    a_fragment_inverse,
    b_fragment,
    b_fragment_inverse,
    c_fragment,
    mma_store_32x2_to_shared_8x8_layout_fp64,
)
from tilelang_cuda.intrinsics.layout.utils import get_ldmatrix_offset

__all__ = ["collecting", "TensorCoreIntrinEmitter", "TensorCoreIntrinEmitterWithLadderTransform", "TransformKind"]

# the emitter modules of this package emit through core's warp-matrix helpers
_emit, _alloc_registers = emit, alloc_registers


class TransformKind(enum.IntEnum):
    """Ladder's operand pre-transforms (`TensorCoreIntrinEmitterWithLadderTransform`)."""

    NonTransform = 0
    InterWarpTransform = 1
    IntraWarpTransform = 2
    LDMatrixTransform = 3


def _bits(dtype: Any) -> int:
    from tilelang.backend.sdk import dtype_bits

    return int(dtype_bits(str(dtype)))


class TensorCoreIntrinEmitter(WarpMatrixEmitter):
    """Emits ``mma.sync`` GEMM code for one block tile (see the module docstring)."""

    M_DIM = 16
    n_dim = 16
    WARP_SIZE = 32
    dtype_abbrv = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64", "int4": "int4",
                   "int8": "int8", "uint8": "uint8", "int32": "int32", "float8_e4m3": "e4m3",
                   "float8_e4m3fn": "e4m3", "float8_e4m3fnuz": "e4m3", "float8_e5m2": "e5m2",
                   "float8_e5m2fnuz": "e5m2", "float6_e2m3fn": "e2m3", "float6_e3m2fn": "e3m2",
                   "float4_e2m1fn": "e2m1", "tfloat32": "tf32"}
    warp_rows: int = 1
    warp_cols: int = 1

    def __init__(self, a_dtype: Any = "float16", b_dtype: Any = "float16", accum_dtype: Any = "float16",
                 a_transposed: bool = False, b_transposed: bool = False, block_row_warps: int = 2,
                 block_col_warps: int = 2, warp_row_tiles: int = 8, warp_col_tiles: int = 8, chunk: int = 16,
                 reduce_k: int = 1, num_elems_per_byte: int = 1, is_m_first: bool | None = False,
                 thread_var: Any = None):
        super().__init__(a_dtype, b_dtype, accum_dtype, a_transposed, b_transposed, block_row_warps,
                         block_col_warps, warp_row_tiles, warp_col_tiles, chunk, thread_var)
        self._initialize_k_dim(self.a_dtype)
        self._initialize_m_dim(self.a_dtype)
        self._initialize_micro_size(self.M_DIM, self.k_dim)
        self._initialize_local_size(self.M_DIM, self.n_dim, self.k_dim, self.WARP_SIZE)
        self._initialize_abbrev(self.a_dtype, self.b_dtype, self.accum_dtype)
        self._initialize_mma_prefix(self.k_dim)
        if is_m_first is not None:
            self.is_m_first = is_m_first
        self.reduce_k = reduce_k
        self.threads = self.WARP_SIZE * block_row_warps * block_col_warps * reduce_k
        self.num_elems_per_byte = num_elems_per_byte
        if self.warp_rows == 0 or self.warp_cols == 0:
            raise ValueError(f"Invalid threads configuration for this tile shape, {self.warp_rows} x "
                             f"{self.warp_cols} with threads {self.threads}")

    # ------------------------------------------------------------------------------------ shape policy
    def _initialize_k_dim(self, a_dtype: str = "float16") -> None:
        self.k_dim = min(256 // _bits(a_dtype), self.chunk)

    def _initialize_m_dim(self, a_dtype: str = "float16") -> None:
        if _bits(a_dtype) == 64:
            self.M_DIM = 8  # m8n8k4

    def _get_dtype_abbrv(self, dtype: str) -> str:
        if "float4_e2m1_unpacked" in dtype:
            return "e2m1"
        if dtype not in self.dtype_abbrv:
            raise ValueError(f"Unsupported dtype: {dtype}")
        return self.dtype_abbrv[dtype]

    @staticmethod
    def _should_use_tf32_mma_operand(dtype: str, accum_dtype: str) -> bool:
        return str(dtype) == "float32" and str(accum_dtype) == "float32"

    def _initialize_abbrev(self, a_dtype: str, b_dtype: str, accum_dtype: str) -> None:
        self.a_dtype_abbrv = self._get_dtype_abbrv(a_dtype)
        self.b_dtype_abbrv = self._get_dtype_abbrv(b_dtype)
        self.accum_dtype_abbrv = self._get_dtype_abbrv(accum_dtype)
        if self._should_use_tf32_mma_operand(a_dtype, accum_dtype):
            self.a_dtype_abbrv = "tf32"
        if self._should_use_tf32_mma_operand(b_dtype, accum_dtype):
            self.b_dtype_abbrv = "tf32"

    _PREFIX = {4: "m8n8k4", 8: "m16n8k8", 16: "m16n8k16", 32: "m16n8k32", 64: "m16n8k64", 128: "m16n8k128",
               256: "m16n8k256"}

    def _initialize_mma_prefix(self, k_dim: int = 16) -> None:
        if k_dim not in self._PREFIX:
            raise ValueError(f"Unsupported k_dim {k_dim}")
        self.mma_prefix = self._PREFIX[k_dim]

    def _initialize_micro_size(self, m_dim: int = 16, k_dim: int = 16) -> None:
        if k_dim == 4:  # fp64 m8n8k4
            if m_dim != 8:
                raise ValueError(f"For fp64 MMA, m_dim must be 8, got {m_dim}")
            self.n_dim = self.micro_size_y = 8
            self.warp_rows = self.warp_row_tiles // m_dim
            self.warp_cols = self.warp_col_tiles // 8
        else:
            if self.warp_row_tiles < 16 or self.warp_row_tiles % 16:
                raise ValueError(f"warp_row_tiles must be a positive multiple of 16, got {self.warp_row_tiles}")
            if self.warp_col_tiles < 8 or self.warp_col_tiles % 8:
                raise ValueError(f"warp_col_tiles must be a positive multiple of 8, got {self.warp_col_tiles}")
            self.warp_rows = self.warp_row_tiles // m_dim
            self.n_dim = self.micro_size_y = 16 if self.warp_col_tiles % 16 == 0 else 8
            self.warp_cols = self.warp_col_tiles // self.n_dim
        self.micro_size_x = m_dim
        self.micro_size_k = k_dim

    # ------------------------------------------------------------------------------------ accumulators
    def _use_fp64_store_index_map(self) -> bool:
        """m8n8 atoms (fp64 and the sm_75 integer shapes) hold two accumulators per lane."""
        return _bits(self.accum_dtype) == 64 or self.local_size_out == 2

    def _store_map(self) -> Any:
        if self._use_fp64_store_index_map():
            return mma_store_32x2_to_shared_8x8_layout_fp64
        return c_fragment

    # ------------------------------------------------------------------------------------ operands
    def _operand_lanes(self, is_a: bool) -> Any:
        """Element-wise loads: the PTX fragment of each lane (`a_fragment` / `b_fragment`), in storage order."""
        fragment = a_fragment if is_a else b_fragment
        transposed = self.a_transposed if is_a else self.b_transposed
        e = max(1, 32 // _bits(self.a_dtype if is_a else self.b_dtype))
        return self._storage_order(lambda lane, v: fragment(lane, v, e), (not transposed) if is_a else transposed)

    def _uses_ldmatrix(self, is_a: bool) -> bool:
        """Whether ``ldmatrix`` serves the operand: 16-bit types, 8- and 32-bit ones stored ``[MN, K]``."""
        bits = _bits(self.a_dtype if is_a else self.b_dtype)
        mn_first = (not self.a_transposed) if is_a else self.b_transposed
        return bits == 16 or (bits in (8, 32) and mn_first)

    def _load_operand(self, is_a: bool, local_buf: Any, src: Any, ki: Any, rk: Any) -> None:
        """``ldmatrix.x4`` / ``.x2`` per atom (``.trans`` as the storage needs) where it serves the operand,
        element-wise loads otherwise."""
        from tvm import tirx

        from tilelang.language import access_ptr
        from tilelang_cuda.language.tir import ptx_ldmatrix

        if not self._uses_ldmatrix(is_a):
            super()._load_operand(is_a, local_buf, src, ki, rk)
            return
        dtype = self.a_dtype if is_a else self.b_dtype
        bits = _bits(dtype)
        transposed = self.a_transposed if is_a else self.b_transposed
        op = self._operand(is_a, src, ki, rk)
        matrix = "A" if is_a else "B"
        num = 4 if (is_a or self.n_dim == 16) else 2
        trans = transposed if is_a else not transposed
        regs = 32 * num // bits  # elements the lane receives
        for i in range(op.tiles):
            row_off, col_off = get_ldmatrix_offset(matrix, op.lane, 0, None, dtype, transposed)
            dst = tirx.BufferLoad(local_buf, [tirx.IntImm("int32", i * op.per_tile)])
            _emit(ptx_ldmatrix(trans, num, access_ptr(tirx.BufferLoad(op.buffer, op.index(i, row_off, col_off)), "r",
                                                      extent=regs), access_ptr(dst, "w", extent=regs)))

    # ------------------------------------------------------------------------------------ compute
    @property
    def mma_num_inst_m(self) -> int:
        return self.warp_rows

    @property
    def mma_num_inst_n(self) -> int:
        return self.warp_cols

    def mma_atom(self, A_local_buf: Any, B_local_buf: Any, C_local_buf: Any, inst_m_idx: Any, inst_n_idx: Any,
                 k_inner: Any = 0) -> None:
        """One MMA atom (two ``n8`` instructions for a 16-wide n tile) for tile (`inst_m_idx`, `inst_n_idx`)."""
        from tilelang_cuda.language.tir import ptx_mma

        a_off = inst_m_idx * self.local_size_a
        b_off = inst_n_idx * self.local_size_b
        c_off = (inst_m_idx * self.warp_cols + inst_n_idx) * self.local_size_out
        halves = 2 if self.n_dim == 16 else 1
        for h in range(halves):
            _emit(ptx_mma(self.accum_dtype, self.mma_prefix, "row", "col", self.a_dtype_abbrv, self.b_dtype_abbrv,
                          self.accum_dtype_abbrv, A_local_buf, a_off, B_local_buf,
                          b_off + h * (self.local_size_b // halves), C_local_buf,
                          c_off + h * (self.local_size_out // halves), False))

    def mma(self, A_local_buf: Any, B_local_buf: Any, C_local_buf: Any, k_inner: Any = 0) -> None:
        """Every atom of the warp: C += A * B for the loaded K step."""
        for i in range(self.warp_rows):
            for j in range(self.warp_cols):
                self.mma_atom(A_local_buf, B_local_buf, C_local_buf, i, j, k_inner)

    # ------------------------------------------------------------------------------------ layouts
    def make_mma_load_layout(self, local_buf: Any, matrix: str = "A") -> Any:
        """The Fragment of a whole A (M x K) or B tile held in this emitter's operand registers."""
        is_a = matrix == "A"
        inverse = a_fragment_inverse if is_a else b_fragment_inverse
        e = max(1, 32 // _bits(self.a_dtype if is_a else self.b_dtype))
        return self._make_load_layout(local_buf, matrix, lambda s, r: inverse(s, r, e), self.micro_size_k,
                                      self.local_size_a if is_a else self.local_size_b)

    def make_mma_store_layout(self, local_buf: Any) -> Any:
        """The Fragment of the block's accumulator tile in this emitter's registers."""
        if self._use_fp64_store_index_map():
            return self._make_store_layout(local_buf, lambda mi, mj: (4 * mi + mj // 2, mj % 2))
        return self._make_store_layout(local_buf, lambda mi, mj: a_fragment_inverse(mi, mj, 2))


class TensorCoreIntrinEmitterWithLadderTransform(TensorCoreIntrinEmitter):
    """`TensorCoreIntrinEmitter` reading operands that Ladder (BitBLAS ``LadderPermutate``) stored pre-transformed
    (K of one full 256-bit row per atom). A transformed operand is a tiled shared buffer ``[MN / micro_mn,
    K / micro_k, micro_mn, micro_k]`` (A over M, B over N: A row-major, B ``[N, K]``; packed B has
    ``micro_k / num_elems_per_byte`` bytes per row), one atom per tile; the kinds say how a tile is ordered:

    - ``InterWarpTransform`` (1): tiles in the plain order, read with ``ldmatrix`` as untransformed operands;
    - ``IntraWarpTransform`` (2): tiles permuted so that lane ``l``'s ``ldmatrix`` row is the tile's ``l``-th run of
      16 bytes (elements ``l * local_size ..``);
    - ``LDMatrixTransform`` (3): tiles permuted so that lane ``l``'s fragment is those elements themselves, read
      with plain loads (B: its packed bytes, ``local_size / num_elems_per_byte`` of them, for a dequantizing
      kernel to expand).
    """

    def __init__(self, a_dtype: Any = "float16", b_dtype: Any = "float16", accum_dtype: Any = "float16",
                 a_transposed: bool = False, b_transposed: bool = False, block_row_warps: int = 2,
                 block_col_warps: int = 2, warp_row_tiles: int = 8, warp_col_tiles: int = 8, chunk: int = 16,
                 reduce_k: int = 1, num_elems_per_byte: int = 1, is_m_first: bool | None = False,
                 transform_kind_a: int | TransformKind = 0, transform_kind_b: int | TransformKind = 0):
        super().__init__(a_dtype=a_dtype, b_dtype=b_dtype, accum_dtype=accum_dtype, a_transposed=a_transposed,
                         b_transposed=b_transposed, block_row_warps=block_row_warps,
                         block_col_warps=block_col_warps, warp_row_tiles=warp_row_tiles,
                         warp_col_tiles=warp_col_tiles, chunk=chunk, reduce_k=reduce_k,
                         num_elems_per_byte=num_elems_per_byte, is_m_first=is_m_first)
        for name, kind in (("transform_kind_a", transform_kind_a), ("transform_kind_b", transform_kind_b)):
            if int(kind) not in (0, 1, 2, 3):
                raise ValueError(f"Unsupported {name}: {kind}")
            setattr(self, name, TransformKind(int(kind)))

    def _initialize_k_dim(self, a_dtype: str = "float16") -> None:
        self.k_dim = 256 // _bits(a_dtype)

    def _initialize_abbrev(self, a_dtype: str, b_dtype: str, accum_dtype: str) -> None:
        self.a_dtype_abbrv = self._get_dtype_abbrv(a_dtype)
        self.b_dtype_abbrv = self._get_dtype_abbrv(b_dtype)
        self.accum_dtype_abbrv = self._get_dtype_abbrv(accum_dtype)

    def _initialize_mma_prefix(self, k_dim: int = 16) -> None:
        if k_dim not in (16, 32):
            raise ValueError("Unsupported k_dim")
        self.mma_prefix = self._PREFIX[k_dim]

    def _initialize_micro_size(self, m_dim: int = 16, k_dim: int = 16) -> None:
        super()._initialize_micro_size(m_dim, k_dim)
        self.micro_size_y = self.n_dim

    def _load_operand(self, is_a: bool, local_buf: Any, src: Any, ki: Any, rk: Any) -> None:
        kind = self.transform_kind_a if is_a else self.transform_kind_b
        if kind == TransformKind.NonTransform:
            super()._load_operand(is_a, local_buf, src, ki, rk)
        else:
            self._load_transformed("A" if is_a else "B", kind, local_buf, src, ki, rk)

    def _load_transformed(self, matrix: str, kind: TransformKind, local_buf: Any, shared: Any, ki: Any,
                          rk: Any) -> None:
        """This warp's fragments of K step `ki` (of chunk `rk`) from a tiled, pre-transformed operand."""
        from tvm import tirx

        from tilelang.ir import region as R
        from tilelang.language import access_ptr
        from tilelang_cuda.language.tir import ptx_ldmatrix

        is_a = matrix == "A"
        dtype = self.a_dtype if is_a else self.b_dtype
        buf, mins = self._region(shared)
        shape = [int(x) for x in R.buffer_shape(buf)]
        micro = self.micro_size_x if is_a else self.micro_size_y
        packed = 1 if is_a else self.num_elems_per_byte
        row_len = self.micro_size_k // (packed if kind == TransformKind.LDMatrixTransform else 1)
        if len(shape) < 4 or shape[-2:] != [micro, row_len]:
            raise ValueError(f"transform_kind_{matrix.lower()}={kind.name} reads a tiled shared operand "
                             f"[{'M' if is_a else 'N'} / {micro}, K / {self.micro_size_k}, {micro}, {row_len}], got "
                             f"shape {shape}")
        if kind != TransformKind.LDMatrixTransform:
            if (self.a_transposed if is_a else not self.b_transposed) or (not is_a and self.n_dim != 16):
                raise ValueError(f"transform_kind_{matrix.lower()}={kind.name} reads tiles with ldmatrix.x4: A "
                                 "row-major (a_transposed=False), B as [N, K] (b_transposed=True) in 16-wide N atoms")
        lead, (t_mn, t_k, t_r, t_c) = mins[:-4], mins[-4:]
        lane, warp_n, warp_m = self.extract_thread_binding(self.get_thread_binding())
        warp = warp_m if is_a else warp_n
        tiles = self.warp_rows if is_a else self.warp_cols
        per_warp = (self.warp_row_tiles if is_a else self.warp_col_tiles) // micro
        local_size = self.local_size_a if is_a else self.local_size_b
        k_tile = rk * (self.chunk // self.micro_size_k) + ki
        for i in range(tiles):
            tile = [*lead, t_mn + warp * per_warp + i, t_k + k_tile]
            if kind == TransformKind.LDMatrixTransform:
                per = local_size // packed
                for v in range(per):
                    pos = lane * per + v
                    src = tirx.BufferLoad(buf, [*tile, t_r + pos // row_len, t_c + pos % row_len])
                    _emit(tirx.BufferStore(local_buf, src, [tirx.IntImm("int32", i * per + v)]))
                continue
            if kind == TransformKind.InterWarpTransform:
                row, col = get_ldmatrix_offset(matrix, lane, 0, None, dtype, not is_a)
            else:  # IntraWarpTransform: lane l's row is the tile's l-th run of local_size elements
                row, col = (lane * local_size) // row_len, (lane * local_size) % row_len
            regs = 128 // _bits(dtype)
            _emit(ptx_ldmatrix(False, 4, access_ptr(tirx.BufferLoad(buf, [*tile, t_r + row, t_c + col]), "r",
                                                    extent=regs),
                               access_ptr(tirx.BufferLoad(local_buf, [tirx.IntImm("int32", i * local_size)]), "w",
                                          extent=regs)))
