"""`WMMAIntrinEmitter`: writes a wavefront-level RDNA WMMA GEMM (``16x16x16``, wave32, fp16 / bf16 operands into
fp32) into a kernel body, as `MatrixCoreIntrinEmitter` does for CDNA MFMA.

gfx11 (RDNA3) lanes hold 16 K values of an A row / B column, both half-waves the same ones; gfx12 (RDNA4) lanes
hold 8 (`tilelang_rocm.intrinsics.wmma_layout`). `wmma` issues ``T.tvm_rdna_wmma`` (A first) per tile.
"""

from __future__ import annotations

from typing import Any

from tilelang.backend.sdk import OperandTiles, WarpMatrixEmitter, emit
from tilelang_rocm.intrinsics.wmma_layout import (
    get_wmma_a_fragment_forward_func,
    get_wmma_a_layout_funcs,
    get_wmma_b_fragment_forward_func,
    get_wmma_b_layout_funcs,
    get_wmma_c_layout_funcs,
    get_wmma_fragment_replicate_count,
    get_wmma_store_index_map_func,
)

__all__ = ["WMMAIntrinEmitter"]


def _rdna_generation(target: Any) -> int:
    from tilelang_rocm.target import target_get_rdna_generation

    try:
        return int(target_get_rdna_generation(target))
    except Exception:
        return 0


