"""The ROCm backend's passes (the reference's ``tilelang.rocm.pipeline``).

The ROCm backend runs core's pass pipeline as it is, steered by its target kind's ``pipeline_options``
(`tilelang_rocm.backend.PIPELINE_OPTIONS`: wave64 / wave32 from the GPU, static LDS, its atomic functions); its
own work happens in its tile-op and intrinsic lowerings (`tilelang_rocm.tileops.gemm`, `tilelang_rocm.tileops.atomic`,
`tilelang_rocm.tileops.dialect`). `PASSES` lists the passes it adds at core's extension points: none.
"""

from __future__ import annotations

from typing import Any

PASSES: tuple[Any, ...] = ()

__all__ = ["PASSES"]
