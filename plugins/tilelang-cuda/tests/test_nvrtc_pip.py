"""CUDA from pip alone (``pip install tilelang-core "tilelang-cuda[nvrtc]"``, no toolkit): with no nvcc on PATH, no
``CUDA_HOME`` and ``TILELANG_CUDA_COMPILER=nvrtc``, NVRTC from NVIDIA's wheels builds every corpus kernel to a cubin
for sm_80 and sm_90a, with the wheels' headers (CUDA runtime, crt, CCCL's cuda/std), and no GPU or driver.

The cubins are checked without cuobjdump: a CUDA ELF (EM_CUDA) for the right SM that defines the kernel, and the PTX
NVRTC returns holds the instructions meant (mma.sync / wgmma, cp.async or TMA, shfl.sync), as the nvcc corpus test
checks. Skipped where the ``nvrtc`` extra's wheels are not installed (the ``nvrtc`` nox session installs them).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import struct
import warnings
from importlib import metadata

import pytest
from test_corpus_cuda import CP_ASYNC, NAMES, SHUFFLE, TENSOR_CORE

from tilelang.testing import corpus

ARCHS = ("sm_80", "sm_90a")
EM_CUDA = 190


def _extra_wheels() -> list[str]:
    """The distributions tilelang-cuda's ``nvrtc`` extra requires (read from the installed metadata)."""
    names = []
    for req in metadata.requires("tilelang-cuda") or []:
        spec, _, marker = req.partition(";")
        if re.search(r"""extra\s*==\s*["']nvrtc["']""", marker):
            names.append(re.match(r"[A-Za-z0-9_.-]+", spec.strip()).group(0))
    return names


def _missing_wheels() -> list[str]:
    missing = []
    for name in _extra_wheels() or ["cuda-bindings"]:
        try:
            metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
    return missing


MISSING = _missing_wheels()
pytestmark = pytest.mark.skipif(bool(MISSING), reason="the nvrtc extra's wheels are not installed "
                                f'({", ".join(MISSING)}): pip install "tilelang-cuda[nvrtc]"')


def _without_nvcc(path: str) -> str:
    return os.pathsep.join(d for d in path.split(os.pathsep) if d and not os.path.exists(os.path.join(d, "nvcc")))


@pytest.fixture(scope="module", autouse=True)
def pip_only():
    """No nvcc on PATH, no CUDA_HOME / CUDA_PATH, NVRTC chosen; the toolkit look-ups made afresh."""
    from tilelang_cuda import toolkit

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PATH", _without_nvcc(os.environ.get("PATH", "")))
        mp.delenv("CUDA_HOME", raising=False)
        mp.delenv("CUDA_PATH", raising=False)
        mp.setenv("TILELANG_CUDA_COMPILER", "nvrtc")
        toolkit.nvrtc_headers.cache_clear()
        yield
    toolkit.nvrtc_headers.cache_clear()


@functools.cache
def _built(name: str, arch: str):
    """``(artifact, CudaBinary)`` of corpus kernel `name`: lowered, and compiled by the plugin's build hook."""
    import tilelang
    from tilelang_cuda.compiler import compile_artifact

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        artifact = tilelang.lower(corpus.CORPUS[name]().prim_func(), target={"kind": "cuda", "arch": arch})
    return artifact, compile_artifact(artifact)


def cubin_sm(cubin: bytes) -> int:
    """The SM number a cubin's ELF header records (``e_flags``; its layout changed with ELF ABI version 8)."""
    assert cubin[:4] == b"\x7fELF", "not an ELF file"
    assert cubin[4] == 2 and cubin[5] == 1, "not a 64-bit little-endian ELF"
    (machine,) = struct.unpack_from("<H", cubin, 18)
    assert machine == EM_CUDA, f"e_machine {machine} is not EM_CUDA"
    (flags,) = struct.unpack_from("<I", cubin, 48)
    return (flags >> 8) & 0xFF if cubin[8] >= 8 else flags & 0xFF


