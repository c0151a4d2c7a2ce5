"""Kernels whose top-level values read a local variable or a shared tile, with dynamic shared tiles that TVM's
MergeSharedMemoryAllocations pools (`tilelang.transform.plan_shared_memory.MergeSharedMemoryAllocations`)."""

from __future__ import annotations

import re
import warnings

from cuda_helpers import needs_nvcc

import tilelang
import tilelang.language as T


def _kernel(from_shared: bool):
    @T.prim_func
    def offset_copy(A: T.Tensor([256], T.float16), B: T.Tensor([256], T.float16), idx: T.Tensor([4], T.int32)):
        with T.Kernel(4, 2, threads=128) as (bx, _by):
            S = T.alloc_shared([128], T.float16)
            S2 = T.alloc_shared([128], T.float16)
            v = T.alloc_var(dtype=T.int32)
            v = idx[bx]
            T.copy(A[0:128], S2)
            if from_shared:
                base = T.cast(S2[3], "int32") + v  # a top-level value read from a shared tile
            else:
                base = v * 2  # a top-level value read from a local variable
            T.copy(A[base:base + 128], S)
            for i in T.Parallel(128):
                B[bx * 64 + i % 64] = S[i] + S2[127 - i]

    return offset_copy


def _lower(from_shared: bool):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tilelang.lower(_kernel(from_shared), target={"kind": "cuda", "arch": "sm_90a"})


@needs_nvcc
def test_value_bound_from_a_local_variable_builds_with_pooled_shared_tiles():
    art = _lower(from_shared=False)  # TVM's merge failed: "Load memory in places other than store"
    assert "kernel.cubin" in art.files
    src = art.kernel_source
    assert "buf_dyn_shmem" in src  # both tiles in the one pool
    body = src[src.index("offset_copy_kernel(half"):]
    body = body[body.index("{"):]
    # the local variable is declared in the kernel, before it is read
    assert body.index("int v_ptr[1];") < body.index("v_ptr[0] = idx_ptr") < body.index("int base = (v_ptr[0] * 2);")


@needs_nvcc
def test_value_bound_from_a_shared_tile_is_read_after_the_tile_is_filled():
    art = _lower(from_shared=True)
    assert "kernel.cubin" in art.files
    src = art.kernel_source
    read = re.search(r"base_value_ptr\[0\] = \(\(\(int\)\(\(half\*\)buf_dyn_shmem_ptr\)\[(\d+)\]\) \+ v_ptr\[0\]\);",
                     src)
    assert read is not None, src
    assert src.index("__syncthreads();") < read.start()  # after the copy into S2 completed
    assert "int base = base_value_ptr[0];" in src
