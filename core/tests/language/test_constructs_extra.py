"""Tile operators and helpers beyond the first release, run on the CPU backend and compared with torch:
transpose, bitwise reductions, cummax, im2col, gemm_sp, views, reducers, schedulers, persistent loops,
break / continue in device loops."""

from __future__ import annotations

import functools

import pytest
import torch

import tilelang
import tilelang.language as T


def _run(func, *args, target="cpu"):
    tilelang.compile(func, target=target)(*args)
    return args


def test_transpose_bit_reductions_and_cummax():
    @T.prim_func
    def main(A: T.Tensor((2, 3, 4), "float32"), At: T.Tensor((2, 4, 3), "float32"), X: T.Tensor((4, 8), "int32"),
             R: T.Tensor((3, 4), "int32"), M: T.Tensor((4, 8), "float32"), Y: T.Tensor((4, 8), "float32")):
        with T.Kernel(1, threads=8):
            T.transpose(A, At)
            T.reduce_bitand(X, R[0, :], dim=1)
            T.reduce_bitor(X, R[1, :], dim=1)
            T.reduce_bitxor(X, R[2, :], dim=1)
            T.cummax(Y, M, dim=1)

    a, x, y = torch.randn(2, 3, 4), torch.randint(0, 1 << 30, (4, 8), dtype=torch.int32), torch.randn(4, 8)
    at, r, m = torch.zeros(2, 4, 3), torch.zeros(3, 4, dtype=torch.int32), torch.zeros(4, 8)
    _run(main, a, at, x, r, m, y)
    torch.testing.assert_close(at, a.transpose(-2, -1))
    for row, op in enumerate((torch.bitwise_and, torch.bitwise_or, torch.bitwise_xor)):
        assert torch.equal(r[row], functools.reduce(op, x.unbind(1)))
    torch.testing.assert_close(m, torch.cummax(y, dim=1).values)


def test_im2col_convolution_matches_torch():
    n, c, h, w, f, k, s, d, p = 2, 4, 6, 6, 8, 3, 1, 1, 1
    oh = (h + 2 * p - d * (k - 1) - 1) // s + 1
    ow = (w + 2 * p - d * (k - 1) - 1) // s + 1
    bm, bn, bk = 16, 8, 12

    @T.prim_func
    def conv(data: T.Tensor((n, h, w, c), "float32"), kernel: T.Tensor((k, k, c, f), "float32"),
             out: T.Tensor((n, oh, ow, f), "float32")):
        with T.Kernel(T.ceildiv(f, bn), T.ceildiv(n * oh * ow, bm), threads=32) as (bx, by):
            ds = T.alloc_shared((bm, bk), "float32")
            ks = T.alloc_shared((bk, bn), "float32")
            acc = T.alloc_fragment((bm, bn), "float32")
            kflat = T.Tensor((k * k * c, f), "float32", kernel.data)
            oflat = T.Tensor((n * oh * ow, f), "float32", out.data)
            T.clear(acc)
            for ki in T.Pipelined(T.ceildiv(k * k * c, bk), num_stages=1):
                T.im2col(data, ds, by, ki, k, s, d, p)
                T.copy(kflat[ki * bk, bx * bn], ks)
                T.gemm(ds, ks, acc)
            T.copy(acc, oflat[by * bm, bx * bn])

    a, b, o = torch.randn(n, h, w, c), torch.randn(k, k, c, f), torch.zeros(n, oh, ow, f)
    _run(conv, a, b, o)
    ref = torch.conv2d(a.permute(0, 3, 1, 2), b.permute(3, 2, 0, 1), stride=s, padding=p, dilation=d)
    torch.testing.assert_close(o, ref.permute(0, 2, 3, 1), atol=1e-4, rtol=1e-4)


