"""Hand-written tirx kernels for the WebGPU execution tests (no TileLang front end involved)."""

from __future__ import annotations

from typing import Any


def add_2d(m: int = 64, n: int = 96) -> Any:
    """``C = 2 * A + B`` over (m, n) on a 2-D grid of 8x16-thread blocks."""
    from tvm.script import tirx as T

    @T.prim_func
    def add_2d(A: T.Buffer((m, n), "float32"), B: T.Buffer((m, n), "float32"), C: T.Buffer((m, n), "float32")):
        T.func_attr({"global_symbol": "add_2d", "tirx.noalias": True})
        by = T.launch_thread("blockIdx.y", m // 8)
        bx = T.launch_thread("blockIdx.x", n // 16)
        ty = T.launch_thread("threadIdx.y", 8)
        tx = T.launch_thread("threadIdx.x", 16)
        C[by * 8 + ty, bx * 16 + tx] = A[by * 8 + ty, bx * 16 + tx] * T.float32(2) + B[by * 8 + ty, bx * 16 + tx]

    return add_2d


def row_sum(rows: int = 32, cols: int = 128) -> Any:
    """``S[r] = sum(A[r, :])``: one block per row, a tree reduction in workgroup memory (`cols` threads)."""
    from tvm.script import tirx as T

    steps = cols.bit_length() - 1

    @T.prim_func
    def row_sum(A: T.Buffer((rows, cols), "float32"), S: T.Buffer((rows,), "float32")):
        T.func_attr({"global_symbol": "row_sum", "tirx.noalias": True})
        bx = T.launch_thread("blockIdx.x", rows)
        tx = T.launch_thread("threadIdx.x", cols)
        sm = T.alloc_buffer((cols,), "float32", scope="shared")
        sm[tx] = A[bx, tx]
        T.tvm_storage_sync("shared")
        for k in range(steps):
            if tx < (cols // 2 >> k):
                sm[tx] = sm[tx] + sm[tx + (cols // 2 >> k)]
            T.tvm_storage_sync("shared")
        if tx == 0:
            S[bx] = sm[0]

    return row_sum


def scale_dynamic() -> Any:
    """``C[i] = alpha * A[i] + bias`` for i < n: a float and an int scalar, a dynamic length and grid."""
    from tvm.script import tirx as T

    @T.prim_func
    def scale(a: T.handle, c: T.handle, alpha: T.float32, bias: T.int32):
        T.func_attr({"global_symbol": "scale", "tirx.noalias": True})
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        C = T.match_buffer(c, (n,), "float32")
        bx = T.launch_thread("blockIdx.x", (n + 63) // 64)
        tx = T.launch_thread("threadIdx.x", 64)
        if bx * 64 + tx < n:
            C[bx * 64 + tx] = A[bx * 64 + tx] * alpha + T.Cast("float32", bias)

    return scale


def sum_diff(n: int = 1000) -> Any:
    """Two outputs: ``S = A + B`` and ``D = A - B`` (n not a multiple of the block: a bounds check)."""
    from tvm.script import tirx as T

    blocks = (n + 127) // 128

    @T.prim_func
    def sum_diff(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"), S: T.Buffer((n,), "float32"),
                 D: T.Buffer((n,), "float32")):
        T.func_attr({"global_symbol": "sum_diff", "tirx.noalias": True})
        bx = T.launch_thread("blockIdx.x", blocks)
        tx = T.launch_thread("threadIdx.x", 128)
        if bx * 128 + tx < n:
            S[bx * 128 + tx] = A[bx * 128 + tx] + B[bx * 128 + tx]
            D[bx * 128 + tx] = A[bx * 128 + tx] - B[bx * 128 + tx]

    return sum_diff


def int_increment(n: int = 256) -> Any:
    """``X[i] += 1`` over int32, in place (a read_write buffer that is both input and output)."""
    from tvm.script import tirx as T

    @T.prim_func
    def int_increment(X: T.Buffer((n,), "int32")):
        T.func_attr({"global_symbol": "int_increment", "tirx.noalias": True})
        bx = T.launch_thread("blockIdx.x", n // 64)
        tx = T.launch_thread("threadIdx.x", 64)
        X[bx * 64 + tx] = X[bx * 64 + tx] + 1

    return int_increment


def wide_grid(n: int = 70000 * 4) -> Any:
    """``C[i] = A[i] + 1`` with 4 threads per block: 70000 blocks, more than one grid dimension allows."""
    from tvm.script import tirx as T

    @T.prim_func
    def wide_grid(A: T.Buffer((n,), "float32"), C: T.Buffer((n,), "float32")):
        T.func_attr({"global_symbol": "wide_grid", "tirx.noalias": True})
        bx = T.launch_thread("blockIdx.x", n // 4)
        tx = T.launch_thread("threadIdx.x", 4)
        C[bx * 4 + tx] = A[bx * 4 + tx] + T.float32(1)

    return wide_grid


def add_3d(b: int = 4, m: int = 16, n: int = 32) -> Any:
    """``C = A + B`` over (b, m, n) with a 3-D grid (blockIdx.z is folded away for WebGPU)."""
    from tvm.script import tirx as T

    @T.prim_func
    def add_3d(A: T.Buffer((b, m, n), "float32"), B: T.Buffer((b, m, n), "float32"),
               C: T.Buffer((b, m, n), "float32")):
        T.func_attr({"global_symbol": "add_3d", "tirx.noalias": True})
        bz = T.launch_thread("blockIdx.z", b)
        by = T.launch_thread("blockIdx.y", m)
        bx = T.launch_thread("blockIdx.x", n // 32)
        tx = T.launch_thread("threadIdx.x", 32)
        C[bz, by, bx * 32 + tx] = A[bz, by, bx * 32 + tx] + B[bz, by, bx * 32 + tx]

    return add_3d
