"""The CUDA dialect of the TileLang language (``tilelang.cuda.language``): the common language plus the CUDA
constructs of the reference (barriers, TMA, clusters, warp specialisation, wgmma / tcgen05, PDL, Philox random
numbers, explicit loads and stores).

Installed as the ``cuda`` entry point of group ``tilelang.language``: ``T.tma_copy`` and the other CUDA names are
reachable as ``tilelang.language.<name>`` once this backend is installed, without ``import tilelang.language``
importing it (`tilelang.language.dialects`). Every construct lowers on the architectures that have it and is
refused elsewhere with a LoweringError naming the construct, the target and the lowest architecture with it.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from tilelang_cuda.language import api, cluster, copy_ops, pdl, random, tensorcore, tir, warpgroup
from tilelang_cuda.language.api import *  # noqa: F403
from tilelang_cuda.language.cluster import *  # noqa: F403
from tilelang_cuda.language.copy_ops import *  # noqa: F403
from tilelang_cuda.language.launch import ClusterKernel, CUDASourceCodeKernel  # noqa: F401 - in __all__ (built below)
from tilelang_cuda.language.pdl import *  # noqa: F403
from tilelang_cuda.language.print import device_assert, print  # noqa: F401 - in __all__ (built below)
from tilelang_cuda.language.random import *  # noqa: F403
from tilelang_cuda.language.tensorcore import *  # noqa: F403
from tilelang_cuda.language.tir import *  # noqa: F403
from tilelang_cuda.language.warpgroup import *  # noqa: F403

__tilelang_dialect__ = "cuda"


def _common_names() -> tuple[str, ...]:
    """The common language's public names (``tilelang.language.common`` when core has it)."""
    if importlib.util.find_spec("tilelang.language.common") is not None:
        return tuple(importlib.import_module("tilelang.language.common").__all__)
    return tuple(importlib.import_module("tilelang.language").__all__)


_CUDA_MODULES = (api, cluster, copy_ops, pdl, random, tensorcore, tir, warpgroup)
CUDA_NAMES: tuple[str, ...] = tuple(dict.fromkeys(
    ["ClusterKernel", "CUDASourceCodeKernel", *(n for m in _CUDA_MODULES for n in m.__all__), "get_warp_group_idx"]))
# the intrinsic emitters and descriptor helpers of `tilelang_cuda.language.intrinsics` (imported on first use)
_INTRINSICS = ("TCGEN05TensorCoreIntrinEmitter", "WGMMATensorCoreIntrinEmitter", "TensorCoreIntrinEmitter",
               "TensorCoreIntrinEmitterWithLadderTransform", "TensorCoreIntrinEmitterSM120",
               "SparseTensorCoreIntrinEmitter", "WGSparseTensorCoreIntrinEmitter", "TCGEN05DescriptorParams",
               "WGMMADescriptorParams", "compute_gmma_descriptor", "compute_umma_descriptor", "get_ldmatrix_offset",
               "get_mma_micro_size", "get_swizzle_layout", "make_mma_swizzle_layout", "mma_store_index_map")
__all__ = tuple(dict.fromkeys((*_common_names(), *CUDA_NAMES, *_INTRINSICS)))


def __getattr__(name: str) -> Any:
    if name in _INTRINSICS:
        value = getattr(importlib.import_module(f"{__name__}.intrinsics"), name)
        globals()[name] = value
        return value
    if name in __all__:  # a common-language name
        value = getattr(importlib.import_module("tilelang.language"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tilelang.cuda.language' has no attribute {name!r}")


def _register_lowering_elsewhere() -> None:
    """Targets other than CUDA refuse the dialect's constructs with a message naming them."""
    from tilelang_cuda.tileops.dialect import register_elsewhere

    register_elsewhere()


_register_lowering_elsewhere()
