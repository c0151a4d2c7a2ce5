"""Register A operands: a half-precision copy of an accumulator that only feeds the next gemm's A.

Flash attention casts its scores accumulator P (fp32, MMA layout) to fp16 (``T.copy(acc_s, acc_s_cast)``) and
multiplies it by V (``T.gemm(acc_s_cast, V_shared, acc_o)``). The C registers of two neighbouring ``m16n8``
atoms (``c0..c3`` of atoms ``2 ks`` and ``2 ks + 1``: rows ``g``, ``g + 8``, columns ``2t, 2t + 1`` then the
same ``+ 8``) are, in order, the A fragment ``a0..a7`` of one ``m16n8k16`` -- and of one warp's share of an RS
``wgmma.m64nNk16``. So when the second gemm reads A untransposed and its accumulator puts the same rows on each
warp (same ``m`` and ``wm``, ``wn == 1`` for both), the cast copy becomes a per-register conversion into a
``local`` half array and the gemm takes its A fragments straight from it (`tilelang_cuda.tileops.gemm`): no
shared-memory round trip, no ldmatrix. The gemm call carries the array's layout after the accumulator's.
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import utils as C
from tilelang_cuda.mma_layout import AccumulatorLayout
from tilelang_cuda.passes.accumulator_rows import full_region

FRAGMENT = "local.fragment"
HALF = ("float16", "bfloat16")


def plan_register_operands(body: Any, fragments: set[Any], layouts: dict[Any, AccumulatorLayout]
                           ) -> dict[Any, AccumulatorLayout]:
    """Half fragments of `body` that can live in the registers of the accumulator they are copied from."""
    cands = {f for f in fragments if f not in layouts and str(f.ty.dtype) in HALF and len(f.ty.shape) == 2}
    source: dict[Any, AccumulatorLayout] = {}
    bad: set[Any] = set()
    gemms: list[tuple[Any, AccumulatorLayout]] = []

    def on_eval(ev: Any, mutator: Any) -> Any:
        found = C.tile_op_of(ev)
        if found is None:
            return ev
        name, call = found
        args = list(call.args)
        touched = [a.source for a in args if isinstance(a, (tvm.ir.TensorRegion, tvm.ir.TensorLoad))
                   and a.source in cands]
        if not touched:
            return tirx.Evaluate(0)
        ok = False
        if name == "tl.copy" and args[1].source in cands and args[0].source in layouts:
            lay = layouts[args[0].source]
            dst = args[1].source
            ok = full_region(args[0]) and full_region(args[1]) and source.setdefault(dst, lay) == lay
        elif name == "tl.gemm" and args[0].source in cands and len(args) >= 7 and args[2].source in layouts:
            ok = (full_region(args[0]) and C.as_int(args[3]) == 0 and args[1].source not in cands)
            if ok:
                gemms.append((args[0].source, layouts[args[2].source]))
        bad.update(touched if not ok else [])
        return tirx.Evaluate(0)

    rest = tvm_ffi.structural_mutate(body, [(tirx.Evaluate, on_eval)])
    bad.update(ld.source for ld in C.collect(rest, tvm.ir.TensorLoad) if ld.source in cands)
    bad.update(st.buffer for st in C.collect(rest, tirx.BufferStore) if st.buffer in cands)
    for buf, acc in gemms:
        lay = source.get(buf)
        shape = [C.as_int(s) for s in buf.ty.shape]
        if lay is None or not (lay.wn == acc.wn == 1 and lay.m == acc.m and lay.wm == acc.wm
                               and shape == [lay.m, lay.n] and lay.ni % 2 == 0):
            bad.add(buf)
    used = {g for g, _ in gemms}
    return {b: lay for b, lay in source.items() if b not in bad and b in used}
