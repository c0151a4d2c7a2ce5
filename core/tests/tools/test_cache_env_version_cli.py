"""``tilelang cache info|clear``, ``tilelang env`` and ``tilelang --version`` (through `tilelang.cli.main` and
``python -m tilelang``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from tilelang.backend import plugins
from tilelang.cache.store import DiskStore
from tilelang.cache.usage import cache_items
from tilelang.cli import main


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from tilelang.cache.manager import kernel_cache

    path = tmp_path / "tl-cache"
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(path))
    for name in ("TILELANG_DISABLE_CACHE", "TILELANG_CACHE_MAX_BYTES"):
        monkeypatch.delenv(name, raising=False)
    kernel_cache.enable()
    kernel_cache.clear(disk=False)
    yield path
    kernel_cache.clear(disk=False)


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _compile_cpu_kernel(scale: float) -> None:
    import torch

    import tilelang
    import tilelang.language as T

    @T.prim_func
    def scaled(A: T.Tensor((8, 8), "float32"), C: T.Tensor((8, 8), "float32")):
        with T.Kernel(1, is_cpu=True):
            for i, j in T.Parallel(8, 8):
                C[i, j] = A[i, j] * scale

    kernel = tilelang.compile(scaled, out_idx=[-1], target="cpu")
    a = torch.randn(8, 8)
    torch.testing.assert_close(kernel(a), a * scale)


@pytest.fixture
def filled(cache_dir: Path) -> DiskStore:
    """Two real CPU kernels plus two stored CUDA entries (files only; ``meta`` names their target)."""
    _compile_cpu_kernel(1.0)
    _compile_cpu_kernel(2.0)
    store = DiskStore()
    for key in ("c1" * 32, "c2" * 32):
        store.put(key, {"artifact.json": b"{}", "kernel.cubin": b"\x7fELF" * 500}, meta={"target": "cuda"})
    store.put_record("jit", "source-key", {"key": "c1" * 32})
    return store


@pytest.mark.backend("llvm")
def test_cache_info(filled, cache_dir, capsys, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_MAX_BYTES", "10G")
    code, out, _ = _cli(capsys, "cache", "info", "--json")
    report = json.loads(out)
    items = cache_items(filled)
    assert code == 0 and report["directory"] == str(cache_dir)
    assert report["entries"] == 4 and report["total_bytes"] == sum(i.size for i in items) > 0
    assert report["limit_bytes"] == 10 << 30
    assert report["per_target"] == {"cuda": 2, "llvm": 2}
    assert report["records"] >= 1 and report["records_bytes"] > 0
    code, out, _ = _cli(capsys, "cache", "info")
    assert code == 0 and str(cache_dir) in out and "entries:     4" in out and "10.0 GiB" in out
    assert "cuda 2, llvm 2" in out


def test_cache_info_on_an_empty_cache_and_a_bad_limit(cache_dir, capsys, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_MAX_BYTES", "lots")
    code, out, _ = _cli(capsys, "cache", "info")
    assert code == 0 and "entries:     0" in out and "invalid: TILELANG_CACHE_MAX_BYTES='lots'" in out


@pytest.mark.backend("llvm")
def test_cache_clear_needs_confirmation(filled, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", open(os.devnull))  # not a terminal: refuse without --yes
    code, _, err = _cli(capsys, "cache", "clear")
    assert code == 1 and "pass --yes" in err and len(cache_items(filled)) == 4
    code, out, _ = _cli(capsys, "cache", "clear", "--dry-run")
    assert code == 0 and out.count("would remove kernel") == 4 and len(cache_items(filled)) == 4

    class Terminal:
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdin", Terminal())
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    assert _cli(capsys, "cache", "clear")[0] == 1 and len(cache_items(filled)) == 4
    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    code, out, _ = _cli(capsys, "cache", "clear")
    assert code == 0 and "removed 4 item(s)" in out
    assert cache_items(filled) == [] and not (filled.root / "records").exists()


@pytest.mark.backend("llvm")
def test_cache_clear_by_target_and_age(filled, capsys):
    code, out, _ = _cli(capsys, "cache", "clear", "--target", "cuda", "--yes")
    assert code == 0 and "removed 2 item(s)" in out
    remaining = cache_items(filled)
    assert len(remaining) == 2 and {json.loads((i.path / "artifact.json").read_text())["target"]["kind"]
                                    for i in remaining} == {"llvm"}
    old = remaining[0]
    os.utime(old.path / "manifest.json", (1_000_000, 1_000_000))  # last used in 1970
    code, out, _ = _cli(capsys, "cache", "clear", "--older-than", "30d", "-y")
    assert code == 0 and "removed 1 item(s)" in out
    assert [i.key for i in cache_items(filled)] == [remaining[1].key]
    assert _cli(capsys, "cache", "clear", "--older-than", "1w", "--yes")[1].startswith("nothing to remove")


def test_cache_clear_rejects_a_bad_age(cache_dir, capsys):
    with pytest.raises(SystemExit) as info:
        main(["cache", "clear", "--older-than", "a while"])
    assert info.value.code == 2 and "'a while' is not a duration" in capsys.readouterr().err


def test_env_lists_every_setting_with_its_source(capsys, monkeypatch):
    from tilelang.env import Environment, EnvVar

    monkeypatch.setenv("TILELANG_CACHE_MAX_BYTES", "10G")
    monkeypatch.delenv("TILELANG_DEFAULT_TARGET", raising=False)
    code, out, _ = _cli(capsys, "env", "--json")
    rows = {r["name"]: r for r in json.loads(out)}
    declared = {v.key for v in vars(Environment).values() if isinstance(v, EnvVar)}
    assert code == 0 and declared | {"CUDA_HOME", "ROCM_HOME"} == set(rows)
    assert all(r["description"] for r in rows.values())  # every setting says what it is for
    assert _without_description(rows["TILELANG_CACHE_MAX_BYTES"]) == {
        "name": "TILELANG_CACHE_MAX_BYTES", "value": "10G", "source": "environment"}
    assert _without_description(rows["TILELANG_DEFAULT_TARGET"]) == {
        "name": "TILELANG_DEFAULT_TARGET", "value": "auto", "source": "default"}
    code, out, _ = _cli(capsys, "env")
    line = next(t for t in out.splitlines() if t.startswith("TILELANG_CACHE_MAX_BYTES "))
    assert line.split()[:3] == ["TILELANG_CACHE_MAX_BYTES", "10G", "[environment]"] and "disk cache" in line


def test_env_shows_values_forced_in_the_process(capsys, monkeypatch, tmp_path):
    from tilelang.env import Environment, env

    # like ``env.TILELANG_CACHE_DIR = ...``, undone afterwards (monkeypatching the attribute would leave the
    # value read before it forced for the rest of the session)
    monkeypatch.setattr(Environment.__dict__["TILELANG_CACHE_DIR"], "_forced_value", str(tmp_path))
    rows = {r["name"]: r for r in env.describe()}
    assert _without_description(rows["TILELANG_CACHE_DIR"]) == {
        "name": "TILELANG_CACHE_DIR", "value": str(tmp_path), "source": "set in this process"}


def _without_description(row: dict) -> dict:
    return {k: v for k, v in row.items() if k != "description"}


def _expected_versions() -> list[str]:
    lines = [f"tilelang-core {metadata.version('tilelang-core')}"]
    dists = sorted({(ep.distribution, ep.version) for ep in plugins.read_entry_points()})
    return lines + [f"{name} {version}" for name, version in dists]


def test_version_lists_core_and_every_backend(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    out = capsys.readouterr().out.splitlines()
    assert info.value.code == 0
    assert [" ".join(line.split()[:2]) for line in out] == _expected_versions()
    for ep in plugins.read_entry_points():
        line = next(t for t in out if t.startswith(ep.distribution + " "))
        assert ep.kind in line


def test_python_m_tilelang_version_imports_no_plugin():
    env = {k: v for k, v in os.environ.items() if k != "TILELANG_BLOCK_PLUGINS"}
    out = subprocess.run([sys.executable, "-m", "tilelang", "--version"], capture_output=True, text=True,
                         check=True, env=env).stdout.splitlines()
    assert [" ".join(line.split()[:2]) for line in out] == _expected_versions()
    probe = ("import sys\nfrom tilelang.cli import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n"
             "    pass\nprint(sorted(m for m in sys.modules if m.startswith('tilelang_')))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env)
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_version_marks_blocked_backends():
    if not plugins.read_entry_points():
        pytest.skip("no backend installed")
    env = {**os.environ, "TILELANG_DISABLE_PLUGIN_AUTOLOAD": "1"}
    out = subprocess.run([sys.executable, "-m", "tilelang", "--version"], capture_output=True, text=True,
                         check=True, env=env).stdout.splitlines()
    assert out[0].startswith("tilelang-core ") and "[blocked" not in out[0]
    assert all("[blocked by" in line for line in out[1:])
