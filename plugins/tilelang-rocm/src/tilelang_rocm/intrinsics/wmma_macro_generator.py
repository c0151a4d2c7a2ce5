"""`WMMAIntrinEmitter`: writes a wavefront-level RDNA WMMA GEMM (``16x16x16``, wave32, fp16 / bf16 operands into
fp32) into a kernel body, as `MatrixCoreIntrinEmitter` does for CDNA MFMA.

gfx11 (RDNA3) lanes hold 16 K values of an A row / B column, both half-waves the same ones; gfx12 (RDNA4) lanes
hold 8 (`tilelang_rocm.intrinsics.wmma_layout`). `wmma` issues ``T.tvm_rdna_wmma`` (A first) per tile.
"""

from __future__ import annotations

from typing import Any

from tilelang_rocm.intrinsics.mfma_macro_generator import _emit, _is_fragment, _region
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


class WMMAIntrinEmitter:
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
        self.a_dtype, self.b_dtype, self.accum_dtype = a_dtype, b_dtype, accum_dtype
        self.a_transposed, self.b_transposed = a_transposed, b_transposed
        self.block_row_warps, self.block_col_warps = block_row_warps, block_col_warps
        self.warp_row_tiles, self.warp_col_tiles = warp_row_tiles, warp_col_tiles
        self.chunk, self.k_pack, self.thread_var, self.target = chunk, k_pack, thread_var, target
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

    # ------------------------------------------------------------------------------------ threads / maps
    def get_thread_binding(self) -> Any:
        if self.thread_var is not None:
            return self.thread_var
        from tilelang.language import get_thread_binding

        return get_thread_binding()

    def extract_thread_binding(self, thread_id: Any) -> tuple[Any, Any, Any]:
        """``(lane, warp_n, warp_m)``."""
        w = self.WARP_SIZE
        return (thread_id % w, (thread_id // (w * self.block_row_warps)) % self.block_col_warps,
                (thread_id // w) % self.block_row_warps)

    def get_ldmatrix_index_map(self, is_b: bool = False) -> tuple[Any, Any]:
        return ((self.b_forward_layout_fn, self.b_reverse_layout_fn) if is_b
                else (self.a_forward_layout_fn, self.a_reverse_layout_fn))

    def get_store_index_map(self, inverse: bool = False) -> Any:
        from tvm.tirx import IndexMap

        index_map = IndexMap.from_func(self.store_index_map_fn, index_dtype="int32")
        return index_map.inverse([self.WARP_SIZE, self.local_size_out]) if inverse else index_map

    # ------------------------------------------------------------------------------------ operands
    def _load(self, is_a: bool, local_buf: Any, shared: Any, ki: Any, rk: Any) -> None:
        from tvm import tirx

        reverse = self.a_reverse_layout_fn if is_a else self.b_reverse_layout_fn
        buf, mins = _region(shared)
        other, base0, base1 = mins[:-2], mins[-2], mins[-1]
        lane, warp_n, warp_m = self.extract_thread_binding(self.get_thread_binding())
        transposed = self.a_transposed if is_a else self.b_transposed
        tiles = self.warp_rows if is_a else self.warp_cols
        per_tile = self.k_pack * (self.local_size_a if is_a else self.local_size_b)
        warp = warp_m if is_a else warp_n
        warp_tiles = self.warp_row_tiles if is_a else self.warp_col_tiles
        micro = self.M_DIM if is_a else self.N_DIM
        k0 = rk * self.chunk + ki * (self.k_pack * self.K_DIM)
        mn_first = (not transposed) if is_a else transposed
        for t in range(tiles):
            mn0 = warp * warp_tiles + t * micro
            lo, hi = (mn0, k0) if mn_first else (k0, mn0)
            for v in range(per_tile):
                row, col = reverse(lane, v % (per_tile // self.k_pack))
                kp = v // (per_tile // self.k_pack)
                kr, kc = (0, kp * self.K_DIM) if mn_first else (kp * self.K_DIM, 0)
                _emit(tirx.BufferStore(local_buf, tirx.BufferLoad(buf, [*other, base0 + lo + row + kr,
                                                                         base1 + hi + col + kc]),
                                       [tirx.IntImm("int32", t * per_tile + v)]))

    def ldmatrix_a(self, A_local_buf: Any, A_shared_buf: Any, ki: Any, rk: Any = 0) -> None:
        self._load(True, A_local_buf, A_shared_buf, ki, rk)

    def ldmatrix_b(self, B_local_buf: Any, B_shared_buf: Any, ki: Any, rk: Any = 0) -> None:
        self._load(False, B_local_buf, B_shared_buf, ki, rk)

    # ------------------------------------------------------------------------------------ compute / store
    def wmma(self, A_local_buf: Any, B_local_buf: Any, C_local_buf: Any, k_inner: Any = 0) -> None:
        from tilelang_rocm.language.tir import tvm_rdna_wmma

        la, lb, lc = self.local_size_a, self.local_size_b, self.local_size_out
        a_t, b_t, c_t = f"{self.a_dtype}x{la}", f"{self.b_dtype}x{lb}", f"{self.accum_dtype}x{lc}"
        a_stride = k_inner * self.warp_rows * self.k_pack * la if _is_fragment(A_local_buf) else 0
        b_stride = k_inner * self.warp_cols * self.k_pack * lb if _is_fragment(B_local_buf) else 0
        for kp in range(self.k_pack):
            for i in range(self.warp_rows):
                for j in range(self.warp_cols):
                    _emit(tvm_rdna_wmma(c_t, self.wmma_shape, "row", "row", a_t, b_t, c_t, A_local_buf,
                                        (a_stride + (i * self.k_pack + kp) * la) // la, B_local_buf,
                                        (b_stride + (j * self.k_pack + kp) * lb) // lb, C_local_buf,
                                        (i * self.warp_cols + j) * lc // lc))

    def stmatrix(self, C_local_buf: Any, C_buf: Any, pid_m: Any = None, pid_n: Any = None) -> None:
        from tvm import tirx

        from tilelang.ir import region as R

        dims = len(R.buffer_shape(C_buf))
        if dims not in (2, 4):
            raise ValueError("C_buf should be 2D or 4D")
        lane, warp_n, warp_m = self.extract_thread_binding(self.get_thread_binding())
        block_m, block_n = self.block_row_warps * self.warp_rows, self.block_col_warps * self.warp_cols
        dt = R.buffer_dtype(C_buf)
        for i in range(self.warp_rows):
            for j in range(self.warp_cols):
                for v in range(self.local_size_out):
                    row, col = self.c_reverse_layout_fn(lane, v)
                    am, an = warp_m * self.warp_rows + i, warp_n * self.warp_cols + j
                    if pid_m is not None and pid_n is not None:
                        am, an = pid_m * block_m + am, pid_n * block_n + an
                    idx = [am * self.M_DIM + row, an * self.N_DIM + col] if dims == 2 else [am, an, row, col]
                    src = tirx.BufferLoad(C_local_buf, [tirx.IntImm("int32", (i * self.warp_cols + j)
                                                                   * self.local_size_out + v)])
                    _emit(tirx.BufferStore(C_buf, src if str(src.ty.dtype) == dt else tirx.Cast(dt, src), idx))

    # ------------------------------------------------------------------------------------ layouts
    def make_wmma_load_layout(self, local_buf: Any, matrix: str = "A") -> Any:
        """The Fragment of a block's A (M x K) or B tile in this emitter's operand registers (gfx11: the copy in
        the lower half-wave; the upper half-wave holds the same values)."""
        from tilelang.ir import region as R
        from tilelang.layout import Fragment

        if matrix not in ("A", "B"):
            raise ValueError("matrix should be either A or B")
        if not _is_fragment(local_buf):
            raise ValueError(f"local_buf must be a fragment, got scope {R.buffer_scope(local_buf)}")
        is_a = matrix == "A"
        forward_fn = self.a_forward_layout_fn if is_a else self.b_forward_layout_fn
        transposed = self.a_transposed if is_a else self.b_transposed
        mn_first = (not transposed) if is_a else transposed
        micro = self.M_DIM if is_a else self.N_DIM
        tiles = self.warp_rows if is_a else self.warp_cols
        per_tile = self.local_size_a if is_a else self.local_size_b

        def forward(i: Any, j: Any) -> tuple[Any, Any]:
            s, r = (i, j) if mn_first else (j, i)
            lane, v = forward_fn(i % (micro if mn_first else self.K_DIM), j % (self.K_DIM if mn_first else micro))
            atom, warp = (s // micro) % tiles, (s // micro) // tiles
            thread = warp * self.WARP_SIZE + lane if is_a else warp * self.WARP_SIZE * self.block_row_warps + lane
            return thread, (r // self.K_DIM) * tiles * per_tile + atom * per_tile + v

        replicate = self.block_col_warps if is_a else self.block_row_warps
        frag = Fragment(R.buffer_shape(local_buf), forward_fn=forward)
        return frag.replicate(replicate) if replicate > 1 and hasattr(frag, "replicate") else frag

    def make_wmma_store_layout(self, local_buf: Any) -> Any:
        from tilelang.ir import region as R
        from tilelang.layout import Fragment

        mx, my = self.M_DIM, self.N_DIM

        def forward(i: Any, j: Any) -> tuple[Any, Any]:
            bi, bj = (i // mx) // self.warp_rows, (j // my) // self.warp_cols
            wi, wj = (i // mx) % self.warp_rows, (j // my) % self.warp_cols
            lane, v = self.c_forward_layout_fn(i % mx, j % my)
            thread = bj * (self.block_row_warps * self.WARP_SIZE) + bi * self.WARP_SIZE + lane
            return thread, (wi * self.warp_cols + wj) * self.local_size_out + v

        return Fragment(R.buffer_shape(local_buf), forward_fn=forward)
