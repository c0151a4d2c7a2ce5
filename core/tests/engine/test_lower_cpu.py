"""tilelang.lower for the CPU: every corpus kernel is lowered, built with LLVM, run on torch tensors and compared."""

from __future__ import annotations

import json

import engine_kernels as K
import pytest
import torch

import tilelang

pytestmark = pytest.mark.backend("cpu")
torch.manual_seed(0)


def _run(func, *args):
    art = tilelang.lower(func, target="cpu")
    art.rt_mod[art.name](*args)
    return art


def _sdpa(q, k, v, causal):
    f = torch.nn.functional.scaled_dot_product_attention
    out = f(q.transpose(1, 2).float(), k.transpose(1, 2).float(), v.transpose(1, 2).float(), is_causal=causal)
    return out.transpose(1, 2)


def test_elementwise_add():
    a, b, c = torch.randn(256, 256), torch.randn(256, 256), torch.empty(256, 256)
    _run(K.elementwise_add(), a, b, c)
    torch.testing.assert_close(c, a + b)


def test_copy_and_fill():
    a, b, c = torch.randn(128, 128), torch.empty(128, 128), torch.empty(128, 128)
    _run(K.copy_fill(), a, b, c)
    torch.testing.assert_close(b, a)
    torch.testing.assert_close(c, torch.full_like(c, 3.0))


@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (False, True), (True, False), (True, True)])
def test_gemm_fp32(trans_a, trans_b):
    M = N = K_ = 128
    a = torch.randn(K_, M) if trans_a else torch.randn(M, K_)
    b = torch.randn(N, K_) if trans_b else torch.randn(K_, N)
    c = torch.empty(M, N)
    _run(K.gemm(M, N, K_, trans_a=trans_a, trans_b=trans_b), a, b, c)
    torch.testing.assert_close(c, (a.T if trans_a else a) @ (b.T if trans_b else b), atol=1e-3, rtol=1e-3)


def test_gemm_fp16_inputs_fp32_accumulate():
    a, b, c = torch.randn(128, 128).half(), torch.randn(128, 128).half(), torch.empty(128, 128)
    _run(K.gemm(dtype="float16"), a, b, c)
    torch.testing.assert_close(c, a.float() @ b.float(), atol=1e-3, rtol=1e-3)


