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


def _mark_pipeline(target: Any) -> Any:
    from tilelang_cuda.passes.async_pipeline import MarkPipelineStages

    return MarkPipelineStages(target)


def _async_pipeline(target: Any) -> Any:
    from tilelang_cuda.passes.async_pipeline import AsyncCopyPipeline

    return AsyncCopyPipeline(target)


def _swizzle(target: Any) -> Any:
    from tilelang_cuda.passes.swizzle_shared import SwizzleSharedOperands

    return SwizzleSharedOperands(target)


def _share_scratch(target: Any) -> Any:
    from tilelang_cuda.passes.share_scratch import ShareScratchTiles

    return ShareScratchTiles(target)


def _tensor_memory(target: Any) -> Any:
    from tilelang_cuda.passes.tensor_memory import TensorMemory

    return TensorMemory(target)


def _drop_tensor_memory(target: Any) -> Any:
    from tilelang_cuda.passes.tensor_memory import DropTensorMemoryTiles

    return DropTensorMemoryTiles(target)


def _dialect_scopes(target: Any) -> Any:
    from tilelang_cuda.passes.dialect_scopes import DialectScopes

    return DialectScopes(target)


def _barrier_allocations(target: Any) -> Any:
    from tilelang_cuda.passes.barrier_allocations import BarrierAllocations

    return BarrierAllocations(target)


def _wgmma_gemm_as_gemm(target: Any) -> Any:
    from tilelang_cuda.passes.wgmma_gemm import WgmmaGemmAsGemm

    return WgmmaGemmAsGemm(target)


def _wgmma_gemm_no_wait(target: Any) -> Any:
    from tilelang_cuda.passes.wgmma_gemm import WgmmaGemmNoWait

    return WgmmaGemmNoWait(target)


PASSES = (
    PipelinePass("cuda.barrier_allocations", "pre_layout", _barrier_allocations),
    PipelinePass("cuda.wgmma_gemm_as_gemm", "pre_layout", _wgmma_gemm_as_gemm),
    PipelinePass("cuda.tensor_memory", "pre_layout", _tensor_memory),
    PipelinePass("cuda.mma_accumulators", "pre_layout", _mma_accumulators),
    PipelinePass("cuda.mark_pipeline_stages", "post_layout", _mark_pipeline),
    PipelinePass("cuda.dialect_scopes", "post_layout", _dialect_scopes),
    PipelinePass("cuda.wgmma_gemm_no_wait", "post_tile_lowering", _wgmma_gemm_no_wait),
    PipelinePass("cuda.drop_tensor_memory_tiles", "post_tile_lowering", _drop_tensor_memory),
    PipelinePass("cuda.async_copy_pipeline", "post_tile_lowering", _async_pipeline),
    PipelinePass("cuda.swizzle_shared_operands", "post_tile_lowering", _swizzle),
    PipelinePass("cuda.share_scratch_tiles", "post_tile_lowering", _share_scratch),
    PipelinePass("cuda.legalize_vector_width", "post_parallel", _legalize_vectors),
)
