"""`MPSIntrinEmitter`: GEMM building blocks on Metal simdgroup matrices, for hand-written kernels.

Inside a ``T.Kernel`` body, each method emits its statements where it is called (Python loops over the
simdgroup's tiles are unrolled at parse time): ``ldmatrix_a`` / ``ldmatrix_b`` load this simdgroup's 8x8 tiles of
A and B for K step `ki` from a tile in threadgroup (or device) memory, ``mma`` accumulates ``C += A @ B`` tile by
tile, ``simd_store`` / ``simd_load`` move the C tiles to and from memory. The block's simdgroups form a
``block_row_warps x block_col_warps`` grid; each covers ``warp_row_tiles x warp_col_tiles`` of C. Register operands
are ``metal.simdgroup`` buffers (``T.alloc_buffer(..., scope="metal.simdgroup")``) of 64 elements per matrix.

``use_cooperative_tensor=True`` (the reference's Metal 4 path, its default) describes cooperative-tensor tiles
(16x32x16); tilelang-metal does not offer them, so emitting with it raises NotImplementedError: pass
``use_cooperative_tensor=False``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MPSIntrinEmitter", "OPERAND_DEST", "OPERAND_LEFT", "OPERAND_RIGHT"]

OPERAND_LEFT = 0
OPERAND_RIGHT = 1
OPERAND_DEST = 2


def _emit(call: Any) -> None:
    from tvm.script.ir_builder import tirx as B

    B.evaluate(call)


class MPSIntrinEmitter:
    """Emits simdgroup-matrix GEMM steps for one block's simdgroups (see the module docstring)."""

    WARP_SIZE = 32  # threads per simdgroup on Apple GPUs

    def __init__(self, a_dtype: str = "float16", b_dtype: str = "float16", accum_dtype: str = "float32",
                 a_transposed: bool = False, b_transposed: bool = False, block_row_warps: int = 1,
                 block_col_warps: int = 1, warp_row_tiles: int = 8, warp_col_tiles: int = 8, chunk: int = 32,
                 thread_var: Any = None, a_stride_override: int | None = None, b_stride_override: int | None = None,
                 inner_k_steps: int = 1, use_cooperative_tensor: bool = True):
        self.a_dtype, self.b_dtype, self.accum_dtype = str(a_dtype), str(b_dtype), str(accum_dtype)
        self.a_transposed, self.b_transposed = bool(a_transposed), bool(b_transposed)
        self.block_row_warps, self.block_col_warps = int(block_row_warps), int(block_col_warps)
        self.warp_row_tiles, self.warp_col_tiles = int(warp_row_tiles), int(warp_col_tiles)
        self.chunk = chunk
        self.thread_var = thread_var
        self.a_stride_override, self.b_stride_override = a_stride_override, b_stride_override
        self.inner_k_steps = inner_k_steps
        self.use_cooperative_tensor = bool(use_cooperative_tensor)
        # tile shape (rows x cols x K) of one register matrix
        self.micro_size_x, self.micro_size_y, self.micro_size_k = (16, 32, 16) if use_cooperative_tensor else (8, 8, 8)
        self.warp_rows = self.warp_row_tiles // self.micro_size_x
        self.warp_cols = self.warp_col_tiles // self.micro_size_y
        if not use_cooperative_tensor and (self.warp_row_tiles % 8 or self.warp_col_tiles % 8
                                           or not self.warp_rows or not self.warp_cols):
            raise ValueError(f"MPSIntrinEmitter: warp_row_tiles ({warp_row_tiles}) and warp_col_tiles "
                             f"({warp_col_tiles}) must be positive multiples of the 8x8 simdgroup matrix")

    # ------------------------------------------------------------------------------------------ indexing
    def get_thread_binding(self) -> Any:
        """The thread index of the enclosing ``T.Kernel`` (or the `thread_var` given)."""
        if self.thread_var is not None:
            return self.thread_var
        from tilelang.language import get_thread_binding

        return get_thread_binding(0)

    def _get_warp_indices(self) -> tuple[Any, Any]:
        """``(warp_m, warp_n)``: this simdgroup's place in the block's simdgroup grid."""
        tid = self.get_thread_binding()
        warp_m = (tid // self.WARP_SIZE) % self.block_row_warps
        warp_n = (tid // (self.WARP_SIZE * self.block_row_warps)) % self.block_col_warps
        return warp_m, warp_n

    @staticmethod
    def _parse_buffer_nd(buf: Any) -> tuple[Any, tuple[Any, ...], Any, Any, Any]:
        """``(buffer, leading indices, row offset, column offset, row stride)`` of a buffer or a region of one.

        The leading indices address the 2-D tile of a higher-dimensional buffer (e.g. one stage of a
        multi-buffered tile). Simdgroup loads take a row stride but need unit-stride rows: a buffer whose
        innermost stride is not provably 1 is a ValueError.
        """
        from tilelang.ir import region as R

        if R.is_region(buf):
            buffer = buf.source
            extra = tuple(r.min for r in buf.region[:-2])
            off_row, off_col = buf.region[-2].min, buf.region[-1].min
        else:
            buffer, extra, off_row, off_col = R.buffer_of(buf), (), 0, 0
        strides = list(buffer.strides)
        if strides:
            inner = strides[-1]
            if not R.analyzer().can_prove_equal(inner, 1):
                raise ValueError("Metal matrix operations require a contiguous innermost dimension (stride 1), "
                                 f"but buffer {buffer.name} has innermost stride {inner}")
            stride = strides[-2]
        else:
            stride = buffer.shape[-1]
        return buffer, extra, off_row, off_col, stride

    def _simdgroup_only(self, what: str) -> None:
        if self.use_cooperative_tensor:
            raise NotImplementedError(
                f"MPSIntrinEmitter.{what}: Metal 4 cooperative tensors are not offered by tilelang-metal; construct "
                "the emitter with use_cooperative_tensor=False to use 8x8 simdgroup matrices")

    @staticmethod
    def _address(buffer: Any, indices: tuple[Any, ...], mode: str = "r") -> Any:
        """A ``tvm_access_ptr`` to the element at `indices` (its read / write mask lets barrier insertion order
        the simdgroup access against the threads' own accesses of the tile)."""
        offset = buffer.offset_of(list(indices))[0]
        return buffer.access_ptr(mode, offset=offset)

    # ------------------------------------------------------------------------------------------ emitters
    def ldmatrix_a(self, A_local_buf: Any, A_shared_buf: Any, ki: Any, k_inner: int = 0) -> None:
        """Load this simdgroup's A tiles of K step `ki` into `A_local_buf` (matrix ``i`` per row tile)."""
        from tilelang_metal.language.tir import simdgroup_load

        self._simdgroup_only("ldmatrix_a")
        warp_m, _ = self._get_warp_indices()
        buffer, extra, off_m, off_k, stride = self._parse_buffer_nd(A_shared_buf)
        stride = self.a_stride_override if self.a_stride_override is not None else stride
        for i in range(self.warp_rows):
            m = off_m + warp_m * self.warp_row_tiles + i * self.micro_size_x
            k = off_k + ki * self.micro_size_k
            row, col = (k, m) if self.a_transposed else (m, k)
            _emit(simdgroup_load(A_local_buf, i, self._address(buffer, (*extra, row, col)), stride,
                                 self.micro_size_x, self.micro_size_k, self.a_transposed))

    def ldmatrix_b(self, B_local_buf: Any, B_shared_buf: Any, ki: Any, k_inner: int = 0) -> None:
        """Load this simdgroup's B tiles of K step `ki` into `B_local_buf` (matrix ``j`` per column tile)."""
        from tilelang_metal.language.tir import simdgroup_load

        self._simdgroup_only("ldmatrix_b")
        _, warp_n = self._get_warp_indices()
        buffer, extra, off_k, off_n, stride = self._parse_buffer_nd(B_shared_buf)
        stride = self.b_stride_override if self.b_stride_override is not None else stride
        for j in range(self.warp_cols):
            n = off_n + warp_n * self.warp_col_tiles + j * self.micro_size_y
            k = off_k + ki * self.micro_size_k
            row, col = (n, k) if self.b_transposed else (k, n)
            _emit(simdgroup_load(B_local_buf, j, self._address(buffer, (*extra, row, col)), stride,
                                 self.micro_size_k, self.micro_size_y, self.b_transposed))

    def mma(self, A_local_buf: Any, B_local_buf: Any, C_local_buf: Any, k_inner: int = 0) -> None:
        """``C[i, j] += A[i] @ B[j]`` for every tile of this simdgroup (C matrix ``i * warp_cols + j``)."""
        from tilelang_metal.language.tir import simdgroup_multiply_accumulate

        self._simdgroup_only("mma")
        for i in range(self.warp_rows):
            for j in range(self.warp_cols):
                c = i * self.warp_cols + j
                _emit(simdgroup_multiply_accumulate(C_local_buf, c, A_local_buf, i, B_local_buf, j, C_local_buf, c))

    def simdgroup_copy(self, C_simd_buf: Any, C_dst: Any, is_store: bool = True) -> None:
        """Store this simdgroup's C tiles to `C_dst` (or, with ``is_store=False``, load them from it)."""
        from tilelang_metal.language.tir import simdgroup_load, simdgroup_store

        self._simdgroup_only("simdgroup_copy")
        op = simdgroup_store if is_store else simdgroup_load
        warp_m, warp_n = self._get_warp_indices()
        buffer, extra, off_m, off_n, stride = self._parse_buffer_nd(C_dst)
        for i in range(self.warp_rows):
            for j in range(self.warp_cols):
                row = off_m + warp_m * self.warp_row_tiles + i * self.micro_size_x
                col = off_n + warp_n * self.warp_col_tiles + j * self.micro_size_y
                ptr = self._address(buffer, (*extra, row, col), "w" if is_store else "r")
                _emit(op(C_simd_buf, i * self.warp_cols + j, ptr, stride,
                         self.micro_size_x, self.micro_size_y, False))

    def simd_store(self, C_simd_buf: Any, C_dst: Any) -> None:
        """Store the C tiles to memory."""
        self.simdgroup_copy(C_simd_buf, C_dst, is_store=True)

    def simd_load(self, C_simd_buf: Any, C_src: Any) -> None:
        """Load the C tiles from memory."""
        self.simdgroup_copy(C_simd_buf, C_src, is_store=False)

    def make_cooperative_tensor_store_layout(self, local_buf: Any) -> Any:
        """The fragment layout of a cooperative-tensor accumulator: not offered (see the module docstring)."""
        self._simdgroup_only("make_cooperative_tensor_store_layout")
        raise NotImplementedError("make_cooperative_tensor_store_layout describes Metal 4 cooperative tensors, "
                                  "which tilelang-metal does not offer")
