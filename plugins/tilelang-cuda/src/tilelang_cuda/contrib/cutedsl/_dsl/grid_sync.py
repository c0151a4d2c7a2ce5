"""A software grid-wide barrier (``cooperative_groups::this_grid().sync()``) on the CuTe DSL.

All blocks must be resident at once: launch cooperatively (``cuLaunchCooperativeKernel``) or with at most as many
blocks as fit on the device. Two device globals hold the arrival count and the barrier generation.
"""

from __future__ import annotations

import cutlass.cute as cute
from cutlass._mlir import ir
from cutlass._mlir.dialects import llvm
from cutlass.cutlass_dsl import T

from tilelang_cuda.contrib.cutedsl._dsl._asm import asm

_COUNTER, _GENERATION = "__tl_grid_sync_count", "__tl_grid_sync_generation"

# thread 0 of each block: read the generation, count itself in; the last block resets the count and bumps the
# generation, the others spin until the generation changes
_BARRIER = """{
.reg .b32 ntid, gen, arrived, total, ny, nz;
.reg .pred not_first, last, same;
mov.u32 ntid, %tid.x;
mov.u32 arrived, %tid.y;
or.b32 ntid, ntid, arrived;
mov.u32 arrived, %tid.z;
or.b32 ntid, ntid, arrived;
setp.ne.b32 not_first, ntid, 0;
@not_first bra.uni done_${:uid};
mov.u32 total, %nctaid.x;
mov.u32 ny, %nctaid.y;
mov.u32 nz, %nctaid.z;
mul.lo.u32 total, total, ny;
mul.lo.u32 total, total, nz;
ld.acquire.gpu.global.u32 gen, [$1];
atom.add.acq_rel.gpu.global.u32 arrived, [$0], 1;
add.u32 arrived, arrived, 1;
setp.eq.u32 last, arrived, total;
@!last bra.uni spin_${:uid};
st.relaxed.gpu.global.u32 [$0], 0;
add.u32 gen, gen, 1;
st.release.gpu.global.u32 [$1], gen;
bra.uni done_${:uid};
spin_${:uid}:
ld.acquire.gpu.global.u32 ny, [$1];
setp.eq.u32 same, ny, gen;
@same bra.uni spin_${:uid};
done_${:uid}:
}"""


def _gpu_module():
    op = ir.InsertionPoint.current.block.owner
    while op is not None:
        if op.name == "gpu.module":
            return op
        op = op.parent
    raise RuntimeError("sync_grid must be called inside a CuTe DSL kernel")


def _declare_globals():
    module = _gpu_module()
    body = module.regions[0].blocks[0]
    present = {str(op.attributes["sym_name"]).strip('"') for op in body.operations
               if op.name == "llvm.mlir.global" and "sym_name" in op.attributes}
    internal = ir.Attribute.parse("#llvm.linkage<internal>")
    with ir.InsertionPoint.at_block_begin(body):
        for name in (_COUNTER, _GENERATION):
            if name not in present:
                llvm.GlobalOp(T.i32(), name, internal, value=ir.IntegerAttr.get(T.i32(), 0), addr_space=1)


def sync_grid():
    """Wait until every thread of every block of the grid reaches this call (block barrier, one thread per block
    meets the others on the device globals, block barrier)."""
    cute.arch.sync_threads()
    _declare_globals()
    counter = llvm.mlir_addressof(llvm.PointerType.get(1), _COUNTER)
    generation = llvm.mlir_addressof(llvm.PointerType.get(1), _GENERATION)
    asm(None, [counter, generation], _BARRIER, "l,l,~{memory}")
    cute.arch.sync_threads()
