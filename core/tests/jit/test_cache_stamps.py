"""Source stamps of the lowering packages: the listing kept in the cache is revalidated by stats alone, every edit
is still seen, pip-installed packages are told by their version, non-lowering subpackages are not stamped."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tilelang.cache import keys


def _tree(root: Path) -> Path:
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "sub" / "passes.py").write_text("PASS = 1\n")
    return root / "sub" / "passes.py"


def _bump(path: Path, text: str) -> None:
    path.write_text(text)
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))


def test_listing_is_reused_and_every_change_is_seen(tmp_path, monkeypatch):
    root = tmp_path / "pkg"
    source = _tree(root)
    walks = []
    real_walk = keys._walk
    monkeypatch.setattr(keys, "_walk", lambda *a: walks.append(a) or real_walk(*a))
    first = keys._root_stamp(str(root), frozenset())
    assert keys._root_stamp(str(root), frozenset()) == first and len(walks) == 1  # second process: stats only
    _bump(source, "PASS = 22\n")  # an edit in place: the folder's time does not change
    edited = keys._root_stamp(str(root), frozenset())
    assert edited != first and len(walks) == 2
    (root / "sub" / "extra.py").write_text("")  # a new module
    assert keys._root_stamp(str(root), frozenset()) not in (first, edited)
    (root / "sub" / "extra.py").unlink()
    assert keys._root_stamp(str(root), frozenset()) == edited  # back to the same files
    (root / "sub" / "__pycache__").mkdir()  # bytecode written: the folder changes, the stamp does not
    assert keys._root_stamp(str(root), frozenset()) == edited


def test_stamp_without_the_cache_walks(tmp_path, monkeypatch):
    root = tmp_path / "pkg"
    _tree(root)
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")
    assert keys._root_stamp(str(root), frozenset()) == keys.digest(keys._tree_stamp(str(root)))
    assert not (Path(os.environ["TILELANG_CACHE_DIR"]) / "records" / "stamps").exists()


def test_non_lowering_subpackages_are_not_stamped(tmp_path):
    root = tmp_path / "pkg"
    _tree(root)
    (root / "profiler").mkdir()
    (root / "profiler" / "bench.py").write_text("")
    names = [path for path, _, _ in keys._tree_stamp(str(root), frozenset({"profiler"}))]
    assert names == ["__init__.py", os.path.join("sub", "passes.py")]
    assert {"autotuner", "carver", "profiler", "testing", "tools"} == keys._NOT_LOWERING["tilelang"]


@pytest.mark.parametrize(("where", "installed"), [("lib/python3.11/site-packages/pkg", True),
                                                  ("usr/lib/python3/dist-packages/pkg", True),
                                                  ("work/src/pkg", False)])
def test_pip_installed_packages_are_told_by_their_version(where, installed):
    assert keys._installed(os.sep + where.replace("/", os.sep)) is installed
