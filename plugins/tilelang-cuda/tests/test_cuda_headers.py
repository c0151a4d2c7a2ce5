"""The device-helper headers (``tilelang_cuda/*.cuh``): each compiles on its own for every architecture, every helper
a header declares for an architecture assembles for it, and a generated kernel includes only the headers it calls."""

from __future__ import annotations

import re
import shutil
import subprocess
import warnings
from pathlib import Path

import pytest
from cuda_helpers import needs_nvcc

import tilelang
import tilelang.language as T
from tilelang_cuda.intrinsics import device, header_for, include_dir

HEADERS = [p.stem for p in device.header_paths()]
# non-template functions defined once in their header: a kernel can take their address
_FUNCTION = re.compile(r"^(?:__host__ )?__device__ __forceinline__ [\w: ]+?[ *&](tl_\w+)\(", re.M)
_UNDEFINED = re.compile(r'identifier "(tl_\w+)" is undefined')


def _archs(topic: str) -> list[str]:
    text = (include_dir() / "tilelang_cuda" / f"{topic}.cuh").read_text()
    return ["sm_80", "sm_90a", *(["sm_100a"] if "__CUDA_ARCH__ >= 1000" in text else [])]


def _functions(topic: str) -> list[str]:
    text = (include_dir() / "tilelang_cuda" / f"{topic}.cuh").read_text()
    names = _FUNCTION.findall(text)
    templates = set(re.findall(r"template <[^>]*>\s*(?:__host__ )?__device__ __forceinline__ [^(]*\b(tl_\w+)\(", text))
    return sorted(n for n in set(names) - templates if text.count(f" {n}(") == 1)  # no overload, no template


def _nvcc(tmp: Path, text: str, arch: str) -> subprocess.CompletedProcess:
    src = tmp / f"tu_{arch}.cu"
    src.write_text(text)
    # -gencode, not -arch: `-c -arch=sm_100a` also embeds compute_100 PTX, which lacks the `a` features
    number = arch.removeprefix("sm_")
    return subprocess.run(["nvcc", "-c", "-x", "cu", "-gencode", f"arch=compute_{number},code=sm_{number}",
                           "-std=c++17", f"-I{include_dir()}",
                           "-o", str(tmp / f"tu_{arch}.o"), str(src)], capture_output=True, text=True, timeout=300)


def _tu(topic: str, names: list[str]) -> str:
    # one kernel per helper (ptxas refuses a kernel reaching both tcgen05 cta_group::1 and ::2)
    kernels = "".join(f'extern "C" __global__ void take_{n}(void** sink) {{ *sink = (void*)&{n}; }}\n' for n in names)
    return f'#include "tilelang_cuda/{topic}.cuh"\n{kernels}'


def test_every_helper_is_defined_in_one_header():
    seen: dict[str, str] = {}
    for path in device.header_paths():
        for name in set(re.findall(r"^(?:template <[^>]*> )?(?:__host__ )?__device__ __forceinline__ [\w: ]+?[ *&]"
                                   r"(tl_\w+)\(|^#define (tl_\w+)", path.read_text(), re.M)):
            name = next(n for n in name if n)
            assert name not in seen, f"{name} is defined in {seen[name]}.cuh and {path.stem}.cuh"
            seen[name] = path.stem
    index = device.helper_headers()
    assert {n: index.get(n) for n in seen} == seen  # the index `headers_for` reads finds every one
    assert {"common", "barrier", "tma", "tcgen05", "wgmma", "mma", "cp_async", "warp"} <= set(HEADERS)