class WMMAIntrinEmitter(WarpMatrixEmitter):
    """Emits WMMA GEMM code for one block tile (see the module docstring)."""

    M_DIM = 16
    N_DIM = 16
    K_DIM = 16
    WARP_SIZE = 32

    def __init__(self, a_dtype: str = "float16", b_dtype: str = "float16", accum_dtype: str = "float32",
                 a_transposed: bool = False, b_transposed: bool = False, block_row_warps: int = 2,
                 block_col_warps: int = 2, warp_row_tiles: int = 16, warp_col_tiles: int = 16, chunk: int = 16,
                 k_pack: int = 1, thread_var: Any = None, target: Any = None):
        a_dtype, b_dtype, accum_dtype = str(a_dtype), str(b_dtype), str(accum_dtype)
        if a_dtype not in ("float16", "bfloat16"):
            raise ValueError(f"Unsupported a_dtype: {a_dtype} (WMMA takes float16 / bfloat16)")
        if accum_dtype != "float32":
            raise ValueError(f"Unsupported accum_dtype: {accum_dtype} (WMMA accumulates in float32 here)")
        if target is None:
            raise ValueError("WMMAIntrinEmitter requires a HIP target to select WMMA layouts.")
        super().__init__(a_dtype, b_dtype, accum_dtype, a_transposed, b_transposed, block_row_warps,
                         block_col_warps, warp_row_tiles, warp_col_tiles, chunk, thread_var)
        self.k_pack, self.target = k_pack, target
        self.rdna_gen = _rdna_generation(target)
        if self.rdna_gen == 0:
            raise ValueError(f"Invalid RDNA target for WMMA: {target}")
        self.micro_size_x, self.micro_size_y, self.micro_size_k = self.M_DIM, self.N_DIM, self.K_DIM
        fragment_lanes = self.WARP_SIZE // 2 if self.rdna_gen == 11 else self.WARP_SIZE
        self.local_size_a = self.M_DIM * self.K_DIM // fragment_lanes
        self.local_size_b = self.N_DIM * self.K_DIM // fragment_lanes
        self.local_size_out = self.M_DIM * self.N_DIM // self.WARP_SIZE
        self.warp_rows, self.warp_cols = warp_row_tiles // self.M_DIM, warp_col_tiles // self.N_DIM
        self.threads = self.WARP_SIZE * block_row_warps * block_col_warps
        self.a_forward_layout_fn, self.a_reverse_layout_fn = get_wmma_a_layout_funcs(self.rdna_gen, a_transposed)
        self.a_fragment_forward_fn = get_wmma_a_fragment_forward_func(self.rdna_gen, a_transposed)
        self.b_forward_layout_fn, self.b_reverse_layout_fn = get_wmma_b_layout_funcs(self.rdna_gen, b_transposed)
        self.b_fragment_forward_fn = get_wmma_b_fragment_forward_func(self.rdna_gen, b_transposed)
        self.c_forward_layout_fn, self.c_reverse_layout_fn = get_wmma_c_layout_funcs(self.rdna_gen)
        self.fragment_replicate = get_wmma_fragment_replicate_count(self.rdna_gen)
        self.store_index_map_fn = get_wmma_store_index_map_func(self.rdna_gen)
        dtype_in = {"float16": "f16", "bfloat16": "bf16"}[a_dtype]
        self.wmma_shape = f"f32_{self.M_DIM}x{self.N_DIM}x{self.K_DIM}_{dtype_in}_w{self.WARP_SIZE}"

    # ------------------------------------------------------------------------------------ lane maps
    def get_ldmatrix_index_map(self, is_b: bool = False) -> tuple[Any, Any]:
        return ((self.b_forward_layout_fn, self.b_reverse_layout_fn) if is_b
                else (self.a_forward_layout_fn, self.a_reverse_layout_fn))

    def _store_map(self) -> Any:
        return self.store_index_map_fn

    def _accumulator_element(self, lane: Any, v: int) -> tuple[Any, Any]:
        return self.c_reverse_layout_fn(lane, v)

    def _operand_lanes(self, is_a: bool) -> Any:
        return self.a_reverse_layout_fn if is_a else self.b_reverse_layout_fn

    def _operand_index(self, op: OperandTiles, t: int, v: int) -> list[Any]:
        """k-pack slice ``v // local_size`` of an atom sits one ``K_DIM`` further along K."""
        per_slice = op.per_tile // self.k_pack
        row, col = op.element(op.lane, v % per_slice)
        return op.index(t, row, col, (v // per_slice) * self.K_DIM)

    # ------------------------------------------------------------------------------------ compute
    def wmma(self, A_local_buf: Any, B_local_buf: Any, C_local_buf: Any, k_inner: Any = 0) -> None:
        """Every tile of the wavefront and k-pack slice: one ``v_wmma`` (C += A * B for the loaded step)."""
        from tilelang_rocm.language.tir import tvm_rdna_wmma

        la, lb, lc = self.local_size_a, self.local_size_b, self.local_size_out
        a_t, b_t, c_t = f"{self.a_dtype}x{la}", f"{self.b_dtype}x{lb}", f"{self.accum_dtype}x{lc}"
        for a, b, c in self._each_atom(A_local_buf, B_local_buf, k_inner):
            emit(tvm_rdna_wmma(c_t, self.wmma_shape, "row", "row", a_t, b_t, c_t, A_local_buf, a, B_local_buf, b,
                               C_local_buf, c))

    # ------------------------------------------------------------------------------------ layouts
    def make_wmma_load_layout(self, local_buf: Any, matrix: str = "A") -> Any:
        """The Fragment of a block's A (M x K) or B tile in this emitter's operand registers (gfx11: the copy in
        the lower half-wave; the upper half-wave holds the same values)."""
        is_a = matrix == "A"
        forward = self.a_forward_layout_fn if is_a else self.b_forward_layout_fn
        transposed = self.a_transposed if is_a else self.b_transposed
        mn_first = (not transposed) if is_a else transposed

        def lane_of(mn: Any, k: Any) -> tuple[Any, Any]:  # the layout functions take storage order
            return forward(mn, k) if mn_first else forward(k, mn)

        return self._make_load_layout(local_buf, matrix, lane_of, self.K_DIM,
                                      self.local_size_a if is_a else self.local_size_b, require_fragment=True)

    def make_wmma_store_layout(self, local_buf: Any) -> Any:
        """The Fragment of the block's accumulator tile in this emitter's registers."""
        return self._make_store_layout(local_buf, self.c_forward_layout_fn)
