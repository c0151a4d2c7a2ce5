"""InjectSoftwarePipeline: expand ``T.Pipelined`` loops where the target asks for it, else run them serially.

A ``T.Pipelined(n, num_stages=s)`` loop carries ``tl.pipeline_*`` annotations. When the target's
``pipeline_options["software_pipeline"]`` is true, the loop is handed to TVM's software pipeliner
(``software_pipeline_stage`` / ``software_pipeline_order`` annotations: the copies of iteration ``i + s - 1``
overlap the compute of iteration ``i`` over multi-buffered shared tiles). Otherwise -- and always for a loop
whose body is not a flat sequence the pipeliner can stage -- the annotations are dropped and the loop is
an ordinary serial loop, which is always correct.
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.transform import _common as C


def _strip(loop: Any) -> Any:
    ann = {k: v for k, v in loop.annotations.items() if k not in C.PIPELINE_KEYS}
    return tirx.For(loop.loop_var, loop.min, loop.extent, loop.kind, loop.body, loop.thread_binding, ann)


def InjectSoftwarePipeline(target: Any = None) -> tvm.transform.Pass:
    """Lower ``tl.pipeline_*`` loops (see the module docstring)."""

    @C.prim_func_pass("tl.InjectSoftwarePipeline")
    def inject_software_pipeline(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        def on_for(loop: Any) -> Any:
            if not any(k in loop.annotations for k in C.PIPELINE_KEYS):
                return loop
            return _strip(loop)

        return C.with_body(func, tvm_ffi.structural_map(func.body, (tirx.For, on_for)))

    return inject_software_pipeline
