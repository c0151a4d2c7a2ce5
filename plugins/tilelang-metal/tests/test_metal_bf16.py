"""bfloat16 on Metal: the MSL check knows Metal 3.1's ``bfloat``, and a bf16 GEMM lowers to checked MSL on
simdgroup matrices."""

from __future__ import annotations

import re

import pytest

import tilelang
from tilelang.testing.corpus import elementwise_add, gemm, row_max, row_sum, softmax
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
    # native bf16 (pipeline option ``native_bf16``): bf16 stays ``bfloat`` in device and threadgroup memory, and
    # the gemm multiplies bf16 tiles on ``simdgroup_bfloat8x8`` operands into fp32 accumulators
    assert re.search(r"device bfloat\* A_ptr", msl) and re.search(r"threadgroup bfloat\* A_shared = ", msl)
    assert "simdgroup_bfloat8x8" in msl and "simdgroup_multiply_accumulate(" in msl
    assert "ushort" not in msl and not re.search(r"<< \(uint\)16", msl)  # no 16-bit-integer widening
    result = check_msl(msl, name="gemm_bf16.metal", clang=clang22)
    assert result.ok, result.diagnostics


@pytest.mark.parametrize("kernel", [elementwise_add(dtype="bfloat16"), row_sum(dtype="bfloat16"),
                                    row_max(dtype="bfloat16"), softmax(dtype="bfloat16")],
                         ids=lambda k: k.name)
def test_bf16_elementwise_and_reductions_lower_to_checked_msl(kernel, clang22):
    msl = tilelang.lower(kernel.prim_func(), target="metal").kernel_source
    assert re.search(r"device (const )?bfloat\* \w+_ptr", msl) and "ushort" not in msl
    result = check_msl(msl, name=f"{kernel.name}_bf16.metal", clang=clang22)
    assert result.ok, result.diagnostics


def test_host_module_keeps_bf16_storage_legalized():
    """Only the device keeps bf16: the host module (LLVM) still sees legalized 16-bit storage and builds."""
    artifact = tilelang.lower(elementwise_add(dtype="bfloat16").prim_func(), target="metal")
    script = artifact.host_mod.script()
    assert 'A = T.Buffer((256, 256), "uint16"' in script and not re.search(r'Buffer\([^\n]*"bfloat16"', script)
    assert "bfloat" in artifact.kernel_source


def _cast_kernel(src: str, dst: str):
    import tilelang.language as T

    @T.prim_func
    def cast_1x1(A: T.Tensor((1, 1), src), B: T.Tensor((1, 1), dst)):
        with T.Kernel(1, threads=1):
            B[0, 0] = T.cast(A[0, 0], dst)

    return cast_1x1


@pytest.mark.parametrize("src, dst", [("float16", "bfloat16"), ("bfloat16", "float16"), ("int32", "bfloat16"),
                                      ("bfloat16", "int8"), ("float32", "bfloat16")])
def test_bf16_casts_lower_to_checked_msl(src, dst, clang22):
    """MSL refuses a C-style cast between ``half`` and ``bfloat`` (a fuzz finding, issue 30): it goes through
    ``float``; casts from and to the other types stay direct."""
    msl = tilelang.lower(_cast_kernel(src, dst), target="metal").kernel_source
    if {src, dst} == {"float16", "bfloat16"}:
        msl_dst = "bfloat" if dst == "bfloat16" else "half"
        assert f"(({msl_dst})((float)" in msl, msl
    result = check_msl(msl, name=f"cast_{src}_{dst}.metal", clang=clang22)
    assert result.ok, result.diagnostics
