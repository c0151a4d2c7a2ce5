"""`MatrixCoreIntrinEmitter`: writes a wavefront-level MFMA GEMM into a kernel body, for hand-written CDNA
matrix-core kernels (the reference's intrinsic emitter); `MatrixCorePreshuffleIntrinEmitter` reads operands
stored pre-shuffled into 4-D ``[tiles, k tiles, micro, micro_k]`` blocks.

The block computes ``(block_row_warps * warp_row_tiles) x (block_col_warps * warp_col_tiles)``; wavefront ``w``
(``lane = tid % 64``, ``warp_m = (tid // 64) % block_row_warps``, ``warp_n = tid // (64 * block_row_warps)``)
owns ``warp_rows x warp_cols`` tiles of ``micro_size_x x micro_size_y`` (16 x 16, or 32 x 32 for
``mfma_shape=(32, 32, 32)``). Per K step of ``micro_size_k * k_pack``:

- `ldmatrix_a` / `ldmatrix_b` gather each lane's operand elements from the shared (or, preshuffled, global) tile
  into its registers (``T.alloc_local``), as the MFMA lane layout (`tilelang_rocm.intrinsics.mfma_layout`) says;
- `mfma` issues ``T.tvm_mfma`` per tile and k-pack slice (``v_mfma_<suffix>``, B as the first operand: the
  instruction computes the tile transposed, which `stmatrix` stores back the right way round);
- `stmatrix` writes the accumulators to a shared tile or, with `pid_m` / `pid_n`, the global matrix.

The methods emit statements where they are called (inside a kernel body).
"""

from __future__ import annotations

import warnings
from typing import Any

from tilelang.backend.sdk import WarpMatrixEmitter, emit, operand_region
from tilelang_rocm.intrinsics import mfma_layout as L
from tilelang_rocm.intrinsics.utils import mfma_store_index_map, mfma_store_index_map_32x32

__all__ = ["MatrixCoreIntrinEmitter", "MatrixCorePreshuffleIntrinEmitter"]

_EIGHT_BIT = ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "int8")


def _bits(dtype: Any) -> int:
    from tilelang.backend.sdk import dtype_bits

    return int(dtype_bits(str(dtype)))


def _gfx950(target: Any) -> bool:
    if target is None:
        return False
    from tilelang_rocm.target import target_is_gfx950

    try:
        return bool(target_is_gfx950(target))
    except Exception:
        return "gfx950" in str(target)


