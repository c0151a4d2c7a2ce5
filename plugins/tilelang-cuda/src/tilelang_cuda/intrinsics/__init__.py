"""CUDA intrinsics: the device-helper headers of generated kernels (``tilelang_cuda/*.cuh`` under `include_dir`,
indexed by `device`; the prologue that includes them, `header`), and the reference's intrinsic emitters and
layouts for hand-written tensor-core kernels (``tilelang.cuda.intrinsics``).

- `layout`: MMA / ldmatrix fragment layouts (sm_70 ... sm_100), swizzles, the tcgen05 TMEM fragments;
- `macro`: the emitters (`TensorCoreIntrinEmitter` and its sm_75 / sm_120 / ladder-transform variants, WGMMA and
  tcgen05 emitters) that write ldmatrix / mma / wgmma / tcgen05 code into a kernel body.

The emitters import TVM; they load on first access, so `with_header` (used on every CUDA source) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

from tilelang_cuda.intrinsics.device import headers_digest, include_dir
from tilelang_cuda.intrinsics.header import HEADER_GUARD, header_for, wgmma_helper, wgmma_ss_helper, with_header

# reference name -> "submodule:attribute" (imported on first use)
_LAZY = {
    "mma_store_index_map": "layout.utils:mma_store_index_map",
    "get_ldmatrix_offset": "layout.utils:get_ldmatrix_offset",
    "get_mma_micro_size": "layout.utils:get_mma_micro_size",
    "get_swizzle_layout": "layout.mma_layout:get_swizzle_layout",
    "make_mma_swizzle_layout": "layout.mma_layout:make_mma_swizzle_layout",
    "TensorCoreIntrinEmitter": "macro.mma_macro_generator:TensorCoreIntrinEmitter",
    "TensorCoreIntrinEmitterWithLadderTransform":
        "macro.mma_macro_generator:TensorCoreIntrinEmitterWithLadderTransform",
    "TensorCoreIntrinEmitterSM120": "macro.mma_sm120_macro_generator:TensorCoreIntrinEmitterSM120",
}

__all__ = ["HEADER_GUARD", "header_for", "headers_digest", "include_dir", "wgmma_helper", "wgmma_ss_helper",
           "with_header", *_LAZY]


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'tilelang.cuda.intrinsics' has no attribute {name!r}")
    module, attr = target.split(":")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
    globals()[name] = value
    return value
