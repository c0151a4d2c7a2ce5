"""cpu.fragment_extents: a fragment indexed past its declared shape (a GPU gives every index of a parallel loop its
own register) gets room for those indices on the CPU instead of writing past its end."""

from __future__ import annotations

import torch
import tvm

import tilelang
import tilelang.language as T
from tilelang.transform import utils as C

M, H = 64, 2


def sinks_kernel():
    """The reference's attention-sink backward examples: ``sinks`` is declared ``[heads]`` and written by a
    ``T.Parallel(block_M)`` loop."""

    @T.prim_func
    def kernel(S: T.Tensor((H,), "float32"), Out: T.Tensor((H, M), "float32")):
        with T.Kernel(H, threads=128) as by:
            sinks = T.alloc_fragment([H], "float32")
            ones = T.alloc_fragment([M], "float32")
            T.fill(ones, 1.0)
            for i in T.Parallel(M):
                sinks[i] = S[by] * i
            for i in T.Parallel(M):
                Out[by, i] = sinks[i] + ones[i]

    return kernel


def test_fragment_grows_to_the_indices_its_loops_reach():
    from tilelang_cpu.passes.fragment_extents import FragmentExtents

    out = FragmentExtents()(tvm.IRModule({"main": sinks_kernel()}))["main"]
    shapes = {str(a.buffer.name): [int(s) for s in a.buffer.ty.shape] for a in C.allocations(out.body)}
    assert shapes == {"sinks": [M], "ones": [M]}


def test_guarded_accesses_leave_the_fragment_alone():
    """An index past the shape under a condition may be in range at run time: no growth."""
    from tilelang_cpu.passes.fragment_extents import FragmentExtents

    @T.prim_func
    def guarded(S: T.Tensor((M,), "float32"), n: T.int32):
        with T.Kernel(1, threads=128):
            frag = T.alloc_fragment([H], "float32")
            for i in T.Parallel(M):
                if i < n:
                    frag[i] = S[i]
            for i in T.Parallel(M):
                S[i] = T.if_then_else(i < n, frag[i], 0.0)

    out = FragmentExtents()(tvm.IRModule({"main": guarded}))["main"]
    assert [int(s) for a in C.allocations(out.body) for s in a.buffer.ty.shape] == [H]


def test_fragment_indexed_past_its_shape_matches_torch():
    kernel = tilelang.compile(sinks_kernel(), target="cpu")
    s = torch.randn(H)
    o = torch.empty(H, M)
    kernel(s, o)
    torch.testing.assert_close(o, s[:, None] * torch.arange(M)[None, :] + 1)
