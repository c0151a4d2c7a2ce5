"""Every distribution this repository publishes carries user-facing metadata: authors, classifiers, a project URL
and a README that tells a user what it is and how to install it (not a developer's file map); the meta-distribution
is not called `tilelang` (PyPI's reference TileLang); heavy toolchains are extras."""

from __future__ import annotations

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[3]
DISTRIBUTIONS = {".": "tilelang-suite", "core": "tilelang-core", **{
    f"plugins/tilelang-{p}": f"tilelang-{p}" for p in ("cpu", "cuda", "rocm", "metal", "webgpu")}}


def _project(folder: str) -> dict:
    with open(ROOT / folder / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]


@pytest.mark.parametrize("folder", sorted(DISTRIBUTIONS))
def test_metadata_a_user_reads(folder):
    if not (ROOT / folder / "pyproject.toml").is_file():
        pytest.skip("not run from a checkout of the repository")
    project = _project(folder)
    assert project["name"] == DISTRIBUTIONS[folder]
    assert project["authors"] and project["urls"] and project["keywords"]
    classifiers = project["classifiers"]
    assert any(c.startswith("Development Status ::") for c in classifiers)
    assert any(c.startswith("Programming Language :: Python :: 3") for c in classifiers)
    assert not any(c.startswith("License ::") for c in classifiers)  # the SPDX `license` field says it (PEP 639)
    readme = (ROOT / folder / project["readme"]).read_text()
    assert readme.startswith(f"# {project['name']}\n")
    assert "## Install" in readme and "pip install" in readme and "```python" in readme
    assert "| file |" not in readme  # developer file maps live in DEVELOPING.md


def test_the_meta_distribution_is_not_the_reference_name():
    if not (ROOT / "pyproject.toml").is_file():
        pytest.skip("not run from a checkout of the repository")
    project = _project(".")
    assert project["name"] != "tilelang"
    assert "PyPI that name is the reference TileLang" in (ROOT / project["readme"]).read_text()


def test_toolchains_from_pip_are_extras():
    if not (ROOT / "plugins").is_dir():
        pytest.skip("not run from a checkout of the repository")
    rocm = _project("plugins/tilelang-rocm")
    assert not any(d.startswith("ziglang") for d in rocm["dependencies"])  # ~400 MB: only when asked for
    assert rocm["optional-dependencies"]["lld"] == ["ziglang>=0.17"]
    cuda = _project("plugins/tilelang-cuda")["optional-dependencies"]
    assert any(d.startswith("nvidia-cuda-nvcc") for d in cuda["nvcc"])  # the reference's `nvcc` extra
    assert any(d.startswith("nvidia-cuda-nvrtc") for d in cuda["nvrtc"])
