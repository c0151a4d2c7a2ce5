"""Pass pipelines of backend modules (`PassPipeline`) and helpers shared by backend pipelines."""

from tilelang.backend.pass_pipeline.pipeline import PassPipeline

__all__ = ["PassPipeline"]
