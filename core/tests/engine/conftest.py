import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import pytest

GENERIC_OPTIONS = {"cuda": {"has_threads": True}, "webgpu": {"has_threads": True, "static_shared_memory": True}}


@pytest.fixture
def core_only(monkeypatch):
    """Hide what installed backends register for GPU kinds: only core's generic lowering is exercised."""
    from tilelang.backend.target import kind_of
    from tilelang.backend.tile_ops import ANY_TARGET, tile_op_impls_for
    from tilelang.transform import lower_tile_ops, pipeline
    from tilelang.transform import utils as transform_utils

    def generic_impl(op, target, ctx=None):
        return next(i for i in tile_op_impls_for(op, {"kind": ANY_TARGET}) if i.name == "generic")

    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")  # kernels built so must not reach the cache of later tests
    monkeypatch.setattr(pipeline, "passes_at", lambda point, target: [])
    monkeypatch.setattr(lower_tile_ops, "resolve_tile_op_impl", generic_impl)
    monkeypatch.setattr(transform_utils, "pipeline_options", lambda target: GENERIC_OPTIONS.get(kind_of(target), {}))
