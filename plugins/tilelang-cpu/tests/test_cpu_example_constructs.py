"""Constructs of the reference's example programs that the CPU backend runs (conformance/examples_cpu.py)."""

from __future__ import annotations

import importlib.util

import pytest
import torch

import tilelang
import tilelang.language as T

# T.ws / T.tma_copy / T.alloc_barrier belong to the CUDA dialect: programs using them need tilelang-cuda installed
needs_cuda_dialect = pytest.mark.skipif(importlib.util.find_spec("tilelang_cuda") is None,
                                        reason="the CUDA dialect (tilelang-cuda) is not installed")


def test_two_launches_in_one_function_each_keep_their_block_variables():
    # example_mha_inference: a split kernel then a combine kernel, both `as (bx, by)`, through a global scratch
    M, N, block = 64, 32, 16

    @T.prim_func
    def two_kernels(A: T.Tensor((M, N), T.float32), B: T.Tensor((M, N), T.float32)):
        scratch = T.alloc_global((M, N), T.float32)
        with T.Kernel(M // block, N // block, threads=32) as (bx, by):
            for i, j in T.Parallel(block, block):
                scratch[bx * block + i, by * block + j] = A[bx * block + i, by * block + j] * 2
        with T.Kernel(N // block, M // block, threads=32) as (bx, by):
            for i, j in T.Parallel(block, block):
                B[by * block + i, bx * block + j] = scratch[by * block + i, bx * block + j] + 1

    kernel = tilelang.compile(two_kernels, target="cpu")
    a = torch.randn(M, N)
    b = torch.empty(M, N)
    kernel(a, b)
    torch.testing.assert_close(b, a * 2 + 1)


def test_thread_allreduce_sums_over_the_named_thread_index():
    # example_gemv's splitk_gemv_vectorized_tvm: each (tn, tk) thread holds a partial sum; TVM's allreduce over tk
    N, K, BLOCK_N, R = 4, 64, 2, 8

    @T.prim_func
    def gemv(A: T.Tensor((K,), T.float32), B: T.Tensor((N, K), T.float32), C: T.Tensor((N,), T.float32)):
        with T.Kernel(N // BLOCK_N, threads=(BLOCK_N, R)) as bn:
            tn = T.get_thread_binding(0)
            tk = T.get_thread_binding(1)
            acc = T.alloc_local((1,), T.float32)
            reduced = T.alloc_local((1,), T.float32)
            acc[0] = 0
            for k in T.serial(K // R):
                acc[0] += A[tk * (K // R) + k] * B[bn * BLOCK_N + tn, tk * (K // R) + k]
            with T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope",
                        T.reinterpret(T.uint64(0), dtype="handle")):
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), acc[0], True, reduced[0], tk, dtype="handle"))
            C[bn * BLOCK_N + tn] = reduced[0]

    kernel = tilelang.compile(gemv, target="cpu")
    a, b, c = torch.randn(K), torch.randn(N, K), torch.empty(N)
    kernel(a, b, c)
    torch.testing.assert_close(c, b @ a, rtol=1e-5, atol=1e-5)


def test_thread_allreduce_over_a_thread_binding_loop():
    # example_dequant_gemv_fp16xint4: the reduced index is a ``T.thread_binding`` loop over the launch's threads
    @T.prim_func
    def sums(A: T.Tensor((8, 32), T.float32), C: T.Tensor((8,), T.float32)):
        with T.Kernel(4, threads=(32, 2)) as bx:
            acc = T.alloc_local((1,), T.float32)
            red = T.alloc_local((1,), T.float32)
            kr = T.thread_binding(0, 32, thread="threadIdx.x")
            ni = T.thread_binding(0, 2, thread="threadIdx.y")
            acc[0] = A[bx * 2 + ni, kr] * 2.0
            with T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope",
                        T.reinterpret(T.uint64(0), dtype="handle")):
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), acc[0], True, red[0], kr, dtype="handle"))
            if kr == 0:
                C[bx * 2 + ni] = red[0]

    kernel = tilelang.compile(sums, target="cpu")
    a, c = torch.randn(8, 32), torch.zeros(8)
    kernel(a, c)
    torch.testing.assert_close(c, 2 * a.sum(dim=1), rtol=1e-5, atol=1e-5)


