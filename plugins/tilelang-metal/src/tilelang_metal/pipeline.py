"""The Metal backend's passes, in the order they run, at core's pipeline extension points."""

from __future__ import annotations

from tilelang.backend import PipelinePass


def _legalize_scopes(target: object) -> object:
    from tilelang_metal.legalize_scopes import LegalizeScopes

    return LegalizeScopes(target)


def _simdgroup_accumulators(target: object) -> object:
    from tilelang_metal.simdgroup_accumulators import SimdgroupAccumulators

    return SimdgroupAccumulators(target)


def _limit_vector_width(target: object) -> object:
    from tilelang_metal.limit_vector_width import LimitVectorWidth

    return LimitVectorWidth(target)


def _pack_half_vectors(target: object) -> object:
    from tilelang_metal.pack_half_vectors import PackHalfVectors

    return PackHalfVectors(target)


def _alias_threadgroup_tiles(target: object) -> object:
    from tilelang_metal.alias_threadgroup_tiles import AliasThreadgroupTiles

    return AliasThreadgroupTiles(target)


PASSES = [
    PipelinePass("metal.SimdgroupAccumulators", "pre_layout", _simdgroup_accumulators),
    PipelinePass("metal.LimitVectorWidth", "post_parallel", _limit_vector_width),
    PipelinePass("metal.LegalizeScopes", "post_storage", _legalize_scopes),
    PipelinePass("metal.PackHalfVectors", "post_barriers", _pack_half_vectors),
    PipelinePass("metal.AliasThreadgroupTiles", "post_barriers", _alias_threadgroup_tiles),
]
