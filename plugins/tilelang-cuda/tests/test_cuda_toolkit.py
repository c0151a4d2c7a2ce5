"""Finding the CUDA compiler pieces (`tilelang_cuda.toolkit`) without installing them: the compiler choice, the
error naming the pip package for each missing piece (cuda-bindings, libnvrtc, each header wheel), header discovery
through cuda-pathfinder (a stand-in module here), tools from the wheels, and what ``tilelang backends`` reports."""

from __future__ import annotations

import os
import stat
import sys
import types
import warnings

import pytest

from tilelang_cuda import toolkit
from tilelang_cuda.compiler import CudaCompileError


class _NotFound(RuntimeError):
    """Stands in for cuda.pathfinder.DynamicLibNotFoundError."""


def fake_pathfinder(headers: dict[str, tuple[str, str]] | None = None, lib: object = None,
                    tools: dict[str, str] | None = None, locate: bool = True) -> types.SimpleNamespace:
    """A cuda.pathfinder stand-in: `headers` {name: (dir, found_via)}, `lib` the LoadedDL (None: not found)."""
    headers, tools = headers or {}, tools or {}

    def load_nvidia_dynamic_lib(name):
        if lib is None:
            raise _NotFound(f"Failure finding lib{name}.so")
        return lib

    def locate_nvidia_header_directory(name):
        hit = headers.get(name)
        return None if hit is None else types.SimpleNamespace(abs_path=hit[0], found_via=hit[1])

    fake = types.SimpleNamespace(
        DynamicLibNotFoundError=_NotFound, load_nvidia_dynamic_lib=load_nvidia_dynamic_lib,
        find_nvidia_header_directory=lambda name: headers[name][0] if name in headers else None,
        find_nvidia_binary_utility=lambda name: tools.get(name))
    if locate:
        fake.locate_nvidia_header_directory = locate_nvidia_header_directory
    return fake


@pytest.fixture
def fresh(monkeypatch):
    """Toolkit look-ups made afresh (and forgotten afterwards); no compiler forced."""
    monkeypatch.delenv("TILELANG_CUDA_COMPILER", raising=False)
    monkeypatch.setattr(toolkit, "_PROBES", {})
    toolkit.nvrtc_headers.cache_clear()
    toolkit._nvrtc_library.cache_clear()
    yield monkeypatch
    toolkit.nvrtc_headers.cache_clear()
    toolkit._nvrtc_library.cache_clear()


def _header_tree(root, runtime=True, crt=True, cccl=True) -> dict[str, tuple[str, str]]:
    """Include directories laid out like CUDA 13's wheels (nvidia/cu13/include, .../include/cccl)."""
    inc = root / "nvidia" / "cu13" / "include"
    files = {"cudart": [], "cccl": []}
    if runtime:
        files["cudart"].append("cuda_fp16.h")
    if crt:
        files["cudart"].append("crt/host_defines.h")
    if cccl:
        files["cccl"].append("cuda/std/cstdint")
    dirs = {"cudart": inc, "cccl": inc / "cccl", "nvrtc": inc}
    for name, names in files.items():
        for rel in names:
            path = dirs[name] / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("// header\n")
    inc.mkdir(parents=True, exist_ok=True)
    return {name: (str(path), "site-packages") for name, path in dirs.items()}


def test_default_compiler_prefers_nvcc_then_nvrtc(fresh):
    fresh.setattr(toolkit, "find_nvcc", lambda: "/opt/cuda/bin/nvcc")
    assert toolkit.default_compiler() == "nvcc"
    fresh.setattr(toolkit, "find_nvcc", lambda: None)
    assert toolkit.default_compiler() == "nvrtc"
    fresh.setenv("TILELANG_CUDA_COMPILER", " NVCC ")
    assert toolkit.default_compiler() == "nvcc"
    fresh.setenv("TILELANG_CUDA_COMPILER", "clang")
    with pytest.raises(toolkit.CudaToolkitError, match="TILELANG_CUDA_COMPILER='clang'.*'nvcc' or 'nvrtc'"):
        toolkit.default_compiler()
    from tilelang_cuda.compiler import default_compiler

    with pytest.raises(CudaCompileError, match="not a CUDA compiler"):
        default_compiler()


def test_missing_cuda_bindings_names_the_extra(fresh):
    fresh.setitem(sys.modules, "cuda.bindings", None)
    with pytest.raises(toolkit.CudaToolkitError,
                       match=r'NVRTC needs cuda-bindings: pip install "tilelang-cuda\[nvrtc\]"'):
        toolkit.load_nvrtc()
    from tilelang_cuda.compiler import compile_source

    with pytest.raises(CudaCompileError, match=r"tilelang-cuda\[nvrtc\]"):
        compile_source('extern "C" __global__ void k() {}\n// no bindings\n', "sm_80", "nvrtc")


