"""The CUDA backend's passes, in the order they run, each at its core extension point."""

from __future__ import annotations

from typing import Any

from tilelang.backend import PipelinePass


def _legalize_vectors(target: Any) -> Any:
    from tilelang_cuda.passes.legalize_vector_width import LegalizeVectorWidth

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
    from tilelang_cuda.passes.swizzle_shared_operands import SwizzleSharedOperands

    return SwizzleSharedOperands(target)


def _unpacked_fp4(target: Any) -> Any:
    from tilelang_cuda.passes.unpacked_fp4 import UnpackedFP4Storage

    return UnpackedFP4Storage(target)


def _share_scratch(target: Any) -> Any:
    from tilelang_cuda.passes.share_scratch_tiles import ShareScratchTiles

    return ShareScratchTiles(target)


def _tmem_fragments(target: Any) -> Any:
    from tilelang_cuda.passes.tmem_fragments import TmemFragments

    return TmemFragments(target)


def _tensor_memory(target: Any) -> Any:
    from tilelang_cuda.passes.tensor_memory import TensorMemory

    return TensorMemory(target)


def _drop_tensor_memory(target: Any) -> Any:
    from tilelang_cuda.passes.tensor_memory import DropTensorMemoryTiles

    return DropTensorMemoryTiles(target)


def _dialect_scopes(target: Any) -> Any:
    from tilelang_cuda.passes.dialect_scopes import DialectScopes

    return DialectScopes(target)


def _warp_specialize(target: Any) -> Any:
    from tilelang_cuda.passes.warp_specialize import WarpSpecialize

    return WarpSpecialize(target)


def _float8_e4m3_as_fn(target: Any) -> Any:
    from tilelang_cuda.passes.float8_e4m3 import Float8E4M3AsFn

    return Float8E4M3AsFn(target)


def _barrier_allocations(target: Any) -> Any:
    from tilelang_cuda.passes.barrier_allocations import BarrierAllocations

    return BarrierAllocations(target)


def _wgmma_gemm_as_gemm(target: Any) -> Any:
    from tilelang_cuda.passes.wgmma_gemm import WgmmaGemmAsGemm

    return WgmmaGemmAsGemm(target)


def _wgmma_gemm_no_wait(target: Any) -> Any:
    from tilelang_cuda.passes.wgmma_gemm import WgmmaGemmNoWait

    return WgmmaGemmNoWait(target)


def _named_barriers(target: Any) -> Any:
    from tilelang_cuda.passes.named_barriers import NamedBarriers

    return NamedBarriers(target)


PASSES = (
    PipelinePass("cuda.warp_specialize", "pre_layout", _warp_specialize),
    PipelinePass("cuda.float8_e4m3_as_fn", "pre_layout", _float8_e4m3_as_fn),
    PipelinePass("cuda.barrier_allocations", "pre_layout", _barrier_allocations),
    PipelinePass("cuda.wgmma_gemm_as_gemm", "pre_layout", _wgmma_gemm_as_gemm),
    PipelinePass("cuda.tmem_fragments", "pre_layout", _tmem_fragments),
    PipelinePass("cuda.tensor_memory", "pre_layout", _tensor_memory),
    PipelinePass("cuda.mma_accumulators", "pre_layout", _mma_accumulators),
    PipelinePass("cuda.mark_pipeline_stages", "post_layout", _mark_pipeline),
    PipelinePass("cuda.dialect_scopes", "post_layout", _dialect_scopes),
    PipelinePass("cuda.wgmma_gemm_no_wait", "post_tile_lowering", _wgmma_gemm_no_wait),
    PipelinePass("cuda.drop_tensor_memory_tiles", "post_tile_lowering", _drop_tensor_memory),
    PipelinePass("cuda.async_copy_pipeline", "post_tile_lowering", _async_pipeline),
    PipelinePass("cuda.swizzle_shared_operands", "post_tile_lowering", _swizzle),
    PipelinePass("cuda.unpacked_fp4_storage", "post_tile_lowering", _unpacked_fp4),
    PipelinePass("cuda.share_scratch_tiles", "post_tile_lowering", _share_scratch),
    PipelinePass("cuda.legalize_vector_width", "post_parallel", _legalize_vectors),
    PipelinePass("cuda.named_barriers", "post_barriers", _named_barriers),
)


def CUDAPassPipelineBodyPrologue(mod: Any, target: Any) -> Any:
    """The front half of the CUDA lowering (the reference's name): `mod` with `target` bound, run through
    core's stages and the CUDA passes from semantic checks to bounds guards (``post_parallel``) and simplified.

    Tile operators are lowered, parallel loops partitioned over threads, memory accesses guarded; shared memory
    is not yet planned nor barriers inserted. ``tl.force_let_inline`` inlines ``Bind`` values first. `target`:
    a ``tvm.target.Target`` of kind cuda, or anything `tilelang.backend.target.tvm_target` accepts.
    """
    import tvm
    from tvm import tirx

    from tilelang.backend.sdk import CORE_STAGES, current_tl_config, each_launch, passes_at, tvm_target
    from tilelang.transform import LetInline, Simplify

    if not isinstance(target, tvm.target.Target):
        target = tvm_target(target)
    if target.kind.name != "cuda":
        raise ValueError(f"CUDAPassPipelineBodyPrologue needs a cuda target, got kind {target.kind.name!r}")
    mod = tirx.transform.BindTarget(target)(mod)
    if current_tl_config("tl.force_let_inline", False):
        mod = LetInline()(mod)

    def front(mod: Any) -> Any:
        for factory, point in CORE_STAGES:
            if factory is not None:
                mod = factory(target)(mod)
            if point is not None:
                for p in passes_at(point, target):
                    mod = p(mod)
            if point == "post_parallel":
                break
        return mod

    return Simplify()(each_launch(mod, front))  # a function of several launches: one launch at a time
