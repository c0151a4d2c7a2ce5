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


def mla_decode(heads: int = 64, seq: int = 64, dim: int = 512, pe_dim: int = 64, block_n: int = 32,
               staged_out: bool = True):
    """MLA decode's structure at a small size (the reference's ``deepseek_mla`` example): Q K^T plus its rotary
    part into a ``heads x block_n`` score tile, the online softmax in registers, P V into a ``heads x dim`` output
    (256 threads, FullCol); `staged_out`: the reference's epilogue through a shared tile. Inputs ``Q, Q_pe, KV,
    K_pe``, output ``Out``; `mla_decode_reference` computes it."""
    import tilelang.language as T

    scale = (dim + pe_dim) ** -0.5 * 1.44269504

    @T.prim_func
    def mla(Q: T.Tensor((heads, dim), "float16"), Q_pe: T.Tensor((heads, pe_dim), "float16"),
            KV: T.Tensor((seq, dim), "float16"), K_pe: T.Tensor((seq, pe_dim), "float16"),
            Out: T.Tensor((heads, dim), "float16")):
        with T.Kernel(1, threads=256):
            Q_s = T.alloc_shared((heads, dim), "float16")
            Qpe_s = T.alloc_shared((heads, pe_dim), "float16")
            KV_s = T.alloc_shared((block_n, dim), "float16")
            Kpe_s = T.alloc_shared((block_n, pe_dim), "float16")
            S_s = T.alloc_shared((heads, block_n), "float16")
            O_s = T.alloc_shared((heads, dim), "float16")
            s = T.alloc_fragment((heads, block_n), "float32")
            acc = T.alloc_fragment((heads, dim), "float32")
            m = T.alloc_fragment((heads,), "float32")
            m_prev = T.alloc_fragment((heads,), "float32")
            row_sum = T.alloc_fragment((heads,), "float32")
            denom = T.alloc_fragment((heads,), "float32")
            T.copy(Q, Q_s)
            T.copy(Q_pe, Qpe_s)
            T.fill(acc, 0)
            T.fill(denom, 0)
            T.fill(m, -T.infinity("float32"))
            for k in T.Pipelined(seq // block_n, num_stages=2):
                T.copy(KV[k * block_n:(k + 1) * block_n, :], KV_s)
                T.copy(K_pe[k * block_n:(k + 1) * block_n, :], Kpe_s)
                T.gemm(Q_s, KV_s, s, transpose_B=True, policy=T.GemmWarpPolicy.FullCol, clear_accum=True)
                T.gemm(Qpe_s, Kpe_s, s, transpose_B=True, policy=T.GemmWarpPolicy.FullCol)
                T.copy(m, m_prev)
                T.reduce_max(s, m, dim=1, clear=False)
                for i, j in T.Parallel(heads, block_n):
                    s[i, j] = T.exp2(s[i, j] * scale - m[i] * scale)
                T.reduce_sum(s, row_sum, dim=1)
                T.copy(s, S_s)
                for i in T.Parallel(heads):
                    denom[i] = denom[i] * T.exp2(m_prev[i] * scale - m[i] * scale) + row_sum[i]
                for i, j in T.Parallel(heads, dim):
                    acc[i, j] *= T.exp2(m_prev[i] * scale - m[i] * scale)
                T.gemm(S_s, KV_s, acc, policy=T.GemmWarpPolicy.FullCol)
            for i, j in T.Parallel(heads, dim):
                acc[i, j] /= denom[i]
            if staged_out:
                T.copy(acc, O_s)
                T.copy(O_s, Out)
            else:
                T.copy(acc, Out)

    return mla


def mla_decode_reference(q, q_pe, kv, k_pe):
    """What `mla_decode` computes, in fp32."""
    import torch

    scores = (q.float() @ kv.float().T + q_pe.float() @ k_pe.float().T) * (q.shape[1] + q_pe.shape[1]) ** -0.5
    return torch.softmax(scores, dim=-1) @ kv.float()
