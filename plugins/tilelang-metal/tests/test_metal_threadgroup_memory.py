"""Threadgroup memory on Apple GPUs (32 KiB): flash attention fits, an oversized program is refused at lowering
time naming its buffers, and the artifact reports each kernel's threadgroup memory."""

from __future__ import annotations

import pytest

import tilelang
from tilelang.errors import LoweringError
from tilelang.testing.corpus import flash_attention, gemm
from tilelang_metal.mslcheck import check_msl
from tilelang_metal.threadgroup_memory import (
    MAX_THREADGROUP_BYTES,
    check_threadgroup_memory,
    threadgroup_usage,
    type_bytes,
)

TWO_KERNELS = """#include <metal_stdlib>
using namespace metal;
kernel void first(device float* a [[buffer(0)]]) {
  threadgroup half A_shared[4096];
  threadgroup float4 v[8];
  thread float acc[32];
}
kernel void second(device float* a [[buffer(0)]]) {
  threadgroup float big[8192];
  threadgroup half3 h[2];
}
"""


def test_usage_is_read_per_kernel_with_msl_type_sizes():
    assert threadgroup_usage(TWO_KERNELS) == {"first": {"A_shared": 8192, "v": 128},
                                              "second": {"big": 32768, "h": 16}}
    assert [type_bytes(t) for t in ("bfloat", "ushort", "float3", "half4", "char")] == [2, 2, 16, 8, 1]
    with pytest.raises(ValueError, match="unknown MSL element type"):
        type_bytes("simdgroup_float8x8")


def test_over_the_limit_names_the_buffers():
    with pytest.raises(LoweringError, match=r"second: needs 32784 bytes .* allow 32768 \(big 32768 B, h 16 B\)"):
        check_threadgroup_memory(TWO_KERNELS)
    assert check_threadgroup_memory(TWO_KERNELS, limit=64 * 1024)["first"]["A_shared"] == 8192


def test_flash_attention_fits_in_32_kib(clang22):
    artifact = tilelang.lower(flash_attention().prim_func(), target="metal")
    (report,) = artifact.metadata["threadgroup_memory"].values()
    assert report["bytes"] == sum(report["buffers"].values()) <= MAX_THREADGROUP_BYTES
    # Q/K/V tiles (8 KiB each) plus small staging chunks: the scores and the output are never staged whole
    # (a span's name lists the tiles sharing it)
    tiles = {name: size for names, size in report["buffers"].items() for name in names.split("/")}
    assert {"Q_shared", "K_shared", "V_shared"} <= set(tiles)
    assert max(size for names, size in report["buffers"].items() if not any(
        name.endswith("_shared") for name in names.split("/"))) <= 4096
    assert "simdgroup_multiply_accumulate(" in artifact.kernel_source
    result = check_msl(artifact.kernel_source, name="flash_attention.metal", clang=clang22)
    assert result.ok, result.diagnostics


def test_oversized_tiles_raise_at_lowering():
    func = gemm(block_M=128, block_N=128, block_K=64).prim_func()  # A and B tiles: 16 KiB each, plus C staging
    with pytest.raises(LoweringError, match=r"gemm_kernel: needs \d+ bytes of threadgroup memory, Apple GPUs allow "
                                            r"32768 \(.*A_shared 16384 B.*B_shared 16384 B"):
        tilelang.lower(func, target="metal")


def test_the_report_survives_the_kernel_cache():
    from tilelang.artifact import CompiledArtifact

    artifact = tilelang.lower(gemm().prim_func(), target="metal")
    cached = CompiledArtifact.from_json(artifact.to_json(), {})
    assert cached.metadata["threadgroup_memory"] == artifact.metadata["threadgroup_memory"]
    assert cached.metadata["threadgroup_memory"]["gemm_kernel"]["buffers"]["A_shared"] == 64 * 32 * 2


def test_dynamic_shared_barrier_becomes_a_threadgroup_barrier(clang22):
    """``T.tvm_storage_sync("shared.dyn")`` (which TVM's Metal codegen drops) is a threadgroup barrier."""
    import tilelang.language as T

    @T.prim_func
    def main():
        with T.Kernel(1, threads=32):
            T.tvm_storage_sync("shared.dyn")

    msl = tilelang.lower(main, target="metal").kernel_source
    assert msl.count("threadgroup_barrier(mem_flags::mem_threadgroup)") == 1
    assert check_msl(msl, name="barrier.metal", clang=clang22).ok


def test_tiles_sharing_storage_are_reported_as_one_span():
    msl = """kernel void k(device float* a [[buffer(0)]]) {
  threadgroup uchar buf_shmem[12288];
  threadgroup half* Q_shared = (threadgroup half*)((threadgroup half*)(&(buf_shmem[0])));
  threadgroup half* K_shared = (threadgroup half*)((threadgroup half*)(&(buf_shmem[8192])));
  threadgroup half* P_shared = (threadgroup half*)((threadgroup half*)(&(buf_shmem[8192])));
}
"""
    assert threadgroup_usage(msl) == {"k": {"Q_shared": 8192, "K_shared/P_shared": 4096}}