class MatrixCoreIntrinEmitter(WarpMatrixEmitter):
    """Emits MFMA GEMM code for one block tile (see the module docstring)."""

    WARP_SIZE = 64
    dtype_abbrv = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "int8": "int8", "int32": "int32",
                   "float8_e4m3": "e4m3", "float8_e5m2": "e5m2", "float8_e4m3fn": "e4m3fn",
                   "float8_e4m3fnuz": "e4m3fnuz", "float8_e5m2fnuz": "e5m2fnuz"}
    b_preshuffle = False

    def __init__(self, a_dtype: Any = "float16", b_dtype: Any = "float16", accum_dtype: Any = "float16",
                 a_transposed: bool = False, b_transposed: bool = False, block_row_warps: int = 2,
                 block_col_warps: int = 2, warp_row_tiles: int = 8, warp_col_tiles: int = 8, chunk: int = 16,
                 reduce_k: int = 1, num_elems_per_byte: int = 1, k_pack: int | None = None,
                 is_m_first: bool | None = False, b_preshuffle: bool | None = False, thread_var: Any = None,
                 target: Any = None, mfma_shape: tuple[int, int, int] | None = None):
        super().__init__(a_dtype, b_dtype, accum_dtype, a_transposed, b_transposed, block_row_warps,
                         block_col_warps, warp_row_tiles, warp_col_tiles, chunk, thread_var)
        if target is None:
            warnings.warn("Target is not provided, using auto detection", stacklevel=2)
        self.target = target
        self._initialize_k_pack(k_pack)
        self._initialize_mfma_shape(mfma_shape, self.a_dtype)
        self._normalize_gfx950_f16_bf16_kpack()
        self._initialize_abbrev(self.a_dtype, self.b_dtype, self.accum_dtype)
        self._initialize_local_size(self.M_DIM, self.N_DIM, self.k_dim, self.WARP_SIZE)
        self._initialize_mfma_prefix(self.k_dim)
        self._initialize_micro_size(self.M_DIM, self.N_DIM, self.k_dim)
        self._initialize_is_m_first(is_m_first)
        self._initialize_b_preshuffle(b_preshuffle)
        self.warp_rows = warp_row_tiles // self.micro_size_x
        self.warp_cols = warp_col_tiles // self.micro_size_y
        self.reduce_k = reduce_k
        self.threads = self.WARP_SIZE * (block_row_warps * block_col_warps) * reduce_k
        self.num_elems_per_byte = num_elems_per_byte

    # ------------------------------------------------------------------------------------ configuration
    def _initialize_mfma_shape(self, mfma_shape: tuple[int, int, int] | None, a_dtype: str) -> None:
        """``(M_DIM, N_DIM, k_dim)``: given, or 16 x 16 with K 4 (32-bit), 16 (16-bit), 32 (8-bit; 16 for fp8
        outside gfx950)."""
        if mfma_shape is not None:
            self.M_DIM, self.N_DIM, self.k_dim = mfma_shape
            return
        self.M_DIM = self.N_DIM = 16
        if a_dtype in _EIGHT_BIT:
            self.k_dim = 32
            return
        bits = _bits(a_dtype)
        if bits == 32:
            self.k_dim = 4
        elif bits == 16:
            self.k_dim = 16
        elif bits == 8:
            self.k_dim = 32 if _gfx950(self.target) else 16
        else:
            raise ValueError(f"Unsupported a_dtype = {a_dtype}")

    def _initialize_abbrev(self, a_dtype: str, b_dtype: str, accum_dtype: str) -> None:
        self.a_dtype_abbrv = self.dtype_abbrv[a_dtype]
        self.b_dtype_abbrv = self.dtype_abbrv[b_dtype]
        self.accum_dtype_abbrv = self.dtype_abbrv[accum_dtype]

    def _initialize_mfma_prefix(self, k_dim: int = 16) -> None:
        """``mfma_suffix``: the instruction after ``v_mfma_`` (``f32_16x16x16f16``, ``i32_16x16x32_i8``, ...)."""
        out = {"float16": "f16", "float32": "f32", "int8": "i8", "int32": "i32"}[self.accum_dtype]
        inp = {"bfloat16": "bf16", "float16": "f16", "float32": "f32", "int8": "i8", "int32": "i32",
               "float8_e4m3fn": "fp8", "float8_e4m3fnuz": "fp8", "float8_e5m2": "bf8",
               "float8_e5m2fnuz": "bf8"}[self.a_dtype]
        shape = f"{out}_{self.M_DIM}x{self.N_DIM}x{k_dim}"
        if inp in ("fp8", "bf8"):
            self.mfma_suffix = f"{shape}_{inp}_{inp}"
        elif inp == "i8":
            self.mfma_suffix = f"{shape}_i8"
        elif inp == "bf16":
            self.mfma_suffix = f"{shape}_bf16" if k_dim == 32 else f"{shape}bf16_1k"
        elif inp == "f16":
            self.mfma_suffix = f"{shape}_f16" if k_dim == 32 else f"{shape}f16"
        else:
            self.mfma_suffix = f"{shape}{inp}"

    def _initialize_micro_size(self, m_dim: int = 16, n_dim: int = 16, k_dim: int = 16) -> None:
        self.micro_size_x, self.micro_size_y, self.micro_size_k = m_dim, n_dim, k_dim

    def _initialize_k_pack(self, k_pack: int | None = None) -> None:
        if k_pack is not None:
            self.k_pack = k_pack

    def _normalize_gfx950_f16_bf16_kpack(self) -> None:
        """gfx950 has 16x16x32 f16 / bf16 MFMAs: (k 16, k_pack 2) becomes one k-32 instruction."""
        halves = ("float16", "bfloat16")
        if (_gfx950(self.target) and self.a_dtype in halves and self.b_dtype in halves and self.k_dim == 16
                and self.k_pack == 2):
            warnings.warn("On gfx950 with f16/bf16, remapping (k_dim=16, k_pack=2) to (k_dim=32, k_pack=1).",
                          stacklevel=3)
            self.k_dim, self.k_pack = 32, 1

    def _initialize_is_m_first(self, is_m_first: bool | None = False) -> None:
        if is_m_first is not None:
            self.is_m_first = is_m_first

    def _initialize_b_preshuffle(self, b_preshuffle: bool | None = False) -> None:
        if b_preshuffle is not None:
            self.b_preshuffle = b_preshuffle

    # ------------------------------------------------------------------------------------ index maps
    def get_ldmatrix_index_map(self, is_b: bool = False) -> tuple[Any, Any]:
        """(shared -> (lane, register), (lane, register) -> shared) maps of operand A or B (K per step:
        ``k_dim * k_pack``)."""
        k_dim = self.k_dim * self.k_pack
        transposed = self.b_transposed if is_b else self.a_transposed
        mn_dim = self.N_DIM if is_b else self.M_DIM
        # "rows follow the lane" (`_A` maps): A stored M x K, B stored N x K (transposed)
        rows_by_lane = transposed if is_b else not transposed
        if mn_dim == 32:
            if k_dim != 32:
                raise ValueError(f"32x32 MFMA with effective k_dim={k_dim} is not supported; only k_dim=32")
            return ((L.shared_32x32_to_local_64x16_layout_A, L.thread_id_shared_access_64x16_to_32x32_layout_A)
                    if rows_by_lane else
                    (L.shared_32x32_to_local_64x16_layout_B, L.thread_id_shared_access_64x16_to_32x32_layout_B))
        maps = {4: ((L.shared_16x4_to_local_64x1_layout_A, L.thread_id_shared_access_64x1_to_16x4_layout_A),
                    (L.shared_4x16_to_local_64x1_layout_B, L.thread_id_shared_access_64x1_to_4x16_layout_B)),
                16: ((L.shared_16x16_to_local_64x4_layout_A, L.thread_id_shared_access_64x4_to_16x16_layout_A),
                     (L.shared_16x16_to_local_64x4_layout_B, L.thread_id_shared_access_64x4_to_16x16_layout_B)),
                32: ((L.shared_16x32_to_local_64x8_layout_A, L.thread_id_shared_access_64x8_to_16x32_layout_A),
                     (L.shared_16x32_to_local_64x8_layout_B, L.thread_id_shared_access_64x8_to_16x32_layout_B)),
                64: ((L.shared_16x64_to_local_64x16_layout_A, L.thread_id_shared_access_64x16_to_16x64_layout_A),
                     (L.shared_16x64_to_local_64x16_layout_B, L.thread_id_shared_access_64x16_to_16x64_layout_B))}
        if k_dim not in maps:
            raise ValueError("k_dim must be 4 or 16 or 32 or 64 currently")
        by_lane, by_col = maps[k_dim]
        return by_lane if rows_by_lane else by_col

    def _store_map(self) -> Any:
        return mfma_store_index_map_32x32 if self.M_DIM == 32 else mfma_store_index_map

    # ------------------------------------------------------------------------------------ operands
    def _operand_lanes(self, is_a: bool) -> Any:
        """The MFMA lane layout of the operand (`get_ldmatrix_index_map`'s ``(lane, register) -> element``)."""
        return self.get_ldmatrix_index_map(is_b=not is_a)[1]

    # ------------------------------------------------------------------------------------ compute
    def mfma(self, A_local_buf: Any, B_local_buf: Any, C_local_buf: Any, k_inner: Any = 0) -> None:
        """Every tile of the wavefront and k-pack slice: one ``v_mfma`` (C += A * B for the loaded step)."""
        from tilelang_rocm.language.tir import tvm_mfma

        la, lb, lc = self.local_size_a, self.local_size_b, self.local_size_out

        def vec(dtype: str, n: int) -> str:
            return dtype if n == 1 else f"{dtype}x{n}"

        a_t, b_t, c_t = vec(self.a_dtype, la), vec(self.b_dtype, lb), vec(self.accum_dtype, lc)
        for a, b, c in self._each_atom(A_local_buf, B_local_buf, k_inner):
            emit(tvm_mfma(c_t, self.mfma_suffix, "row", "row", b_t, a_t, c_t, B_local_buf, b, A_local_buf, a,
                          C_local_buf, c))

    # ------------------------------------------------------------------------------------ layouts
    def make_mfma_load_layout(self, local_buf: Any, matrix: str = "A") -> Any:
        """The Fragment of a whole A (M x K) or B tile of the block in this emitter's operand registers."""
        k = self.k_dim * self.k_pack
        if self.M_DIM == 16:
            forward = {4: L.shared_16x4_to_local_64x1_layout_A, 16: L.shared_16x16_to_local_64x4_layout_A,
                       32: L.shared_16x32_to_local_64x8_layout_A, 64: L.shared_16x64_to_local_64x16_layout_A}.get(k)
        else:
            forward = L.shared_32x32_to_local_64x16_layout_A
        if forward is None:
            raise ValueError(f"16x16 MFMA fragments hold k_dim * k_pack = 4, 16, 32 or 64, got {k}")
        per_tile = self.k_pack * (self.local_size_a if matrix == "A" else self.local_size_b)
        return self._make_load_layout(local_buf, matrix, forward, k, per_tile, require_fragment=True)

    def make_mfma_store_layout(self, local_buf: Any) -> Any:
        """The Fragment of the block's accumulator tile in this emitter's registers."""
        from tvm.tirx import IndexMap

        inverse = IndexMap.from_func(self._store_map(), index_dtype="int32").inverse(
            [self.WARP_SIZE, self.local_size_out])
        return self._make_store_layout(local_buf, lambda mi, mj: inverse.map_indices([mi, mj]))


