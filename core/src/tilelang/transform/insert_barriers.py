"""InsertBarriers: put a block barrier between every conflicting pair of shared-memory accesses.

Tile operators and partitioned loops write shared tiles that other threads read next (a copy into ``A_shared``
followed by a gemm reading it; a fragment staged for a reduction). The pass runs TVM's ``ThreadSync``
analysis for ``"shared"`` and ``"shared.dyn"``, which inserts ``tvm_storage_sync("shared")`` exactly where a
read-after-write, write-after-read or write-after-write across threads needs one (also across loop
iterations). Targets without threads need none: their blocks run as one thread of control.
"""

from __future__ import annotations

from typing import Any

import tvm

from tilelang.transform import utils as C


def InsertBarriers(target: Any = None) -> tvm.transform.Pass:
    """Insert ``tvm_storage_sync`` barriers where shared-memory accesses conflict (see the module docstring)."""
    from tvm import s_tir

    syncs = [s_tir.transform.ThreadSync("shared"), s_tir.transform.ThreadSync("shared.dyn")]

    @tvm.transform.module_pass(opt_level=0, name="tl.InsertBarriers")
    def insert_barriers(mod: tvm.IRModule, ctx: Any) -> tvm.IRModule:
        if target is not None and not C.has_threads(target):
            return mod
        for sync in syncs:
            mod = sync(mod)
        return mod

    return insert_barriers
