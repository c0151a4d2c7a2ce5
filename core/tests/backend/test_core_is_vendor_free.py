"""Core carries no vendor toolchain (issue 29): no nvcc / NVRTC / HIP / CuTe DSL / CUDA-driver code under
core/src, read from the source tree; the reference's paths of that code say which distribution provides it when
the plugin is absent."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
CORE = ROOT / "core" / "src" / "tilelang"

# module or package names that are a vendor toolchain's code (the reference's contrib/nvcc.py, jit/adapter/nvrtc/, ...)
VENDOR_FILE = re.compile(r"nvcc|nvrtc|hipcc|hiprtc|cutedsl|cute_dsl|cuda_driver|cuda_binary|hip_resource|iket"
                         r"|^rocm\.py$")
# packages that drive a vendor toolchain or runtime: cuda-python (cuda.bindings), the CuTe DSL, NVIDIA's wheels, HIP
VENDOR_PACKAGES = {"cuda", "cutlass", "nvidia", "hip", "hiprtc", "pycuda", "cupy"}
# a vendor runtime loaded or called from Python: shared libraries, driver / NVRTC / HIP entry points
VENDOR_SYMBOL = re.compile(r"\blib(cuda|cudart|nvrtc|nvJitLink|amdhip64|hiprtc)\b|\bcu(Module|Launch|Init|Ctx)\w*"
                           r"|\bnvrtc[A-Z]\w*|\bhip(Module|Launch|Malloc)\w*|\bcuda(DeviceGetAttribute|Malloc)\w*")
# a vendor package's module named in a string (importlib.import_module("cuda.bindings.driver"), find_spec(...))
VENDOR_MODULE = re.compile(r"^(cuda\.(bindings|core|cudart|nvrtc)|cutlass\.cute|nvidia\.cuda_\w+|hip\.\w+|pycuda|cupy)"
                           r"(\.[\w.]+)?$")
# the vendor compilers, as a program to run
VENDOR_PROGRAMS = {"nvcc", "hipcc", "ld.lld", "clang-offload-bundler", "ptxas", "cuobjdump", "nvdisasm"}
# string constants naming a vendor program that core may keep, with the reason
ALLOWED_PROGRAMS = {
    ("env.py", "nvcc"): "tilelang.env.CUDA_HOME (reference API) is found from nvcc's location on PATH",
    ("env.py", "hipcc"): "tilelang.env.ROCM_HOME (reference API) is found from hipcc's location on PATH",
    ("contrib/cc.py", "nvcc"): "the reference's cc.create_shared(cc='nvcc') passes -shared without -fPIC",
}


def _sources() -> list[Path]:
    return sorted(CORE.rglob("*.py"))


def _code_strings(tree: ast.AST) -> list[ast.Constant]:
    """String constants that are not docstrings."""
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in docstrings]


def _vendor_code(path: Path) -> list[str]:
    rel = path.relative_to(CORE).as_posix()
    found = [f"{rel}: a vendor toolchain module" for part in path.relative_to(CORE).parts if VENDOR_FILE.search(part)]
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module] if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 else [])
        found += [f"{rel}:{node.lineno}: imports {name}" for name in names if name.split(".")[0] in VENDOR_PACKAGES]
    for const in _code_strings(tree):
        text = const.value
        if VENDOR_SYMBOL.search(text) or VENDOR_MODULE.match(text):
            found.append(f"{rel}:{const.lineno}: {text[:60]!r}")
        elif text in VENDOR_PROGRAMS and (rel, text) not in ALLOWED_PROGRAMS:
            found.append(f"{rel}:{const.lineno}: runs {text!r}")
    return found


def test_core_sources_hold_no_vendor_toolchain_code() -> None:
    found = [line for path in _sources() for line in _vendor_code(path)]
    assert found == [], "vendor toolchain code belongs in its backend's plugin:\n" + "\n".join(found)


def test_the_scan_finds_what_it_forbids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The criterion catches each kind of vendor code (so an empty scan means something)."""
    root = tmp_path / "tilelang"
    (root / "contrib").mkdir(parents=True)
    (root / "contrib" / "nvcc.py").write_text('"""Compile with nvcc and libcudart."""\n')
    (root / "driver.py").write_text(
        'from cuda.bindings import driver\nimport ctypes\nctypes.CDLL("libcuda.so.1")\n'
        'def f(): return driver.cuModuleLoadData\nCMD = ["hipcc", "-O3"]\nM = "cutlass.cute"\n')
    (root / "fine.py").write_text('"""Mentions nvcc, NVRTC and libcuda in a docstring only."""\nX = "cuda"\n')
    monkeypatch.setattr(sys.modules[__name__], "CORE", root)
    found = {p.name: _vendor_code(p) for p in sorted(root.rglob("*.py"))}
    assert found["nvcc.py"] == ["contrib/nvcc.py: a vendor toolchain module"]
    assert found["fine.py"] == []
    assert sorted(line.split(": ", 1)[1] for line in found["driver.py"]) == [
        "'cutlass.cute'", "'libcuda.so.1'", "imports cuda.bindings", "runs 'hipcc'"]


