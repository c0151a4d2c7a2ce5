"""The CUDA backend's passes, in the order they run, each at its core extension point."""

from __future__ import annotations

from typing import Any

from tilelang.backend import PipelinePass


def _legalize_vectors(target: Any) -> Any:
    from tilelang_cuda.passes.legalize_vectors import LegalizeVectorWidth

    return LegalizeVectorWidth(target)


def _mma_accumulators(target: Any) -> Any:
    from tilelang_cuda.passes.mma_accumulators import MMAAccumulators

    return MMAAccumulators(target)


PASSES = (
    PipelinePass("cuda.mma_accumulators", "pre_layout", _mma_accumulators),
    PipelinePass("cuda.legalize_vector_width", "post_parallel", _legalize_vectors),
)
