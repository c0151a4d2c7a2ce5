"""Atomics on the CPU backend, compared with torch: element intrinsics (return_prev, load/store/or, x2/x4) and
the region form (with a scalar value); rejected constructs raise a LoweringError naming them."""

from __future__ import annotations

import pytest
import torch

import tilelang
import tilelang.language as T
from tilelang.errors import KernelTypeError, LoweringError


def _run(func, *args):
    kernel = tilelang.compile(func, target="cpu")
    kernel(*args)
    return args


def test_return_prev_is_the_value_before_each_update():
    @T.prim_func
    def main(A: T.Tensor((8,), "float32"), B: T.Tensor((1,), "float32"), P: T.Tensor((8,), "float32"),
             Q: T.Tensor((8,), "float32")):
        with T.Kernel(1):
            B[0] = 1.0
            for i in T.serial(8):
                P[i] = T.atomic_add(B[0], A[i], return_prev=True)
                Q[i] = T.atomic_max(B[0], A[i], return_prev=True) + T.atomic_min(B[0], 100.0, return_prev=True)

    a = torch.randn(8)
    b, p, q = torch.zeros(1), torch.zeros(8), torch.zeros(8)
    _run(main, a, b, p, q)
    running, prevs, sums = 1.0, [], []
    for x in a.tolist():
        prevs.append(running)
        running += x
        before_max = running
        running = max(running, x)
        sums.append(before_max + running)
    torch.testing.assert_close(p, torch.tensor(prevs))
    torch.testing.assert_close(q, torch.tensor(sums))
    torch.testing.assert_close(b, torch.tensor([running]))


def test_scalar_atomics_across_blocks_and_threads():
    @T.prim_func
    def main(A: T.Tensor((64,), "int32"), S: T.Tensor((1,), "int32"), Ob: T.Tensor((1,), "int32"),
             L: T.Tensor((1,), "int32")):
        with T.Kernel(4, threads=16) as bx:
            tx = T.get_thread_binding()
            T.atomic_add(S[0], A[bx * 16 + tx])
            T.atomic_or(Ob[0], A[bx * 16 + tx])
            v = T.atomic_load(S[0], memory_order="acquire")
            T.atomic_store(L[0], v + 0 * v, memory_order="release")

    a = torch.randint(0, 1 << 10, (64,), dtype=torch.int32)
    s, o, lo = torch.zeros(1, dtype=torch.int32), torch.zeros(1, dtype=torch.int32), torch.zeros(1, dtype=torch.int32)
    _run(main, a, s, o, lo)
    assert int(s) == int(a.sum()) and int(lo) == int(a.sum())
    expected = 0
    for x in a.tolist():
        expected |= x
    assert int(o) == expected


def test_vector_atomics_and_region_with_scalar_value():
    @T.prim_func
    def main(V: T.Tensor((4,), "float32"), D: T.Tensor((4,), "float32"), R: T.Tensor((4, 8), "float32")):
        with T.Kernel(1):
            T.atomic_addx2(D, V)
            T.atomic_addx4(D[0:4], V[0:4])
            T.atomic_add(R, 2)
            T.atomic_max(R[1:3, :], 5.0)

    v, d, r = torch.randn(4), torch.zeros(4), torch.zeros(4, 8)
    _run(main, v, d, r)
    expected = v.clone()
    expected[:2] += v[:2]
    torch.testing.assert_close(d, expected)
    ref = torch.full((4, 8), 2.0)
    ref[1:3] = 5.0
    torch.testing.assert_close(r, ref)


def test_unsupported_forms_are_rejected_with_their_name():
    @T.prim_func
    def tma(A: T.Tensor((4, 8), "float32"), B: T.Tensor((4, 8), "float32")):
        with T.Kernel(1):
            T.atomic_add(B, A, use_tma=True)

    with pytest.raises(LoweringError, match="use_tma"):  # as the reference (test_cpu_atomic_add_use_tma_rejected)
        tilelang.compile(tma, target="cpu")

    @T.prim_func
    def prev_x2(D: T.Tensor((2,), "float16"), V: T.Tensor((2,), "float16"), P: T.Tensor((2,), "float16")):
        with T.Kernel(1):
            P[0:2] = T.atomic_addx2(D[0:2], V[0:2], return_prev=True)

    with pytest.raises(LoweringError, match=r"T.atomic_addx2\(\.\.\., return_prev=True\).*return_prev"):
        tilelang.compile(prev_x2, target="cpu")

    with pytest.raises(KernelTypeError, match="return_prev is not supported for tile-region"):
        @T.prim_func
        def region_prev(A: T.Tensor((4,), "float32"), B: T.Tensor((4,), "float32")):
            with T.Kernel(1):
                T.atomic_add(B, A, return_prev=True)

    with pytest.raises(ValueError, match="memory_order='bogus'"):
        @T.prim_func
        def bad_order(A: T.Tensor((4,), "float32")):
            with T.Kernel(1):
                T.atomic_load(A[0], memory_order="bogus")


def test_element_atomics_are_intrinsic_calls_in_the_ir():
    @T.prim_func
    def main(A: T.Tensor((4,), "float32"), B: T.Tensor((4,), "float32")):
        with T.Kernel(1):
            T.atomic_add(B[1], A[0])
            B[2] = T.atomic_max(B[3], A[1], return_prev=True)

    import tvm

    from tilelang.transform import utils as C

    names = [c.op.name for c in C.collect(main.body, tvm.ir.Call) if isinstance(c.op, tvm.ir.Op)
             and c.op.name.startswith("tl.")]
    assert names == ["tl.atomic_add_elem_op", "tl.atomic_max_ret_elem_op"]