@needs_nvcc
@pytest.mark.parametrize("topic,arch", [(t, a) for t in HEADERS for a in _archs(t)])
def test_header_compiles_alone_and_its_helpers_assemble(topic, arch, tmp_path):
    """``nvcc -c -x cu`` of a TU including only the header, whose kernels take the address of each of its functions
    (so each is emitted and ptxas checks its PTX for `arch`); a function the header leaves out for `arch`
    (its arch guard) is dropped, and the rest must assemble. Helpers of CTA pairs (tcgen05 ``cta_group::2``)
    go in a TU of their own: ptxas refuses one that can reach both granularities."""
    kept: list[str] = []
    functions = _functions(topic)
    pairs = [n for n in functions if re.search(r"2cta|_cg2$", n)]
    for names in ([n for n in functions if n not in pairs], pairs):
        if not names and kept:
            continue
        for _ in range(2):
            proc = _nvcc(tmp_path, _tu(topic, names), arch)
            undefined = set(_UNDEFINED.findall(proc.stdout + proc.stderr))
            if proc.returncode == 0 or not undefined:
                break
            names = [n for n in names if n not in undefined]
        assert proc.returncode == 0, f"{topic}.cuh for {arch}:\n{proc.stdout}{proc.stderr}"
        kept += names
    if arch == "sm_100a" and topic != "wgmma":  # Blackwell has every helper but wgmma's (sm_90a only)
        assert sorted(kept) == functions


def test_helpers_for_newer_architectures_are_guarded():
    """Functions of sm_90 / sm_100 PTX sit under arch guards that keep the host pass's declarations."""
    tma = (include_dir() / "tilelang_cuda" / "tma.cuh").read_text()
    assert "#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900" in tma
    tc = (include_dir() / "tilelang_cuda" / "tcgen05.cuh").read_text()
    head, _, guarded = tc.partition("#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 1000")
    assert "tcgen05.mma" in guarded and 'asm volatile("tcgen05' not in head


def test_tma_copy_header_has_the_slots_the_lowering_numbers():
    from tilelang_cuda import tma

    text = (include_dir() / "tilelang_cuda" / "tma_copy.cuh").read_text()
    assert f"tl_tma_bar[{tma.SLOTS}]" in text and f"i < {tma.SLOTS};" in text
    rewritten = tma.rewrite_source('extern "C" __global__ void k(half* A) {\n'
                                   '  tl_tma_load_2d("A", 64, 64, s, 0, 8192, 0, 0);\n  tl_tma_wait(0);\n}\n')
    assert re.findall(r'#include "tilelang_cuda/(\w+)\.cuh"', header_for(rewritten)) == [
        "common", "tensor_map", "tma_copy"]


def test_prologue_includes_only_the_headers_the_source_calls():
    src = "tl_mbarrier_init(bar, 1); tl_tma_copy_load_2d(map, dst, bar, 0, 0); tl_cp_async_wait_group(0);"
    text = header_for(src)
    assert re.findall(r'#include "tilelang_cuda/(\w+)\.cuh"', text) == ["common", "barrier", "cp_async", "tma"]
    assert "asm volatile" not in text  # no helper body pasted: they live in the headers
    assert re.findall(r'#include "tilelang_cuda/(\w+)\.cuh"', header_for("")) == ["common"]


def test_headers_are_package_data():
    """The wheel ships every header: the plugin's package-data globs cover them all."""
    plugin = Path(__file__).resolve().parents[1]
    data = re.search(r"\[tool\.setuptools\.package-data\]\ntilelang_cuda = \[([^\]]*)\]",
                     (plugin / "pyproject.toml").read_text())
    assert data, "pyproject.toml declares no package data for tilelang_cuda"
    globs = re.findall(r'"([^"]+)"', data.group(1))
    package = plugin / "src" / "tilelang_cuda"
    # the installed headers (site-packages in a regular install) by their path inside the package
    shipped = {p.relative_to(package).as_posix() for g in globs for p in package.glob(g)}
    installed = {p.relative_to(include_dir().parent).as_posix() for p in device.header_paths()}
    assert installed <= shipped and len(HEADERS) >= 10


def test_editing_a_header_changes_the_binary_cache_key(tmp_path, monkeypatch):
    """A cubin cached before a header edit is not reused after it: the headers' digest is part of the key."""
    from tilelang_cuda.cuda_binary_cache import CUDABinaryCache

    copy = tmp_path / "include"
    shutil.copytree(include_dir(), copy)
    monkeypatch.setattr(device, "include_dir", lambda: copy)
    device._index.cache_clear()
    key = dict(code="tl_tma_store_arrive();", target_kind="cuda", target_arch="90a", target_code=["sm_90a"],
               compile_format="cubin", options=[])
    try:
        before = CUDABinaryCache.make_key(**key)
        (copy / "tilelang_cuda" / "tma.cuh").write_text((copy / "tilelang_cuda" / "tma.cuh").read_text() + "// edit\n")
        device._index.cache_clear()
        assert CUDABinaryCache.make_key(**key) != before
        assert device.helper_headers()["tl_tma_store_arrive"] == "tma"
    finally:
        device._index.cache_clear()


