import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def options(monkeypatch):
    """Set the pipeline_options every pass sees, whatever the target: ``options({"has_threads": False})``."""
    from tilelang.transform import utils as transform_utils

    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")  # kernels built so must not reach the cache of later tests

    def set_options(opts):
        monkeypatch.setattr(transform_utils, "pipeline_options", lambda target: dict(opts))

    return set_options
