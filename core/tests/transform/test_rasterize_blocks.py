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


def mlx_swizzled_gemm(M=96, N=64, K=32, block=16, panel=4):
    """The reference's MLX-order pattern: the kernel maps its own blocks (a grid of panel-wide columns), and
    ``T.use_swizzle(order="mlx")`` only says so; T.gemm reads and writes global slices."""
    tiles_m, tiles_n = M // block, N // block

    @T.prim_func
    def main(A: T.Tensor((M, K), T.float32), B: T.Tensor((K, N), T.float32), Cm: T.Tensor((M, N), T.float32)):
        with T.Kernel(tiles_n * panel, T.ceildiv(tiles_m, panel), threads=32) as (bx, by):
            T.use_swizzle(panel_size=panel, order="mlx")
            tx, ty = bx // panel, by * panel + bx % panel
            if ty < tiles_m:
                T.gemm(A[ty * block:(ty + 1) * block, 0:K], B[0:K, tx * block:(tx + 1) * block],
                       Cm[ty * block:(ty + 1) * block, tx * block:(tx + 1) * block], clear_accum=True)

    return main


def test_mlx_order_leaves_the_kernels_own_block_mapping():
    body = RasterizeBlocks(None)(as_module(mlx_swizzled_gemm()))["main"].body
    assert not [s for s in C.collect(body, tvm.tirx.AttrStmt) if str(s.attr_key) == "tl.swizzle"]
    assert not [b for b in C.collect(body, tvm.tirx.Bind) if str(b.var.name).endswith("_swizzled")]
    art = tilelang.lower(mlx_swizzled_gemm(), target="cpu")
    a, b, c = torch.randn(96, 32), torch.randn(32, 64), torch.zeros(96, 64)
    art.rt_mod[art.name](a, b, c)
    torch.testing.assert_close(c, a @ b, atol=1e-4, rtol=1e-4)


def test_use_swizzle_names_the_orders_it_knows():
    from tilelang.errors import KernelTypeError

    with pytest.raises(KernelTypeError, match="'row', 'col' or 'mlx'"):
        @T.prim_func
        def main(A: T.Tensor((4,), T.float32)):
            with T.Kernel(2, 2) as (bx, _by):
                T.use_swizzle(panel_size=2, order="diagonal")
                A[bx] = 0.0


def clustered_add(gx=8, gy=6, cluster=2, panel=4):
    from tilelang.ir import intrin_call, register_intrinsic

    register_intrinsic("tl.cluster_dims", "opaque", "the kernel's cluster shape (a CUDA launch attribute)")

    @T.prim_func
    def clustered_add(A: T.Tensor((gy, gx), "float32")):
        with T.Kernel(gx, gy, threads=32) as (bx, by):
            T.evaluate(intrin_call("tl.cluster_dims", "handle", [cluster, 1, 1]))
            T.use_swizzle(panel)
            A[by, bx] = 1.0

    return clustered_add


def test_clusters_stay_together_under_the_swizzle():
    """A cluster of 2 along x (a CTA pair) keeps its row and its ranks' order; the map stays a bijection."""
    func = RasterizeBlocks(None)(as_module(clustered_add()))["main"]
    binds = {str(b.var.name): b.value for b in C.collect(func.body, tvm.tirx.Bind)}
    launch = C.launch_extents(func)
    bx, by = launch["blockIdx.x"][0], launch["blockIdx.y"][0]
    ana = tvm.sym.Analyzer()
    seen = {}
    for y in range(6):
        for x in range(8):
            vmap = {bx: tvm.tirx.const(x, "int32"), by: tvm.tirx.const(y, "int32")}
            seen[(x, y)] = tuple(int(ana.simplify(tvm.tirx.stmt_functor.substitute(binds[n], vmap)))
                                 for n in ("bx_swizzled", "by_swizzled"))
    assert len(set(seen.values())) == 48
    for y in range(6):
        for x in range(0, 8, 2):
            (x0, y0), (x1, y1) = seen[(x, y)], seen[(x + 1, y)]
            assert y0 == y1 and x0 % 2 == 0 and x1 == x0 + 1
