"""The CUDA backend's IR passes (``tilelang.cuda.transform``), each a factory of a ``tvm.transform.Pass`` taking
the target, in the order `tilelang_cuda.pipeline.PASSES` runs them."""

from __future__ import annotations

from typing import Any

__all__ = ["AsyncCopyPipeline", "DialectScopes", "DropTensorMemoryTiles", "Float8E4M3AsFn",  # noqa: F822
           "LegalizeVectorWidth",
           "MMAAccumulators", "MarkPipelineStages", "ShareScratchTiles", "SwizzleSharedOperands", "TensorMemory",
           "UnpackedFP4Storage", "WgmmaGemmAsGemm", "WgmmaGemmNoWait"]  # (resolved lazily by __getattr__)

_PASSES = {
    "AsyncCopyPipeline": "tilelang_cuda.passes.async_pipeline",
    "MarkPipelineStages": "tilelang_cuda.passes.async_pipeline",
    "DialectScopes": "tilelang_cuda.passes.dialect_scopes",
    "Float8E4M3AsFn": "tilelang_cuda.passes.float8_e4m3",
    "LegalizeVectorWidth": "tilelang_cuda.passes.legalize_vector_width",
    "MMAAccumulators": "tilelang_cuda.passes.mma_accumulators",
    "ShareScratchTiles": "tilelang_cuda.passes.share_scratch_tiles",
    "SwizzleSharedOperands": "tilelang_cuda.passes.swizzle_shared_operands",
    "TensorMemory": "tilelang_cuda.passes.tensor_memory",
    "DropTensorMemoryTiles": "tilelang_cuda.passes.tensor_memory",
    "UnpackedFP4Storage": "tilelang_cuda.passes.unpacked_fp4",
    "WgmmaGemmAsGemm": "tilelang_cuda.passes.wgmma_gemm",
    "WgmmaGemmNoWait": "tilelang_cuda.passes.wgmma_gemm",
}


def __getattr__(name: str) -> Any:
    if name not in _PASSES:
        raise AttributeError(f"module 'tilelang.cuda.transform' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_PASSES[name]), name)