def test_fp8_values_convert_and_compute_as_floats():
    # example_tilelang_gemm_fp8: fp8 tiles are read as floats (not as their byte's integer value) and written back
    @T.prim_func
    def scale(A: T.Tensor((64,), T.float8_e4m3fn), B: T.Tensor((64,), T.float32),
              C: T.Tensor((64,), T.float8_e5m2)):
        with T.Kernel(1, threads=1):
            for i in T.serial(64):
                B[i] = T.cast(A[i], T.float32)
                C[i] = T.cast(B[i] * 2, T.float8_e5m2)

    kernel = tilelang.compile(scale, target="cpu")
    # normal fp8 results (TVM's fp32 -> fp8 conversion flushes subnormal results to zero)
    a = (torch.rand(64) * 8 + 0.25) * torch.where(torch.rand(64) < 0.5, -1.0, 1.0)
    a = a.to(torch.float8_e4m3fn)
    b, c = torch.empty(64), torch.empty(64, dtype=torch.float8_e5m2)
    kernel(a, b, c)
    torch.testing.assert_close(b, a.float())
    torch.testing.assert_close(c.float(), (a.float() * 2).to(torch.float8_e5m2).float())


def test_every_fp8_byte_reads_as_its_value():
    # zero and subnormals too (TVM's fp8 legalization read the byte 0 as 2**-7), NaN and inf as NaN and inf
    @T.prim_func
    def read(A: T.Tensor((256,), T.float8_e4m3fn), B: T.Tensor((256,), T.float8_e5m2),
             X: T.Tensor((256,), T.float32), Y: T.Tensor((256,), T.float32)):
        with T.Kernel(1, threads=1):
            for i in T.serial(256):
                X[i] = T.cast(A[i], T.float32)
                Y[i] = T.cast(B[i], T.float32)

    kernel = tilelang.compile(read, target="cpu")
    bytes_ = torch.arange(256, dtype=torch.uint8)
    a, b = bytes_.view(torch.float8_e4m3fn), bytes_.view(torch.float8_e5m2)
    x, y = torch.empty(256), torch.empty(256)
    kernel(a, b, x, y)
    torch.testing.assert_close(x, a.float(), rtol=0, atol=0, equal_nan=True)
    torch.testing.assert_close(y, b.float(), rtol=0, atol=0, equal_nan=True)
    assert torch.equal(torch.signbit(x), torch.signbit(a.float()))


