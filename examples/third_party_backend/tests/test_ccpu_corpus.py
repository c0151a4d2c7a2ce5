"""Every kernel of core's test corpus (`tilelang.testing.corpus`, the reference DSL) compiled for the third-party
``ccpu`` target the three ways a user compiles — ``tilelang.compile``, ``@tilelang.jit`` and the autotuner — run,
and compared with torch; with nothing but tilelang-core and this distribution installed (the ``third-party`` nox
session)."""

from __future__ import annotations

import inspect

import pytest
import torch

import tilelang
from tilelang.testing.corpus import CORPUS, CorpusKernel

TARGET = "ccpu"


def _check(ck: CorpusKernel, outputs: list[torch.Tensor], inputs: list) -> None:
    expected = ck.ref(*inputs)
    expected = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected):
        torch.testing.assert_close(got.float(), want.float(), atol=ck.atol, rtol=ck.rtol)


def _run_prim(kernel, ck: CorpusKernel) -> None:
    """Call a compiled kernel with every parameter (outputs zero-filled: atomics accumulate into them)."""
    inputs, outputs = ck.make_inputs(), ck.make_outputs()
    kernel(*ck.call_args(inputs, outputs))
    _check(ck, outputs, inputs)


@pytest.mark.parametrize("name", list(CORPUS))
def test_tilelang_compile(name):
    ck = CORPUS[name]()
    kernel = tilelang.compile(ck.prim_func(), target=TARGET)
    assert kernel.target["kind"] == TARGET
    _run_prim(kernel, ck)


@pytest.mark.parametrize("name", list(CORPUS))
def test_jit(name):
    ck = CORPUS[name]()
    if ck.eager:  # the eager form: the kernel function itself, called with its inputs, returns its outputs
        kernel = tilelang.jit(target=TARGET)(ck.func)
        inputs = ck.make_inputs()
        out = kernel(*inputs)
        _check(ck, list(out) if isinstance(out, (tuple, list)) else [out], inputs)
        return

    @tilelang.jit(target=TARGET)
    def factory():
        return ck.prim_func()

    _run_prim(factory(), ck)


def _block_keyword_of(fn) -> tuple[str, int]:
    """`fn`'s first block-size keyword and its default."""
    params = inspect.signature(fn).parameters
    key = next(p for p in params if p.startswith("block"))
    return key, params[key].default


def _block_keyword(name: str) -> tuple[str, int]:
    """The corpus factory's first block-size keyword and its default (gemm_nn & co. forward to `gemm`)."""
    from tilelang.testing import corpus

    factory = CORPUS[name]
    if not any(p.startswith("block") for p in inspect.signature(factory).parameters):
        factory = corpus.gemm
    return _block_keyword_of(factory)


@pytest.mark.parametrize("name", list(CORPUS))
def test_autotune(name):
    key, default = _block_keyword(name)
    if CORPUS[name]().eager:  # the kernel function's own block keyword is tuned; the call returns the output
        ck = CORPUS[name]()
        key, default = _block_keyword_of(ck.func)
        tuned = tilelang.autotune(configs=[{key: default}, {key: default // 2}], warmup=1, rep=2)(
            tilelang.jit(target=TARGET)(ck.func))
        inputs = ck.make_inputs()
        _check(ck, [tuned(*inputs)], inputs)
        return
    compiled = []

    ck = CORPUS[name]()  # the sizes do not depend on the block size

    def supply(params):  # every parameter, as the harness makes them (dynamic sizes bound, outputs zero-filled)
        return ck.call_args(ck.make_inputs(), ck.make_outputs())

    @tilelang.autotune(configs=[{"block": default}, {"block": default // 2}], warmup=1, rep=2, supply_prog=supply)
    @tilelang.jit(target=TARGET)
    def factory(block=default):
        compiled.append(block)
        return CORPUS[name](**{key: block}).prim_func()

    kernel = factory()
    assert sorted(compiled) == [default // 2, default]  # both configurations compiled (and timed)
    _run_prim(kernel, ck)
