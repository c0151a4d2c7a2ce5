"""Every ``T.<name>`` that the reference's examples and tests use (the USED lists of the conformance kit's
``missing_T_names.txt``) exists here; the ``cuda.*`` groups come from the CUDA dialect, so they count only when
tilelang-cuda is installed. Skipped when the kit is not beside this checkout."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import tilelang.language as T

KIT = Path(os.environ.get("TILELANG_CONFORMANCE_DIR")
           or Path(__file__).resolve().parents[3].parent / "shared" / "conformance")
NAMES = KIT / "missing_T_names.txt"


def _used_groups() -> dict[str, list[str]]:
    groups = {}
    for section in re.split(r"^## ", NAMES.read_text(), flags=re.M)[1:]:
        title = section.splitlines()[0].split(":")[0].strip()
        used = re.search(r"^USED \(files\): (.*)$", section, re.M)
        if used:
            groups[title] = [re.sub(r"\(\d+\)$", "", n.strip()) for n in used.group(1).split(",") if n.strip()]
    return groups


@pytest.mark.skipif(not NAMES.exists(), reason=f"conformance kit not found at {KIT}")
def test_every_used_reference_name_exists() -> None:
    from importlib.util import find_spec

    groups = _used_groups()
    assert len(groups) >= 5, groups.keys()
    cuda = find_spec("tilelang_cuda") is not None
    missing = {title: [n for n in names if not hasattr(T, n)] for title, names in groups.items()
               if cuda or not title.startswith("cuda")}
    assert {t: m for t, m in missing.items() if m} == {}