class MatrixCorePreshuffleIntrinEmitter(MatrixCoreIntrinEmitter):
    """`MatrixCoreIntrinEmitter` whose A and / or B operands are stored pre-shuffled as 4-D
    ``[mn tiles, k tiles, micro, micro_k]`` (``[k tiles, mn tiles, micro_k, micro]`` transposed), read from shared
    memory or, given the block's `pid_m` / `pid_n`, straight from global memory."""

    def __init__(self, a_dtype: Any = "float16", b_dtype: Any = "float16", accum_dtype: Any = "float16",
                 a_transposed: bool = False, b_transposed: bool = False, block_row_warps: int = 2,
                 block_col_warps: int = 2, warp_row_tiles: int = 8, warp_col_tiles: int = 8, chunk: int = 16,
                 reduce_k: int = 1, num_elems_per_byte: int = 1, k_pack: int | None = None,
                 is_m_first: bool | None = False, a_preshuffle: bool | None = False,
                 b_preshuffle: bool | None = False, thread_var: Any = None, target: Any = None,
                 mfma_shape: tuple[int, int, int] | None = None):
        super().__init__(a_dtype=a_dtype, b_dtype=b_dtype, accum_dtype=accum_dtype, a_transposed=a_transposed,
                         b_transposed=b_transposed, block_row_warps=block_row_warps,
                         block_col_warps=block_col_warps, warp_row_tiles=warp_row_tiles,
                         warp_col_tiles=warp_col_tiles, chunk=chunk, reduce_k=reduce_k,
                         num_elems_per_byte=num_elems_per_byte, k_pack=k_pack, is_m_first=is_m_first,
                         thread_var=thread_var, target=target, mfma_shape=mfma_shape)
        self._initialize_preshuffle(a_preshuffle, b_preshuffle)

    def _initialize_preshuffle(self, a_preshuffle: bool | None, b_preshuffle: bool | None) -> None:
        self.a_preshuffle = bool(a_preshuffle)
        if b_preshuffle is not None:
            self.b_preshuffle = b_preshuffle

    def _load_shuffled(self, is_a: bool, local_buf: Any, src: Any, ki: Any, rk: Any, pid: Any) -> None:
        _, reverse = self.get_ldmatrix_index_map(is_b=not is_a)
        lane, warp_n, warp_m = self.extract_thread_binding(self.get_thread_binding())
        transposed = self.a_transposed if is_a else self.b_transposed
        tiles = self.warp_rows if is_a else self.warp_cols
        per_tile = self.k_pack * (self.local_size_a if is_a else self.local_size_b)
        warp = warp_m if is_a else warp_n
        warps = self.block_row_warps if is_a else self.block_col_warps
        kt = rk * (self.chunk // self.micro_size_k) + ki
        mn_first = (not transposed) if is_a else transposed

        def at(t: int, v: int) -> list[Any]:
            row, col = reverse(lane, v)
            mt = ((pid * warps + warp) if pid is not None else warp) * tiles + t
            return [mt, kt, row, col] if mn_first else [kt, mt, row, col]

        self._gather(local_buf, operand_region(src)[0], tiles, per_tile, at)

    def ldmatrix_a(self, A_local_buf: Any, A_buf: Any, ki: Any, rk: Any = 0, pid_m: Any = None,
                   pid_n: Any = None) -> None:
        if not self.a_preshuffle:
            return super().ldmatrix_a(A_local_buf, A_buf, ki, rk)
        self._load_shuffled(True, A_local_buf, A_buf, ki, rk, pid_m)
        return None

    def ldmatrix_b(self, B_local_buf: Any, B_buf: Any, ki: Any, rk: Any = 0, pid_m: Any = None,
                   pid_n: Any = None) -> None:
        if not self.b_preshuffle:
            return super().ldmatrix_b(B_local_buf, B_buf, ki, rk)
        self._load_shuffled(False, B_local_buf, B_buf, ki, rk, pid_n)
        return None
