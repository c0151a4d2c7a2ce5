"""Metal 4 GEMM: ``T.gemm`` under a ``metal4`` target lowers to MetalPerformancePrimitives ``matmul2d`` on
cooperative tensors (shared tiles, or slices of global tensors read in place), the MLX block swizzle is computed
once per threadgroup, and the emitted MSL syntax-checks against the shim; without ``metal4`` (or for a call the
cooperative tensors do not serve) the simdgroup path stays."""

from __future__ import annotations

import re
from typing import Any

import pytest

import tilelang
import tilelang.language as T
from tilelang import tvm
from tilelang.errors import KernelTypeError
from tilelang_metal.mpp import MppGemmSpec, add_gemm_helpers, gemm_helper
from tilelang_metal.mslcheck import check_msl, strip_attributes
from tilelang_metal.tileops.gemm_mpp import warp_partition

METAL = tvm.target.Target({"kind": "metal", "keys": ["metal", "gpu"]})
METAL4 = tvm.target.Target({"kind": "metal", "keys": ["metal", "gpu", "metal4"]})


def shared_c(m: int, n: int, k: int, bm: int, bn: int, bk: int, dtype: str = "float16") -> Any:
    @T.prim_func
    def main(A: T.Tensor((m, k), dtype), B: T.Tensor((k, n), dtype), C: T.Tensor((m, n), "float32")):
        with T.Kernel(T.ceildiv(n, bn), T.ceildiv(m, bm), threads=128) as (bx, by):
            A_shared = T.alloc_shared((bm, bk), dtype, scope="shared")
            B_shared = T.alloc_shared((bk, bn), dtype, scope="shared")
            C_shared = T.alloc_shared((bm, bn), "float32", scope="shared")
            T.clear(C_shared)
            for ko in T.Pipelined(T.ceildiv(k, bk), num_stages=0):
                T.copy(A[by * bm, ko * bk], A_shared)
                T.copy(B[ko * bk, bx * bn], B_shared)
                T.gemm(A_shared, B_shared, C_shared)
            T.copy(C_shared, C[by * bm, bx * bn])

    return main


def global_c(m: int, n: int, k: int, bm: int, bn: int, accum: str = "float32", panel: int = 0) -> Any:
    tiles_n, tiles_m = n // bn, m // bm

    @T.prim_func
    def main(A: T.Tensor((m, k), "float16"), B: T.Tensor((k, n), "float16"), C: T.Tensor((m, n), accum)):
        with T.Kernel(tiles_n * panel if panel else tiles_n, T.ceildiv(tiles_m, panel) if panel else tiles_m,
                      threads=128) as (bx, by):
            tx = bx // panel if panel else bx
            ty = by * panel + bx % panel if panel else by
            if panel:
                T.use_swizzle(panel_size=panel, order="mlx")
            if ty < tiles_m:
                T.gemm(A[ty * bm:(ty + 1) * bm, 0:k], B[0:k, tx * bn:(tx + 1) * bn],
                       C[ty * bm:(ty + 1) * bm, tx * bn:(tx + 1) * bn], clear_accum=True)

    return main


def build_global(*args: Any, **kwargs: Any) -> Any:
    """The global-operand program, or an xfail while core's front end refuses it (global T.gemm operands and
    ``order="mlx"`` are accepted by the reference; core must allow them)."""
    try:
        return global_c(*args, **kwargs)
    except KernelTypeError as exc:
        pytest.xfail(f"core's front end refuses the program: {exc}")


def msl(func: Any, target: Any = METAL4) -> str:
    with tvm.transform.PassContext(), target:
        return tilelang.lower(func, target=target).kernel_source


def kernel_part(src: str) -> str:
    return src[src.index("union __TVMArgUnion"):]


def test_shared_c_uses_cooperative_tensors(clang22: str) -> None:
    src = msl(shared_c(128, 128, 128, 32, 64, 32))
    assert "#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>" in src
    assert "mpp::tensor_ops::matmul2d<__desc, metal::execution_simdgroup>" in src
    assert "get_destination_cooperative_tensor" in src and "simdgroup_multiply_accumulate" not in src
    # 4 simdgroups split the 32x64 tile 2x2: one 16x32 piece each, A / B / C in threadgroup memory
    assert "tl_mpp_gemm_ththtf_m16n32k32_l32x64x64(" in src
    assert "const threadgroup half* __src" in src
    body = kernel_part(src)
    assert "[[simdgroup_index_in_threadgroup]]" in body and "(((int)__simd_group_id) & 1)" in body
    assert "max_total_threads_per_threadgroup(128)" in body
    assert "const device half* __restrict A" in body and "device float* __restrict C" in body
    # the helper reads and writes the threadgroup tiles through pointers: barriers on both sides
    call = body.index("tl_mpp_gemm_")
    assert "threadgroup_barrier" in body[:call] and "threadgroup_barrier" in body[call:]
    result = check_msl(src)
    assert result.ok, result.diagnostics


