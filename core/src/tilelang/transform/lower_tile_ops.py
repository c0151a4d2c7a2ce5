"""LowerTileOps: replace every ``tl.*`` tile-operator call by the loops its registered implementation emits.

For each call the pass builds a `tilelang.tileop.TileOpContext` (regions, target, thread count, the fragment
layouts decided by LayoutInference, an analyzer that knows the enclosing loop ranges, the thread range of the
branch on the thread index it sits in) and asks
`tilelang.backend.resolve_tile_op_impl` which implementation serves it: the highest-priority match among the
backends' impls and core's generic ones. The result is ordinary tirx plus ``tl.parallel`` loop nests.
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.backend.tile_ops import ANY_TARGET, register_lazy_tile_op_impls, resolve_tile_op_impl
from tilelang.errors import LoweringError, TileLangError
from tilelang.transform import utils as C
from tilelang.transform.layout_inference import fragment_layouts
from tilelang.transform.thread_range import single_thread_var, walk_ranges

register_lazy_tile_op_impls(ANY_TARGET, "tilelang.tileop:GENERIC_IMPLS")


def LowerTileOps(target: Any = None) -> tvm.transform.Pass:
    """Lower tile-op calls through the tile-operator registry (see the module docstring)."""

    @C.prim_func_pass("tl.LowerTileOps")
    def lower_tile_ops(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        from tilelang.tileop import TileOpContext

        tgt = target if target is not None else func.attrs.get("target") if func.attrs else None
        if tgt is None:
            raise C.lowering_error(func, "LowerTileOps needs a target")
        options = C.pipeline_options(tgt)
        threads = C.block_threads(func) if options.get("has_threads", True) else 1
        fragments = fragment_layouts(func.body, threads)
        analyzer = tvm.sym.Analyzer()
        for var, extent in C.launch_extents(func).values():
            analyzer.bind(var, tvm.ir.Range.from_min_extent(0, extent))

        def on_for(loop: Any, mutator: Any) -> Any:
            analyzer.bind(loop.loop_var, tvm.ir.Range.from_min_extent(loop.min, loop.extent))
            return mutator.default_mutate(loop)

        def on_eval(ev: Any, mutator: Any, span: tuple[int, int] | None = None) -> Any:
            found = C.tile_op_of(ev)
            if found is None:
                return ev
            name, call = found
            span = None if span == (0, threads) else span
            op_ctx = TileOpContext(name, call, tgt, options, threads, fragments, analyzer, func, span)
            try:
                impl = resolve_tile_op_impl(name, tgt, op_ctx)
                return impl.lower(op_ctx)
            except TileLangError as exc:
                if isinstance(exc, LoweringError):
                    raise
                raise C.lowering_error(func, f"{name}: {exc}") from None

        tvar = single_thread_var(func) if threads > 1 else None
        if tvar is None:
            body = tvm_ffi.structural_mutate(func.body, [(tirx.For, on_for),  # (two parameters: see PartitionParallel)
                                                         (tirx.Evaluate, lambda s, m: on_eval(s, m))])
        else:  # each call learns the thread range of the branch it sits in
            body = walk_ranges(func.body, tvar, threads, lambda s, m, span: on_for(s, m) if isinstance(
                s, tirx.For) else on_eval(s, m, span), (tirx.For, tirx.Evaluate))
        return C.with_body(func, body)

    return lower_tile_ops
