"""NaN in CUDA reductions: a row holding a NaN reduces to NaN under max / min / absmax / sum, as in torch, on the
warp-shuffle path (float32, folding with the header's `tl_max_nan` / `tl_min_nan`) and core's generic fold
(float16), emulated; those NaN-keeping max / min (used instead of ``fmaxf`` / ``fminf``) run on the host through
nvcc, and are PTX ``max.NaN`` / ``min.NaN`` in device code for sm_80+."""

from __future__ import annotations

import math
import shutil
import subprocess
import warnings

import pytest
import torch
from cuda_emulator import emulate

import tilelang
import tilelang.language as T

M, N, BLOCK_M = 8, 64, 4
REDUCERS = {"max": (T.reduce_max, lambda a: a.amax(dim=1)), "min": (T.reduce_min, lambda a: a.amin(dim=1)),
            "absmax": (T.reduce_absmax, lambda a: a.abs().amax(dim=1)),
            "sum": (T.reduce_sum, lambda a: a.float().sum(dim=1).to(a.dtype))}


def _row_reduce(kind: str, dtype: str):
    reducer = REDUCERS[kind][0]

    @T.prim_func
    def row_reduce(A: T.Tensor((M, N), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, BLOCK_M), threads=128) as bx:
            x = T.alloc_fragment((BLOCK_M, N), dtype)
            r = T.alloc_fragment((BLOCK_M,), dtype)
            T.copy(A[bx * BLOCK_M, 0], x)
            reducer(x, r, dim=1)
            T.copy(r, B[bx * BLOCK_M])

    return row_reduce


@pytest.mark.parametrize("kind", list(REDUCERS))
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_nan_rows_reduce_like_torch_emulated(kind, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        artifact = tilelang.lower(_row_reduce(kind, dtype), target={"kind": "cuda", "arch": "sm_80"})
    body = artifact.kernel_source.rsplit('extern "C" __global__', 1)[1]
    if kind != "sum":  # each thread's fold tests its element for NaN (``x != x``; nvcc keeps that test), or folds
        # with the header's NaN-keeping tl_max_nan / tl_min_nan (the register reduction)
        assert any(" || (" in line and " != " in line and " ? " in line for line in body.splitlines()) or (
            "tl_max_nan(" in body or "tl_min_nan(" in body), body
        if dtype == "float32":  # the warp-shuffle path folds with the header's NaN-keeping max / min
            assert "tl_warp_" in body and ("tl_min_nan(" if kind == "min" else "tl_max_nan(") in body
            assert not any(" != " in line and " ? " in line for line in body.splitlines()), body
    a = torch.randn(M, N).to(getattr(torch, dtype))
    a[0, 0], a[1, 33], a[4, N - 1] = float("nan"), float("nan"), float("nan")
    a[5, :] = float("nan")
    a[6, 3], a[6, 40] = float("inf"), float("-inf")
    b = torch.zeros(M, dtype=a.dtype)
    emulate(artifact, a, b)
    want = REDUCERS[kind][1](a)
    assert torch.equal(b.isnan(), want.isnan()), (b, want)
    tol = 1e-2 if dtype == "float16" else 1e-5
    torch.testing.assert_close(b, want, equal_nan=True, atol=tol * N, rtol=tol)


HOST_MAIN = r"""
#include <cstdio>
#include <cmath>
int main() {
  const float v[] = {1.0f, -2.0f, NAN, INFINITY, -INFINITY};
  for (float a : v)
    for (float b : v) printf("%g %g %g %g\n", a, b, tl_max_nan(a, b), tl_min_nan(a, b));
  return 0;
}
"""


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")
def test_header_max_min_keep_nan(tmp_path):
    from tilelang_cuda.intrinsics import header_for, include_dir

    src = tmp_path / "nan.cu"
    src.write_text(header_for(HOST_MAIN) + HOST_MAIN)
    exe = tmp_path / "nan"
    subprocess.run(["nvcc", "-arch=sm_80", f"-I{include_dir()}", "-o", str(exe), str(src)], check=True,
                   capture_output=True, text=True)
    lines = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split("\n")
    rows = [[float(t) for t in line.split()] for line in lines if line.strip()]
    assert len(rows) == 25
    for a, b, mx, mn in rows:
        if math.isnan(a) or math.isnan(b):
            assert math.isnan(mx) and math.isnan(mn), (a, b, mx, mn)
        else:
            assert (mx, mn) == (max(a, b), min(a, b))
