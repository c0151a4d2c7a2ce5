"""Fixtures for the WebGPU execution tests: skip cleanly where wgpu has no adapter."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def wgpu_backend():
    """The ``wgpu`` execution backend, or a skip saying why it cannot run here."""
    from tilelang_webgpu.execution_backend import WgpuBackend

    backend = WgpuBackend()
    reason = backend.unavailable_reason()
    if reason is not None:
        pytest.skip(f"wgpu cannot run kernels here: {reason}")
    return backend


@pytest.fixture
def cyclic_fragments(monkeypatch):
    """Lower with the cyclic fragment layout (``fragment_vector_lanes = 1``) for tests pinning that layout's
    paths; the kernel cache is bypassed (its key does not hold the override)."""
    from tilelang.transform import utils as transform_utils

    registered = transform_utils.pipeline_options
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")
    monkeypatch.setattr(transform_utils, "pipeline_options",
                        lambda target: {**registered(target), "fragment_vector_lanes": 1})
