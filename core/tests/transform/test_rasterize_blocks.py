"""RasterizeBlocks: ``T.use_swizzle`` remaps the block indices by a bijection of the grid."""

import pytest
import torch
import tvm
from transform_helpers import as_module

import tilelang
import tilelang.language as T
from tilelang.transform import RasterizeBlocks
from tilelang.transform import utils as C
from tilelang.transform.rasterize_blocks import remap


@pytest.mark.parametrize("gx,gy,panel", [(4, 4, 2), (5, 3, 2), (3, 7, 3), (2, 2, 4)])
def test_remap_is_a_bijection_of_the_grid(gx, gy, panel):
    ana = tvm.sym.Analyzer()
    seen = set()
    for y in range(gy):
        for x in range(gx):
            nx, ny = (int(ana.simplify(e)) for e in remap(tvm.tirx.const(x, "int32"), tvm.tirx.const(y, "int32"),
                                                          gx, gy, panel))
            assert 0 <= nx < gx and 0 <= ny < gy
            seen.add((nx, ny))
    assert len(seen) == gx * gy


def swizzled_add(M=96, N=160, bm=32, bn=32, order="row"):
    @T.prim_func
    def swizzled_add(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            T.use_swizzle(2, order=order)
            for i, j in T.Parallel(bm, bn):
                C[by * bm + i, bx * bn + j] = A[by * bm + i, bx * bn + j] + 1.0

    return swizzled_add


def test_attribute_becomes_bound_indices():
    body = RasterizeBlocks(None)(as_module(swizzled_add()))["main"].body
    assert not [s for s in C.collect(body, tvm.tirx.AttrStmt) if str(s.attr_key) == "tl.swizzle"]
    assert sorted(str(b.var.name) for b in C.collect(body, tvm.tirx.Bind)) == ["bx_swizzled", "by_swizzled"]


@pytest.mark.parametrize("order", ["row", "col"])
def test_swizzled_kernel_runs_on_cpu(order):
    art = tilelang.lower(swizzled_add(order=order), target="cpu")
    a, c = torch.randn(96, 160), torch.zeros(96, 160)
    art.rt_mod[art.name](a, c)
    torch.testing.assert_close(c, a + 1)
