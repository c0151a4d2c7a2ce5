"""``python conformance/module_map.py`` without the conformance kit says so instead of crashing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "conformance" / "module_map.py"


@pytest.mark.skipif(not SCRIPT.is_file(), reason="not run from a checkout of the repository")
def test_without_the_kit_the_script_says_what_is_missing(tmp_path):
    missing = tmp_path / "no-kit" / "module_map.txt"
    done = subprocess.run([sys.executable, str(SCRIPT), "--map", str(missing)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"no module map at {missing}: the conformance kit is not there" in done.stderr
    assert "TILELANG_CONFORMANCE_DIR" in done.stderr


@pytest.mark.skipif(not SCRIPT.is_file(), reason="not run from a checkout of the repository")
def test_with_a_map_it_imports_each_module(tmp_path):
    module_map = tmp_path / "module_map.txt"
    module_map.write_text("# two paths\ntilelang.env\ntilelang.no_such_module\n")
    done = subprocess.run([sys.executable, str(SCRIPT), "--map", str(module_map)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "FAIL tilelang.no_such_module" in done.stdout and "1 of 2 module paths import" in done.stdout
