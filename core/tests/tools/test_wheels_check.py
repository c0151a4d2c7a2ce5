"""The `wheels` nox session's deprecation check: what it flags in a build's output and what it leaves alone
(the lines below are real setuptools / pip / Python output)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("nox")
NOXFILE = Path(__file__).resolve().parents[3] / "noxfile.py"


@pytest.fixture(scope="module")
def noxfile():
    if not NOXFILE.is_file():
        pytest.skip("run from a checkout (noxfile.py is not installed)")
    spec = importlib.util.spec_from_file_location("tilelang_noxfile", NOXFILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FLAGGED = [
    "WARNING `project.license` as a TOML table is deprecated",  # python -m build relaying setuptools
    "/tmp/x/setuptools/config/_apply_pyprojecttoml.py:82: SetuptoolsDeprecationWarning: `project.license` as a "
    "TOML table is deprecated",
    "WARNING License classifiers are deprecated.",
    "By 2027-Feb-18, you need to update your project and remove deprecated calls",
    "DEPRECATION: Building 'x' using the legacy setup.py bdist_wheel mechanism, which will be removed in a future",
    "/usr/lib/python3/x.py:3: DeprecationWarning: pkg_resources is deprecated as an API.",
    "/usr/lib/python3/x.py:3: PendingDeprecationWarning: something",
]
CLEAN = [
    "copying build/lib/tilelang/utils/deprecated.py -> build/bdist.linux-x86_64/wheel/./tilelang/utils",
    "adding 'tilelang/utils/deprecated.py'",
    "warning: build_py: byte-compiling is disabled, skipping.",
    "Successfully built tilelang_core-0.1.0.tar.gz and tilelang_core-0.1.0-py3-none-any.whl",
]


@pytest.mark.parametrize("line", FLAGGED)
def test_deprecations_are_flagged(noxfile, line):
    assert noxfile.deprecations(f"running build\n{line}\ndone\n") == [line]


def test_ordinary_build_output_is_clean(noxfile):
    assert noxfile.deprecations("\n".join(CLEAN)) == []


def test_every_distribution_is_built(noxfile):
    root = NOXFILE.parent
    for name in noxfile.DISTRIBUTIONS:
        assert (root / name / "pyproject.toml").is_file(), name
    published = {p.parent.name for p in root.glob("plugins/*/pyproject.toml")}
    assert {Path(n).name for n in noxfile.DISTRIBUTIONS if n.startswith("plugins/")} == published
