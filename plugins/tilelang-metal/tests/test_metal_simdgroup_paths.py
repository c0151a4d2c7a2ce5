"""The GEMM paths chosen by operand scope (a resident simdgroup accumulator, C in threadgroup memory), packed
16-bit vector copies, and ``tilelang.lower``'s ``enable_host_codegen`` / ``enable_device_compile`` on Metal.
Every generated kernel passes the MSL check."""

from __future__ import annotations

import re

import pytest

import tilelang
import tilelang.language as T
from tilelang_metal.mslcheck import check_msl


def _gemm(m: int, n: int, k: int, bm: int, bn: int, bk: int, dtype: str = "float16", accum: str = "float32",
          threads: int = 128, epilogue: bool = False, c_scope: str = "fragment"):
    @T.prim_func
    def main(A: T.Tensor((m, k), dtype), B: T.Tensor((k, n), dtype), C: T.Tensor((m, n), accum)):
        with T.Kernel(T.ceildiv(n, bn), T.ceildiv(m, bm), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((bm, bk), dtype)
            B_shared = T.alloc_shared((bk, bn), dtype)
            if c_scope == "shared":
                C_local = T.alloc_shared((bm, bn), accum)
            else:
                C_local = T.alloc_fragment((bm, bn), accum)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(k, bk), num_stages=0):
                T.copy(A[by * bm, ko * bk], A_shared)
                T.copy(B[ko * bk, bx * bn], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            if epilogue:
                for i, j in T.Parallel(bm, bn):
                    C_local[i, j] = T.max(C_local[i, j], 0)
            T.copy(C_local, C[by * bm, bx * bn])

    return main


def _msl(func, **kwargs) -> str:
    return tilelang.lower(func, target="metal", **kwargs).kernel_source


@pytest.mark.parametrize(("shape", "dtype"), [((64, 64, 64, 16, 16, 16), "float16"),
                                              ((128, 128, 128, 32, 64, 16), "float16"),
                                              ((64, 64, 64, 32, 32, 16), "float32"),
                                              ((64, 64, 64, 32, 32, 16), "bfloat16")])
def test_accumulator_stays_in_simdgroup_matrices(shape, dtype, clang22):
    src = _msl(_gemm(*shape, dtype=dtype))
    assert "make_filled_simdgroup_matrix" in src
    assert re.search(r"simdgroup_float8x8 C_local\[\d+\];", src)
    assert src.count("simdgroup_store(C_local[") > 0
    assert "C_local_tg" not in src  # no staging of C through threadgroup memory
    assert not [line for line in src.splitlines() if "simdgroup_load(C_local" in line]
    # the store goes straight to device memory
    assert re.search(r"simdgroup_store\(C_local\[\d+\], \(&\(C_ptr\[", src)
    result = check_msl(src, name="resident.metal", clang=clang22)
    assert result.ok, result.diagnostics


def test_accumulator_used_elementwise_keeps_the_fragment_path(clang22):
    src = _msl(_gemm(64, 64, 64, 32, 32, 16, epilogue=True))
    assert "C_local_tg" in src and "simdgroup_multiply_accumulate" in src
    assert "make_filled_simdgroup_matrix" not in src  # the clear ran on the fragment
    assert check_msl(src, name="epilogue.metal", clang=clang22).ok


def test_accumulator_copied_to_another_dtype_keeps_the_fragment_path():
    func = _gemm(64, 64, 64, 32, 32, 16, accum="float32")

    @T.prim_func
    def narrowing(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16"),
                  C: T.Tensor((64, 64), "float16")):
        with T.Kernel(2, 2, threads=128) as (bx, by):
            A_shared = T.alloc_shared((32, 64), "float16")
            B_shared = T.alloc_shared((64, 32), "float16")
            acc = T.alloc_fragment((32, 32), "float32")
            T.copy(A[by * 32, 0], A_shared)
            T.copy(B[0, bx * 32], B_shared)
            T.gemm(A_shared, B_shared, acc, clear_accum=True)
            T.copy(acc, C[by * 32, bx * 32])

    assert "simdgroup_store(C_local[" in _msl(func)
    src = _msl(narrowing)
    assert "acc_tg" in src and "simdgroup_store(acc[" not in src


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_gemm_with_c_in_threadgroup_memory(dtype, clang22):
    src = _msl(_gemm(128, 128, 128, 32, 64, 32, dtype=dtype, c_scope="shared"))
    assert "simdgroup_multiply_accumulate" in src
    assert "threadgroup float* C_local = (threadgroup float*)" in src  # a typed alias into the threadgroup array
    assert "simdgroup_store(C_local_sg[0], (&(C_local[" in src  # written back in place
    result = check_msl(src, name="shared_c.metal", clang=clang22)
    assert result.ok, result.diagnostics


def test_gemm_with_c_in_threadgroup_memory_and_idle_simdgroups(clang22):
    # 16x16 C is two 8x8 tiles per row: 4 simdgroups cover it, the other 4 of 256 threads must sit out
    src = _msl(_gemm(64, 64, 64, 16, 16, 16, threads=256, c_scope="shared"))
    assert "if (((int)threadIdx.x) < 128) {" in src
    assert check_msl(src, name="idle.metal", clang=clang22).ok


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16bit_copies_move_packed_uint4(dtype, clang22):
    src = _msl(_gemm(64, 64, 64, 32, 32, 32, dtype=dtype))
    assert "*(threadgroup uint4*)(((threadgroup uint*)A_shared)" in src
    assert "*(device uint4*)(((device uint*)A_ptr)" in src
    assert f"*(threadgroup {'bfloat' if dtype == 'bfloat16' else 'half'}*)" not in src
    result = check_msl(src, name="packed.metal", clang=clang22)
    assert result.ok, result.diagnostics


def test_bf16_vectors_never_print_as_scalar_bfloat(clang22):
    @T.prim_func
    def scale(A: T.Tensor((1024,), "bfloat16"), B: T.Tensor((1024,), "bfloat16")):
        with T.Kernel(4, threads=64) as bx:
            for i in T.Parallel(256):
                B[bx * 256 + i] = A[bx * 256 + i] * T.bfloat16(2.0)

    @T.prim_func
    def vector_tile(A: T.Tensor((64,), "bfloat16"), B: T.Tensor((64,), "bfloat16")):
        with T.Kernel(1, threads=8) as _:
            S = T.alloc_shared((64,), "bfloat16")
            tx = T.get_thread_binding()
            for v in T.vectorized(8):
                S[tx * 8 + v] = A[tx * 8 + v]
            for v in T.vectorized(8):
                B[tx * 8 + v] = S[tx * 8 + v]

    for func in (scale, vector_tile):
        src = _msl(func)
        assert not re.search(r"\*\((device|threadgroup) bfloat\*\)", src), src
        assert check_msl(src, name="bf16.metal", clang=clang22).ok
    assert "threadgroup uint4* S = (threadgroup uint4*)" in _msl(vector_tile)


def test_lower_without_host_codegen_keeps_the_host_ir():
    func = _gemm(64, 64, 64, 16, 16, 16)
    full = tilelang.lower(func, target="metal")
    assert full.rt_mod is not None
    source_only = tilelang.lower(func, target="metal", enable_host_codegen=False,
                                 enable_device_compile=False)
    assert source_only.rt_mod is None and source_only.host_source is None
    assert source_only.host_mod is not None and len(source_only.host_mod.functions) > 0
    assert source_only.kernel_source == full.kernel_source


def test_threadgroup_tiles_are_typed_aliases_of_one_array(clang22):
    from tilelang_metal.threadgroup_memory import threadgroup_usage

    src = _msl(_gemm(64, 64, 64, 32, 32, 16, dtype="float16"))
    assert re.search(r"threadgroup uchar buf_shmem\[\d+\];", src)
    aliases = re.findall(r"threadgroup half\* (\w+) = \(threadgroup half\*\)", src)
    assert sorted(aliases) == ["A_shared", "B_shared"]
    assert not re.findall(r"\((?:half\d*|char|void)\*\)", src)  # every pointer cast names its address space
    assert threadgroup_usage(src)["main_kernel"] == {"A_shared": 32 * 16 * 2, "B_shared": 16 * 32 * 2}
    assert check_msl(src, name="aliases.metal", clang=clang22).ok


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_unaligned_16bit_vector_copies_fall_back_to_element_copies(dtype, clang22):
    @T.prim_func
    def shifted(A: T.Tensor((72,), dtype), B: T.Tensor((64,), dtype)):
        with T.Kernel(1, threads=8) as _:
            tx = T.get_thread_binding()
            for v in T.vectorized(8):
                B[tx * 8 + v] = A[tx * 8 + v + 1]

    src = _msl(shifted)
    assert "uint4" not in src and "half8" not in src
    assert not re.search(r"\*\((device|threadgroup) bfloat\*\)", src)
    assert re.search(r"for \(int lane = 0; lane < 8; \+\+lane\)", src), src
    assert check_msl(src, name="shifted.metal", clang=clang22).ok
