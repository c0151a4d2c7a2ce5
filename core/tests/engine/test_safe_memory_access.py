"""Kernels whose sizes are not multiples of their blocks: results match torch and memory past the tensors is untouched.

Every tensor argument is a view into a larger buffer filled with a sentinel (NaN for inputs, so a stray read
poisons the result; 1234 for outputs, so a stray write shows): LegalizeSafeMemoryAccess must keep every access of
the edge blocks inside the tensors.
"""

from __future__ import annotations

import engine_kernels as K
import pytest
import torch

import tilelang
import tilelang.language as T
from tilelang.testing import corpus

PAD = 4096
SENTINEL = 1234.0


def _padded(shape, dtype, fill, values=None):
    n = 1
    for s in shape:
        n *= s
    storage = torch.full((PAD + n + PAD,), fill, dtype=dtype)
    view = storage[PAD:PAD + n].view(shape)
    if values is not None:
        view.copy_(values)
    else:
        view.zero_()
    return storage, view


def run_guarded(func, args, out_idx, shapes_dtypes):
    """Call `func` on CPU with every tensor inside sentinel padding; return the outputs and check the padding."""
    art = tilelang.lower(func, target="cpu")
    call, storages, outs = [], [], []
    for n, (arg, (shape, dtype)) in enumerate(zip(args, shapes_dtypes)):
        if n in out_idx:
            storage, view = _padded(shape, dtype, SENTINEL)
            outs.append(view)
        else:
            storage, view = _padded(shape, dtype, float("nan"), arg)
        storages.append((storage, n in out_idx, view.numel()))
        call.append(view)
    art.rt_mod[art.name](*call)
    for storage, is_out, numel in storages:
        head, tail = storage[:PAD], storage[PAD + numel:]
        if is_out:
            assert bool((head == SENTINEL).all()) and bool((tail == SENTINEL).all()), "write past the tensor"
        else:
            assert bool(head.isnan().all()) and bool(tail.isnan().all()), "an input was modified"
    return outs


def _check_corpus(ck):
    inputs = ck.make_inputs()
    it = iter(inputs)
    args, specs = [], []
    for a in ck.args:
        specs.append((a.shape, getattr(torch, a.dtype)))
        args.append(None if a.role == "out" else next(it))
    outs = run_guarded(ck.func, args, set(ck.out_idx), specs)
    ref = ck.ref(*inputs)
    refs = ref if isinstance(ref, tuple) else (ref,)
    for out, expected in zip(outs, refs):
        torch.testing.assert_close(out.float(), expected.float(), atol=ck.atol, rtol=ck.rtol)


CASES = {
    "elementwise_copy": lambda: corpus.elementwise_add(M=100, N=90, block_M=32, block_N=64),
    "gemm_copy_fp16": lambda: corpus.gemm(M=100, N=90, K=72, block_M=64, block_N=64, block_K=32),
    "gemm_nt": lambda: corpus.gemm(M=70, N=50, K=40, trans_B=True),
    "quickstart_edges": lambda: corpus.quickstart_lazy(M=200, N=130, K=100),
    "softmax_rows": lambda: corpus.softmax(M=100, N=128, block_M=16),
    "row_sum": lambda: corpus.row_sum(M=100, N=96, block_M=32),
    "atomic_scalar": lambda: corpus.atomic_scalar(M=100, N=64, block_M=32),
    "flash_attention_causal": lambda: corpus.flash_attention(seq_len=100),
    "cpu_gemm_grid": lambda: corpus.cpu_gemm(M=100, N=90, K=128),
    "cpu_elementwise_grid": lambda: corpus.cpu_elementwise(M=50, N=70, block=16),
}


@pytest.mark.parametrize("name", list(CASES))
def test_corpus_kernel_with_edge_blocks(name):
    _check_corpus(CASES[name]())


def test_parallel_block_indexing_past_the_edge():
    """``C[by * 64 + i, bx * 64 + j] = ...`` in a ``T.Parallel`` over the whole block, M=100, N=90."""
    a, b = torch.randn(100, 90), torch.randn(100, 90)
    spec = ((100, 90), torch.float32)
    (c,) = run_guarded(K.elementwise_add(100, 90, 64, 64), [a, b, None], {2}, [spec] * 3)
    torch.testing.assert_close(c, a + b)


def dynamic_scale(block_M: int = 32, N: int = 48):
    m = T.dynamic("m")

    @T.prim_func
    def dynamic_scale(A: T.Tensor((m, N), "float32"), C: T.Tensor((m, N), "float32")):
        with T.Kernel(T.ceildiv(m, block_M), threads=128) as bx:
            for i, j in T.Parallel(block_M, N):
                C[bx * block_M + i, j] = A[bx * block_M + i, j] * 2.0

    return dynamic_scale


@pytest.mark.parametrize("rows", [1, 31, 100])
def test_dynamic_rows_without_user_checks(rows):
    a = torch.randn(rows, 48)
    spec = ((rows, 48), torch.float32)
    (c,) = run_guarded(dynamic_scale(), [a, None], {1}, [spec, spec])
    torch.testing.assert_close(c, a * 2)


def test_dynamic_kernel_is_guarded_symbolically():
    import tvm
    from tvm.target import Target

    from tilelang.transform import pipeline
    from tilelang.transform import utils as C

    mod = tvm.IRModule({"main": dynamic_scale()})
    with pipeline.pass_context({}):
        lowered = pipeline.lower_tile_program(mod, Target({"kind": "llvm"}), Target({"kind": "llvm"}))
    conds = [str(s.condition) for f in lowered.functions.values() if isinstance(f, tvm.tirx.PrimFunc)
             for s in C.collect(f.body, tvm.tirx.IfThenElse)]
    assert any("m" in c for c in conds)