def test_global_operands_are_read_in_place(clang22: str) -> None:
    src = msl(build_global(128, 256, 128, 64, 128))
    body = kernel_part(src)
    # 2x2 simdgroups of 32x64 (4 pieces each), A and B straight from device memory, no staging, no barrier
    assert "tl_mpp_gemm_dhdhdf_m32n64k128_l128x256x256_z(" in body
    assert "threadgroup half" not in src and "threadgroup_barrier" not in src and "threadgroup uchar" not in src
    assert "const device half* __src" in src and "thread float C_ct" not in src
    assert "__metal_get_thread_index_in_simdgroup" in src
    assert re.search(r"A\[\(\(\(\(int\)blockIdx\.y\) \* 8192\)", body)
    for n in range(4):
        assert f"__op.run(__a{n // 2}, __b{n % 2}, __acc{n});" in src
    result = check_msl(src)
    assert result.ok, result.diagnostics


def test_mlx_swizzle_is_computed_once(clang22: str) -> None:
    src = msl(build_global(512, 256, 128, 64, 128, accum="float16", panel=4))
    body = kernel_part(src)
    assert "uint2 __physical_blockIdx [[threadgroup_position_in_grid]]" in body
    assert ("const uint2 blockIdx = uint2(__physical_blockIdx.x >> 2, (__physical_blockIdx.y << 2) + "
            "(__physical_blockIdx.x & 3u));") in body
    assert "blockIdx.x) >> 2" not in body and "blockIdx.x) & 3" not in body and "* 32768" not in body
    assert "tl_metal_mlx_swizzle" not in src
    # fp16 C: fp32 accumulation, cast on the store
    assert "device half* __restrict C" in body and "half4(*(thread float4*)(&__acc0[0]))" in src
    result = check_msl(src)
    assert result.ok, result.diagnostics


def test_without_metal4_the_simdgroup_path_stays() -> None:
    src = msl(shared_c(128, 128, 128, 32, 64, 32), METAL)
    assert "simdgroup_multiply_accumulate" in src and "MetalPerformancePrimitives" not in src
    assert "kernel void main_kernel(" in src


def test_unserved_gemm_falls_back_to_simdgroups() -> None:
    # fp32 operands: no fp32 cooperative-tensor helper, so the simdgroup path serves it under metal4 too
    src = msl(shared_c(64, 64, 64, 32, 32, 32, dtype="float32"))
    assert "simdgroup_multiply_accumulate" in src and "mpp::" not in src


def test_warp_partition_balances_pieces() -> None:
    assert warp_partition(64, 128, 4) == (2, 2)
    assert warp_partition(32, 64, 4) == (2, 2)
    assert warp_partition(16, 32, 4) is None  # four simdgroups cannot each own a whole 16x32 piece
    assert warp_partition(256, 256, 4) is None  # 32 pieces per simdgroup: more than it keeps live


def test_helper_name_round_trips_and_checks(clang22: str) -> None:
    spec = MppGemmSpec(("device", "half"), ("threadgroup", "half"), ("device", "half"), 32, 64, 64, 64, 72,
                       128, False)
    assert MppGemmSpec.parse(spec.name) == spec
    assert MppGemmSpec.parse("tl_mpp_gemm_bogus") is None
    text = gemm_helper(spec)
    assert "const threadgroup half* __src = B + __k * 72" in text
    assert "float4(*(const device half4*)" in text  # an fp16 C is read into fp32 accumulators
    src = add_gemm_helpers("#include <metal_stdlib>\nusing namespace metal;\n"
                           f"kernel void f(device half* a [[buffer(0)]]) {{ threadgroup half t[8192]; "
                           f"{spec.name}(a, t, a); }}\n")
    assert src.count(f"inline void {spec.name}(") == 1
    result = check_msl(src)
    assert result.ok, result.diagnostics


def test_attribute_lists_are_checked() -> None:
    stripped, errors = strip_attributes("[[kernel, max_total_threads_per_threadgroup(64)]] void f() {}")
    assert not errors and stripped.startswith("kernel ") and "max_total" not in stripped
    _, errors = strip_attributes("[[kernel, bogus(3)]] void f() {}")
    assert errors and "bogus" in errors[0]
