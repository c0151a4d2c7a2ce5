"""The WebGPU backend's passes: rewrite what TVM's WGSL codegen cannot emit.

- `FoldBlockIdxZ` (``post_barriers``): TVM's WebGPU code reserves blockIdx.z to spread a wide blockIdx.x, and
  refuses kernels that use it. A 3-D grid becomes 2-D: one blockIdx.y of extent ``gy * gz`` whose quotient and
  remainder by ``gz`` replace blockIdx.y and blockIdx.z. Runs before the host/device split, so the host
  launches the new extents.
- `SplitWideVectors` (``post_storage``, before TVM vectorizes): WGSL vectors have 2 to 4 lanes; a vectorized
  loop wider than 4 becomes a serial loop over 4-wide (or, when 4 does not divide it, 2-wide) vectorized loops,
  or a serial loop.
- `LegalizeFloatLiterals` (``device_module``): WGSL has no infinity or NaN literal (TVM prints ``inff``); they
  become ``bitcast<f32>`` of their bit pattern.
"""

from __future__ import annotations

import math
from typing import Any

from tilelang.backend import PipelinePass

__all__ = ["FoldBlockIdxZ", "SplitWideVectors", "LegalizeFloatLiterals", "PASSES"]


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


def _with_body(func: Any, body: Any) -> Any:
    from tvm import tirx

    return tirx.PrimFunc(func.params, body, func.ret_type, func.attrs)


def FoldBlockIdxZ(target: Any = None) -> Any:
    """Fold blockIdx.z into blockIdx.y (see the module docstring)."""
    import tvm
    import tvm_ffi
    from tvm import tirx

    @tirx.transform.prim_func_pass(opt_level=0, name="tilelang_webgpu.FoldBlockIdxZ")
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
        return _with_body(func, body)

    return fold


def SplitWideVectors(target: Any = None) -> Any:
    """Vectorized loops of more than 4 lanes become serial loops over 4- or 2-lane ones (or serial)."""
    import tvm_ffi
    from tvm import tirx

    def on_for(loop: Any) -> Any:
        extent = getattr(loop.extent, "value", None)
        if loop.kind != tirx.ForKind.VECTORIZED or (extent is not None and extent <= 4):
            return loop
        width = next((w for w in (4, 2) if extent is not None and extent % w == 0), None)
        if width is None:
            return tirx.For(loop.loop_var, loop.min, loop.extent, tirx.ForKind.SERIAL, loop.body)
        outer = tirx.Var(f"{loop.loop_var.name}_o", loop.loop_var.ty.dtype)
        inner = tirx.Var(f"{loop.loop_var.name}_v", loop.loop_var.ty.dtype)
        index = loop.min + outer * width + inner
        body = tvm_ffi.structural_map(loop.body, (type(loop.loop_var), lambda v: index if v.same_as(loop.loop_var)
                                                                         else v))
        vec = tirx.For(inner, 0, width, tirx.ForKind.VECTORIZED, body)
        return tirx.For(outer, 0, extent // width, tirx.ForKind.SERIAL, vec)

    @tirx.transform.prim_func_pass(opt_level=0, name="tilelang_webgpu.SplitWideVectors")
    def split(func: Any, mod: Any, ctx: Any) -> Any:
        return _with_body(func, tvm_ffi.structural_map(func.body, (tirx.For, on_for)))

    return split


def LegalizeFloatLiterals(target: Any = None) -> Any:
    """Infinite and NaN float literals become bitcasts of their IEEE bit pattern (WGSL has no such literal)."""
    import struct

    import tvm_ffi
    from tvm import tirx

    def on_float(imm: Any) -> Any:
        value = float(imm.value)
        if math.isfinite(value):
            return imm
        dtype = str(imm.ty.dtype) if hasattr(imm.ty, "dtype") else str(imm.dtype)
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
        as_f32 = tirx.reinterpret("float32", tirx.IntImm("uint32", bits))
        return as_f32 if dtype == "float32" else tirx.Cast(dtype, as_f32)

    @tirx.transform.prim_func_pass(opt_level=0, name="tilelang_webgpu.LegalizeFloatLiterals")
    def legalize(func: Any, mod: Any, ctx: Any) -> Any:
        return _with_body(func, tvm_ffi.structural_map(func.body, (tirx.FloatImm, on_float)))

    return legalize


PASSES = [
    PipelinePass("webgpu.fold_blockidx_z", "post_barriers", FoldBlockIdxZ),
    PipelinePass("webgpu.split_wide_vectors", "post_storage", SplitWideVectors),
    PipelinePass("webgpu.legalize_float_literals", "device_module", LegalizeFloatLiterals),
]
