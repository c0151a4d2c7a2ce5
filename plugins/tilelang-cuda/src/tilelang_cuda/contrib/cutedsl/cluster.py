"""Thread-block cluster barriers, cluster rank and cluster launch control (clc) queries.

CuTe DSL device helpers of the reference TileLang: real where the CuTe DSL is installed (implemented in
``_dsl/cluster.py``), otherwise stand-ins that raise `CuTeDSLHelperUnavailable` naming what to install.
"""

from __future__ import annotations

from tilelang_cuda.contrib.cutedsl._unavailable import provide

_FUNCTIONS = [
    'cluster_arrive_relaxed', 'cluster_arrive', 'cluster_wait', 'cluster_sync', 'block_rank_in_cluster',
    'clc_try_cancel', 'clc_try_cancel_multicast', 'clc_is_canceled', 'clc_get_first_ctaid_x',
    'clc_get_first_ctaid_y', 'clc_get_first_ctaid_z',
]

globals().update(provide(__name__, _FUNCTIONS, impl="cluster"))

__all__ = [*_FUNCTIONS]
