"""The kernel corpus parses into well-formed tile IR; references and argument specs agree."""

from __future__ import annotations

import time

import pytest
import tvm
from irwalk import collect, ints, tile_calls
from tvm import tirx

from tilelang.frontend import parse_eager
from tilelang.testing import corpus


def _func(k: corpus.CorpusKernel):
    if not k.eager:
        return k.func
    shapes = [a for a in k.args if a.role == "in"]
    return parse_eager(k.func, *[corpus_tensor(a) for a in shapes]).func


def corpus_tensor(a: corpus.Arg):
    from tilelang.frontend import TensorArg

    return TensorArg(a.shape, a.dtype)


@pytest.mark.parametrize("name", sorted(corpus.CORPUS))
def test_corpus_kernel_parses_and_matches_its_specs(name):
    k = corpus.CORPUS[name]()
    func = _func(k)
    assert isinstance(func, tirx.PrimFunc)
    params = list(func.params)
    assert len(params) == len(k.args)
    for p, a in zip(params, k.args):
        assert str(p.name) == a.name
        if a.role != "scalar":
            assert str(p.ty.dtype) == a.dtype
            static = [int(d) if isinstance(d, tirx.IntImm) else None for d in p.ty.shape]
            assert all(s is None or s == v for s, v in zip(static, a.shape)), (p.ty.shape, a.shape)
    assert tvm.tirx.analysis.verify_well_formed(func)
    # the reference runs on the declared inputs and yields the declared outputs
    outs = k.ref(*k.make_inputs())
    outs = outs if isinstance(outs, tuple) else (outs,)
    assert [tuple(o.shape) for o in outs] == [a.shape for a in k.outputs]
    assert [str(o.dtype).replace("torch.", "") for o in outs] == [a.dtype for a in k.outputs]


def test_corpus_ir_features():
    fa = corpus.flash_attention().func
    names = [c[0] for c in tile_calls(fa)]
    assert names.count("tl.gemm") == 2 and "tl.reduce" in names
    loops = collect(fa.body, tirx.For)
    assert any("tl.pipeline_stages" in f.annotations for f in loops)
    gemms = [args for n, args in tile_calls(fa) if n == "tl.gemm"]
    assert ints(gemms[0][3:]) == [0, 1, 1, 0]  # transpose_B, FullRow
    q = corpus.quickstart_lazy().func
    pipe = [f for f in collect(q.body, tirx.For) if "tl.pipeline_stages" in f.annotations]
    assert int(pipe[0].annotations["tl.pipeline_stages"]) == 3
    scopes = {str(a.buffer.ty.storage_scope) for a in collect(q.body, tirx.AllocBuffer)}
    assert scopes == {"shared.dyn", "local.fragment"}
    cpu = corpus.cpu_gemm().func
    assert {str(a.buffer.ty.storage_scope) for a in collect(cpu.body, tirx.AllocBuffer)} == {"local"}
    assert tile_calls(cpu) == []
    gemv = corpus.gemv().func
    assert any(str(a.node.thread_tag) == "threadIdx.x" for a in collect(gemv.body, tirx.AttrStmt)
               if a.attr_key == "thread_extent")


def test_parse_time_is_a_few_milliseconds():
    corpus.gemm_nn()  # warm the AST / code caches
    corpus.flash_attention()
    t0 = time.perf_counter()
    for _ in range(5):
        corpus.gemm_nn()
    gemm_ms = (time.perf_counter() - t0) / 5 * 1e3
    t0 = time.perf_counter()
    for _ in range(5):
        corpus.flash_attention()
    fa_ms = (time.perf_counter() - t0) / 5 * 1e3
    assert gemm_ms < 25 and fa_ms < 60, (gemm_ms, fa_ms)
