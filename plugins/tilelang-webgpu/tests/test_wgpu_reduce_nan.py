"""NaN in WebGPU reductions: a row holding a NaN reduces to NaN under max / min / absmax / sum, as in torch, on
the generic fold, the tree and the subgroup paths; the NaN test survives WGSL's no-NaN assumption (bit tests)."""

from __future__ import annotations

import pytest
import torch

import tilelang
import tilelang.language as T

M, N, BLOCK_M = 8, 256, 4
REDUCERS = {"max": (T.reduce_max, lambda a: a.amax(dim=1)), "min": (T.reduce_min, lambda a: a.amin(dim=1)),
            "absmax": (T.reduce_absmax, lambda a: a.abs().amax(dim=1)),
            "sum": (T.reduce_sum, lambda a: a.float().sum(dim=1).to(a.dtype))}
PATHS = {"serial": (1, {"kind": "webgpu"}), "tree": (128, {"kind": "webgpu"}),
         "subgroups": (128, {"kind": "webgpu", "supports_subgroups": True})}


def _row_reduce(kind: str, threads: int, dtype: str):
    """``B[i, j] = reduce_k A[i, k]``: the result is read back into the partitioned tile, as a softmax does (so
    the destination stays replicated and, with threads, the tree / subgroup implementation serves it)."""
    reducer = REDUCERS[kind][0]

    @T.prim_func
    def row_reduce(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, BLOCK_M), threads=threads) as bx:
            x = T.alloc_fragment((BLOCK_M, N), dtype)
            r = T.alloc_fragment((BLOCK_M,), dtype)
            T.copy(A[bx * BLOCK_M, 0], x)
            reducer(x, r, dim=1)
            for i, j in T.Parallel(BLOCK_M, N):
                x[i, j] = r[i]
            T.copy(x, B[bx * BLOCK_M, 0])

    return row_reduce


@pytest.mark.parametrize("kind", list(REDUCERS))
@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_nan_rows_reduce_like_torch(wgpu_backend, kind, path, dtype):
    from tilelang_webgpu.adapter import features

    threads, target = PATHS[path]
    if path == "subgroups" and "subgroup" not in features():
        pytest.skip("this wgpu adapter lacks the 'subgroup' feature")
    a = torch.randn(M, N).to(getattr(torch, dtype))
    a[0, 0], a[1, 131], a[5, N - 1] = float("nan"), float("nan"), float("nan")
    a[6, :] = float("nan")
    a[7, 3], a[7, 200] = float("inf"), float("-inf")
    kernel = tilelang.compile(_row_reduce(kind, threads, dtype), out_idx=-1, target=target,
                              execution_backend="wgpu")
    out = kernel(a)[:, 0]
    want = REDUCERS[kind][1](a)
    assert torch.equal(out.isnan(), want.isnan()), (out, want)
    tol = 1e-2 if dtype == "float16" else 1e-4
    torch.testing.assert_close(out, want, equal_nan=True, atol=tol * N, rtol=tol)
    src = kernel.get_kernel_source()
    assert ("r_red" in src) == (path != "serial")  # the tree's workgroup tile: not core's generic fold
    if kind != "sum":  # no `x != x` is left for the driver to fold away
        assert "bitcast<u32>" in src and "!= x" not in src
        # subgroupMax / subgroupMin may drop a NaN on other adapters (lavapipe's keep it): a subgroupAny guard
        assert ("subgroupAny(" in src) == (path == "subgroups")