def test_block_swizzle_in_the_second_launch_remaps_that_launchs_blocks():
    # example_fusedmoe_tilelang: two launches, each with T.use_swizzle
    M, N, block = 64, 64, 16

    @T.prim_func
    def two_swizzled(A: T.Tensor((M, N), T.float32), B: T.Tensor((M, N), T.float32)):
        scratch = T.alloc_global((M, N), T.float32)
        with T.Kernel(N // block, M // block, threads=32) as (bx, by):
            T.use_swizzle(2)
            for i, j in T.Parallel(block, block):
                scratch[by * block + i, bx * block + j] = A[by * block + i, bx * block + j] + 1
        with T.Kernel(N // block, M // block, threads=32) as (bx, by):
            T.use_swizzle(2)
            for i, j in T.Parallel(block, block):
                B[by * block + i, bx * block + j] = scratch[by * block + i, bx * block + j] * 3

    kernel = tilelang.compile(two_swizzled, target="cpu")
    a = torch.randn(M, N)
    b = torch.empty(M, N)
    kernel(a, b)
    torch.testing.assert_close(b, (a + 1) * 3)


@needs_cuda_dialect
def test_warp_specialized_roles_with_tma_copies_and_mbarriers_run_in_program_order():
    # example_warp_specialize_gemm_copy_0_gemm_1: a producer warpgroup loads tiles with T.tma_copy, a consumer
    # warpgroup multiplies them, mbarriers order the two. Was a LoweringError (mbarrier on llvm); the consumer's
    # T.gemm must also run once per block, not once per thread of its warpgroup.
    M, N, K, bm, bn, bk = 64, 64, 64, 32, 32, 16

    @T.prim_func
    def gemm(A: T.Tensor((M, K), T.float32), B: T.Tensor((K, N), T.float32), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(N // bn, M // bm, threads=256) as (bx, by):
            A_s = T.alloc_shared((bm, bk), T.float32)
            B_s = T.alloc_shared((bk, bn), T.float32)
            C_l = T.alloc_fragment((bm, bn), T.float32)
            ready = T.alloc_barrier(arrive_count=128)
            done = T.alloc_barrier(arrive_count=128)
            with T.ws(1):
                T.clear(C_l)
            for ko in T.Pipelined(K // bk, num_stages=0):
                with T.ws(0):
                    T.barrier_wait(done, (ko + 1) % 2)
                    T.tma_copy(A[by * bm, ko * bk], A_s, barrier=ready)
                    T.tma_copy(B[ko * bk, bx * bn], B_s, barrier=ready)
                    T.barrier_arrive(ready)
                with T.ws(1):
                    T.barrier_wait(ready, ko % 2)
                    T.gemm(A_s, B_s, C_l)
                    T.barrier_arrive(done)
            with T.ws(1):
                T.copy(C_l, C[by * bm, bx * bn])

    kernel = tilelang.compile(gemm, target="cpu")
    a, b, c = torch.randn(M, K), torch.randn(K, N), torch.empty(M, N)
    kernel(a, b, c)
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)


@needs_cuda_dialect
def test_warp_specialized_scope_keeps_its_guard_on_per_thread_statements():
    # a T.ws scope's thread-indexed statements run on its warpgroup's threads only (threads 128..255 here)
    @T.prim_func
    def mark(Out: T.Tensor((256,), T.int32)):
        with T.Kernel(1, threads=256):
            tx = T.get_thread_binding()
            Out[tx] = 0
            with T.ws(1):
                Out[tx] = tx

    kernel = tilelang.compile(mark, target="cpu")
    out = torch.full((256,), -1, dtype=torch.int32)
    kernel(out)
    expected = torch.arange(256, dtype=torch.int32)
    expected[:128] = 0
    assert torch.equal(out, expected)


def test_named_barrier_inside_a_branch_on_the_thread_index():
    # deepseek_v32 topk_selector: threads tx < 64 of 128 run a Hillis-Steele prefix sum in shared memory, ordered
    # by T.sync_threads(3, 64), a named barrier of those threads (was a TypeError: sync_threads took no arguments)
    R = 64

    @T.prim_func
    def prefix(X: T.Tensor((R,), T.int32), Y: T.Tensor((R,), T.int32)):
        with T.Kernel(1, threads=128):
            tx = T.get_thread_binding()
            s = T.alloc_shared((R,), T.int32)
            val = T.alloc_var(T.int32)
            if tx < R:
                s[tx] = X[tx]
            T.sync_threads()
            if tx < R:
                for i in T.serial(6):
                    T.sync_threads(3, R)
                    val = s[tx]
                    if tx >= (1 << i):
                        val = val + s[tx - (1 << i)]
                    T.sync_threads(3, R)
                    s[tx] = val
            T.sync_threads()
            if tx < R:
                Y[tx] = s[tx]

    kernel = tilelang.compile(prefix, target="cpu")
    x = torch.randint(0, 100, (R,), dtype=torch.int32)
    y = torch.empty(R, dtype=torch.int32)
    kernel(x, y)
    assert torch.equal(y, torch.cumsum(x, 0).to(torch.int32))


def test_loop_around_barriers_leaves_on_a_uniform_per_thread_value():
    # topk_selector: `for round: if l_todo <= 0: break` and `for s in range(ceildiv(l_n, BLOCK))` around barriers,
    # reading per-thread copies of uniform values. The break ended the emulated thread loop instead of the round
    # loop, and the loop bound read the thread index outside the thread loops (tx undefined).
    @T.prim_func
    def rounds(Out: T.Tensor((32,), T.int32)):
        with T.Kernel(1, threads=32):
            tx = T.get_thread_binding()
            s = T.alloc_shared((32,), T.int32)
            todo = T.alloc_var(T.int32)
            n = T.alloc_var(T.int32)
            todo = 2
            s[tx] = 0
            for r in T.serial(5):
                if todo <= 0:
                    break
                T.sync_threads()
                n = 2 + r
                for _ in T.serial(n):
                    T.sync_threads()
                    s[tx] = s[tx] + 1
                todo = todo - 1
            T.sync_threads()
            Out[tx] = s[tx]

    kernel = tilelang.compile(rounds, target="cpu")
    out = torch.zeros(32, dtype=torch.int32)
    kernel(out)
    assert torch.equal(out, torch.full((32,), 5, dtype=torch.int32))  # rounds 0 and 1 only: 2 + 3 increments


@needs_cuda_dialect
def test_tma_copy_box_overhanging_the_tensor_reads_zeros_and_skips_stores():
    # TMA fills a load's out-of-bounds box elements with 0 and drops a store's
    @T.prim_func
    def edge(A: T.Tensor((6, 8), T.float32), B: T.Tensor((6, 8), T.float32)):
        with T.Kernel(2, threads=128) as bx:
            s = T.alloc_shared((4, 8), T.float32)
            bar = T.alloc_barrier(arrive_count=128)
            T.tma_copy(A[bx * 4, 0], s, barrier=bar)
            T.barrier_arrive(bar)
            T.barrier_wait(bar, 0)
            for i, j in T.Parallel(4, 8):
                s[i, j] = s[i, j] + 1
            T.tma_copy(s, B[bx * 4, 0])

    kernel = tilelang.compile(edge, target="cpu")
    a, b = torch.randn(6, 8), torch.zeros(6, 8)
    kernel(a, b)
    torch.testing.assert_close(b, a + 1)
