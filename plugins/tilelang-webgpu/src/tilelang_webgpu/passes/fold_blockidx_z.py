"""``webgpu.fold_blockidx_z`` (``post_barriers``): TVM's WebGPU code reserves blockIdx.z to spread a wide
blockIdx.x, and refuses kernels that use it. A 3-D grid becomes 2-D: one blockIdx.y of extent ``gy * gz`` whose
quotient and remainder by ``gz`` replace blockIdx.y and blockIdx.z. Runs before the host/device split, so the host
launches the new extents.
"""

from __future__ import annotations

from typing import Any

from tilelang.transform import utils as C


def _launch(func: Any) -> dict[str, Any]:
    """thread tag -> the thread_extent AttrStmt binding it (first occurrence)."""
    import tvm_ffi
    from tvm import tirx

    found: dict[str, Any] = {}

    def on_attr(node: Any) -> None:
        if node.attr_key == "thread_extent":
            found.setdefault(str(node.node.thread_tag), node)

    tvm_ffi.structural_walk(func.body, [(tirx.AttrStmt, on_attr)])
    return found


def FoldBlockIdxZ(target: Any = None) -> Any:
    """Fold blockIdx.z into blockIdx.y (see the module docstring)."""
    import tvm
    import tvm_ffi
    from tvm import tirx

    @tirx.transform.prim_func_pass(opt_level=0, name="webgpu.fold_blockidx_z")
    def fold(func: Any, mod: Any, ctx: Any) -> Any:
        launch = _launch(func)
        z = launch.get("blockIdx.z")
        if z is None:
            return func
        y = launch.get("blockIdx.y")
        bz = z.node.var
        if y is None:
            fused, extent, vmap = bz, z.value, {}
        else:
            by = y.node.var
            fused = tirx.Var(f"{by.name}_{bz.name}", by.ty.dtype if hasattr(by.ty, "dtype") else "int32")
            extent = y.value * z.value
            vmap = {by: tirx.floordiv(fused, z.value), bz: tirx.floormod(fused, z.value)}

        def on_attr(node: Any) -> Any:
            if node.attr_key != "thread_extent":
                return node
            tag = str(node.node.thread_tag)
            if tag == "blockIdx.z" and y is not None:
                return node.body
            if tag in ("blockIdx.y", "blockIdx.z"):
                iv = tirx.IterVar(tvm.ir.Range(0, extent), fused, tirx.IterVar.ThreadIndex, "blockIdx.y")
                return tirx.AttrStmt(iv, "thread_extent", extent, node.body)
            return node

        body = tvm_ffi.structural_map(func.body, (tirx.AttrStmt, on_attr))
        if vmap:
            body = tvm_ffi.structural_map(body, (tvm.ir.Var, lambda v: vmap.get(v, v)))
        return C.with_body(func, body)

    return fold
