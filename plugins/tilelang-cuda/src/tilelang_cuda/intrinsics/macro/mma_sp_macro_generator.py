"""`SparseTensorCoreIntrinEmitter`: writes a warp-level 2:4-sparse ``mma.sp`` GEMM into a kernel body, for
hand-written sparse tensor-core kernels (the reference's sparse intrinsic emitter).

The warp grid and accumulator atoms are those of `TensorCoreIntrinEmitter`; one K step covers ``micro_size_k``
dense columns (32 for fp16/bf16: ``m16n8k32``; 64 for int8/fp8: ``m16n8k64``) of which A holds half. Per K step:

- `ldmatrix_a` loads each warp's compressed A fragments (``local_size_a`` elements per atom row), `ldmatrix_b`
  its B fragments (the dense B of the step), `ldmatrix_e` the elements of its metadata registers from E
  (row-major metadata as TileLang's compressors write it; ``local_size_e`` elements of ``e_dtype`` make one 32-bit
  register): element-wise loads in the PTX ISA fragment layouts (`tilelang_cuda.tileops.gemm_sp` documents the
  metadata register);
- `mma_sp` issues ``T.ptx_mma_sp`` per atom (two ``n8`` instructions for a 16-wide n tile).
"""

from __future__ import annotations

from typing import Any

from tilelang_cuda.intrinsics.layout.mma_layout import a_fragment
from tilelang_cuda.intrinsics.macro.mma_macro_generator import TensorCoreIntrinEmitter, _bits, _emit
from tilelang_cuda.intrinsics.sparse_layout import get_e_factor, get_e_replicate_factor

__all__ = ["SparseTensorCoreIntrinEmitter"]

_SPARSE_DTYPES = ("float16", "bfloat16", "int8", "float8_e4m3", "float8_e4m3fn", "float8_e5m2")


