"""Core's tests run in every slim venv (core + one backend): tests that need a backend say which.

``@pytest.mark.backend("llvm")`` (or ``pytestmark = pytest.mark.backend("llvm")``) skips the test, with the
distribution to install as the reason, when no installed backend serves that target kind.
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from tilelang.backend import plugins
    from tilelang.errors import distribution_for

    installed = set(plugins.installed_kinds())
    for item in items:
        for mark in item.iter_markers("backend"):
            missing = [kind for kind in mark.args if kind not in installed]
            if missing:
                dists = ", ".join(sorted({distribution_for(k) for k in missing}))
                item.add_marker(pytest.mark.skip(reason=f"needs a backend for {missing} (install {dists})"))
