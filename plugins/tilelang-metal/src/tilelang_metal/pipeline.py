"""The Metal backend's passes in the order they run, at core's pipeline extension points (`PASSES`).

Each pass lives in `tilelang_metal.passes.<name>` and is registered under ``metal.<name>``, the name its TVM pass
carries too; passes at one extension point run in the order of this list.
"""

from __future__ import annotations

from tilelang.backend import PipelinePass


def _legalize_scopes(target: object) -> object:
    from tilelang_metal.passes.legalize_scopes import LegalizeScopes

    return LegalizeScopes(target)


def _simdgroup_accumulators(target: object) -> object:
    from tilelang_metal.passes.simdgroup_accumulators import SimdgroupAccumulators

    return SimdgroupAccumulators(target)


def _cooperative_tensor_storage(target: object) -> object:
    from tilelang_metal.passes.cooperative_tensor_storage import CooperativeTensorStorage

    return CooperativeTensorStorage(target)


def _limit_vector_width(target: object) -> object:
    from tilelang_metal.passes.limit_vector_width import LimitVectorWidth

    return LimitVectorWidth(target)


def _pack_half_vectors(target: object) -> object:
    from tilelang_metal.passes.pack_half_vectors import PackHalfVectors

    return PackHalfVectors(target)


def _alias_threadgroup_tiles(target: object) -> object:
    from tilelang_metal.passes.alias_threadgroup_tiles import AliasThreadgroupTiles

    return AliasThreadgroupTiles(target)


def _mlx_swizzle(target: object) -> object:
    from tilelang_metal.passes.mlx_swizzle import MlxSwizzle

    return MlxSwizzle(target)


def _mlx_block_indices(target: object) -> object:
    from tilelang_metal.passes.mlx_block_indices import MlxBlockIndices

    return MlxBlockIndices(target)


def _legalize_bf16_casts(target: object) -> object:
    from tilelang_metal.passes.legalize_bf16_casts import LegalizeBf16Casts

    return LegalizeBf16Casts(target)


def _legalize_nan_tests(target: object) -> object:
    from tilelang_metal.passes.legalize_nan_tests import LegalizeNanTests

    return LegalizeNanTests(target)


PASSES = [
    PipelinePass("metal.mlx_swizzle", "pre_layout", _mlx_swizzle),
    PipelinePass("metal.simdgroup_accumulators", "pre_layout", _simdgroup_accumulators),
    PipelinePass("metal.cooperative_tensor_storage", "post_tile_lowering", _cooperative_tensor_storage),
    PipelinePass("metal.limit_vector_width", "post_parallel", _limit_vector_width),
    PipelinePass("metal.legalize_scopes", "post_storage", _legalize_scopes),
    PipelinePass("metal.pack_half_vectors", "post_barriers", _pack_half_vectors),
    PipelinePass("metal.alias_threadgroup_tiles", "post_barriers", _alias_threadgroup_tiles),
    PipelinePass("metal.mlx_block_indices", "device_module", _mlx_block_indices),
    PipelinePass("metal.legalize_bf16_casts", "device_module", _legalize_bf16_casts),
    PipelinePass("metal.legalize_nan_tests", "device_module", _legalize_nan_tests),
]
