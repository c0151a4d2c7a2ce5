"""RasterizeBlocks: apply ``T.use_swizzle(panel_size, order)`` as a remap of the block indices.

``T.use_swizzle`` leaves a ``tl.swizzle`` attribute (node ``"row"`` or ``"col"``, value ``panel_size``) around the
rest of the block. Consecutive blocks of a row-major grid walk a whole row of C tiles, re-reading all of B; in
panels of ``panel_size`` rows (``"row"``; columns for ``"col"``) that are walked column by column, in alternating
direction, neighbouring blocks share A and B tiles in L2. The pass binds the remapped indices at the start of the
attribute's body (reference TileLang's ``rasterization2DRow`` / ``rasterization2DColumn``)::

    b = bx + by * gx          p = b // (panel * gx)        off = b % (panel * gx)
    rows = panel if p + 1 < ceil(gx * gy / (panel * gx)) else (gx * gy - p * panel * gx) // gx
    bx' = (gx - 1 - off // rows) if p is odd else off // rows          by' = off % rows + p * panel

and uses ``bx'`` / ``by'`` for ``bx`` / ``by`` below (``"col"`` swaps the roles of x and y). In a kernel launched
in clusters (a ``tl.cluster_dims(cx, cy, cz)`` call, as ``T.ClusterKernel`` leaves), the map walks the grid of
clusters (panels of ``panel_size // cx`` clusters, as the reference's ``rasterization2DRowWithCluster``) and keeps
each block's place inside its cluster, so CTAs that cooperate (a 2-CTA MMA pair) stay in one cluster. The map is a
bijection of the grid, so every kernel computes the same result; only the order of blocks changes. A backend
that implements swizzles itself consumes the attribute earlier (``pre_layout``).
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.language.annotations import SWIZZLE_ATTR
from tilelang.transform import utils as C


def remap(x: Any, y: Any, gx: Any, gy: Any, panel: int) -> tuple[Any, Any]:
    """The remapped ``(x, y)`` block index of a ``gx x gy`` grid walked in panels of `panel` rows."""
    block = x + y * gx
    size = panel * gx
    offset = tirx.floormod(block, size)
    index = tirx.floordiv(block, size)
    panels = tirx.floordiv(gx * gy + size - 1, size)
    rows = tirx.Select(index + 1 < panels, tirx.const(panel, "int32"), tirx.floordiv(gx * gy - index * size, gx))
    col = tirx.Select(tirx.floormod(index, 2) == 1, gx - 1 - tirx.floordiv(offset, rows), tirx.floordiv(offset, rows))
    return col, tirx.floormod(offset, rows) + index * panel


def cluster_shape(kernel: Any) -> tuple[int, int]:
    """``(cx, cy)`` of the clusters (``tl.cluster_dims``) of `kernel` (a launch statement or a PrimFunc), ``(1, 1)``
    without clusters."""
    calls = C.collect(getattr(kernel, "body", kernel), tvm.ir.Call,
                      lambda c: isinstance(c.op, tvm.ir.Op) and c.op.name == "tl.cluster_dims")
    if not calls:
        return 1, 1
    dims = [*(C.as_int(d) or 1 for d in calls[0].args), 1, 1]
    return dims[0], dims[1]


def RasterizeBlocks(target: Any = None) -> tvm.transform.Pass:
    """Replace ``tl.swizzle`` attributes by a block-index remap (see the module docstring)."""

    @C.prim_func_pass("tl.RasterizeBlocks")
    def rasterize_blocks(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        def on_launch(launch: Any, mutator: Any) -> Any:
            # each launch (``with T.Kernel``) of the function remaps its own grid and block variables
            if str(launch.attr_key) != "thread_extent" or not str(launch.node.thread_tag).startswith("blockIdx"):
                return mutator.default_mutate(launch)
            return rasterize(launch, C.launch_extents(launch))

        body = tvm_ffi.structural_mutate(func.body, [(tirx.AttrStmt, on_launch)])
        body = rasterize(body, {})  # a swizzle outside any launch has no grid to remap: it goes
        return func if body.same_as(func.body) else C.with_body(func, body)

    def rasterize(launch: Any, ext: dict[str, Any]) -> Any:
        def on_attr(s: Any) -> Any:
            if str(s.attr_key) != SWIZZLE_ATTR:
                return s
            panel = C.as_int(s.value) or 1
            order = str(s.node.value) if isinstance(s.node, tvm.ir.StringImm) else "row"
            if order == "mlx":  # the kernel maps its blocks itself (a backend may canonicalize it earlier)
                return s.body
            if "blockIdx.x" not in ext or "blockIdx.y" not in ext:
                return s.body
            (bx, gx), (by, gy) = ext["blockIdx.x"], ext["blockIdx.y"]
            cx, cy = cluster_shape(launch)
            qx, qy = (tirx.floordiv(bx, cx), tirx.floordiv(by, cy)) if cx * cy > 1 else (bx, by)
            hx, hy = (tirx.floordiv(gx, cx), tirx.floordiv(gy, cy)) if cx * cy > 1 else (gx, gy)
            cpanel = max(1, panel // cx)
            if order == "col":
                ny, nx = remap(qy, qx, hy, hx, cpanel)
            else:
                nx, ny = remap(qx, qy, hx, hy, cpanel)
            if cx * cy > 1:
                nx, ny = nx * cx + tirx.floormod(bx, cx), ny * cy + tirx.floormod(by, cy)
            vx = tirx.Var(f"{bx.name}_swizzled", "int32")
            vy = tirx.Var(f"{by.name}_swizzled", "int32")
            body = C.substitute(s.body, {bx: vx, by: vy})
            # the clamps change nothing (the map stays inside the grid) but let the analyzer bound the new indices,
            # so LegalizeSafeMemoryAccess still proves the accesses of divisible kernels safe
            nx, ny = tirx.min(tirx.max(nx, 0), gx - 1), tirx.min(tirx.max(ny, 0), gy - 1)
            return C.seq([tirx.Bind(vx, nx), tirx.Bind(vy, ny), body])

        return tvm_ffi.structural_map(launch, (tirx.AttrStmt, on_attr))

    return rasterize_blocks
