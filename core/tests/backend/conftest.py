"""Fixtures for testing the plugin machinery without installing anything.

`fresh_registries` snapshots every registry and the plugin loader's state and restores them afterwards;
`fake_plugins` writes plugin packages into a temporary directory and serves their entry points through a
monkeypatched discovery function, exactly as importlib.metadata would.
"""

from __future__ import annotations

import sys
import textwrap

import pytest

from tilelang.backend import _registry, plugins
from tilelang.backend.plugins import EntryPointInfo


@pytest.fixture
def fresh_registries():
    from tilelang.backend import hooks, target

    snapshot = _registry.snapshot_all()
    detectors = (dict(target._TARGET_DETECTORS), set(target._mirrored_detectors))
    saved = (plugins._entry_points_cache, dict(plugins._states), set(plugins._kinds_done), set(plugins._reported))
    hook_plugins = set(map(id, hooks.plugin_manager().get_plugins()))
    yield
    pm = hooks.plugin_manager()
    for plugin in list(pm.get_plugins()):
        if id(plugin) not in hook_plugins:
            pm.unregister(plugin)
    _registry.restore_all(snapshot)
    plugins._entry_points_cache, states, kinds, reported = saved
    plugins._states.clear()
    plugins._states.update(states)
    plugins._kinds_done.clear()
    plugins._kinds_done.update(kinds)
    plugins._reported.clear()
    plugins._reported.update(reported)
    target._TARGET_DETECTORS.clear()
    target._TARGET_DETECTORS.update(detectors[0])
    target._mirrored_detectors.clear()
    target._mirrored_detectors.update(detectors[1])


def _drop_installed_plugins() -> None:
    """Remove what installed backends registered earlier in this process (another test may have loaded one), so
    only the fakes are visible; `fresh_registries` puts it back afterwards."""
    owners = set()
    for registry in _registry._all_registries:
        snap_entries, snap_lazy = registry._snapshot()
        owners |= {e.owner for entries in snap_entries.values() for e in entries}
        owners |= {owner for pending in snap_lazy.values() for _, owner in pending}
    for owner in owners - {None}:
        _registry.rollback_owner(owner)


class FakePlugins:
    """Writes fake plugin packages and exposes their entry points (and only those)."""

    def __init__(self, tmp_path, monkeypatch):
        self.root = tmp_path / "fake_site"
        self.root.mkdir()
        self.entry_points: list[EntryPointInfo] = []
        self.packages: list[str] = []
        monkeypatch.syspath_prepend(str(self.root))
        monkeypatch.setattr(plugins, "_read_entry_points", lambda: list(self.entry_points))
        plugins.reset()
        _drop_installed_plugins()

    def add(self, package: str, kinds: dict[str, str], backend_py: str, files: dict[str, str] | None = None,
            distribution: str | None = None) -> None:
        """Create package `package` with `backend.py` = `backend_py`; `kinds` maps entry-point name -> value."""
        pkg = self.root / package
        pkg.mkdir()
        (pkg / "__init__.py").write_text("")
        (pkg / "backend.py").write_text(textwrap.dedent(backend_py))
        for name, text in (files or {}).items():
            (pkg / name).write_text(textwrap.dedent(text))
        dist = distribution or package.replace("_", "-")
        self.entry_points.extend(EntryPointInfo(kind, value, dist, "1.0") for kind, value in kinds.items())
        self.packages.append(package)
        plugins.reset()

    def cleanup(self) -> None:
        for name in list(sys.modules):
            if any(name == p or name.startswith(p + ".") for p in self.packages):
                del sys.modules[name]
            if name.startswith("tilelang.") and sys.modules.get(name) is not None and any(
                    getattr(sys.modules[name], "__name__", "").startswith(p) for p in self.packages):
                del sys.modules[name]


@pytest.fixture
def fake_plugins(tmp_path, monkeypatch, fresh_registries):
    fakes = FakePlugins(tmp_path, monkeypatch)
    yield fakes
    fakes.cleanup()
    plugins.reset()
