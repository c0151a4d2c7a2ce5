"""The plugin contract, read from the source tree: core imports no plugin, no plugin imports another, and plugins
use core's public modules only (no ``tilelang.*._private`` module: the backend SDK is public)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
CORE = ROOT / "core" / "src" / "tilelang"
PLUGINS = sorted(p for p in (ROOT / "plugins").glob("tilelang-*/src/tilelang_*") if p.is_dir())
ALLOWED_PRIVATE = {"_ffi_api", "_version"}  # the reference's own module names (tilelang._ffi_api ...)


def _imports(path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` for every import in `path` (``from a import b`` also yields ``a.b``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def _violations(root: Path, bad: callable) -> list[str]:
    return [f"{path.relative_to(ROOT)}:{line}: {module}" for path in sorted(root.rglob("*.py"))
            for line, module in _imports(path) if bad(module)]


def test_plugins_found() -> None:
    assert {p.name for p in PLUGINS} >= {"tilelang_cpu", "tilelang_cuda", "tilelang_rocm", "tilelang_metal",
                                        "tilelang_webgpu"}


def test_core_imports_no_plugin() -> None:
    assert _violations(CORE, lambda m: m.split(".")[0].startswith("tilelang_")) == []


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_plugin_imports_no_other_plugin(plugin: Path) -> None:
    own = plugin.name
    assert _violations(plugin, lambda m: m.split(".")[0].startswith("tilelang_") and m.split(".")[0] != own) == []


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_plugin_uses_public_core_modules_only(plugin: Path) -> None:
    def private(module: str) -> bool:
        parts = module.split(".")
        return parts[0] == "tilelang" and any(p.startswith("_") and not p.startswith("__") and p not in ALLOWED_PRIVATE
                                              for p in parts[1:])

    assert _violations(plugin, private) == []


PER_KIND_HOOKS = {"tilelang_artifact_built", "tilelang_postprocess_kernel_source"}


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_plugin_codegen_products_go_through_the_device_codegen(plugin: Path) -> None:
    """A backend's own source rewrites and binaries are its `DeviceCodegen`'s ``postprocess`` / ``build`` /
    ``finalize`` results, not per-kind implementations of the cross-cutting hooks."""
    defined = [f"{path.relative_to(ROOT)}:{node.lineno}: {node.name}" for path in sorted(plugin.rglob("*.py"))
               for node in ast.walk(ast.parse(path.read_text(), str(path)))
               if isinstance(node, ast.FunctionDef) and node.name in PER_KIND_HOOKS]
    assert defined == []


# ------------------------------------------------------------------- third parties: the SDK and public packages only
PUBLIC = {line.strip() for line in (ROOT / "docs" / "public_modules.txt").read_text().splitlines()
          if line.strip() and not line.startswith("#")}
SDK_MODULES = {"tilelang.backend.sdk", "tilelang.testing.backend_suite"}


def _outside_sdk(root: Path) -> list[str]:
    """Imports of `tilelang` modules in `root` other than the SDK and the public packages (``from pkg import x``
    counts as ``pkg``)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module] if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
                     else [])
            found += [f"{path.relative_to(root)}:{node.lineno}: {m}" for m in names
                      if m.split(".")[0] == "tilelang" and m not in PUBLIC | SDK_MODULES]
    return found


# the in-tree backends held to the SDK too (issue 29)
SDK_ONLY_PLUGINS = ("tilelang_cpu", "tilelang_cuda", "tilelang_webgpu", "tilelang_metal", "tilelang_rocm")


@pytest.mark.parametrize("plugin", SDK_ONLY_PLUGINS)
def test_in_tree_plugin_uses_the_sdk_only(plugin: str) -> None:
    src = ROOT / "plugins" / plugin.replace("_", "-") / "src"
    assert (src / plugin).is_dir()
    assert _outside_sdk(src) == []


def test_the_example_third_party_backend_uses_the_sdk_only() -> None:
    assert _outside_sdk(ROOT / "examples" / "third_party_backend" / "src") == []


def test_a_scaffolded_backend_uses_the_sdk_only(tmp_path: Path) -> None:
    from tilelang.backend.scaffold import new_backend

    new_backend("archdemo", tmp_path / "tilelang-archdemo")
    assert _outside_sdk(tmp_path / "tilelang-archdemo") == []