def test_every_piece_comes_from_the_wheels():
    from tilelang_cuda import toolkit
    from tilelang_cuda.compiler import compiler_available, default_compiler

    assert shutil.which("nvcc") is None
    assert default_compiler() == "nvrtc" and compiler_available()
    headers = toolkit.nvrtc_headers()
    assert {name for name, _, _ in headers} >= {"cudart", "cccl"}
    assert all(via == "site-packages" for _, _, via in headers), headers
    dirs = toolkit.nvrtc_include_dirs()
    assert any(os.path.isfile(os.path.join(d, "cuda/std/cstdint")) for d in dirs)
    assert any(os.path.isfile(os.path.join(d, "crt/host_defines.h")) for d in dirs)
    lib = toolkit.pathfinder().load_nvidia_dynamic_lib("nvrtc")
    assert lib.found_via == "site-packages", lib
    assert toolkit.nvrtc_version() >= (12, 8)
    ok, detail = toolkit.compiler_status()
    assert ok and detail.startswith("nvrtc"), detail


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", NAMES)
def test_corpus_builds_to_cubin_with_pip_nvrtc(name, arch):
    artifact, binary = _built(name, arch)
    assert binary.compiler == "nvrtc" and artifact.metadata["cuda_compiler"] == "nvrtc"
    assert artifact.files["kernel.cubin"] == binary.cubin
    assert cubin_sm(binary.cubin) == int(re.sub(r"\D", "", arch))
    kernel = re.search(r'extern "C" __global__ void (?:__\w+\([^)]*\) )*(\w+)\(', artifact.kernel_source).group(1)
    assert kernel.encode() + b"\0" in binary.cubin  # the kernel's symbol is in the string table
    assert artifact.metadata["registers"] > 0
    ptx = binary.ptx
    assert f".target {arch}" in ptx and f".entry {kernel}" in ptx
    if name in TENSOR_CORE:
        assert ("wgmma.mma_async" if arch == "sm_90a" else "mma.sync.aligned") in ptx
        assert "ldmatrix.sync.aligned" in ptx or (arch == "sm_90a" and "tl_wgmma_ss_" in artifact.kernel_source)
    if name in CP_ASYNC and ("tl_tma_load_2d(tl_tmap_" in artifact.kernel_source
                             or "tl_tma_copy_load_2d(" in artifact.kernel_source):
        assert arch == "sm_90a"  # tl.copy's TMA (opt-in) or a warp-specialised producer's (the default)
        assert "cp.async.bulk.tensor.2d" in ptx and "mbarrier.try_wait.parity" in ptx
    elif name in CP_ASYNC:
        assert "cp.async.cg.shared.global" in ptx and "cp.async.wait_group" in ptx
    if name in SHUFFLE:
        assert "shfl.sync.bfly" in ptx


def test_nvrtc_errors_name_the_arch_and_the_line():
    from tilelang_cuda.compiler import CudaCompileError, compile_source

    with pytest.raises(CudaCompileError, match=r"^kernel.cu\(1\): error: [\s\S]*\nNVRTC failed for sm_80 "):
        compile_source('extern "C" __global__ void broken( {}', "sm_80", "nvrtc")


def test_headers_of_every_wheel_reach_nvrtc():
    """<mma.h> goes through crt/ (nvidia-cuda-crt), cuda/std through CCCL, cuda_bf16.h through the runtime's."""
    from tilelang_cuda.compiler import compile_source

    src = ('#include <mma.h>\n#include <cuda_bf16.h>\n#include <cuda/std/type_traits>\n'
           'extern "C" __global__ void k(float* x) {\n'
           '  static_assert(cuda::std::is_same_v<float, float>);\n'
           '  nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> acc;\n'
           '  nvcuda::wmma::fill_fragment(acc, __bfloat162float(__float2bfloat16(1.0f)));\n'
           '  nvcuda::wmma::store_matrix_sync(x, acc, 16, nvcuda::wmma::mem_row_major);\n}\n')
    binary = compile_source(src, "sm_80", "nvrtc")
    assert cubin_sm(binary.cubin) == 80 and "wmma.store.d.sync" in binary.ptx


def test_an_include_nobody_ships_names_the_wheel_to_look_in():
    from tilelang_cuda.compiler import CudaCompileError, compile_source

    with pytest.raises(CudaCompileError, match=r"NVRTC could not open 'crt/no_such_header.h': `pip install "
                                               r"nvidia-cuda-crt`"):
        compile_source('#include <crt/no_such_header.h>\nextern "C" __global__ void k() {}\n', "sm_80", "nvrtc")
