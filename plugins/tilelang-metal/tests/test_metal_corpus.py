"""Every corpus kernel lowers to MSL for target "metal", and the MSL passes the project's clang-22 check."""

from __future__ import annotations

import re

import pytest

import tilelang
from tilelang.testing.corpus import CORPUS
from tilelang_metal.mslcheck import check_msl

_MSL: dict[str, str] = {}


def msl_of(name: str) -> str:
    if name not in _MSL:
        kernel = CORPUS[name]()
        _MSL[name] = tilelang.lower(kernel.prim_func(), target="metal").kernel_source
    return _MSL[name]


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_kernel_lowers_to_checked_msl(name, clang22):
    msl = msl_of(name)
    assert "kernel void" in msl
    assert not re.search(r"shared\.dyn|local\.fragment", msl)
    result = check_msl(msl, name=f"{name}.metal", clang=clang22)
    assert result.ok, result.diagnostics


@pytest.mark.parametrize("name", ["gemm_nn", "gemm_nt", "gemm_tn", "quickstart_lazy", "gemm_fragment_a",
                                  "flash_attention"])
def test_gemm_runs_on_simdgroup_matrices(name):
    msl = msl_of(name)
    assert "simdgroup_multiply_accumulate(" in msl
    assert "simdgroup_float8x8" in msl and "simdgroup_half8x8" in msl


def test_transposed_operands_load_transposed():
    assert re.search(r"simdgroup_load\([^;]*B_shared[^;]*\(bool\)1\)", msl_of("gemm_nt"))
    assert re.search(r"simdgroup_load\([^;]*A_shared[^;]*\(bool\)1\)", msl_of("gemm_tn"))


@pytest.mark.parametrize("name, fn", [("row_sum", "simd_sum"), ("row_max", "simd_max"), ("softmax", "simd_max")])
def test_reductions_use_simd_functions(name, fn):
    assert f"{fn}(" in msl_of(name)


def test_atomics_call_defined_helpers():
    msl = msl_of("atomic_scalar")
    assert "tl_atomic_add(" in msl and "tl_atomic_max(" in msl
    assert "inline float tl_atomic_max(device float* p" in msl
    assert "tl_atomic" not in msl_of("elementwise_add")
