"""The adapter override and the feature helper, against the real wgpu."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def test_features_are_offered_optional_features(wgpu_backend):
    from tilelang_webgpu.adapter import OPTIONAL_FEATURES, features, limits

    assert features() <= set(OPTIONAL_FEATURES)
    assert limits()["max-compute-invocations-per-workgroup"] >= 256


@pytest.mark.parametrize("choice, backend", [("gl", "OpenGL"), ("vulkan", "Vulkan")])
def test_backend_override_picks_that_adapter(wgpu_backend, choice, backend):
    code = "from tilelang_webgpu.adapter import adapter_summary; print(adapter_summary())"
    env = dict(os.environ, TILELANG_WGPU_BACKEND=choice)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        assert "TILELANG_WGPU_BACKEND" in proc.stderr  # the error names the override
        pytest.skip(f"no {backend} adapter here: {proc.stderr.strip().splitlines()[-1]}")
    assert f"{backend}," in proc.stdout
