"""``tl.copy`` between global and workgroup memory on WebGPU, four elements (one ``vec4``) per thread access.

WGSL has no vector loads from a scalar array: TVM's WebGPU codegen declares a workgroup array as ``array<vec4<f32>, n>``
only when every access to it is an aligned 4-lane access, and otherwise spells a vector access as four scalar ones. On
llvmpipe each scalar workgroup load of a thread is a separate gather, so a GEMM reading its tiles 16 bytes at a time
runs several times faster than one reading them 4 bytes at a time. This implementation makes both sides of the tile
copies 4-lane accesses (``Ramp(i, 1, 4)``), so that together with the GEMM's own 4-lane reads
(`tilelang_webgpu.tileops.gemm`) the tiles become ``vec4`` arrays, and the global tensor a ``vec4`` storage view when
all its accesses are aligned (`tilelang_webgpu.passes.mark_vector_globals`; otherwise TVM prints the global side as four
scalar accesses).

It applies when it is exact and needs no bounds tests and no code but tile operators touches the workgroup
tile (elementwise reads would make TVM keep it a scalar array): the innermost dimension of both regions is the
contiguous (last) dimension of a compact buffer, its extent and the buffers' last dimensions are multiples of
4, its start is provably a multiple of 4, and the whole region provably lies inside both buffers. Everything
else goes to core's generic copy. The elements are spread cyclically over the block's threads:
``f = k * threads + tid`` over ``rows x (inner / 4)`` vectors.
"""

from __future__ import annotations

from typing import Any

from tilelang.backend.sdk import TileOpImpl

LANES = 4
_DTYPES = ("float32", "float16", "int32", "uint32")


def _scope_kind(buf: Any) -> str:
    from tilelang.transform import utils as C

    scope = C.scope_of(buf)
    if scope.startswith("shared"):
        return "shared"
    return "global" if scope in ("global", "") else scope


def _plan(ctx: Any) -> tuple[Any, Any, list[int], list[int], list[int]] | None:
    """``(src, dst, src dims, dst dims, extents)`` when the copy can be done in aligned 4-lane accesses."""
    from tvm import tirx

    from tilelang.backend.sdk import tileop_utils
    from tilelang.transform import utils as C

    if not ctx.has_threads or ctx.num_threads < 1 or ctx.func is None or len(ctx.args) < 2:
        return None
    src, dst = ctx.regions(0, 1)
    kinds = {_scope_kind(src.source), _scope_kind(dst.source)}
    if kinds != {"global", "shared"}:
        return None
    dtype = str(dst.source.ty.dtype)
    if dtype not in _DTYPES or str(src.source.ty.dtype) != dtype:
        return None
    sdims, ddims = tileop_utils.nonunit_dims(src), tileop_utils.nonunit_dims(dst)
    if not sdims or len(sdims) != len(ddims):
        return None
    if sdims[-1] != len(src.region) - 1 or ddims[-1] != len(dst.region) - 1:
        return None  # the vectorised dimension must be the contiguous one on both sides
    extents = [C.as_int(src.region[d].extent) for d in sdims]
    if None in extents or extents != [C.as_int(dst.region[d].extent) for d in ddims] or extents[-1] % LANES:
        return None
    shared = src.source if _scope_kind(src.source) == "shared" else dst.source
    if _accessed_elementwise(ctx.func.body, shared):
        return None
    ana = ctx.analyzer
    for reg in (src, dst):
        buf = reg.source
        if list(getattr(buf, "strides", None) or []):
            return None
        shape = [C.as_int(s) for s in buf.ty.shape]
        if None in shape or shape[-1] % LANES:
            return None
        if not ana.can_prove(tirx.floormod(reg.region[-1].min, LANES) == 0):
            return None
        for r, extent in zip(reg.region, shape):
            if not (ana.can_prove(r.min >= 0) and ana.can_prove(r.min + r.extent <= extent)):
                return None
    return src, dst, sdims, ddims, extents  # type: ignore[return-value]


def _accessed_elementwise(body: Any, buf: Any) -> bool:
    """Whether code other than tile-op calls loads or stores `buf`: TVM then keeps the tile a scalar array and
    spells each 4-lane access as four scalar ones, which is slower than the generic copy."""
    import tvm
    import tvm_ffi
    from tvm import tirx

    from tilelang.transform import utils as C

    stripped = tvm_ffi.structural_map(body, (tirx.Evaluate, lambda ev: tirx.Evaluate(0) if C.tile_op_of(ev)
                                             else ev))
    return bool(C.collect(stripped, tvm.ir.TensorLoad, lambda ld: ld.source.same_as(buf))
                or C.collect(stripped, tirx.BufferStore, lambda st: st.buffer.same_as(buf)))


def applies(ctx: Any) -> bool:
    """Global <-> workgroup copies that are exact in aligned 4-lane accesses (see the module docstring)."""
    try:
        return _plan(ctx) is not None
    except Exception:
        return False


def lower_copy(ctx: Any) -> Any:
    import tvm
    from tvm import tirx

    from tilelang.backend.sdk import tileop_utils
    from tilelang.transform import utils as C

    src, dst, sdims, ddims, extents = _plan(ctx)  # type: ignore[misc]
    threads = ctx.num_threads
    shape = [*extents[:-1], extents[-1] // LANES]
    total = 1
    for e in shape:
        total *= e
    tid = C.linear_thread(ctx.func)
    k = tirx.Var("k", "int32")
    flat = k * threads + tid
    ana = tvm.sym.Analyzer()
    vs: list[Any] = []
    rest: Any = flat
    for i, e in enumerate(reversed(shape)):
        vs.append(ana.simplify(tirx.floormod(rest, e)) if i < len(shape) - 1 else ana.simplify(rest))
        rest = tirx.floordiv(rest, e)
    vs.reverse()
    vs[-1] = vs[-1] * LANES

    si = tileop_utils.region_indices(src, sdims, vs)
    di = tileop_utils.region_indices(dst, ddims, vs)

    # one aligned 4-lane access on each side: the workgroup tile becomes a vec4 array, and the global tensor a
    # vec4 storage view where every access to it is aligned (`tilelang_webgpu.passes.mark_vector_globals`)
    load = tirx.BufferLoad(src.source, [*si[:-1], tirx.Ramp(si[-1], 1, LANES)])
    body: Any = tirx.BufferStore(dst.source, load, [*di[:-1], tirx.Ramp(di[-1], 1, LANES)])
    if total % threads:
        body = tirx.IfThenElse(flat < total, body, None)
    return tirx.For(k, 0, (total + threads - 1) // threads, tirx.ForKind.SERIAL, body)


COPY = TileOpImpl("tl.copy", "webgpu_vec4", lower_copy, applies=applies, priority=10)
