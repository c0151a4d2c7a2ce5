"""``tl.disable_thread_storage_sync`` (the program orders its shared-memory accesses itself, as the reference's
``deepseek_v32/topk_selector.py`` does): a barrier the analysis would need inside a branch on data is left out
instead of failing lowering; barriers elsewhere stay (tile operators' staging needs them)."""

from __future__ import annotations

import re

import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import LoweringError

DISABLE = {"tl.disable_thread_storage_sync": True}


def _scatter():
    @T.prim_func
    def main(A: T.Tensor((128,), "int32"), Idx: T.Tensor((128,), "int32"), B: T.Tensor((128,), "int32")):
        with T.Kernel(1, threads=128):
            tx = T.get_thread_binding()
            S = T.alloc_shared((256,), "int32")
            S[tx] = A[tx]
            S[tx + 128] = 0
            T.sync_threads()
            if A[tx] > 0:  # a branch on data: the read and the write below conflict across threads
                v = S[Idx[tx]]
                S[Idx[tx] + 128] = v
            T.sync_threads()
            B[tx] = S[tx + 128]
    return main


def _lower(func, configs=None):
    with tvm_pass_context(configs or {}):
        return tilelang.lower(func, target={"kind": "cuda", "arch": "sm_80"})


def tvm_pass_context(configs):
    import tvm

    return tvm.transform.PassContext(config=configs)


def _branch(src: str) -> str:
    body = src[src.index('extern "C" __global__'):]
    start = body.index("if (0 < ")
    return body[start:body.index("}", start)]


def test_a_barrier_needed_inside_a_data_branch_fails_without_the_option():
    with pytest.raises(LoweringError, match="Cannot insert syncs inside condition"):
        _lower(_scatter())


def test_the_option_leaves_the_branch_without_barriers():
    src = _lower(_scatter(), DISABLE).kernel_source
    assert "__syncthreads" not in _branch(src)
    assert len(re.findall(r"__syncthreads\(\)", src)) >= 2  # the program's own, outside the branch


def test_barriers_outside_branches_stay():
    @T.prim_func
    def shift(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            S = T.alloc_shared((128,), "float32")
            T.copy(A, S)
            for i in T.Parallel(128):
                B[i] = S[(i + 1) % 128]

    plain = _lower(shift).kernel_source
    assert "__syncthreads()" in plain and _lower(shift, DISABLE).kernel_source == plain
