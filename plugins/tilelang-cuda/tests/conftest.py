"""``gpu``-marked tests skip cleanly without an NVIDIA GPU visible to torch."""

from __future__ import annotations

import pytest


def _has_gpu() -> bool:
    from tilelang_cuda.target import detect

    return detect() is not None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if any(item.get_closest_marker("gpu") for item in items) and not _has_gpu():
        skip = pytest.mark.skip(reason="needs an NVIDIA GPU visible to torch")
        for item in items:
            if item.get_closest_marker("gpu"):
                item.add_marker(skip)
