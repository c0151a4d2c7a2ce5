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