class _FakeNvrtc:
    """Records the options of `nvrtcCompileProgram` and hands back a 4-byte "cubin" (no NVRTC library needed)."""

    class nvrtcResult:  # cuda.bindings.nvrtc spells its names so
        NVRTC_SUCCESS = 0

    def __init__(self):
        self.options: list[bytes] = []

    def nvrtcVersion(self):
        return 0, 13, 0

    def nvrtcCreateProgram(self, *args):
        return 0, "program"

    def nvrtcCompileProgram(self, program, count, options):
        self.options = list(options)
        return (0,)

    def nvrtcGetProgramLogSize(self, program):
        return 0, 1

    nvrtcGetCUBINSize = nvrtcGetPTXSize = nvrtcGetProgramLogSize

    def nvrtcGetProgramLog(self, program, buf):
        return (0,)

    nvrtcGetCUBIN = nvrtcGetPTX = nvrtcGetProgramLog

    def nvrtcDestroyProgram(self, program):
        return (0,)


def test_nvrtc_compiles_get_the_include_dir(monkeypatch):
    """Both NVRTC paths (the backend's compiler and ``tilelang.contrib.nvrtc``) pass ``-I`` the header folder."""
    from tilelang_cuda import compiler, toolkit
    from tilelang_cuda.contrib import nvrtc

    fake = _FakeNvrtc()
    monkeypatch.setattr(toolkit, "load_nvrtc", lambda: fake)
    monkeypatch.setattr(toolkit, "nvrtc_include_dirs", lambda: [])
    compiler._nvrtc('#include "tilelang_cuda/common.cuh"\n', "sm_80", [])
    assert f"-I{include_dir()}".encode() in fake.options
    fake.options = []
    monkeypatch.setattr(nvrtc, "_nvrtc", lambda: fake)
    nvrtc.compile_cuda('#include "tilelang_cuda/common.cuh"\n', "cubin", arch=80)
    assert f"-I{include_dir()}".encode() in fake.options


def _cp_async_kernel():
    @T.prim_func
    def k(A: T.Tensor((512,), "float16"), B: T.Tensor((512,), "float16")):
        with T.Kernel(1, threads=64):
            s = T.alloc_shared((512,), "float16")
            t = T.get_thread_binding()
            T.ptx_cp_async(T.access_ptr(s[t * 8], "w", 8), T.access_ptr(A[t * 8], "r", 8), 8)
            T.ptx_commit_group()
            T.ptx_wait_group(0)
            T.sync_threads()
            for i in T.serial(8):
                B[t * 8 + i] = s[t * 8 + i]

    return k


@needs_nvcc
@pytest.mark.parametrize("compiler", ["nvcc", "nvrtc"])
def test_generated_kernel_includes_its_headers_and_builds(compiler):
    from tilelang_cuda import toolkit
    from tilelang_cuda.compiler import compile_source

    if compiler == "nvrtc" and toolkit.compiler_problem("nvrtc") is not None:
        pytest.skip(f"NVRTC is not usable here: {toolkit.compiler_problem('nvrtc')}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        artifact = tilelang.lower(_cp_async_kernel(), target={"kind": "cuda", "arch": "sm_80"})
    src = artifact.kernel_source
    included = re.findall(r'#include "tilelang_cuda/(\w+)\.cuh"', src)
    assert "cp_async" in included and included[0] == "common"
    assert not {"tma", "tcgen05", "wgmma", "barrier", "cluster"} & set(included)
    assert "__device__ __forceinline__ void tl_cp_async" not in src  # included, not pasted
    binary = compile_source(src, "sm_80", compiler, [])
    assert binary.cubin and "cp.async" in binary.ptx
