"""The CuTe DSL device library of the reference TileLang (``tilelang_cuda.contrib.cutedsl.*``).

In the reference, kernels emitted by its CuTeDSL code generator call these helpers (atomics, cp.async / TMA,
ldmatrix, mma / wgmma / tcgen05, warp reductions, ...) inside NVIDIA's CuTe DSL. This project does not offer
that code generator (the ``cutedsl`` backend shares the CUDA pipeline and says so when asked to build), so the
modules import without the CuTe DSL and every helper raises `CuTeDSLHelperUnavailable` naming what is missing
(``pip install nvidia-cutlass-dsl`` when the DSL is absent). Plain values (``WARP_SIZE``, ``dim3``, the quantize
constants ...) are real.
"""

from __future__ import annotations

from tilelang_cuda.contrib.cutedsl._unavailable import CuTeDSLHelperUnavailable, helpers
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

__all__ = ["CuTeDSLHelperUnavailable"]
