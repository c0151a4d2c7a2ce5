"""The target-neutral lowering pipeline (one pass per module; see `tilelang.transform.pipeline`).

Each pass is a PascalCase factory taking the target (or None) and returning a ``tvm.transform.Pass``.
"""

from __future__ import annotations

import importlib
from typing import Any

_PASSES = {
    "CheckSemantics": "check_semantics",
    "AttachLayouts": "apply_layouts",
    "RasterizeBlocks": "rasterize_blocks",
    "LayoutInference": "layout_inference",
    "InjectSoftwarePipeline": "inject_software_pipeline",
    "LowerTileOps": "lower_tile_ops",
    "LowerIntrinsics": "lower_intrinsics",
    "PartitionParallel": "partition_parallel",
    "LegalizeSafeMemoryAccess": "legalize_safe_memory_access",
    "ApplyLayouts": "apply_layouts",
    "PlanSharedMemory": "plan_shared_memory",
    "MergeSharedMemoryAllocations": "plan_shared_memory",
    "LowerOpaqueBlock": "tvm_lowering",
    "FlattenBuffer": "tvm_lowering",
    "FinalizeTileIR": "finalize_tile_ir",
    "InsertBarriers": "insert_barriers",
    "LowerThreadAllreduce": "lower_thread_allreduce",
    "BarrierBeforeSharedReuse": "shared_reuse_barriers",
    "HostChecks": "host_checks",
    "ThreadSync": "thread_sync",
    "PassConfigKey": "config",
    "LegalizeNegativeIndex": "legalize_negative_index",
    "IfStmtBinding": "merge_if",
    "MergeIfStmt": "merge_if",
    "LetInline": "simplify",
    "Simplify": "simplify",
    "simplify_prim_func": "simplify",
    "apply_simplify": "simplify",
    "AddWrapperForSingleBufStore": "add_bufstore_wrapper",
    "HoistBroadcastValues": "hoist_broadcast_values",
    "DecoupleTypeCast": "decouple_type_cast",
    "LowerAccessPtr": "lower_access_ptr",
}


def __getattr__(name: str) -> Any:
    if name not in _PASSES:
        raise AttributeError(f"module 'tilelang.transform' has no attribute {name!r}")
    return getattr(importlib.import_module(f"tilelang.transform.{_PASSES[name]}"), name)


__all__ = list(_PASSES)