class SparseTensorCoreIntrinEmitter(TensorCoreIntrinEmitter):
    """Sparse ``mma.sp`` emitter (see the module docstring)."""

    SPARSE_FACTOR = 2
    SPARSE_SELECTOR = 0

    def __init__(self, a_dtype: Any = "float16", e_dtype: Any = "uint8", b_dtype: Any = "float16",
                 accum_dtype: Any = "float16", a_transposed: bool = False, b_transposed: bool = False,
                 e_transposed: bool = False, block_row_warps: int = 2, block_col_warps: int = 2,
                 warp_row_tiles: int = 8, warp_col_tiles: int = 8, warp_k: int = 16, reduce_k: int = 1,
                 num_elems_per_byte: int = 1, is_m_first: bool | None = False, thread_var: Any = None):
        if str(a_dtype) not in _SPARSE_DTYPES:
            raise ValueError(f"SparseTensorCoreIntrinEmitter: 2:4 sparse mma.sp is emitted for A of "
                             f"{', '.join(_SPARSE_DTYPES)}, got {a_dtype}")
        self.e_dtype, self.e_transposed, self.warp_k = str(e_dtype), e_transposed, warp_k
        self.e_factor = get_e_factor(str(a_dtype), self.e_dtype)
        bits, e_bits = _bits(a_dtype), _bits(e_dtype)
        if e_bits not in (8, 16, 32) or (bits == 16 and e_bits == 32):
            raise ValueError(f"SparseTensorCoreIntrinEmitter: metadata of {e_dtype} is not supported for A of "
                             f"{a_dtype} (8- or 16-bit metadata for 16-bit A; 8, 16 or 32 bits for 8-bit A)")
        super().__init__(a_dtype, b_dtype, accum_dtype, a_transposed, b_transposed, block_row_warps,
                         block_col_warps, warp_row_tiles, warp_col_tiles, warp_k, reduce_k, num_elems_per_byte,
                         is_m_first, thread_var)

    def _initialize_k_dim(self, a_dtype: str = "float16") -> None:
        self.k_dim = 256 // _bits(a_dtype) * self.SPARSE_FACTOR  # dense K of one atom

    def _initialize_local_size(self, m_dim: int = 16, n_dim: int = 16, k_dim: int = 16, warp_size: int = 32) -> None:
        self.local_size_a = m_dim * k_dim // warp_size // self.SPARSE_FACTOR
        self.local_size_e = m_dim * k_dim // self.e_factor * get_e_replicate_factor(self.a_dtype) // warp_size
        self.local_size_b = n_dim * k_dim // warp_size
        self.local_size_out = m_dim * n_dim // warp_size

    # ------------------------------------------------------------------------------------ operands
    def _k0(self, ki: Any, rk: Any) -> Any:
        return rk * self.warp_k + ki * self.micro_size_k

    def ldmatrix_a(self, A_local_buf: Any, A_shared_buf: Any, ki: Any, rk: Any = 0) -> None:
        """This warp's compressed A fragments of K step `ki` (of chunk `rk`)."""
        from tvm import tirx

        buf, mins = self._region(A_shared_buf)
        other, base0, base1 = mins[:-2], mins[-2], mins[-1]
        lane, _, warp_m = self.extract_thread_binding(self.get_thread_binding())
        e = 32 // _bits(self.a_dtype)
        wk = self._k0(ki, rk) // self.SPARSE_FACTOR
        for i in range(self.warp_rows):
            ws = warp_m * self.warp_row_tiles + i * self.micro_size_x
            for v in range(self.local_size_a):
                r, c = a_fragment(lane, v, e)
                idx = ([*other, base0 + wk + c, base1 + ws + r] if self.a_transposed
                       else [*other, base0 + ws + r, base1 + wk + c])
                _emit(tirx.BufferStore(A_local_buf, tirx.BufferLoad(buf, idx),
                                       [tirx.IntImm("int32", i * self.local_size_a + v)]))

    def ldmatrix_b(self, B_local_buf: Any, B_shared_buf: Any, ki: Any, rk: Any = 0) -> None:
        """This warp's B fragments of K step `ki`: per n8 half, lane ``4g + t`` value ``w`` is
        ``B[k = e t + w % e + 4 e (w // e), n = g]`` (``e`` elements per register)."""
        from tvm import tirx

        buf, mins = self._region(B_shared_buf)
        other, base0, base1 = mins[:-2], mins[-2], mins[-1]
        lane, warp_n, _ = self.extract_thread_binding(self.get_thread_binding())
        e = 32 // _bits(self.b_dtype)
        half = 4 * e  # values per n8 half (four registers)
        wk = self._k0(ki, rk)
        for j in range(self.warp_cols):
            ws = warp_n * self.warp_col_tiles + j * self.micro_size_y
            for v in range(self.local_size_b):
                h, w = v // half, v % half
                n, k = lane // 4 + 8 * h, e * (lane % 4) + w % e + 4 * e * (w // e)
                idx = ([*other, base0 + ws + n, base1 + wk + k] if self.b_transposed
                       else [*other, base0 + wk + k, base1 + ws + n])
                _emit(tirx.BufferStore(B_local_buf, tirx.BufferLoad(buf, idx),
                                       [tirx.IntImm("int32", j * self.local_size_b + v)]))

    def metadata_position(self, lane: Any, value: int) -> tuple[Any, Any]:
        """(row, E column) within an atom of metadata value `value` of `lane` (little-endian in its register)."""
        e_bits = _bits(self.e_dtype)
        g, t = lane // 4, lane % 4
        if _bits(self.a_dtype) == 16:  # rows g / g + 8, dense columns 16 (t % 2) ..
            per_row = 16 // e_bits
            return g + 8 * (value // per_row), (t % 2) * per_row + value % per_row
        per_row = 32 // e_bits  # 8-bit A: row g + 8 (t % 2), dense columns 32 (t // 2) ..
        return g + 8 * (t % 2), (t // 2) * per_row + value

    def ldmatrix_e(self, E_local_buf: Any, E_shared_buf: Any, ki: Any, rk: Any = 0) -> None:
        """This warp's metadata registers of K step `ki`, ``local_size_e`` elements per atom row."""
        from tvm import tirx

        buf, mins = self._region(E_shared_buf)
        other, base0, base1 = mins[:-2], mins[-2], mins[-1]
        lane, _, warp_m = self.extract_thread_binding(self.get_thread_binding())
        wk = self._k0(ki, rk) // self.e_factor
        for i in range(self.warp_rows):
            ws = warp_m * self.warp_row_tiles + i * self.micro_size_x
            for v in range(self.local_size_e):
                r, c = self.metadata_position(lane, v)
                idx = ([*other, base0 + wk + c, base1 + ws + r] if self.e_transposed
                       else [*other, base0 + ws + r, base1 + wk + c])
                _emit(tirx.BufferStore(E_local_buf, tirx.BufferLoad(buf, idx),
                                       [tirx.IntImm("int32", i * self.local_size_e + v)]))

    # ------------------------------------------------------------------------------------ compute
    def mma_sp(self, A_local_buf: Any, E_local_buf: Any, B_local_buf: Any, C_local_buf: Any,
               k_inner: Any = 0) -> None:
        """Every atom of the warp: C += decompress(A, E) * B for the loaded K step."""
        from tilelang_cuda.language.tir import ptx_mma_sp

        halves = 2 if self.n_dim == 16 else 1
        for i in range(self.warp_rows):
            for j in range(self.warp_cols):
                c_off = (i * self.warp_cols + j) * self.local_size_out
                for h in range(halves):
                    _emit(ptx_mma_sp(self.accum_dtype, self.mma_prefix, "row", "col", self.a_dtype_abbrv,
                                     self.b_dtype_abbrv, self.accum_dtype_abbrv, A_local_buf,
                                     i * self.local_size_a, B_local_buf,
                                     j * self.local_size_b + h * (self.local_size_b // halves), C_local_buf,
                                     c_off + h * (self.local_size_out // halves), E_local_buf,
                                     i * self.local_size_e, self.SPARSE_SELECTOR, False))

    def mma(self, A_local_buf: Any, B_local_buf: Any, C_local_buf: Any, k_inner: Any = 0) -> None:
        raise TypeError("SparseTensorCoreIntrinEmitter multiplies with metadata: call "
                        "mma_sp(A_local, E_local, B_local, C_local)")