def test_gemm_tails_non_multiple_shapes():
    a, b, c = torch.randn(100, 72), torch.randn(72, 90), torch.empty(100, 90)
    _run(K.gemm(100, 90, 72), a, b, c)
    torch.testing.assert_close(c, a @ b, atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize("m", [64, 100, 1])
def test_gemm_dynamic_m(m):
    art = tilelang.lower(K.gemm_dynamic(), target="cpu")
    a, b, c = torch.randn(m, 128), torch.randn(128, 128), torch.empty(m, 128)
    art.rt_mod[art.name](a, b, c)
    torch.testing.assert_close(c, a @ b, atol=1e-3, rtol=1e-3)
    assert art.params[0].shape == ("m", 128)


@pytest.mark.parametrize("kind,ref", [("sum", lambda x: x.sum(1)), ("max", lambda x: x.amax(1)),
                                      ("min", lambda x: x.amin(1)), ("abssum", lambda x: x.abs().sum(1)),
                                      ("absmax", lambda x: x.abs().amax(1))])
def test_reduce(kind, ref):
    x, out = torch.randn(128, 64), torch.empty(128)
    _run(K.reduce_rows(kind=kind), x, out)
    torch.testing.assert_close(out, ref(x), atol=1e-4, rtol=1e-4)


def test_softmax():
    x, y = torch.randn(128, 256), torch.empty(128, 256)
    _run(K.softmax(), x, y)
    torch.testing.assert_close(y, x.softmax(1))


@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum(reverse):
    x, y = torch.randn(64, 128), torch.empty(64, 128)
    _run(K.cumsum(reverse=reverse), x, y)
    ref = x.flip(1).cumsum(1).flip(1) if reverse else x.cumsum(1)
    torch.testing.assert_close(y, ref, atol=1e-4, rtol=1e-4)


def test_atomic_add_across_blocks():
    x, out = torch.randn(256, 64), torch.zeros(64)
    _run(K.atomic_sum(), x, out)
    torch.testing.assert_close(out, x.sum(0), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("causal", [True, False])
def test_flash_attention(causal):
    q, k, v = (torch.randn(1, 128, 2, 32).half() for _ in range(3))
    out = torch.empty_like(q)
    _run(K.flash_attention(causal=causal), q, k, v, out)
    torch.testing.assert_close(out.float(), _sdpa(q, k, v, causal), atol=1e-2, rtol=1e-2)


def test_thread_binding_is_emulated_with_barrier_semantics():
    import tilelang.language as T

    @T.prim_func
    def reverse_blocks(A: T.Tensor((256,), "float32"), B: T.Tensor((256,), "float32")):
        with T.Kernel(4, threads=64) as bx:
            tx = T.get_thread_binding(0)
            S = T.alloc_shared((64,), "float32")
            acc = T.alloc_local((1,), "float32")
            acc[0] = A[bx * 64 + tx] * 2.0
            S[tx] = acc[0]
            T.sync_threads()
            B[bx * 64 + tx] = S[63 - tx] + acc[0]

    a, b = torch.randn(256), torch.empty(256)
    _run(reverse_blocks, a, b)
    torch.testing.assert_close(b, (a.view(4, 64) * 2).flip(1).reshape(-1) + a * 2)


def test_artifact_is_complete_and_json_able():
    # tl.cpu.gemm_pack_b=False: B read from its tile (by default the micro-kernel packs B itself, no tile left)
    art = tilelang.lower(K.gemm(), target="cpu", pass_configs={"tl.cpu.gemm_pack_b": False})
    assert art.name == "gemm"
    assert art.target["kind"] == "llvm" and art.target_host["kind"] == "llvm"
    assert [p.name for p in art.params] == ["A", "B", "C"]
    assert art.params[2].shape == (128, 128) and art.params[0].dtype == "float32"
    assert "define" in art.kernel_source  # LLVM IR text
    assert art.metadata["grid"] == [2, 2] and art.metadata["threads"] == [128]
    # the CPU plugin reads the A tile in place and merges the 4 K steps: one (128, 64) fp32 B tile is left
    assert art.metadata["shared_bytes"] == 128 * 64 * 4
    assert art.device_mod is not None and art.host_mod is not None
    json.dumps(art.to_json())


def test_target_from_enclosing_tvm_target():
    from tvm.target import Target

    with Target({"kind": "llvm"}):
        art = tilelang.lower(K.elementwise_add())
    assert art.target["kind"] == "llvm"


def test_irmodule_input():
    import tvm

    func = K.elementwise_add()
    art = tilelang.lower(tvm.IRModule({"add": func}), target="llvm")
    assert art.name == "add"


def test_unaligned_torch_views_are_safe():
    a = torch.randn(256 * 256 + 1)[1:].view(256, 256)
    b, c = torch.randn(256, 256), torch.empty(256, 256)
    _run(K.elementwise_add(), a, b, c)
    torch.testing.assert_close(c, a + b)


def test_wrong_shape_names_the_parameter():
    art = tilelang.lower(K.elementwise_add(), target="cpu")
    with pytest.raises(ValueError, match=r"A\.shape"):
        art.rt_mod[art.name](torch.randn(128, 256), torch.randn(256, 256), torch.empty(256, 256))
    with pytest.raises(TypeError, match=r"A\.dtype|argument #0"):
        art.rt_mod[art.name](torch.randn(256, 256).half(), torch.randn(256, 256), torch.empty(256, 256))


def test_lowering_error_carries_kernel_location():
    import tilelang.language as T
    from tilelang.errors import LoweringError

    n = T.dynamic("n")

    @T.prim_func
    def bad(A: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=32):
            F = T.alloc_fragment((n,), "float32")
            T.copy(A, F)

    with pytest.raises(LoweringError, match=r"test_lower_cpu\.py:\d+: bad: fragment F must have a constant shape"):
        tilelang.lower(bad, target="cpu")
