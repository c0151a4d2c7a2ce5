"""`tilelang.rocm.target.find_rocm_path` / `check_hip_availability`: where a ROCm toolkit is, with none needed."""

from __future__ import annotations

import os

import pytest

from tilelang.rocm import target as rt


def test_rocm_path_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("ROCM_PATH", str(tmp_path))
    assert rt.find_rocm_path() == str(tmp_path)
    assert rt.check_hip_availability()


def test_rocm_path_from_hipcc_on_path(monkeypatch, tmp_path):
    bindir = tmp_path / "rocm" / "bin"
    bindir.mkdir(parents=True)
    hipcc = bindir / "hipcc"
    hipcc.write_text("#!/bin/sh\n")
    hipcc.chmod(0o755)
    monkeypatch.delenv("ROCM_PATH", raising=False)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    assert rt.find_rocm_path() == os.path.realpath(tmp_path / "rocm")
    assert rt.check_hip_availability()


def test_no_toolkit_means_not_available(monkeypatch, tmp_path):
    monkeypatch.delenv("ROCM_PATH", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    real_exists = os.path.exists
    monkeypatch.setattr(rt.os.path, "exists", lambda p: False if str(p).startswith("/opt/rocm") else real_exists(p))
    with pytest.raises(RuntimeError, match="Cannot find ROCm path: set ROCM_PATH"):
        rt.find_rocm_path()
    assert rt.check_hip_availability() is False
