"""The backend-neutral part of TVM's TIR-script surface (``from tvm.script import tirx as T``), as TileLang
programs use it through ``T.evaluate``, ``T.call_extern``, ``T.alloc_buffer``, ``T.launch_thread``, ...

Names are TVM's own objects (IRBuilder functions, which the TileLang front end drives) except where
`tilelang.language.tir.ir` adapts one and for dtypes, which are TileLang's. Left out: the backend-only names of
`tilelang.language.tir.exports` (a backend dialect provides them) and TVM's own tile language (``T.tile``,
``TileLayout``, ``ExecScope``, ...), which is not TileLang's. Importing this module imports TVM.
"""

from __future__ import annotations

from typing import Any

import tvm.tirx.script.parser as _parser

from tilelang.language.tir.exports import BACKEND_ONLY_TIR_EXPORTS

# apache-tvm's TIRX tile language and namespaces: not part of TileLang's surface
TVM_TILE_LANGUAGE = frozenset("""
    ComposeLayout ExecScope Iter R S ScopeIdDef TensorMap TileLayout Layout SMEMPool TMEMPool Optional Ptr
    add_to_parent alloc_cast_frag alloc_scalar alloc_tcgen05_ldst_frag alloc_local alloc_shared cluster_id cta_id
    cta_id_in_cluster cta_id_in_pair decl_scalar device_entry lane_id local_scalar meta_class register_script_namespace
    scalar_wrapper scope_id shared_scalar smem static_assert thread_id thread_id_in_wg tmem warp_id warp_id_in_wg
    warpgroup_id wg_reg_tile constexpr jit cuda nvshmem ptx ptx_legacy s_tir metal nki webgpu prim_func macro inline
    Buffer
""".split())

__all__ = tuple(sorted(n for n in set(_parser.__all__) - BACKEND_ONLY_TIR_EXPORTS - TVM_TILE_LANGUAGE))
_NAMES = frozenset(__all__)


def __getattr__(name: str) -> Any:
    if name not in _NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from tilelang.language import dtypes
    from tilelang.language.tir import ir

    if name in dtypes._all_dtypes:
        value = getattr(dtypes, name)
    elif name in ir.ADAPTED:
        value = getattr(ir, name)
    else:
        value = getattr(_parser, name)
    if name not in ("bool", "int", "float"):
        globals()[name] = value
    return value
