"""Subgroup reductions (`tilelang_webgpu.tileops.reduce` with the target attribute ``supports_subgroups``): the corpus
reductions and every reduce kind match torch with subgroups on and off, the WGSL declares ``enable subgroups;``
and calls subgroup operations only when on, and an adapter without the feature gives a clear error."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

import tilelang
import tilelang.language as T
from tilelang.errors import ExecutionBackendUnavailable
from tilelang.testing.corpus import CORPUS

OFF = {"kind": "webgpu"}
ON = {"kind": "webgpu", "supports_subgroups": True}
_REDUCERS = {"sum": (T.reduce_sum, lambda a: a.sum(dim=1)), "max": (T.reduce_max, lambda a: a.amax(dim=1)),
             "min": (T.reduce_min, lambda a: a.amin(dim=1)),
             "abssum": (T.reduce_abssum, lambda a: a.abs().sum(dim=1)),
             "absmax": (T.reduce_absmax, lambda a: a.abs().amax(dim=1))}


@pytest.fixture
def subgroup_backend(wgpu_backend):
    from tilelang_webgpu.adapter import features

    if "subgroup" not in features():
        pytest.skip("this wgpu adapter lacks the 'subgroup' feature")
    return wgpu_backend


def _row_reduce(kind: str, threads: int, m: int = 64, block_m: int = 4, n: int | None = None):
    """``out[i] = reduce_j a[i, j]`` with a fragment reduction into a replicated fragment (row i scaled out)."""
    n = n if n is not None else 2 * threads
    reducer = _REDUCERS[kind][0]

    @T.prim_func
    def row_reduce(A: T.Tensor((m, n), "float32"), B: T.Tensor((m, n), "float32")):
        with T.Kernel(T.ceildiv(m, block_m), threads=threads) as bx:
            x = T.alloc_fragment((block_m, n), "float32")
            r = T.alloc_fragment((block_m,), "float32")
            T.copy(A[bx * block_m, 0], x)
            reducer(x, r, dim=1)
            for i, j in T.Parallel(block_m, n):
                x[i, j] = r[i]
            T.copy(x, B[bx * block_m, 0])

    return row_reduce, m, n


def _run(func, target, *inputs, out_idx=-1):
    kernel = tilelang.compile(func, out_idx=out_idx, target=target, execution_backend="wgpu")
    return kernel, kernel(*inputs)


@pytest.mark.parametrize("name", ["softmax", "row_sum", "row_max"])
@pytest.mark.parametrize("target", [OFF, ON], ids=["off", "on"])
def test_corpus_reductions_match_torch(subgroup_backend, name, target):
    case = CORPUS[name]()
    inputs = case.make_inputs()
    _, out = _run(case.func, target, *inputs, out_idx=case.out_idx)
    torch.testing.assert_close(out.float(), case.ref(*inputs).float(), atol=case.atol, rtol=case.rtol)


@pytest.mark.parametrize("kind", sorted(_REDUCERS))
@pytest.mark.parametrize("threads", [128, 70], ids=["t128", "t70"])  # 70: no subgroup size divides it
@pytest.mark.parametrize("target", [OFF, ON], ids=["off", "on"])
def test_every_reduce_kind_matches_torch(subgroup_backend, kind, threads, target):
    func, m, n = _row_reduce(kind, threads)
    a = torch.randn(m, n)
    kernel, out = _run(func, target, a)
    want = _REDUCERS[kind][1](a)[:, None].expand(m, n)
    torch.testing.assert_close(out, want, atol=1e-4, rtol=1e-4)
    src = kernel.get_kernel_source()
    op = {"sum": "subgroupAdd", "abssum": "subgroupAdd", "max": "subgroupMax", "absmax": "subgroupMax",
          "min": "subgroupMin"}[kind]
    assert (op in src) == (target is ON)


def test_wgsl_declares_subgroups_only_when_on(subgroup_backend):
    case = CORPUS["softmax"]()
    on = tilelang.compile(case.func, out_idx=case.out_idx, target=ON, execution_backend="wgpu").get_kernel_source()
    off = tilelang.compile(case.func, out_idx=case.out_idx, target=OFF, execution_backend="wgpu").get_kernel_source()
    assert on.lstrip().splitlines()[0] == "enable subgroups;" or "\nenable subgroups;\n" in on
    assert "subgroupAdd(" in on and "subgroupMax(" in on and "@builtin(subgroup_id)" in on
    assert "@builtin(subgroup_size)" in on and "@builtin(subgroup_invocation_id)" in on
    for token in ("enable subgroups", "subgroupAdd", "subgroupMax", "subgroup_id", "tl_subgroup"):
        assert token not in off


def test_adapter_without_subgroups_raises_clear_error(subgroup_backend, monkeypatch):
    """With the option on and an adapter lacking the feature the launcher refuses (no silent fallback): the
    kernel's WGSL needs the feature, so the error says to compile without ``supports_subgroups``."""
    import tilelang_webgpu.launch as launch

    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")
    monkeypatch.setattr(launch, "has_feature", lambda name: name != "subgroup")
    func, m, n = _row_reduce("sum", 64, m=8, n=192)  # a shader no other test compiled
    with pytest.raises(ExecutionBackendUnavailable, match="lacks the 'subgroup' feature"):
        _run(func, ON, torch.randn(m, n))


_GL_SCRIPT = """
import torch, tilelang
from tilelang.errors import ExecutionBackendUnavailable
from tilelang.testing.corpus import CORPUS
case = CORPUS["softmax"]()
try:  # core defers an unavailable execution backend's error to the first call
    tilelang.compile(case.func, out_idx=case.out_idx, target={"kind": "webgpu", "supports_subgroups": True},
                     execution_backend="wgpu")(*case.make_inputs())
except ExecutionBackendUnavailable as exc:
    print("REFUSED", exc)
k = tilelang.compile(case.func, out_idx=case.out_idx, target="webgpu", execution_backend="wgpu")
x = case.make_inputs()
print("OFF_OK", torch.allclose(k(*x), case.ref(*x), atol=case.atol, rtol=case.rtol))
"""


def test_gl_adapter_refuses_subgroup_kernels(wgpu_backend):
    """The OpenGL adapter (llvmpipe) has no subgroups: a subgroup kernel is refused, the default one runs."""
    env = {**os.environ, "TILELANG_WGPU_BACKEND": "gl", "TILELANG_DISABLE_CACHE": "1"}
    done = subprocess.run([sys.executable, "-c", _GL_SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    if "wgpu found no adapter" in done.stderr or "asked for OpenGL" in done.stderr:
        pytest.skip("no OpenGL wgpu adapter here")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "REFUSED" in done.stdout and "lacks the 'subgroup' feature" in done.stdout
    assert "OFF_OK True" in done.stdout


@pytest.mark.parametrize("offered", [True, False])
def test_detector_sets_supports_subgroups_from_the_adapter(monkeypatch, offered):
    import tilelang_webgpu.adapter as adapter_module
    from tilelang_webgpu.backend import _detect

    class FakeAdapter:
        info = {"adapter_type": "DiscreteGPU"}
        features = {"subgroup", "shader-f16"} if offered else {"shader-f16"}

    monkeypatch.setattr(adapter_module, "adapter", lambda: FakeAdapter())
    assert _detect() == {"kind": "webgpu", "supports_subgroups": offered}
