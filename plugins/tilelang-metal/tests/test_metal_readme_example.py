"""The README's first kernel (this distribution's user-facing page on PyPI) runs as written."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from tilelang.testing.markdown import python_blocks, run_page

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.gpu
@pytest.mark.skipif(sys.platform != "darwin" or not torch.backends.mps.is_available(), reason="needs macOS with MPS")
def test_the_readme_example_runs(tmp_path):
    assert python_blocks(README.read_text()), "the README shows no Python example"
    done = run_page(README, tmp_path, env={"TILELANG_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr
