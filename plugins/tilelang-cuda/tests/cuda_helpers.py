"""Corpus kernels lowered and compiled once per session (shared by the CUDA plugin's tests)."""

from __future__ import annotations

import contextlib
import functools
import shutil
import warnings

import pytest

from tilelang.testing import corpus

ARCHS = ("sm_80", "sm_90a")
# kernels written for targets without threads (``is_cpu=True``): they lower, but run on one thread
CPU_FORMS = {"cpu_gemm", "cpu_gemm_tileops", "cpu_elementwise"}


@functools.cache
def lowered(name: str, arch: str):
    """The `CompiledArtifact` of corpus kernel `name` for ``{"kind": "cuda", "arch": arch}``."""
    import tilelang

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tilelang.lower(corpus.CORPUS[name]().prim_func(), target={"kind": "cuda", "arch": arch})


@functools.cache
def compiled(name: str, arch: str):
    """``(artifact, CudaBinary)``: one nvcc call per kernel and arch, per session."""
    from tilelang_cuda.compiler import compile_artifact

    artifact = lowered(name, arch)
    return artifact, compile_artifact(artifact)


needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")


@contextlib.contextmanager
def wrapped_pass(module, name: str, wrap):
    """Within the block, pass factory ``module.name`` runs ``wrap(mod, inner)`` instead (``inner(mod)`` is the
    real pass): tests capture the IR a pass receives or returns."""
    original = getattr(module, name)

    def factory(target=None):
        inner = original(target)
        return lambda mod: wrap(mod, inner)

    setattr(module, name, factory)
    try:
        yield
    finally:
        setattr(module, name, original)


def keep_output(captured: list):
    """A `wrapped_pass` wrapper that runs the pass and appends its output module to `captured`."""
    def wrap(mod, inner):
        out = inner(mod)
        captured.append(out)
        return out

    return wrap
