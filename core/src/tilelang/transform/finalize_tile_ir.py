"""FinalizeTileIR: check the hand-off contract of docs/ir.md and drop the pipeline's private annotations.

After the tile-level passes no ``tl.*`` call, ``local.fragment`` buffer, ``tl.parallel`` loop or
``tl.pipeline_*`` annotation may remain (a backend pass that left one gets a `LoweringError` naming it); the
``tl.fragment`` annotations LayoutInference put on allocations are removed so codegens see plain tirx.
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C


def FinalizeTileIR(target: Any = None) -> tvm.transform.Pass:
    """Verify that only plain tirx remains and strip ``tl.*`` annotations (see the module docstring)."""

    @C.prim_func_pass("tl.FinalizeTileIR")
    def finalize_tile_ir(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        left = sorted({name for ev in C.collect(func.body, tirx.Evaluate) if (name := (C.tile_op_of(ev) or ("",))[0])})
        left += sorted({str(a.buffer.name) for a in C.allocations(func.body)
                        if C.scope_of(a.buffer) == "local.fragment"})
        left += sorted({f"loop {lp.loop_var.name}" for lp in C.collect(func.body, tirx.For)
                        if any(str(k).startswith("tl.") for k in lp.annotations)})
        if left:
            raise C.lowering_error(func, f"tile-level constructs left after lowering: {', '.join(left)}")

        def on_alloc(a: Any) -> Any:
            if a.annotations and any(str(k).startswith("tl.") for k in a.annotations):
                rest = {k: v for k, v in a.annotations.items() if not str(k).startswith("tl.")}
                return tirx.AllocBuffer(a.buffer, rest or None)
            return a

        return C.with_body(func, tvm_ffi.structural_map(func.body, (tirx.AllocBuffer, on_alloc)))

    return finalize_tile_ir
