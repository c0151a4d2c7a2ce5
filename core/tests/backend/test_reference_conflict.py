"""``import tilelang`` refuses to run next to the reference TileLang (PyPI ``tilelang``), whose install shares the
``tilelang`` package directory, and says how to fix it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import tilelang
from tilelang import _conflict


def _import_tilelang(pythonpath: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([pythonpath, os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", "import tilelang"], capture_output=True, text=True, env=env,
                          timeout=120)


def _dist_info(root, name: str, *requires: str) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    lines = ["Metadata-Version: 2.1", f"Name: {name.split('-')[0]}", "Version: 0.1.15",
             *(f"Requires-Dist: {r}" for r in requires)]
    (folder / "METADATA").write_text("\n".join(lines) + "\n")


def test_the_reference_wheel_on_the_path_stops_the_import_with_the_fix(tmp_path):
    _dist_info(tmp_path, "tilelang-0.1.15.dist-info", "apache-tvm-ffi", "z3-solver")
    proc = _import_tilelang(str(tmp_path))
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("tilelang._conflict.ReferenceTileLangInstalled: the reference TileLang (PyPI `tilelang`, "
                           f"found at {tmp_path / 'tilelang-0.1.15.dist-info'})")
    assert "pip uninstall -y tilelang tilelang-core" in last


def test_files_only_the_reference_ships_inside_the_package_stop_the_import(tmp_path):
    copy = tmp_path / "site" / "tilelang"
    shutil.copytree(os.path.dirname(tilelang.__file__), copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert _import_tilelang(str(tmp_path / "site")).returncode == 0
    (copy / "3rdparty").mkdir()  # what `pip install tilelang` (the reference) leaves in the shared directory
    proc = _import_tilelang(str(tmp_path / "site"))
    assert proc.returncode == 1 and f"found at {copy / '3rdparty'}" in proc.stderr


def test_this_projects_own_distributions_are_not_the_reference(tmp_path):
    _dist_info(tmp_path, "tilelang-0.1.0.dist-info", "tilelang-core<0.2,>=0.1")  # the former meta-distribution
    _dist_info(tmp_path, "tilelang_core-0.1.0.dist-info", "apache-tvm==0.27.0.post1")
    assert _conflict.find_reference(path=[str(tmp_path)]) is None
    assert _import_tilelang(str(tmp_path)).returncode == 0