def test_the_allowed_exceptions_still_exist() -> None:
    """Each allowed vendor program name is still used where the list says (else the entry is stale)."""
    for rel, program in ALLOWED_PROGRAMS:
        tree = ast.parse((CORE / rel).read_text())
        assert any(c.value == program for c in _code_strings(tree)), (rel, program)


MOVED = ["tilelang.contrib.nvcc", "tilelang.contrib.nvrtc", "tilelang.contrib.cutedsl.atomic",
         "tilelang.jit.adapter.nvrtc.adapter", "tilelang.jit.adapter.cutedsl", "tilelang.tools.cuda.iket",
         "tilelang.cache.cuda_binary_cache", "tilelang.carver.arch.driver", "tilelang.contrib.hipcc",
         "tilelang.contrib.rocm", "tilelang.contrib.hip_resource_info"]

PROBE = """
import sys, tilelang
for name in sys.argv[1:]:
    try:
        __import__(name)
        print("OK", name)
    except ImportError as exc:
        print(type(exc).__name__, name, exc)
try:
    from tilelang.contrib import nvcc
except ImportError as exc:
    print("FROM", exc)
"""


def test_without_the_plugin_the_reference_paths_name_the_distribution() -> None:
    """With the CUDA and ROCm backends absent (blocked here, as in a slim CPU install), each reference path of
    their toolchain code raises a ModuleNotFoundError that says what to install; core's own packages import."""
    import os

    env = {**os.environ, "TILELANG_BLOCK_PLUGINS": "cuda,cutedsl,rocm,hip"}
    done = subprocess.run([sys.executable, "-c", PROBE, *MOVED, "tilelang.contrib.cc", "tilelang.carver.arch"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for name in MOVED:
        line = next(ln for ln in lines if ln.split(" ")[1:2] == [name])
        dist = "tilelang-rocm" if "hip" in name or name.endswith(".rocm") else "tilelang-cuda"
        assert line.startswith("BackendNotInstalled"), line
        assert "tilelang-core does not carry" in line and f"`pip install {dist}`" in line, line
    assert "OK tilelang.contrib.cc" in lines and "OK tilelang.carver.arch" in lines
    assert any(ln.startswith("FROM") and "pip install tilelang-cuda" in ln for ln in lines), lines


def test_an_installed_plugin_that_declares_no_alias_says_reinstall(monkeypatch: pytest.MonkeyPatch) -> None:
    from tilelang.backend import _alias, plugins
    from tilelang.errors import BackendNotInstalled

    monkeypatch.setattr(plugins, "module_aliases", lambda: {})
    monkeypatch.setattr(plugins, "entry_points", lambda: [
        plugins.EntryPointInfo("cuda", "tilelang_cuda.backend:BACKEND", "tilelang-cuda", "0.1.0")])
    with pytest.raises(BackendNotInstalled, match=r"declares no module for it .*--force-reinstall tilelang-cuda"):
        _alias.ModuleAliasFinder().find_spec("tilelang.contrib.nvcc")
    assert _alias.ModuleAliasFinder().find_spec("tilelang.contrib.no_such_module") is None
