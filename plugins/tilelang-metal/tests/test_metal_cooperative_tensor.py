"""Metal 4 GEMM: ``T.gemm`` under a ``metal4`` target lowers to MetalPerformancePrimitives ``matmul2d`` on
cooperative tensors (shared tiles, or slices of global tensors read in place), the MLX block swizzle is computed
once per threadgroup, and the emitted MSL syntax-checks against the shim; without ``metal4`` (or for a call the
cooperative tensors do not serve) the simdgroup path stays."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest

import tilelang
import tilelang.language as T
from tilelang import tvm
from tilelang.errors import KernelTypeError, LoweringError
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


# ---------------------------------------------------------------------------------------------- T.cooperative_tensor_*
def ct_kernel(a_transposed: bool = False, m: int = 16, n: int = 32, k: int = 16, fill_tile: int = 0,
              a_scope: str = "metal.cooperative_tensor") -> Any:
    """C (16x32, fp32) = A (16x16, staged in threadgroup memory) @ B (16x32, read from device memory) by one
    simdgroup, every step a cooperative-tensor operator."""

    @T.prim_func
    def main(A: T.Tensor((16, 16), "float16"), B: T.Tensor((16, 32), "float16"), C: T.Tensor((16, 32), "float32")):
        with T.Kernel(1, threads=32) as _:
            A_s = T.alloc_shared((16, 16), "float16")
            T.copy(A, A_s)
            a = T.alloc_local((256,), "float16", scope=a_scope)
            b = T.alloc_local((512,), "float16", scope="metal.cooperative_tensor")
            c = T.alloc_local((512,), "float32", scope="metal.cooperative_tensor")
            T.cooperative_tensor_fill(c.data, fill_tile, 0.0, 16, 32)
            T.cooperative_tensor_load(a.data, 0, T.access_ptr(A_s[0, 0], "r"), 16, 16, 16, a_transposed, 16, 32, 16,
                                      0)
            T.cooperative_tensor_load(b.data, 0, T.address_of(B[0, 0]), 32, 16, 32, False, 16, 32, 16, 1)
            T.cooperative_tensor_multiply_accumulate(c.data, 0, a.data, 0, b.data, 0, c.data, 0, m, n, k,
                                                     a_transposed, False)
            T.cooperative_tensor_store(c.data, 0, T.access_ptr(C[0, 0], "w"), 32, 16, 32, False, 16, 32, 16, 2)

    return main


def test_cooperative_tensor_operators_lower_to_lane_registers_and_matmul2d(clang22: str) -> None:
    src = msl(ct_kernel())
    body = kernel_part(src)
    assert "#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>" in src
    assert src.count("inline void tl_mpp_ct_mma_hf(thread float* C, const thread half* A, const thread half* B, "
                     "const thread float* D) {") == 1
    assert "mpp::tensor_ops::matmul2d<__desc, metal::execution_simdgroup> __op;" in src
    # n / 32 elements per lane
    assert "thread half a[8];" in body and "thread half b[16];" in body and "thread float c[16];" in body
    assert "c[15] = 0.000000e+00f;" in body and "c[16] =" not in body
    assert "tl_mpp_ct_mma_hf((&(c[0])), (&(a[0])), (&(b[0])), (&(c[0])));" in body
    # the lane map: rows r and r + 8, columns c .. c + 3 of each 16x16 piece (r from lane bits 1, 2, 4; c from 0, 3)
    lane = ("(((((((int)threadIdx) >> 4) * {r16}) + (((((int)threadIdx) & 7) >> 1) * {row})) + "
            "(((((int)threadIdx) & 15) >> 3) * 8)) + ((((int)threadIdx) & 1) * 4))")
    a_lane, bc_lane = lane.format(r16=64, row=16), lane.format(r16=128, row=32)
    assert f"a[0] = A_s[{a_lane}];" in body and f"a[4] = A_s[({a_lane} + 128)];" in body
    assert f"b[8] = B_ptr[({bc_lane} + 16)];" in body and f"b[15] = B_ptr[({bc_lane} + 275)];" in body
    assert f"C_ptr[({bc_lane} + 275)] = c[15];" in body
    # the threads' copy into A_s and the lanes' reads of it are ordered by a barrier
    assert body.index("threadgroup_barrier") < body.index("a[0] = A_s[")
    result = check_msl(src)
    assert result.ok, result.diagnostics


def test_transposed_load_reads_the_block_transposed(clang22: str) -> None:
    body = kernel_part(msl(ct_kernel(a_transposed=True)))
    # element (r, c + 1) of A is A_s[c + 1, r]: one row further in memory
    first = body[body.index("a[0] = A_s[") + len("a[0] = A_s["):].split("];")[0]
    assert f"a[1] = A_s[({first} + 16)];" in body and f"a[4] = A_s[({first} + 8)];" in body


def test_emitter_builds_a_cooperative_tensor_gemm(clang22: str) -> None:
    from tilelang.metal.intrinsics import MPSIntrinEmitter

    m, n, k, bk = 64, 64, 64, 32

    @T.prim_func
    def main(A: T.Tensor((m, k), "float16"), B: T.Tensor((k, n), "float16"), C: T.Tensor((m, n), "float32")):
        with T.Kernel(1, threads=128) as _:
            A_s = T.alloc_shared((m, bk), "float16")
            B_s = T.alloc_shared((bk, n), "float16")
            em = MPSIntrinEmitter("float16", "float16", "float32", block_row_warps=2, block_col_warps=2,
                                  warp_row_tiles=32, warp_col_tiles=32, chunk=bk)
            a = T.alloc_local((2 * 256,), "float16", scope="metal.cooperative_tensor")
            b = T.alloc_local((512,), "float16", scope="metal.cooperative_tensor")
            c = T.alloc_local((2 * 512,), "float32", scope="metal.cooperative_tensor")
            for t in T.unroll(2):
                T.cooperative_tensor_fill(c, t, 0, 16, 32)
            for ko in T.serial(k // bk):
                T.copy(A[0, ko * bk], A_s)
                T.copy(B[ko * bk, 0], B_s)
                for ki in T.serial(bk // 16):
                    em.ldmatrix_a(a, A_s, ki)
                    em.ldmatrix_b(b, B_s, ki)
                    em.mma(a, b, c)
            em.simd_store(c, C)

    src = msl(main)
    body = kernel_part(src)
    # each simdgroup: two 16x32 C tiles (two A tiles, one B tile per K step of 16)
    assert "thread half a[16];" in body and "thread half b[16];" in body and "thread float c[32];" in body
    assert "tl_mpp_ct_mma_hf((&(c[0])), (&(a[0])), (&(b[0])), (&(c[0])));" in body
    assert "tl_mpp_ct_mma_hf((&(c[16])), (&(a[8])), (&(b[0])), (&(c[16])));" in body
    assert body.count("] = c[") == 32 and "simdgroup_" not in body
    result = check_msl(src)
    assert result.ok, result.diagnostics


def test_store_layout_matches_the_lane_map() -> None:
    from tilelang.metal.intrinsics import MPSIntrinEmitter

    em = MPSIntrinEmitter(block_row_warps=2, block_col_warps=2, warp_row_tiles=32, warp_col_tiles=64)
    frag = em.make_cooperative_tensor_store_layout(tvm.tirx.decl_buffer((64, 128), "float32",
                                                                        scope="local.fragment"))
    expected = {}
    for warp_m, warp_n, ln, e in itertools.product(range(2), range(2), range(32), range(16)):
        row = (((ln >> 2) & 4) | ((ln >> 1) & 3)) + 8 * ((e >> 2) & 1)  # tilelang_metal.mpp's lane map
        col = (((ln >> 2) & 2) | (ln & 1)) * 4 + 16 * (e >> 3) + (e & 3)
        for ti in range(2):
            for tj in range(2):
                thread = (warp_m + warp_n * 2) * 32 + ln  # simdgroup s is (s % 2, s // 2), as the emitter's
                expected[(warp_m * 32 + ti * 16 + row, warp_n * 64 + tj * 32 + col)] = (thread, (ti * 2 + tj) * 16 + e)
    assert len(expected) == 64 * 128
    for (i, j), (thread, index) in list(expected.items())[::97]:
        assert int(frag.map_forward_thread([i, j])) == thread
        assert [int(x) for x in frag.map_forward_index([i, j])] == [index]


def test_cooperative_tensors_need_a_metal4_target() -> None:
    with pytest.raises(LoweringError, match=r"T.cooperative_tensor_fill on target 'metal': needs Metal 4 "
                                            r"cooperative tensors .* no \"metal4\" key") as info:
        msl(ct_kernel(), METAL)
    assert info.value.location is not None and info.value.location[0].endswith("test_metal_cooperative_tensor.py")


def test_cooperative_tensors_on_another_backend_name_the_construct() -> None:
    pytest.importorskip("tilelang_cpu", reason="another backend (tilelang-cpu's llvm) is not installed")
    llvm = tvm.target.Target("llvm")
    with pytest.raises(LoweringError, match=r"T.cooperative_tensor_fill on target 'llvm': is a Metal 4 construct"):
        with tvm.transform.PassContext(), llvm:
            tilelang.lower(ct_kernel(), target=llvm)


@pytest.mark.parametrize("kwargs, message", [
    ({"m": 16, "n": 16, "k": 16}, r"matmul2d on 16x32x16 tiles .* got m, n, k = \(16, 16, 16\)"),
    ({"fill_tile": 1}, r"fill tile 1 of c needs per-lane elements \[16, 32\), but c holds 16 per lane"),
    ({"a_scope": "shared"}, r"the tensor a is a 'shared' buffer; cooperative tensors are allocated with "
                            r"T.alloc_local\(\(n,\), dtype, scope=\"metal.cooperative_tensor\"\)"),
])
def test_wrong_use_names_the_mistake(kwargs: dict, message: str) -> None:
    with pytest.raises(LoweringError, match=message):
        msl(ct_kernel(**kwargs))


def test_a_cooperative_tensor_of_the_wrong_size_is_refused_at_its_allocation() -> None:
    @T.prim_func
    def main(C: T.Tensor((32,), "float32")):
        with T.Kernel(1, threads=32) as _:
            bad = T.alloc_local((48,), "float32", scope="metal.cooperative_tensor")
            bad[0] = 1.0
            C[0] = bad[0]

    with pytest.raises(LoweringError, match=r"cooperative tensor bad must have a one-dimensional constant shape "
                                            r"\(n,\) with n a multiple of 64") as info:
        msl(main)
    assert "T.alloc_local((48,)" in (info.value.source_line or "")


def test_bf16_tensors_through_flat_and_buffer_pointers(clang22: str) -> None:
    @T.prim_func
    def main(A: T.Tensor((256,), "bfloat16"), B: T.Tensor((16, 32), "bfloat16"), C: T.Tensor((16, 32), "float16")):
        with T.Kernel(1, threads=32) as _:
            B_s = T.alloc_shared((16, 40), "bfloat16")  # padded rows: the load's stride says 40
            T.copy(B, B_s[0:16, 0:32])
            a = T.alloc_local((256,), "bfloat16", scope="metal.cooperative_tensor")
            b = T.alloc_local((512,), "bfloat16", scope="metal.cooperative_tensor")
            c = T.alloc_local((512,), "float32", scope="metal.cooperative_tensor")
            T.cooperative_tensor_fill(c, 0, 1.0, 16, 32)
            T.cooperative_tensor_load(a, 0, T.access_ptr(A[0], "r"), 16, 16, 16, False, 16, 32, 16, 0)
            T.cooperative_tensor_load(b, 0, B_s.access_ptr("r", offset=0), 40, 16, 32, False, 16, 32, 16, 1)
            T.cooperative_tensor_multiply_accumulate(c, 0, a, 0, b, 0, c, 0, 16, 32, 16, False, False)
            T.cooperative_tensor_store(c, 0, T.access_ptr(C[0, 0], "w"), 32, 16, 32, False, 16, 32, 16, 2)

    src = msl(main)
    body = kernel_part(src)
    assert "inline void tl_mpp_ct_mma_bf(thread float* C, const thread bfloat* A, const thread bfloat* B, " in src
    assert "get_left_input_cooperative_tensor<bfloat, bfloat, float>()" in src
    assert "tl_mpp_ct_mma_bf((&(c[0])), (&(a[0])), (&(b[0])), (&(c[0])));" in body
    assert re.search(r"b\[8\] = B_s\[\(.*>> 1\) \* 40\).* \+ 16\)\];", body)
    assert re.search(r"C_ptr\[.*\] = \(\(half\)c\[15\]\);", body)
    result = check_msl(src)
    assert result.ok, result.diagnostics


def test_a_pointer_into_registers_is_refused() -> None:
    @T.prim_func
    def main(C: T.Tensor((16, 32), "float32")):
        with T.Kernel(1, threads=32) as _:
            regs = T.alloc_local((16, 32), "float32")
            c = T.alloc_local((512,), "float32", scope="metal.cooperative_tensor")
            T.cooperative_tensor_load(c, 0, T.access_ptr(regs[0, 0], "r"), 32, 16, 32, False, 16, 32, 16, 2)
            T.cooperative_tensor_store(c, 0, T.access_ptr(C[0, 0], "w"), 32, 16, 32, False, 16, 32, 16, 2)

    with pytest.raises(LoweringError, match=r"load reaches regs, a 'local' buffer; cooperative tensors move from "
                                            r"and to threadgroup \(T.alloc_shared\) or device \(global\) memory"):
        msl(main)


def test_a_strided_tensor_is_addressed_through_its_strides() -> None:
    def kernel(stride: int) -> Any:
        @T.prim_func
        def main(C: T.StridedTensor((16, 32), (64, 1), "float32")):
            with T.Kernel(1, threads=32) as _:
                c = T.alloc_local((512,), "float32", scope="metal.cooperative_tensor")
                T.cooperative_tensor_fill(c, 0, 1.0, 16, 32)
                T.cooperative_tensor_store(c, 0, T.access_ptr(C[0, 0], "w"), stride, 16, 32, False, 16, 32, 16, 2)

        return main

    # element 15: row r + 8, column c + 19, 64 elements a row
    assert re.search(r"C_ptr\[\(.* \+ 531\)\] = c\[15\];", kernel_part(msl(kernel(64))))
    with pytest.raises(LoweringError, match=r"store of C, a buffer with explicit strides, must use its row stride "
                                            r"\(64\) .* got stride 32"):
        msl(kernel(32))
