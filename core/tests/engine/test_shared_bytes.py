"""``metadata["shared_bytes"]`` is the shared memory of the final device code (after TVM merges and reuses
allocations and backend passes add scratch), not the sum of the program's shared tiles."""

import re

import pytest
import tvm

import tilelang
from tilelang.testing.corpus import CORPUS
from tilelang.transform import utils as C

_MSL_BYTES = {"half": 2, "bfloat": 2, "float": 4, "int": 4, "uint": 4, "short": 2, "ushort": 2, "char": 1,
              "uchar": 1}


def tile_bytes(func):
    """The sum of the program's ``T.alloc_shared`` tiles (what the plan before merging counts)."""
    total = 0
    for alloc in C.allocations(func.body):
        if C.scope_of(alloc.buffer).startswith("shared"):
            total += C.num_elements(alloc.buffer.ty.shape) * tvm.DataType(str(alloc.buffer.ty.dtype)).bits // 8
    return total


@pytest.mark.backend("cuda")
def test_cuda_flash_attention_counts_the_merged_pool():
    func = CORPUS["flash_attention"]().prim_func()
    art = tilelang.lower(func, target={"kind": "cuda", "arch": "sm_80"})
    pools = [a.buffer for f in art.device_mod.functions.values() for a in C.allocations(f.body)
             if C.scope_of(a.buffer) == "shared.dyn"]
    assert [str(b.name) for b in pools] == ["buf_dyn_shmem"]  # one merged dynamic pool
    assert art.metadata["shared_bytes"] == int(pools[0].ty.shape[0])
    # the plan before merging (tiles plus the backend's staging buffers, each counted whole) said 90624 bytes;
    # merged, the epilogue's O tile may reuse the storage of tiles dead after the loop (Q, K, V stay live in it)
    o_tile = 64 * 64 * 2
    assert tile_bytes(func) - o_tile <= art.metadata["shared_bytes"] <= 48 * 1024


@pytest.mark.backend("metal")
@pytest.mark.parametrize("name", ["flash_attention", "gemm_nn", "softmax"])
def test_metal_counts_the_threadgroup_arrays_of_the_msl(name):
    art = tilelang.lower(CORPUS[name]().prim_func(), target="metal")
    arrays = re.findall(r"threadgroup (\w+) \w+\[(\d+)\];", art.kernel_source)
    assert arrays
    assert art.metadata["shared_bytes"] == sum(_MSL_BYTES[t] * int(n) for t, n in arrays)
    assert art.metadata["shared_bytes"] <= 32 * 1024  # the Apple GPU limit the backend fits flash attention in


@pytest.mark.backend("cpu")
def test_host_code_kernels_keep_the_planned_tile_bytes():
    art = tilelang.lower(CORPUS["flash_attention"]().prim_func(), target="cpu")
    assert art.metadata["shared_bytes"] > 0
