"""`TensorCoreIntrinEmitter` for Volta (sm_70): ``mma.sync.aligned.m8n8k4`` quad-pairs over 16 x 16 x 4 atoms.

A warp's atom is 16 x 16 (K step 4); its quad-pairs (q = (lane // 4) % 4: lanes 4q..4q+3 and 4q+16..4q+19)
each run one m8n8k4 (``.row.col``, fp16 operands, fp16 or fp32 accumulators): quad-pair q covers rows
8 * (q % 2) .. + 8 and the columns ``c % 4 + 8 * (c // 4) + 4 * (q // 2)`` (c < 8) of the atom. The per-lane maps
are `tilelang_cuda.intrinsics.layout.mma_sm70_layout`'s. sm_70 has no ldmatrix: `ldmatrix_a` / `ldmatrix_b`
read each lane's four values with plain loads (either storage order), `mma` issues the common header's
``tl_mma_m8n8k4_f16_{f32,f16}`` helpers, `stmatrix` writes the accumulators back.
"""

from __future__ import annotations

from typing import Any

from tilelang_cuda.intrinsics.layout.mma_sm70_layout import (
    mma_32x8_to_shared_16x16_layout_fp16,
    mma_32x8_to_shared_16x16_layout_fp32,
    mma_load_a_32x4_to_shared_16x4_layout,
    mma_load_b_32x4_to_shared_16x4_layout_trans,
    shared_16x4_to_mma_a_32x4_layout,
    shared_16x4_to_mma_b_32x4_layout_trans,
    shared_16x16_to_mma_32x8_layout_fp16,
    shared_16x16_to_mma_32x8_layout_fp32,
)
from tilelang_cuda.intrinsics.macro.mma_macro_generator import TensorCoreIntrinEmitter as _Base
from tilelang_cuda.intrinsics.macro.mma_macro_generator import _emit

__all__ = ["TensorCoreIntrinEmitter"]

ACCUMULATORS = {"float32": "f32", "float16": "f16"}


class TensorCoreIntrinEmitter(_Base):
    """Volta's 16 x 16 x 4 MMA tiling (``m8n8k4`` quad-pairs, fp16 operands; see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        if self.a_dtype != "float16" or self.b_dtype != "float16" or self.accum_dtype not in ACCUMULATORS:
            raise ValueError("the sm_70 TensorCoreIntrinEmitter runs mma.m8n8k4 on float16 operands with float16 "
                             f"or float32 accumulators, got A {self.a_dtype}, B {self.b_dtype}, accumulator "
                             f"{self.accum_dtype}")
        if self.chunk % 4:
            raise ValueError(f"chunk must be a multiple of the m8n8k4 K step (4), got {self.chunk}")

    def _initialize_k_dim(self, a_dtype: str = "float16") -> None:
        self.k_dim = 4

    def _initialize_m_dim(self, a_dtype: str = "float16") -> None:
        self.M_DIM = 16

    def _initialize_local_size(self, m_dim: int = 16, n_dim: int = 16, k_dim: int = 4, warp_size: int = 32) -> None:
        self.local_size_a = 4
        self.local_size_b = 4
        self.local_size_out = 8

    def _initialize_mma_prefix(self, k_dim: int = 4) -> None:
        self.mma_prefix = "m16n16k4"

    def _initialize_micro_size(self, m_dim: int = 16, k_dim: int = 4) -> None:
        for name in ("warp_row_tiles", "warp_col_tiles"):
            value = getattr(self, name)
            if value < 16 or value % 16:
                raise ValueError(f"{name} must be a positive multiple of 16 (the m8n8k4 atom), got {value}")
        self.n_dim = self.micro_size_y = 16
        self.micro_size_x, self.micro_size_k = 16, 4
        self.warp_rows = self.warp_row_tiles // 16
        self.warp_cols = self.warp_col_tiles // 16

    def _use_fp64_store_index_map(self) -> bool:
        return False

    def _store_map(self) -> Any:
        if self.accum_dtype == "float32":
            return mma_32x8_to_shared_16x16_layout_fp32
        return mma_32x8_to_shared_16x16_layout_fp16

    def _uses_ldmatrix(self, is_a: bool) -> bool:
        return False  # sm_70 has none

    def _operand_lanes(self, is_a: bool) -> Any:
        """Each lane's four A (rows of the atom, K = value) or B (columns, K = value) elements, plain loads in
        either storage order."""
        fragment = mma_load_a_32x4_to_shared_16x4_layout if is_a else mma_load_b_32x4_to_shared_16x4_layout_trans
        transposed = self.a_transposed if is_a else self.b_transposed
        return self._storage_order(fragment, (not transposed) if is_a else transposed)

    def mma_atom(self, A_local_buf: Any, B_local_buf: Any, C_local_buf: Any, inst_m_idx: Any, inst_n_idx: Any,
                 k_inner: Any = 0) -> None:
        """The four quad-pair m8n8k4 of atom (`inst_m_idx`, `inst_n_idx`): one ``mma.sync`` per lane."""
        from tvm import tirx

        def at(buf: Any, offset: Any) -> Any:
            return tirx.address_of(tirx.BufferLoad(buf, [offset]))

        c_off = (inst_m_idx * self.warp_cols + inst_n_idx) * self.local_size_out
        _emit(tirx.call_extern("void", f"tl_mma_m8n8k4_f16_{ACCUMULATORS[self.accum_dtype]}", at(C_local_buf, c_off),
                               at(A_local_buf, inst_m_idx * 4), at(B_local_buf, inst_n_idx * 4)))

    def make_mma_load_layout(self, local_buf: Any, matrix: str = "A") -> Any:
        """The Fragment of a whole A (M x K) or B tile held in this emitter's operand registers (each element sits
        in two lanes of its warp, one per quad-pair sharing its rows / columns, and in every warp of the other
        block dimension)."""
        from tilelang.ir import region as R
        from tilelang.layout import Fragment

        if matrix not in ("A", "B"):
            raise ValueError("matrix should be either A or B")
        is_a = matrix == "A"
        transposed = self.a_transposed if is_a else self.b_transposed
        mn_first = (not transposed) if is_a else transposed
        tiles = self.warp_rows if is_a else self.warp_cols
        inverse = shared_16x4_to_mma_a_32x4_layout if is_a else shared_16x4_to_mma_b_32x4_layout_trans
        other_warps = self.block_col_warps if is_a else self.block_row_warps

        def forward(i: Any, j: Any, rep: Any) -> tuple[Any, Any]:
            s, r = (i, j) if mn_first else (j, i)
            lane, v = inverse(s % 16, r % 4, rep % 2)
            atom, warp, other = (s // 16) % tiles, (s // 16) // tiles, rep // 2
            warp_m, warp_n = (warp, other) if is_a else (other, warp)
            if self.is_m_first:
                thread = (warp_m * self.block_col_warps + warp_n) * self.WARP_SIZE + lane
            else:
                thread = (warp_n * self.block_row_warps + warp_m) * self.WARP_SIZE + lane
            return thread, (r // 4) * tiles * 4 + atom * 4 + v

        return Fragment(R.buffer_shape(local_buf), forward_fn=forward, replicate=2 * other_warps)

    def make_mma_store_layout(self, local_buf: Any) -> Any:
        """The Fragment of the block's accumulator tile in this emitter's registers."""
        inverse = (shared_16x16_to_mma_32x8_layout_fp32 if self.accum_dtype == "float32"
                   else shared_16x16_to_mma_32x8_layout_fp16)
        return self._make_store_layout(local_buf, inverse)
