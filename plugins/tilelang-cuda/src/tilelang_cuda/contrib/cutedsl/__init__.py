"""The CuTe DSL device library of the reference TileLang (``tilelang_cuda.contrib.cutedsl.*``).

In the reference, kernels emitted by its CuTeDSL code generator call these helpers (atomics, cp.async / TMA,
ldmatrix, mma / wgmma / tcgen05, warp reductions, ...) inside NVIDIA's CuTe DSL. Where the CuTe DSL is installed
(``pip install 'tilelang-cuda[cutedsl]'``) the helpers are real, implemented in ``_dsl`` on ``cutlass.cute`` and
inline PTX, for hand-written CuTe DSL kernels: reduce, warp, math, ieee_math, atomic, cpasync, ldsm, ptx_mma,
gemm_v1 (tile GEMMs on CuTe's tiled MMAs), gemm_v2 (wgmma), gemm_tcgen05 (tcgen05 / TMEM), quantize, utils,
threadblock_swizzle, grid_sync, cluster. Without the DSL every module still imports and each helper raises
`CuTeDSLHelperUnavailable` naming what to install.
This project does not offer the reference's CuTeDSL code generator (the ``cutedsl`` backend shares the CUDA
pipeline). Plain values (``WARP_SIZE``, ``dim3``, the quantize constants ...) are real everywhere.
"""

from __future__ import annotations

from tilelang_cuda.contrib.cutedsl._unavailable import CuTeDSLHelperUnavailable, dsl_installed, helpers
from tilelang_cuda.contrib.cutedsl.atomic import *  # noqa: F403
from tilelang_cuda.contrib.cutedsl.cluster import *  # noqa: F403
from tilelang_cuda.contrib.cutedsl.cpasync import *  # noqa: F403
from tilelang_cuda.contrib.cutedsl.gemm_tcgen05 import *  # noqa: F403
from tilelang_cuda.contrib.cutedsl.gemm_v1 import *  # noqa: F403
from tilelang_cuda.contrib.cutedsl.gemm_v2 import *  # noqa: F403
from tilelang_cuda.contrib.cutedsl.grid_sync import *  # noqa: F403
from tilelang_cuda.contrib.cutedsl.ieee_math import *  # noqa: F403
from tilelang_cuda.contrib.cutedsl.ldsm import *  # noqa: F403
from tilelang_cuda.contrib.cutedsl.math import *  # noqa: F403
from tilelang_cuda.contrib.cutedsl.ptx_mma import *  # noqa: F403
from tilelang_cuda.contrib.cutedsl.quantize import *  # noqa: F403
from tilelang_cuda.contrib.cutedsl.reduce import *  # noqa: F403
from tilelang_cuda.contrib.cutedsl.threadblock_swizzle import *  # noqa: F403
from tilelang_cuda.contrib.cutedsl.utils import *  # noqa: F403
from tilelang_cuda.contrib.cutedsl.warp import *  # noqa: F403

# the reference also re-exports these CuTe DSL names (cute.arch barriers, shared memory, tensors, dtypes ...)
_REEXPORTED = [
    'sync_threads', 'sync_warp', 'alloc_smem', 'get_dyn_smem', 'griddepcontrol_launch_dependents',
    'griddepcontrol_wait', 'wgmma_wait_group', 'make_tensor', 'make_rmem_tensor', 'where', 'runtime_assert',
    'thread_idx',
]
globals().update(helpers(__name__, _REEXPORTED))
if dsl_installed():
    import cutlass.cute as _cute

    globals().update({name: getattr(_cute.arch, name) for name in _REEXPORTED if hasattr(_cute.arch, name)})
    make_tensor, make_rmem_tensor, where = _cute.make_tensor, _cute.make_rmem_tensor, _cute.where
    wgmma_wait_group = _cute.nvgpu.warpgroup.wait_group
    from tilelang_cuda.contrib.cutedsl._dsl.utils import runtime_assert  # noqa: F401

__all__ = ["CuTeDSLHelperUnavailable"]
