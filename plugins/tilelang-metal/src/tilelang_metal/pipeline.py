"""The Metal backend's passes, in the order they run, at core's pipeline extension points."""

from __future__ import annotations

from tilelang.backend import PipelinePass


def _legalize_scopes(target: object) -> object:
    from tilelang_metal.legalize_scopes import LegalizeScopes

    return LegalizeScopes(target)


def _limit_vector_width(target: object) -> object:
    from tilelang_metal.limit_vector_width import LimitVectorWidth

    return LimitVectorWidth(target)


PASSES = [
    PipelinePass("metal.LimitVectorWidth", "post_parallel", _limit_vector_width),
    PipelinePass("metal.LegalizeScopes", "post_storage", _legalize_scopes),
]
