"""Core's test corpus as a conformance suite for a backend's target: each kernel compiled the three ways a user
compiles (``tilelang.compile``, ``@tilelang.jit``, the autotuner), run on torch CPU tensors and compared with torch.

A backend's tests parametrize over `CORPUS_NAMES`::

    @pytest.mark.parametrize("name", CORPUS_NAMES)
    def test_compile(name):
        check_compile(name, "mykind")

(``tilelang backend new`` writes that file; the example backend ``tilelang-ccpu`` runs it in ``nox -s third-party``.)
"""

from __future__ import annotations

import inspect
from typing import Any

from tilelang.testing.corpus import CORPUS, CorpusKernel

__all__ = ["CORPUS_NAMES", "check_autotune", "check_compile", "check_jit"]

CORPUS_NAMES: list[str] = list(CORPUS)


def _check(ck: CorpusKernel, outputs: list[Any], inputs: list[Any]) -> None:
    import torch

    expected = ck.ref(*inputs)
    expected = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    assert len(outputs) == len(expected), f"{ck.name}: {len(outputs)} outputs, torch gives {len(expected)}"
    for got, want in zip(outputs, expected):
        torch.testing.assert_close(got.float(), want.float(), atol=ck.atol, rtol=ck.rtol)


def _run_prim(kernel: Any, ck: CorpusKernel) -> None:
    """Call a compiled kernel with every parameter (outputs zero-filled: atomics accumulate into them)."""
    inputs, outputs = ck.make_inputs(), ck.make_outputs()
    kernel(*ck.call_args(inputs, outputs))
    _check(ck, outputs, inputs)


def _run_eager(kernel: Any, ck: CorpusKernel) -> None:
    """Call an eager kernel with its inputs; it returns its outputs."""
    inputs = ck.make_inputs()
    out = kernel(*inputs)
    _check(ck, list(out) if isinstance(out, (tuple, list)) else [out], inputs)


def check_compile(name: str, target: Any) -> None:
    """Corpus kernel `name` through ``tilelang.compile(prim_func, target=target)``."""
    import tilelang

    ck = CORPUS[name]()
    _run_prim(tilelang.compile(ck.prim_func(), target=target), ck)


def check_jit(name: str, target: Any) -> None:
    """Corpus kernel `name` through ``@tilelang.jit(target=target)``: an eager kernel as itself, the others as a
    factory returning their PrimFunc."""
    import tilelang

    ck = CORPUS[name]()
    if ck.eager:
        _run_eager(tilelang.jit(target=target)(ck.func), ck)
        return

    @tilelang.jit(target=target)
    def factory():
        return ck.prim_func()

    _run_prim(factory(), ck)


def _block_keyword(fn: Any) -> tuple[str, int]:
    """`fn`'s first block-size keyword and its default."""
    params = inspect.signature(fn).parameters
    key = next(p for p in params if p.startswith("block"))
    return key, params[key].default


def check_autotune(name: str, target: Any) -> None:
    """Corpus kernel `name` through ``@tilelang.autotune`` over two values of its first block size (the default
    and half of it): both configurations compile and are timed, and the tuned kernel computes what torch does."""
    import tilelang
    from tilelang.testing import corpus

    ck = CORPUS[name]()  # the sizes do not depend on the block size
    if ck.eager:  # the kernel function's own block keyword is tuned; the call returns the output
        key, default = _block_keyword(ck.func)
        tuned = tilelang.autotune(configs=[{key: default}, {key: default // 2}], warmup=1, rep=2)(
            tilelang.jit(target=target)(ck.func))
        _run_eager(tuned, ck)
        return
    maker = CORPUS[name]
    has_block = any(p.startswith("block") for p in inspect.signature(maker).parameters)
    key, default = _block_keyword(maker if has_block else corpus.gemm)  # gemm_nn & co. forward to gemm
    compiled: list[int] = []

    def supply(params: Any) -> list[Any]:  # every parameter, as the harness makes them (outputs zero-filled)
        return ck.call_args(ck.make_inputs(), ck.make_outputs())

    @tilelang.autotune(configs=[{"block": default}, {"block": default // 2}], warmup=1, rep=2, supply_prog=supply)
    @tilelang.jit(target=target)
    def factory(block: int = default) -> Any:
        compiled.append(block)
        return CORPUS[name](**{key: block}).prim_func()

    kernel = factory()
    assert sorted(compiled) == [default // 2, default], f"configurations compiled: {compiled}"
    _run_prim(kernel, ck)
