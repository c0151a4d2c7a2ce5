"""bfloat16 on Metal: the MSL check knows Metal 3.1's ``bfloat``, and a bf16 GEMM lowers to checked MSL on
simdgroup matrices."""

from __future__ import annotations

import re

import pytest

import tilelang
from tilelang.testing.corpus import gemm
from tilelang_metal.mslcheck import check_msl

HEAD = "#include <metal_stdlib>\nusing namespace metal;\n"
BF16_KERNEL = HEAD + """
kernel void k(device const bfloat* a [[buffer(0)]], device bfloat* c [[buffer(1)]], device float* d [[buffer(2)]],
              uint lane [[thread_index_in_simdgroup]], uint gid [[thread_position_in_grid]]) {
  threadgroup bfloat tile[64];
  tile[lane] = a[gid];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  simdgroup_bfloat8x8 x;
  simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
  simdgroup_load(x, tile, 8, 0, true);
  simdgroup_multiply_accumulate(acc, x, x, acc);
  simdgroup_store(acc, d, 8);
  c[gid] = bfloat(float(a[gid]) * 2.0f);
  bfloat4 v = bfloat4(a[0], a[1], a[2], a[3]);
  c[gid + 1] = v.x + v.w;
}
"""


def test_metal31_bfloat_passes_the_check(clang22):
    result = check_msl(BF16_KERNEL, clang=clang22)
    assert result.ok, result.diagnostics


@pytest.mark.parametrize("old, new, expected", [
    ("simdgroup_load(x, tile", "simdgroup_load(x, d", "simdgroup_load"),  # bfloat matrix from float memory
    ("bfloat4(a[0], a[1], a[2], a[3])", "bfloat4(a[0], a[1])", "component count"),
])
def test_bfloat_mistakes_are_rejected(old, new, expected, clang22):
    broken = BF16_KERNEL.replace(old, new)
    assert broken != BF16_KERNEL
    result = check_msl(broken, clang=clang22)
    assert not result.ok and re.search(expected, result.diagnostics), result.diagnostics


def test_bf16_gemm_lowers_to_checked_msl_on_simdgroup_matrices(clang22):
    artifact = tilelang.lower(gemm(dtype="bfloat16").prim_func(), target="metal")
    msl = artifact.kernel_source
    # TVM's bf16 legalization keeps bf16 in 16-bit device buffers and computes in fp32: the gemm multiplies the
    # widened tiles on fp32 simdgroup matrices (exact: every bf16 value is an fp32 value)
    assert re.search(r"device ushort\* A_ptr", msl)
    assert "simdgroup_multiply_accumulate(" in msl and "simdgroup_float8x8" in msl
    assert re.search(r"<< \(uint\)16", msl)  # bf16 -> fp32 widening of the loads
    result = check_msl(msl, name="gemm_bf16.metal", clang=clang22)
    assert result.ok, result.diagnostics