def _compress_2_4(dense: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """2:4 compression with row-major int16 metadata (two 2-bit indices per group of four, 4 groups a word)."""
    m, k = dense.shape
    values = torch.zeros(m, k // 2, dtype=dense.dtype)
    meta = torch.zeros(m, k // 16, dtype=torch.int32)
    for i in range(m):
        for g in range(k // 4):
            nz = [j for j in range(4) if dense[i, g * 4 + j] != 0][:2]
            nz = (nz + [j for j in range(4) if j not in nz])[:2]
            nz.sort()
            for slot, j in enumerate(nz):
                values[i, g * 2 + slot] = dense[i, g * 4 + j]
                meta[i, g // 4] |= j << (4 * (g % 4) + 2 * slot)
    return values, meta.to(torch.int16)


def test_gemm_sp_matches_the_dense_product():
    m, n, k = 8, 8, 32
    dense = torch.randn(m, k, dtype=torch.float16)
    dense[:, 1::4] = 0
    dense[:, 2::4] = 0
    values, meta = _compress_2_4(dense)

    @T.prim_func
    def main(A: T.Tensor((m, k // 2), "float16"), E: T.Tensor((m, k // 16), "int16"), B: T.Tensor((k, n), "float16"),
             C: T.Tensor((m, n), "float32")):
        with T.Kernel(1, threads=16):
            acc = T.alloc_fragment((m, n), "float32")
            T.clear(acc)
            T.gemm_sp(A, E, B, acc)
            T.copy(acc, C)

    b, c = torch.randn(k, n, dtype=torch.float16), torch.zeros(m, n)
    _run(main, values, meta, b, c)
    torch.testing.assert_close(c, dense.float() @ b.float(), atol=1e-2, rtol=1e-2)


def test_views_reshape_view_and_make_tensor_from_an_address():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32"), B: T.Tensor((8, 8), "float32"), C: T.Tensor((8,), "float32"),
             Bits: T.Tensor((4,), "int32")):
        with T.Kernel(1, threads=8):
            A2 = T.reshape(A, (8, 8))
            for i, j in T.Parallel(8, 8):
                B[i, j] = A2[i, j] * 2.0
            S = T.alloc_shared((64,), "float32")
            T.copy(A, S)
            r = T.alloc_fragment((8,), "float32")
            T.reduce_sum(T.reshape(S, (8, 8)), r, dim=1)
            T.copy(r, C)
            as_int = T.view(A, (64,), dtype="int32")
            for i in T.serial(4):
                Bits[i] = as_int[i]

    a = torch.randn(64)
    b, c, bits = torch.zeros(8, 8), torch.zeros(8), torch.zeros(4, dtype=torch.int32)
    _run(main, a, b, c, bits)
    torch.testing.assert_close(b, a.reshape(8, 8) * 2)
    torch.testing.assert_close(c, a.reshape(8, 8).sum(1), atol=1e-5, rtol=1e-5)
    assert torch.equal(bits, a[:4].view(torch.int32))
    with pytest.raises(AssertionError, match="shape check failed"):
        @T.prim_func
        def bad(A: T.Tensor((64,), "float32")):
            with T.Kernel(1):
                T.reshape(A, (8, 9))


def test_reducers_v2_and_legacy_forms():
    m, n = 16, 32

    @T.prim_func
    def main(A: T.Tensor((m, n), "float32"), S: T.Tensor((m,), "float32"), X: T.Tensor((m, n), "int32"),
             Ob: T.Tensor((m,), "int32"), L: T.Tensor((m,), "float32")):
        with T.Kernel(1, threads=64):
            acc = T.alloc_reducer((m,), "float32", op="sum")
            T.reducer_init(acc, 1.0)
            for i, j in T.Parallel(m, n):
                T.reducer_update(acc[i], A[i, j])
            T.finalize_reducer(acc, S)
            bo = T.alloc_reducer((m,), "int32", op="bitor")
            T.reducer_init(bo)
            for i, j in T.Parallel(m, n):
                bo[i] |= X[i, j]
            T.finalize_reducer(bo, Ob)
            legacy = T.alloc_reducer((m,), "float32", op="sum", replication="all")
            T.clear(legacy)
            for i, j in T.Parallel(m, n):
                legacy[i] += A[i, j] * 2.0
            T.finalize_reducer(legacy)
            T.copy(legacy, L)

    a, x = torch.randn(m, n), torch.randint(0, 1 << 20, (m, n), dtype=torch.int32)
    s, o, lo = torch.zeros(m), torch.zeros(m, dtype=torch.int32), torch.zeros(m)
    _run(main, a, s, x, o, lo)
    torch.testing.assert_close(s, a.sum(1) + 1.0, atol=1e-4, rtol=1e-4)
    assert torch.equal(o, functools.reduce(torch.bitwise_or, x.unbind(1)))
    torch.testing.assert_close(lo, a.sum(1) * 2, atol=1e-4, rtol=1e-4)
    with pytest.raises(AssertionError, match="requires an integer dtype"):
        @T.prim_func
        def bad():
            with T.Kernel(1):
                T.alloc_reducer((1,), "float32", op="bitand")
    with pytest.raises(ValueError, match="batch must be >= 1"):
        @T.prim_func
        def bad_batch():
            with T.Kernel(1):
                r = T.alloc_reducer((1,), "float32")
                T.finalize_reducer(r, batch=0)


def test_persistent_tile_scheduler_and_persistent_loop_visit_every_tile_once():
    @T.prim_func
    def main(Sched: T.Tensor((4, 3), "int32"), Loop: T.Tensor((5, 3), "int32")):
        with T.Kernel(2, threads=1) as worker:
            sched = T.PersistentTileScheduler(4, 3, num_workers=2, swizzle_size=2, name="sched")
            sched.init(worker)
            while sched.valid():
                Sched[sched.m_idx, sched.n_idx] = Sched[sched.m_idx, sched.n_idx] + 1 + sched.current_iter * 0
                sched.next_tile()
            for bx, by in T.Persistent([5, 3], 2, worker, group_size=2):
                Loop[bx, by] = Loop[bx, by] + 1

    sched, loop = torch.zeros(4, 3, dtype=torch.int32), torch.zeros(5, 3, dtype=torch.int32)
    _run(main, sched, loop)
    assert torch.equal(sched, torch.ones(4, 3, dtype=torch.int32))
    assert torch.equal(loop, torch.ones(5, 3, dtype=torch.int32))


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_break_and_continue_in_device_loops(target):
    @T.prim_func
    def main(A: T.Tensor((16,), "int32"), B: T.Tensor((2,), "int32")):
        with T.Kernel(1):
            B[0] = 0
            for i in T.serial(16):
                if A[i] < 0:
                    break
                if A[i] == 3:
                    continue
                B[0] = B[0] + A[i]
            B[1] = 0
            j = T.alloc_var("int32", 0)
            while j < 16:
                j = j + 1
                if A[j - 1] < 0:
                    T.loop_break()
                B[1] = B[1] + 1

    a = torch.tensor([1, 2, 3, 4, -1, 5] + [0] * 10, dtype=torch.int32)
    b = torch.zeros(2, dtype=torch.int32)
    _run(main, a, b, target=target)
    assert b.tolist() == [7, 4]


def test_any_all_of_clamp_and_alloc_global():
    @T.prim_func
    def main(A: T.Tensor((2, 4), "int32"), B: T.Tensor((4,), "int32")):
        with T.Kernel(1):
            W = T.alloc_global((4,), "int32")
            for i in T.serial(4):
                W[i] = T.clamp(A[1, i], 0, 5)
            B[0] = T.any_of(A[0, :])
            B[1] = T.all_of(A[1, :])
            B[2] = W[3]
            B[3] = T.any_of(W)

    a = torch.tensor([[0, 0, 0, 0], [1, 2, 3, 9]], dtype=torch.int32)
    b = torch.zeros(4, dtype=torch.int32)
    _run(main, a, b)
    assert b.tolist() == [0, 1, 5, 1]


def test_strided_tensor_declares_strides_and_checks_their_rank():
    spec = T.StridedTensor((4, 8), (16, 1), "float16")
    assert spec.shape == (4, 8) and spec.strides == (16, 1) and spec.dtype == "float16"
    assert T.StridedTensor[(4, 8), (16, 1), "float16"] == spec
    with pytest.raises(ValueError, match="Invalid shape/strides' dimensions"):
        T.StridedTensor((4, 8), (1,), "float16")


def test_eager_kernel_binds_the_logical_layout_of_packed_fp4_storage():
    @tilelang.jit(out_idx=None)
    def kernel(A):
        M, K, S = T.const("M K S")
        A: T.StridedTensor((M, K), (S, 1), T.float4_e2m1fn)
        with T.Kernel(1, threads=32):
            T.evaluate(A[0, 0])

    packed = torch.empty((512, 256), dtype=torch.int8)[::2, :]  # two fp4 per byte, every other row
    func = kernel.get_tir(packed)
    buf = next(iter(func.buffer_map.values()))
    assert [int(d) for d in buf.shape] == [256, 512]
    assert [int(s) for s in buf.strides] == [1024, 1]
