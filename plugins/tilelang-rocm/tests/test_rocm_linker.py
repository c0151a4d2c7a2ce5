"""Which ld.lld links code objects: ROCm's own, then PATH, then the LLD of the ``ziglang`` distribution (the
``lld`` extra), so a pip-only install builds hsaco; `tilelang backends` says which one is used, and with none the
error names the extra. ziglang (~400 MB) is only an extra: a plain install does not pull it."""

from __future__ import annotations

import importlib.util
import os
import stat
import sys
import warnings
from pathlib import Path

import pytest

from tilelang.testing.corpus import CORPUS
from tilelang_rocm.backend import find_ld_lld, toolchain

HAS_ZIGLANG = importlib.util.find_spec("ziglang") is not None


def _fake_lld(folder: Path, name: str = "ld.lld") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / name
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return exe


@pytest.fixture
def no_system_lld(tmp_path, monkeypatch):
    """PATH with the interpreter's folder only (no ld.lld), no ROCm, no override."""
    if os.path.exists("/opt/rocm/llvm/bin/ld.lld"):
        pytest.skip("a ROCm install provides ld.lld here")
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable))
    monkeypatch.setenv("ROCM_PATH", str(tmp_path / "no-rocm"))
    monkeypatch.delenv("TILELANG_LD_LLD", raising=False)


def test_rocm_path_comes_first(tmp_path, monkeypatch):
    rocm = _fake_lld(tmp_path / "rocm" / "llvm" / "bin")
    _fake_lld(tmp_path / "bin", "ld.lld-22")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setenv("ROCM_PATH", str(tmp_path / "rocm"))
    monkeypatch.delenv("TILELANG_LD_LLD", raising=False)
    assert find_ld_lld() == [str(rocm)]


def test_path_before_ziglang(tmp_path, monkeypatch, no_system_lld):
    on_path = _fake_lld(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    assert find_ld_lld() == [str(on_path)]


def test_override(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_LD_LLD", "/custom/ld.lld")
    assert find_ld_lld() == ["/custom/ld.lld"]


@pytest.mark.skipif(not HAS_ZIGLANG, reason="the ziglang distribution (`pip install \"tilelang-rocm[lld]\"`) is not "
                    "installed")
def test_ziglang_lld_links_a_corpus_build(no_system_lld):
    """With no system LLD, the corpus flash attention and a GEMM link for gfx942 through ``zig ld.lld``."""
    import tilelang
    from tilelang_rocm.compiler import ELF_MAGIC, finalize

    command = find_ld_lld()
    assert command is not None and command[-1] == "ld.lld" and "ziglang" in command[0]
    (lld_line,) = [t for t in toolchain() if t.name == "ld.lld"]
    assert lld_line.ok and "ziglang" in lld_line.detail
    for name in ("flash_attention", "gemm_nn"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            artifact = finalize(tilelang.lower(CORPUS[name]().prim_func(), target={"kind": "rocm", "mcpu": "gfx942"}))
        hsaco = artifact.files["kernel.hsaco"]
        assert hsaco[:4] == ELF_MAGIC and int.from_bytes(hsaco[18:20], "little") == 224  # EM_AMDGPU
        assert "v_mfma" in artifact.kernel_source


def test_without_any_lld_the_error_says_how_to_get_one(no_system_lld, monkeypatch):
    from tilelang.errors import ToolchainMissing
    from tilelang.testing.tirx_kernels import build_through_registry, vector_add_gpu

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ziglang" else _spec(name, *a))
    assert find_ld_lld() is None
    (lld_line,) = [t for t in toolchain() if t.name == "ld.lld"]
    assert not lld_line.ok and 'pip install "tilelang-rocm[lld]"' in lld_line.detail
    with pytest.raises(ToolchainMissing, match=r'pip install "tilelang-rocm\[lld\]"'):
        build_through_registry(vector_add_gpu(), {"kind": "rocm", "mcpu": "gfx942"})


_spec = importlib.util.find_spec


def test_ziglang_is_only_the_lld_extra():
    """The installed metadata: tilelang-rocm alone requires no ziglang; ``[lld]`` adds it."""
    from importlib import metadata

    requires = metadata.requires("tilelang-rocm") or []
    zig = [r for r in requires if r.startswith("ziglang")]
    assert zig and all('extra == "lld"' in r for r in zig), requires
    assert "lld" in (metadata.metadata("tilelang-rocm").get_all("Provides-Extra") or [])
