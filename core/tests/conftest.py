"""Core's tests run in every slim venv (core + one backend): tests that need a backend say which.

``@pytest.mark.backend("llvm")`` (or ``pytestmark = pytest.mark.backend("llvm")``) skips the test, with the
distribution to install as the reason, when no installed backend serves that target kind. A test that asks
for a target kind whose backend is genuinely not installed here (it raises `BackendNotInstalled` for a kind
missing from ``installed_kinds()``) is reported as skipped for the same reason; with every backend installed
(the ``tests`` session) that never applies, so a wrong BackendNotInstalled still fails there.
"""

from __future__ import annotations

import pytest


def _missing_reason(kinds: list[str]) -> str | None:
    from tilelang.backend import plugins
    from tilelang.errors import distribution_for

    missing = [kind for kind in kinds if kind not in plugins.installed_kinds()]
    if not missing:
        return None
    dists = ", ".join(sorted({distribution_for(k) for k in missing}))
    return f"needs a backend for {missing} (install {dists})"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for mark in item.iter_markers("backend"):
            reason = _missing_reason(list(mark.args))
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    outcome = yield
    report = outcome.get_result()
    from tilelang.errors import BackendNotInstalled

    if report.failed and call.excinfo is not None and call.excinfo.errisinstance(BackendNotInstalled):
        reason = _missing_reason([call.excinfo.value.kind])
        if reason:
            path, lineno, _ = item.reportinfo()
            report.outcome = "skipped"
            report.longrepr = (str(path), (lineno or 0) + 1, f"Skipped: {reason}")
