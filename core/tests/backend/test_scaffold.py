"""``tilelang backend new``: what it writes, and the names and directories it refuses (installing the result and
running its tests is the ``third-party`` nox session's job)."""

from __future__ import annotations

import importlib.util

import pytest
import tomllib

from tilelang import cli
from tilelang.backend import Backend
from tilelang.backend.scaffold import ScaffoldError, new_backend


def test_writes_an_installable_distribution(tmp_path, capsys):
    root = tmp_path / "tilelang-mychip"
    assert cli.main(["backend", "new", "mychip", "--dir", str(root), "--description", "My chip"]) == 0
    out = capsys.readouterr().out
    assert "wrote tilelang-mychip" in out and "pytest" in out
    meta = tomllib.loads((root / "pyproject.toml").read_text())
    assert meta["project"]["name"] == "tilelang-mychip" and meta["project"]["description"] == "My chip"
    assert meta["project"]["entry-points"]["tilelang.backends"] == {"mychip": "tilelang_mychip.backend:BACKEND"}
    # the manifest imports and validates without being installed; its tests run the corpus on the kind
    spec = importlib.util.spec_from_file_location("scaffolded_backend", root / "src/tilelang_mychip/backend.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert isinstance(module.BACKEND, Backend) and module.BACKEND.target_kinds == ("mychip",)
    tests = (root / "tests/test_mychip_backend.py").read_text()
    assert 'TARGET = "mychip"' in tests and all(f"def test_{w}" in tests for w in ("tilelang_compile", "jit",
                                                                                     "autotune"))


@pytest.mark.parametrize(("name", "why"), [("My-Chip", "lowercase Python identifier"), ("class", "identifier"),
                                           ("llvm", "TVM's own target kinds"), ("c", "TVM's own target kinds")])
def test_bad_names_are_refused(tmp_path, name, why):
    with pytest.raises(ScaffoldError, match=why):
        new_backend(name, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_nothing_is_written_over_an_existing_directory(tmp_path, capsys):
    (tmp_path / "keep.txt").write_text("mine")
    assert cli.main(["backend", "new", "mychip", "--dir", str(tmp_path)]) == 2
    assert "not an empty directory: nothing was written" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]