def test_missing_pathfinder_names_the_extra(fresh):
    fresh.setitem(sys.modules, "cuda.pathfinder", None)
    with pytest.raises(toolkit.CudaToolkitError, match=r"cuda-pathfinder: pip install \"tilelang-cuda\[nvrtc\]\""):
        toolkit.pathfinder()


def test_missing_libnvrtc_names_the_wheel_not_a_raw_pathfinder_error(fresh):
    fresh.setattr(toolkit, "pathfinder", lambda: fake_pathfinder(lib=None))
    with pytest.raises(toolkit.CudaToolkitError, match="pip install nvidia-cuda-nvrtc") as info:
        toolkit._nvrtc_library()
    assert not isinstance(info.value, _NotFound) and info.value.__cause__ is None
    loaded = types.SimpleNamespace(abs_path="/x/libnvrtc.so.13", found_via="site-packages")
    toolkit._nvrtc_library.cache_clear()
    fresh.setattr(toolkit, "pathfinder", lambda: fake_pathfinder(lib=loaded))
    assert toolkit._nvrtc_library() is loaded


@pytest.mark.parametrize(("present", "missing"), [
    ({}, ["nvidia-cuda-runtime", "nvidia-cuda-cccl"]),
    ({"runtime": True, "crt": True}, ["nvidia-cuda-cccl"]),
    ({"cccl": True}, ["nvidia-cuda-runtime"]),
])
def test_missing_headers_name_each_wheel(fresh, tmp_path, present, missing):
    tree = _header_tree(tmp_path, runtime=present.get("runtime", False), crt=present.get("crt", False),
                        cccl=present.get("cccl", False))
    fresh.setattr(toolkit, "pathfinder", lambda: fake_pathfinder(headers=tree))
    with pytest.raises(toolkit.CudaToolkitError, match="pip install " + " ".join(missing) + "`") as info:
        toolkit.nvrtc_headers()
    assert "tilelang-cuda[nvrtc]" in str(info.value) and "CUDA_HOME" in str(info.value)


def test_crt_headers_are_optional_and_reported(fresh, tmp_path):
    tree = _header_tree(tmp_path, crt=False)
    loaded = types.SimpleNamespace(abs_path="/w/nvidia/cu13/lib/libnvrtc.so.13", found_via="site-packages")
    fresh.setattr(toolkit, "pathfinder", lambda: fake_pathfinder(headers=tree, lib=loaded))
    fresh.setattr(toolkit, "nvrtc_version", lambda: (13, 5))
    assert len(toolkit.nvrtc_include_dirs()) == 2 and not toolkit.has_crt_headers()
    ok, detail = toolkit.nvrtc_status()
    assert ok and detail.startswith("13.5, /w/nvidia/cu13/lib/libnvrtc.so.13 (site-packages); headers from "
                                    "site-packages") and "pip install nvidia-cuda-crt" in detail
    (tmp_path / "nvidia" / "cu13" / "include" / "crt").mkdir()
    (tmp_path / "nvidia" / "cu13" / "include" / "crt" / "host_defines.h").write_text("")
    assert toolkit.has_crt_headers() and "crt" not in toolkit.nvrtc_status()[1]


@pytest.mark.parametrize(("header", "package"), [
    ("crt/mma.h", "nvidia-cuda-crt"), ("cuda/std/cstdint", "nvidia-cuda-cccl"), ("cub/cub.cuh", "nvidia-cuda-cccl"),
    ("cuda_fp16.h", "nvidia-cuda-runtime"), ("math_constants.h", "nvidia-cuda-runtime"),
])
def test_an_include_nvrtc_cannot_open_names_its_wheel(header, package):
    log = f'kernel.cu(3): catastrophic error: cannot open source file "{header}"\n  #include <{header}>\n'
    hint = toolkit.missing_include_hint(log)
    assert f"NVRTC could not open '{header}': `pip install {package}`" in hint
    assert toolkit.missing_include_hint("kernel.cu(1): error: expected a )") == ""


@pytest.mark.parametrize("locate", [True, False], ids=["locate", "older-pathfinder"])
def test_headers_found_through_pathfinder(fresh, tmp_path, locate):
    tree = _header_tree(tmp_path)
    fresh.setattr(toolkit, "pathfinder", lambda: fake_pathfinder(headers=tree, locate=locate))
    inc = str(tmp_path / "nvidia" / "cu13" / "include")
    assert toolkit.nvrtc_include_dirs() == [inc, os.path.join(inc, "cccl")]
    via = {name: where for name, _, where in toolkit.nvrtc_headers()}
    assert via == ({"cudart": "site-packages", "cccl": "site-packages", "nvrtc": "site-packages"} if locate
                   else {"cudart": "cuda-pathfinder", "cccl": "cuda-pathfinder", "nvrtc": "cuda-pathfinder"})


