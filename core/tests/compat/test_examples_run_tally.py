"""conformance/examples_run.py counts distinct kernels: a rebuild with the same name and device-source digest is
the same kernel; builds without a digest each count."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "conformance" / "examples_run.py"


def _runner():
    spec = importlib.util.spec_from_file_location("examples_run", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build(build_id, source=None, binary=True):
    return {"id": build_id, "kind": "build", "binary": binary, "ok": binary, "error": None,
            **({"source": source} if source else {})}


@pytest.mark.skipif(not SCRIPT.is_file(), reason="not run from a checkout of the repository")
def test_tally_counts_a_rebuild_of_the_same_source_once():
    run = _runner()
    results = {
        "same/a.py": {"builds": [_build("k", "aaaa"), _build("k#2", "aaaa")]},
        "differ/a.py": {"builds": [_build("k", "aaaa"), _build("k#2", "bbbb", binary=False)]},
        "none/a.py": {"builds": [_build("k"), _build("k#2")]},
        "other/a.py": {"builds": [_build("k", "aaaa")]},
        "other/b.py": {"builds": [_build("k", "aaaa")]},  # another script: its own kernel
        "late/a.py": {"builds": [_build("k", "aaaa", binary=False), _build("k#2", "aaaa")]},
        "names/a.py": {"builds": [_build("k", "aaaa"), _build("m", "aaaa")]},
    }
    table = run.tally(results)
    assert table["same"] == [1, 1, 1, 1]
    assert table["differ"] == [1, 2, 1, 0]
    assert table["none"] == [1, 2, 2, 1]
    assert table["other"] == [2, 2, 2, 2]
    assert table["late"] == [1, 1, 1, 1]  # the kernel reached a binary in one of its builds
    assert table["names"] == [1, 2, 2, 1]
    # the floor's ids stay those of the builds, rebuilds included
    assert "same/a.py::k#2" in run.build_ids(results)
