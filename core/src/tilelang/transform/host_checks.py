"""HostChecks: make the host-side argument checks safe for torch tensors and name the parameter at fault.

TVM's packed API (``MakePackedAPI``, run after this pass) checks every tensor argument's ndim, dtype, shape,
strides, byte offset and device, and binds symbolic dimensions. Two things are adjusted here:

- alignment: a parameter buffer declared with TVM's default 64-byte alignment lets LLVM assume it and crash on
  a torch view at any other offset; each parameter is re-declared with the alignment of its element type
  (what every torch tensor satisfies);
- the parameter names the checks print are the kernel's own names (``A``, ``B``), so a wrong call reads
  ``A.shape[0] expected 128 ...`` rather than an internal handle name.
"""

from __future__ import annotations

from typing import Any

import tvm
from tvm import tirx

from tilelang.transform import utils as C
from tilelang.transform.plan_shared_memory import dtype_bytes


def HostChecks(target: Any = None) -> tvm.transform.Pass:
    """Re-declare parameter buffers with element alignment (see the module docstring)."""

    @C.prim_func_pass("tl.HostChecks")
    def host_checks(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        remap = {}
        for p in func.params:
            if tirx.is_buffer_var(p):
                align = dtype_bytes(str(p.ty.dtype))
                if int(p.ty.data_alignment) > align:
                    remap[p] = C.buffer_with(p, align=align)
        if not remap:
            return func
        params = [remap.get(p, p) for p in func.params]
        return tirx.PrimFunc(params, C.substitute(func.body, remap), func.ret_type, func.attrs)

    return host_checks