def test_sass_uses_a_tool_from_the_wheels(fresh, tmp_path):
    import tilelang_cuda.compiler as comp

    tool = tmp_path / "cuobjdump"
    tool.write_text('#!/bin/sh\necho "SASS of $2 from the wheel tool ($1)"\n')
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    fresh.setattr(toolkit, "pathfinder", lambda: fake_pathfinder(tools={"cuobjdump": str(tool)}))
    fresh.setattr(comp.shutil, "which", lambda name: None)
    assert toolkit.find_tool("cuobjdump") == str(tool)
    assert toolkit.find_tool("nvdisasm") is None or "nvidia" in toolkit.find_tool("nvdisasm")
    out = comp.sass_of(b"\x7fELF")
    assert "from the wheel tool (-sass)" in out and "kernel.cubin" in out


def _fake_nvcc(tmp_path) -> str:
    """An nvcc stand-in that "compiles" (writes its -o file), so the probe compile passes."""
    tool = tmp_path / "bin" / "nvcc"
    tool.parent.mkdir(parents=True, exist_ok=True)
    tool.write_text('#!/bin/sh\nout=""\nwhile [ $# -gt 0 ]; do\n  if [ "$1" = "-o" ]; then out="$2"; shift; fi\n'
                    '  shift\ndone\nprintf "\\177ELF" > "$out"\n')
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    return str(tool)


def test_toolchain_report_says_which_compiler(fresh, tmp_path):
    from tilelang_cuda.backend import BACKEND

    fresh.setitem(sys.modules, "cuda.bindings", None)
    fresh.setattr(toolkit, "find_nvcc", lambda: None)
    lines = {t.name: t for t in BACKEND.toolchain_report()}
    assert list(lines)[:3] == ["compiler", "nvcc", "nvrtc"]
    compiler = lines["compiler"]
    assert not compiler.ok and compiler.detail.startswith("nvrtc (no nvcc found): NVRTC needs cuda-bindings")
    assert not lines["nvcc"].ok and "nvidia-cuda-nvcc" in lines["nvcc"].detail
    assert not lines["nvrtc"].ok and "tilelang-cuda[nvrtc]" in lines["nvrtc"].detail

    nvcc = _fake_nvcc(tmp_path)
    fresh.setattr(toolkit, "find_nvcc", lambda: nvcc)
    lines = {t.name: t for t in BACKEND.toolchain_report()}
    assert lines["compiler"].ok and lines["compiler"].detail == "nvcc (preferred when found)"
    assert lines["nvcc"].ok and lines["nvcc"].detail == f"{nvcc} (release ?)"
    fresh.setattr(toolkit, "find_nvcc", lambda: "/nonexistent/bin/nvcc")  # found, but it cannot even start
    lines = {t.name: t for t in BACKEND.toolchain_report()}
    assert lines["compiler"].detail.startswith("nvrtc (nvcc found but cannot compile here): NVRTC needs")
    assert not lines["nvcc"].ok and lines["nvcc"].detail.startswith("/nonexistent/bin/nvcc cannot compile here: ")
    fresh.setenv("TILELANG_CUDA_COMPILER", "nvrtc")
    lines = {t.name: t for t in BACKEND.toolchain_report()}
    assert lines["compiler"].detail.startswith("nvrtc (set by TILELANG_CUDA_COMPILER): NVRTC needs cuda-bindings")


def test_cli_backends_lists_the_compiler_line(fresh, capsys, tmp_path):
    from tilelang import cli

    nvcc = _fake_nvcc(tmp_path)
    fresh.setattr(toolkit, "find_nvcc", lambda: nvcc)
    cli.main(["backends"])
    out = capsys.readouterr().out
    assert "toolchain compiler" in out and "nvcc (preferred when found)" in out


def test_lowering_without_any_compiler_keeps_the_source_and_launch_names_the_extra(fresh):
    import tilelang
    import tilelang_cuda.compiler as comp
    from tilelang.testing import corpus

    fresh.setattr(comp, "_MEMO", {})  # a kernel compiled earlier in this process would be a memo hit
    fresh.setitem(sys.modules, "cuda.bindings", None)
    fresh.setattr(toolkit, "find_nvcc", lambda: None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        artifact = tilelang.lower(corpus.CORPUS["elementwise_add"]().prim_func(),
                                  target={"kind": "cuda", "arch": "sm_80"})
    assert 'extern "C" __global__' in artifact.kernel_source
    assert artifact.metadata["cuda_compiler"] == "unavailable" and "kernel.cubin" not in artifact.files
    with pytest.raises(CudaCompileError, match=r'pip install "tilelang-cuda\[nvrtc\]"'):
        comp.compile_artifact(artifact)
