"""Scalar intrinsics: built as ``tl.*`` calls by the front end, lowered per target (here the CPU backend, which
runs them and is compared with torch, and core's generic lowerings)."""

from __future__ import annotations

import pytest
import torch

import tilelang
import tilelang.language as T
from tilelang.errors import LoweringError


def _run(func, *args):
    tilelang.compile(func, target="cpu")(*args)
    return args


def test_warp_votes_ballots_and_shuffles_are_emulated_on_the_cpu():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32"), V: T.Tensor((64,), "int32"), B: T.Tensor((64,), "int64"),
             S: T.Tensor((64,), "float32"), R: T.Tensor((64,), "float32"), C: T.Tensor((2,), "int32")):
        with T.Kernel(1, threads=64):
            tx = T.get_thread_binding()
            x = A[tx]
            any_big = T.any_sync(x > 1.5)
            all_pos = T.all_sync(tx >= 0)
            V[tx] = any_big * 10 + all_pos + T.get_lane_idx() * 100 + T.get_warp_idx() * 10000
            B[tx] = T.ballot(tx % 3 == 0)
            S[tx] = T.shfl_xor(x, 1) + T.shfl_down(x, 2) * 0 + T.shfl_sync(x, 5)
            R[tx] = T.warp_reduce_max(x)
            C[0] = T.syncthreads_count(tx < 40)
            C[1] = T.syncthreads_and(tx < 64)

    a = torch.randn(64)
    v, b, s, r, c = (torch.zeros(64, dtype=torch.int32), torch.zeros(64, dtype=torch.int64), torch.zeros(64),
                     torch.zeros(64), torch.zeros(2, dtype=torch.int32))
    _run(main, a, v, b, s, r, c)
    for t in range(64):
        warp = slice(t // 32 * 32, t // 32 * 32 + 32)
        any_big = int(bool((a[warp] > 1.5).any()))
        assert int(v[t]) == any_big * 10 + 1 + (t % 32) * 100 + (t // 32) * 10000
        assert int(b[t]) == sum(1 << lane for lane in range(32) if (t // 32 * 32 + lane) % 3 == 0)
        assert float(s[t]) == pytest.approx(float(a[t ^ 1] + a[t // 32 * 32 + 5]))
        assert float(r[t]) == pytest.approx(float(a[warp].max()))
    assert c.tolist() == [40, 1]


def test_print_and_device_assert_on_the_cpu(capfd):
    @T.prim_func
    def main(A: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=2):
            tx = T.get_thread_binding()
            if tx == 1:
                T.print(A[2], msg="third")
            T.print(msg="hello")
            T.device_assert(A[0] < 100.0, "A[0] is too large")

    # lowered here, so the host print function is registered in this process (a kernel loaded from the cache
    # needs the CPU execution backend to register it)
    art = tilelang.lower(main, target="cpu")
    kernel = art.rt_mod[art.name]
    kernel(torch.arange(4, dtype=torch.float32))
    out = capfd.readouterr().out
    assert "msg='third' BlockIdx=(0, 0, 0), ThreadIdx=(1, 0, 0): dtype=float32 value=2.0" in out
    assert out.count("msg='hello'") == 2
    with pytest.raises(Exception, match="A\\[0\\] is too large"):
        kernel(torch.full((4,), 1000.0))


def test_fast_and_ieee_math_compute_the_precise_result_on_the_cpu():
    @T.prim_func
    def main(A: T.Tensor((8,), "float32"), B: T.Tensor((8, 8), "float32")):
        with T.Kernel(1):
            for i in T.serial(8):
                x = A[i]
                B[i, 0] = T.__exp(x)
                B[i, 1] = T.__log(x + 2.0)
                B[i, 2] = T.__sin(x)
                B[i, 3] = T.ieee_add(x, 1.0)
                B[i, 4] = T.ieee_fmaf(x, x, 1.0)
                B[i, 5] = T.ieee_frsqrt(x * x + 1.0)
                B[i, 6] = T.fast_rcp(x + 3.0)
                B[i, 7] = T.clamp(x, -0.5, 0.5)

    a = torch.rand(8) - 0.5
    b = torch.zeros(8, 8)
    _run(main, a, b)
    ref = torch.stack([a.exp(), (a + 2).log(), a.sin(), a + 1, a * a + 1, (a * a + 1).rsqrt(), 1 / (a + 3),
                       a.clamp(-0.5, 0.5)], dim=1)
    torch.testing.assert_close(b, ref, rtol=1e-5, atol=1e-5)


def test_rounding_modes_the_target_lacks_are_lowering_errors():
    @T.prim_func
    def main(A: T.Tensor((4,), "float32")):
        with T.Kernel(1):
            A[0] = T.ieee_add(A[1], A[2], rounding_mode="rz")

    with pytest.raises(LoweringError, match="T.ieee_add on target 'llvm': rounding mode 'rz'.*rounding_mode='rn'"):
        tilelang.compile(main, target="cpu")
    with pytest.raises(ValueError, match="Invalid rounding mode"):
        T.ieee_add(T.float32(1.0), T.float32(2.0), rounding_mode="up")


def test_dp4a_packed_ops_cast_and_extract_lane():
    @T.prim_func
    def main(A: T.Tensor((4,), "int8"), B: T.Tensor((4,), "int8"), C: T.Tensor((1,), "int32"),
             F: T.Tensor((2,), "float32"), G: T.Tensor((2,), "float32")):
        with T.Kernel(1):
            C[0] = 10
            T.dp4a(A, B, C)
            v = T.float32x2(F[0], F[1])
            w = T.add2(v, T.mul2(v, v))
            G[0] = T.extract_lane(w, 0)
            G[1] = T.cast(T.extract_lane(w, 1), "float32", round="rn")

    a = torch.tensor([1, -2, 3, -4], dtype=torch.int8)
    b = torch.tensor([5, 6, -7, 8], dtype=torch.int8)
    c, f, g = torch.zeros(1, dtype=torch.int32), torch.tensor([2.0, 3.0]), torch.zeros(2)
    _run(main, a, b, c, f, g)
    assert int(c) == 10 + int((a.int() * b.int()).sum())
    torch.testing.assert_close(g, f + f * f)
    with pytest.raises(ValueError, match="dp4a requires int8 inputs"):
        @T.prim_func
        def bad(A: T.Tensor((4,), "float16"), C: T.Tensor((1,), "int32")):
            T.dp4a(A, A, C)


def test_intrinsics_a_target_lacks_name_the_construct_and_the_target():
    @T.prim_func
    def main(A: T.Tensor((4,), "int32")):
        with T.Kernel(1, threads=4):
            T.sync_grid()

    with pytest.raises(LoweringError, match="T.sync_grid on target 'llvm': not supported by this backend"):
        tilelang.compile(main, target="cpu")


def test_frontend_checks_of_intrinsics():
    from tvm import tirx

    with pytest.raises(TypeError, match="requires an integer or boolean predicate"):
        T.any_sync(tirx.FloatImm("float32", 0.5))
    with pytest.raises(TypeError, match=r"T.__exp only supports floating-point inputs, but got int32"):
        T.__exp(tirx.Var("x", "int32"))
    assert str(T.__exp(tirx.Var("x", "float16")).dtype) == "float16"
    with pytest.raises(IndexError, match="out of bounds"):
        T.extract_lane(tirx.Var("v", "float16x2"), 2)
    ptr = T.access_ptr(tirx.BufferLoad(tirx.decl_buffer((8, 8), "float16", name="A"), [2, 3]), "w", 4, 5)
    assert ptr.op.name == "tl.access_ptr" and [int(a) for a in ptr.args[1:]] == [20, 2]
