"""`MPSIntrinEmitter`: GEMM building blocks on Metal register matrices, for hand-written kernels.

Inside a ``T.Kernel`` body, each method emits its statements where it is called (Python loops over the
simdgroup's tiles are unrolled at parse time): ``ldmatrix_a`` / ``ldmatrix_b`` load this simdgroup's tiles of
A and B for K step `ki` from a tile in threadgroup (or device) memory, ``mma`` accumulates ``C += A @ B`` tile by
tile, ``simd_store`` / ``simd_load`` move the C tiles to and from memory. The block's simdgroups form a
``block_row_warps x block_col_warps`` grid (simdgroup ``s`` is ``(s % block_row_warps, s // block_row_warps)``);
each covers ``warp_row_tiles x warp_col_tiles`` of C.

Two kinds of register operand:

- ``use_cooperative_tensor=True`` (the reference's default; Metal 4, a ``metal4`` target): Metal 4 cooperative
  tensors (``T.alloc_local((n,), dtype, scope="metal.cooperative_tensor")``) of 16x16 A, 16x32 B and 16x32 C
  tiles, moved and multiplied with ``T.cooperative_tensor_*`` (MetalPerformancePrimitives ``matmul2d(16, 32,
  16)``); with ``inner_k_steps > 1`` the A / B tensors hold that many K steps (``k_inner`` picks one). Per
  simdgroup: A ``warp_rows * 256 * inner_k_steps`` elements, B ``warp_cols * 512 * inner_k_steps``, C
  ``warp_rows * warp_cols * 512``. `make_cooperative_tensor_store_layout` is the C tiles' thread layout.
- ``use_cooperative_tensor=False``: 8x8 simdgroup matrices (``T.alloc_buffer(..., scope="metal.simdgroup")``, 64
  elements per matrix), with ``T.simdgroup_*``; any Metal target.
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
    """Emits GEMM steps on simdgroup matrices or cooperative tensors for one block's simdgroups (module docstring)."""

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
        # cooperative-tensor tiles are checked when emitted (an emitter with the reference's defaults constructs)
        if not use_cooperative_tensor:
            self._check_tiles()

    def _check_tiles(self) -> None:
        if (self.warp_row_tiles % self.micro_size_x or self.warp_col_tiles % self.micro_size_y
                or not self.warp_rows or not self.warp_cols):
            what = "16x32 cooperative-tensor C tile" if self.use_cooperative_tensor else "8x8 simdgroup matrix"
            raise ValueError(f"MPSIntrinEmitter: warp_row_tiles ({self.warp_row_tiles}) and warp_col_tiles "
                             f"({self.warp_col_tiles}) must be positive multiples of the {what} "
                             f"({self.micro_size_x} and {self.micro_size_y})")

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

    def _address(self, buffer: Any, indices: tuple[Any, ...], mode: str = "r") -> Any:
        """A pointer to the element at `indices`: a ``tvm_access_ptr`` for simdgroup matrices (its read / write mask
        lets barrier insertion order the simdgroup access against the threads' own accesses of the tile), the
        element's ``T.access_ptr`` for cooperative tensors (which lower to element accesses)."""
        if self.use_cooperative_tensor:
            from tilelang.language import access_ptr

            return access_ptr(buffer[tuple(indices)], mode)
        offset = buffer.offset_of(list(indices))[0]
        return buffer.access_ptr(mode, offset=offset)

    @property
    def _mma_shape(self) -> tuple[int, int, int]:
        return self.micro_size_x, self.micro_size_y, self.micro_size_k

    # ------------------------------------------------------------------------------------------ emitters
    def ldmatrix_a(self, A_local_buf: Any, A_shared_buf: Any, ki: Any, k_inner: int = 0) -> None:
        """Load this simdgroup's A tiles of K step `ki` into `A_local_buf` (matrix ``i`` per row tile)."""
        from tilelang_metal.language.cooperative_tensor import cooperative_tensor_load
        from tilelang_metal.language.tir import simdgroup_load

        self._check_tiles()
        warp_m, _ = self._get_warp_indices()
        buffer, extra, off_m, off_k, stride = self._parse_buffer_nd(A_shared_buf)
        stride = self.a_stride_override if self.a_stride_override is not None else stride
        for i in range(self.warp_rows):
            m = off_m + warp_m * self.warp_row_tiles + i * self.micro_size_x
            k = off_k + ki * self.micro_size_k
            row, col = (k, m) if self.a_transposed else (m, k)
            ptr = self._address(buffer, (*extra, row, col))
            if self.use_cooperative_tensor:
                _emit(cooperative_tensor_load(A_local_buf, k_inner * self.warp_rows + i, ptr, stride,
                                              self.micro_size_x, self.micro_size_k, self.a_transposed,
                                              *self._mma_shape, OPERAND_LEFT))
            else:
                _emit(simdgroup_load(A_local_buf, i, ptr, stride, self.micro_size_x, self.micro_size_k,
                                     self.a_transposed))

    def ldmatrix_b(self, B_local_buf: Any, B_shared_buf: Any, ki: Any, k_inner: int = 0) -> None:
        """Load this simdgroup's B tiles of K step `ki` into `B_local_buf` (matrix ``j`` per column tile)."""
        from tilelang_metal.language.cooperative_tensor import cooperative_tensor_load
        from tilelang_metal.language.tir import simdgroup_load

        self._check_tiles()
        _, warp_n = self._get_warp_indices()
        buffer, extra, off_k, off_n, stride = self._parse_buffer_nd(B_shared_buf)
        stride = self.b_stride_override if self.b_stride_override is not None else stride
        for j in range(self.warp_cols):
            n = off_n + warp_n * self.warp_col_tiles + j * self.micro_size_y
            k = off_k + ki * self.micro_size_k
            row, col = (n, k) if self.b_transposed else (k, n)
            ptr = self._address(buffer, (*extra, row, col))
            if self.use_cooperative_tensor:
                _emit(cooperative_tensor_load(B_local_buf, k_inner * self.warp_cols + j, ptr, stride,
                                              self.micro_size_k, self.micro_size_y, self.b_transposed,
                                              *self._mma_shape, OPERAND_RIGHT))
            else:
                _emit(simdgroup_load(B_local_buf, j, ptr, stride, self.micro_size_k, self.micro_size_y,
                                     self.b_transposed))

    def mma(self, A_local_buf: Any, B_local_buf: Any, C_local_buf: Any, k_inner: int = 0) -> None:
        """``C[i, j] += A[i] @ B[j]`` for every tile of this simdgroup (C matrix ``i * warp_cols + j``)."""
        from tilelang_metal.language.cooperative_tensor import cooperative_tensor_multiply_accumulate
        from tilelang_metal.language.tir import simdgroup_multiply_accumulate

        self._check_tiles()
        for i in range(self.warp_rows):
            for j in range(self.warp_cols):
                c = i * self.warp_cols + j
                if self.use_cooperative_tensor:
                    _emit(cooperative_tensor_multiply_accumulate(
                        C_local_buf, c, A_local_buf, k_inner * self.warp_rows + i, B_local_buf,
                        k_inner * self.warp_cols + j, C_local_buf, c, *self._mma_shape, self.a_transposed,
                        self.b_transposed))
                else:
                    _emit(simdgroup_multiply_accumulate(C_local_buf, c, A_local_buf, i, B_local_buf, j,
                                                        C_local_buf, c))

    def simdgroup_copy(self, C_simd_buf: Any, C_dst: Any, is_store: bool = True) -> None:
        """Store this simdgroup's C tiles to `C_dst` (or, with ``is_store=False``, load them from it)."""
        from tilelang_metal.language.cooperative_tensor import cooperative_tensor_load, cooperative_tensor_store
        from tilelang_metal.language.tir import simdgroup_load, simdgroup_store

        if self.use_cooperative_tensor:
            ct_op = cooperative_tensor_store if is_store else cooperative_tensor_load

            def op(buf: Any, index: int, ptr: Any, stride: Any, rows: int, cols: int, transposed: bool) -> Any:
                return ct_op(buf, index, ptr, stride, rows, cols, transposed, *self._mma_shape, OPERAND_DEST)
        else:
            op = simdgroup_store if is_store else simdgroup_load
        self._check_tiles()
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
        """The `tilelang.layout.Fragment` of a ``block_row_warps * warp_row_tiles x block_col_warps *
        warp_col_tiles`` C tile kept as this emitter's cooperative tensors: element ``(i, j)`` lives in the lane of
        simdgroup ``warp_m + warp_n * block_row_warps`` (the emitter's simdgroup grid) that holds it in the 16x32
        tile's lane map (`tilelang_metal.mpp`), at register ``tile * 16 + e`` with ``tile = i_tile * warp_cols +
        j_tile`` as in `mma`. `local_buf` is the C buffer (its shape is the layout's)."""
        from tilelang.ir import region as R
        from tilelang.layout import Fragment

        if not self.use_cooperative_tensor:
            raise ValueError("MPSIntrinEmitter.make_cooperative_tensor_store_layout describes cooperative-tensor "
                             "tiles; this emitter was made with use_cooperative_tensor=False")
        self._check_tiles()
        shape = list(R.buffer_shape(R.buffer_of(local_buf)))
        mx, my = self.micro_size_x, self.micro_size_y

        def lane_and_register(i: Any, j: Any) -> tuple[Any, Any]:
            r, c = i % mx, j % my
            lane = (c % 16) // 4 % 2 + (r % 8) % 4 * 2 + (c % 16) // 4 // 2 * 8 + (r % 8) // 4 * 16
            return lane, (c // 16) * 8 + (r // 8) * 4 + c % 4

        def thread(i: Any, j: Any) -> Any:
            warp_m, warp_n = i // self.warp_row_tiles, j // self.warp_col_tiles
            return (warp_m + warp_n * self.block_row_warps) * self.WARP_SIZE + lane_and_register(i, j)[0]

        def index(i: Any, j: Any) -> Any:
            tile = (i // mx) % self.warp_rows * self.warp_cols + (j // my) % self.warp_cols
            return tile * (mx * my // self.WARP_SIZE) + lane_and_register(i, j)[1]

        return Fragment(shape, forward_thread_fn=thread, forward_index_fn=index)
