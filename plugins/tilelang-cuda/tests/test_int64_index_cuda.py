"""64-bit offsets in CUDA kernels for tensors of 2**31 elements or more (issue 30); small ones keep int32."""

from __future__ import annotations

import re
import warnings
from typing import Any

import pytest
from cuda_helpers import needs_nvcc

import tilelang
import tilelang.language as T

TARGET = {"kind": "cuda", "arch": "sm_80"}
N = 32768


def scale(M: Any, N: int = N) -> Any:
    """``B = 2 * A`` of an int8 matrix, 1024 columns per block."""

    @T.prim_func
    def scale(A: T.Tensor((M, N), "int8"), B: T.Tensor((M, N), "int8")):
        with T.Kernel(N // 1024, M, threads=256) as (bx, by):
            for j in T.Parallel(1024):
                B[by, bx * 1024 + j] = A[by, bx * 1024 + j] * T.int8(2)

    return scale


def _offsets(M: Any) -> tuple[Any, list[str]]:
    """The artifact and the index expressions of its loads from A."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        art = tilelang.lower(scale(M), target=TARGET)
    return art, re.findall(r"A_ptr\[([^\]]+)\]", art.kernel_source)


@pytest.mark.parametrize("rows", [65538, "dynamic"])
def test_large_tensors_index_in_64_bits(rows: Any) -> None:
    _, loads = _offsets(T.dynamic("m") if rows == "dynamic" else rows)
    assert loads and all("(int64_t)" in ld and "blockIdx.y" in ld for ld in loads)


def test_small_tensors_keep_32_bit_offsets() -> None:
    _, loads = _offsets(64)
    assert loads and not any("int64_t" in ld for ld in loads)


@needs_nvcc
def test_nvcc_compiles_the_64_bit_kernel() -> None:
    from tilelang_cuda.compiler import compile_artifact

    art, _ = _offsets(65538)
    assert compile_artifact(art).cubin[:4] == b"\x7fELF"
