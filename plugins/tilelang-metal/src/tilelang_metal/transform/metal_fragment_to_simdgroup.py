"""MetalFragmentToSimdgroup: re-scope ``T.gemm`` fragment accumulators as simdgroup matrices.

For a function bound to a Metal target, every ``local.fragment`` buffer that is the C operand of a ``tl.gemm``
becomes a ``metal.simdgroup`` buffer of ``elements / simdgroups`` elements (each simdgroup holds its share of C
as opaque 8x8 matrices, which have no per-thread layout for layout inference to assign). Other functions are
returned unchanged.

tilelang-metal's own pipeline does not run this pass: its simdgroup GEMM (`tilelang_metal.tileops.gemm`) takes the
fragment as it is and moves it through simdgroup matrices inside the lowering, so the fragment keeps a thread
layout for the element-wise code around the GEMM. The pass serves pipelines that lower such accumulators
themselves, as the reference's Metal pipeline does.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MetalFragmentToSimdgroup"]

SIMD_WIDTH = 32
FRAGMENT_SCOPE = "local.fragment"
SIMDGROUP_SCOPE = "metal.simdgroup"


def gemm_fragment_accumulators(body: Any) -> list[Any]:
    """The ``local.fragment`` buffers that are the C operand of a ``tl.gemm`` in `body`, in order of first use."""
    import tvm

    from tilelang.ir import region as R
    from tilelang.transform import utils as C

    found: list[Any] = []
    for call in C.collect(body, tvm.ir.Call, lambda c: isinstance(c.op, tvm.ir.Op) and c.op.name == "tl.gemm"):
        if len(call.args) < 3:
            continue
        try:
            buf = R.buffer_of(call.args[2])
        except TypeError:
            continue
        if C.scope_of(buf) == FRAGMENT_SCOPE and not any(buf.same_as(b) for b in found):
            found.append(buf)
    return found


def simdgroups(func: Any) -> int:
    """Simdgroups per threadgroup: ``threadIdx.x``'s extent over 32 (1 when it is not a constant)."""
    from tilelang.transform import utils as C

    launch = C.launch_extents(func)
    threads = C.as_int(launch["threadIdx.x"][1]) if "threadIdx.x" in launch else None
    return max(1, threads // SIMD_WIDTH) if threads else 1


def _metal_fragment_to_simdgroup(func: Any, mod: Any, ctx: Any) -> Any:
    from tvm import tirx

    from tilelang.transform import utils as C

    target = func.attrs.get("target") if func.attrs is not None else None
    if target is None or str(target.kind.name) != "metal":
        return func
    accumulators = gemm_fragment_accumulators(func.body)
    if not accumulators:
        return func
    warps = simdgroups(func)
    remap = {}
    for buf in accumulators:
        total = C.num_elements(buf.ty.shape)
        if total is None:
            raise ValueError(f"MetalFragmentToSimdgroup: accumulator {buf.name} has a symbolic shape "
                             f"{list(buf.ty.shape)}; simdgroup matrices need a constant size")
        remap[buf] = tirx.decl_buffer((total // warps if warps > 1 else total,), str(buf.ty.dtype),
                                      name=str(buf.name), scope=SIMDGROUP_SCOPE)
    return C.with_body(func, C.substitute(func.body, remap))


def _make_pass() -> Any:
    from tilelang.transform import utils as C

    return C.prim_func_pass("tl.MetalFragmentToSimdgroup")(_metal_fragment_to_simdgroup)


MetalFragmentToSimdgroup = _make_pass()
