"""Which CUDA compiler builds a kernel, and with which flags.

nvcc is taken only from where the user put it (``CUDA_PATH``/``CUDA_HOME``, PATH, its wheel, conda), never from a
toolkit guessed in /usr/local/cuda; a found nvcc whose environment is broken (a fake nvcc failing as one without a
host compiler does) gives way to NVRTC with a warning; compile errors start with the compiler's own message; a
kernel's ``compile_flags`` reach nvcc and NVRTC, and fast math is off unless ``tl.enable_fast_math`` asks for it,
as in the reference. The effects are read from the PTX each compiler produced.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import types
import warnings

import pytest

import tilelang
import tilelang.language as T
from tilelang_cuda import toolkit
from tilelang_cuda.compiler import CudaCompileError

TARGET = {"kind": "cuda", "arch": "sm_80"}
BROKEN_NVCC = "#!/bin/sh\necho 'gcc: No such file or directory' >&2\nexit 1\n"
# a stand-in nvcc that "compiles": writes its -o file and a ptxas line
WORKING_NVCC = ('#!/bin/sh\nout=""\nwhile [ $# -gt 0 ]; do\n  if [ "$1" = "-o" ]; then out="$2"; shift; fi\n'
                '  shift\ndone\nprintf "\\177ELF" > "$out"\necho "ptxas info    : Used 8 registers"\n')


def _nvrtc_problem() -> str | None:
    try:
        toolkit.load_nvrtc()
        toolkit.nvrtc_headers()
    except toolkit.CudaToolkitError as exc:
        return str(exc)
    return None


NVRTC_PROBLEM = _nvrtc_problem()  # looked up once, in the unaltered environment (cuda-pathfinder caches)
needs_nvrtc = pytest.mark.skipif(NVRTC_PROBLEM is not None, reason=f"NVRTC is not usable here: {NVRTC_PROBLEM}")
REAL_NVCC = toolkit.find_nvcc()
needs_nvcc = pytest.mark.skipif(REAL_NVCC is None or toolkit.nvcc_problem(REAL_NVCC) is not None,
                                reason="no working nvcc here")


def _tool(path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


@pytest.fixture
def bare(monkeypatch, tmp_path):
    """No nvcc anywhere: PATH without any directory holding one, no CUDA_PATH / CUDA_HOME / CONDA_PREFIX, no
    nvcc wheel, no compiler forced, probes forgotten; compiled kernels not cached. (This machine has a toolkit in
    /usr/local/cuda: it is not on this PATH.)"""
    path = os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                           if d and not os.path.exists(os.path.join(d, "nvcc")))
    monkeypatch.setenv("PATH", path)
    for var in ("CUDA_PATH", "CUDA_HOME", "CONDA_PREFIX", "TILELANG_CUDA_COMPILER"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setitem(sys.modules, "nvidia", types.SimpleNamespace(__path__=[str(tmp_path / "no-wheels")]))
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")
    _forget(monkeypatch)
    return monkeypatch


def _forget(monkeypatch) -> None:
    """nvcc probes and compiled binaries of this process forgotten (for the test's duration)."""
    from tilelang_cuda import compiler

    monkeypatch.setattr(toolkit, "_PROBES", {})
    monkeypatch.setattr(compiler, "_MEMO", {})


def test_nvcc_is_taken_only_from_where_the_user_put_it(bare, tmp_path):
    guessed = _tool(tmp_path / "usr-local-cuda" / "bin" / "nvcc", WORKING_NVCC)
    home = _tool(tmp_path / "home" / "bin" / "nvcc", WORKING_NVCC)
    cuda_path = _tool(tmp_path / "cuda-path" / "bin" / "nvcc", WORKING_NVCC)
    on_path = _tool(tmp_path / "on-path" / "nvcc", WORKING_NVCC)
    wheel = _tool(tmp_path / "site" / "nvidia" / "cu13" / "bin" / "nvcc", WORKING_NVCC)
    conda = _tool(tmp_path / "conda" / "bin" / "nvcc", WORKING_NVCC)
    assert guessed and toolkit.find_nvcc() is None and toolkit.default_compiler() == "nvrtc"

    bare.setenv("CONDA_PREFIX", str(tmp_path / "conda"))
    assert toolkit.find_nvcc() == conda
    bare.setitem(sys.modules, "nvidia", types.SimpleNamespace(__path__=[str(tmp_path / "site" / "nvidia")]))
    assert toolkit.find_nvcc() == wheel
    bare.setenv("PATH", str(tmp_path / "on-path") + os.pathsep + os.environ["PATH"])
    assert toolkit.find_nvcc() == on_path
    bare.setenv("CUDA_HOME", str(tmp_path / "home"))
    assert toolkit.find_nvcc() == home and toolkit.default_compiler() == "nvcc"
    bare.setenv("CUDA_PATH", str(tmp_path / "cuda-path"))  # cuda-pathfinder's order: CUDA_PATH first
    assert toolkit.find_nvcc() == cuda_path
    bare.setenv("CUDA_PATH", str(tmp_path / "usr-local-cuda" / "lib"))  # no nvcc there: the next place
    assert toolkit.find_nvcc() == home


def _fma_div():
    @T.prim_func
    def fma_div(A: T.Tensor((256,), T.float32), B: T.Tensor((256,), T.float32), D: T.Tensor((256,), T.float32)):
        with T.Kernel(2, threads=128) as bx:
            for i in T.Parallel(128):
                D[bx * 128 + i] = A[bx * 128 + i] * B[bx * 128 + i] + A[bx * 128 + i] / B[bx * 128 + i]

    return fma_div


def _calls_undefined():
    @T.prim_func
    def calls_undefined(A: T.Tensor((128,), T.float32)):
        with T.Kernel(1, threads=128) as _:
            for i in T.Parallel(128):
                A[i] = T.call_extern("float32", "tl_no_such_function", A[i])

    return calls_undefined


def _compile(func, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return tilelang.compile(func, target=TARGET, **kwargs)


@needs_nvrtc
def test_a_toolkit_that_is_not_on_path_is_not_guessed(bare, recwarn):
    """The reported machine: a toolkit sits in /usr/local/cuda, nothing points at it, NVRTC is installed: NVRTC
    builds the kernel, without trying nvcc."""
    kernel = _compile(_fma_div())
    assert kernel.artifact.metadata["cuda_compiler"] == "nvrtc"
    assert kernel.artifact.files["kernel.cubin"][:4] == b"\x7fELF"
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


@needs_nvrtc
def test_a_broken_nvcc_gives_way_to_nvrtc_with_a_warning(bare, tmp_path):
    broken = _tool(tmp_path / "toolkit" / "bin" / "nvcc", BROKEN_NVCC)
    bare.setenv("CUDA_HOME", str(tmp_path / "toolkit"))
    assert toolkit.default_compiler() == "nvcc"
    with pytest.warns(RuntimeWarning, match="(?s)^gcc: No such file or directory.*environment is broken.*NVRTC"):
        kernel = _compile(_fma_div())
    assert kernel.artifact.metadata["cuda_compiler"] == "nvrtc"
    assert kernel.artifact.files["kernel.cubin"][:4] == b"\x7fELF"
    assert toolkit.default_compiler() == "nvrtc"  # not tried again in this process
    ok, detail = toolkit.compiler_status()
    assert ok and detail == "nvrtc (nvcc found but cannot compile here)"
    ok, detail = toolkit.nvcc_status()
    assert not ok and detail == f"{broken} cannot compile here: gcc: No such file or directory"


def test_a_broken_nvcc_named_or_alone_raises_its_own_message(bare, tmp_path):
    _tool(tmp_path / "toolkit" / "bin" / "nvcc", BROKEN_NVCC)
    bare.setenv("CUDA_HOME", str(tmp_path / "toolkit"))
    bare.setenv("TILELANG_CUDA_COMPILER", "nvcc")
    with pytest.raises(CudaCompileError) as info:
        _compile(_fma_div())
    message = str(info.value)
    assert message.startswith("gcc: No such file or directory\n") and "environment is broken" in message
    assert "NVRTC" not in message
    bare.delenv("TILELANG_CUDA_COMPILER")
    _forget(bare)
    real_problem = toolkit.compiler_problem
    bare.setattr(toolkit, "compiler_problem",
                 lambda compiler=None: "no NVRTC here" if compiler == "nvrtc" else real_problem(compiler))
    with pytest.raises(CudaCompileError, match="(?s)^gcc: No such file.*NVRTC cannot take over: no NVRTC here"):
        _compile(_fma_div())


@pytest.mark.parametrize("compiler", [pytest.param("nvcc", marks=needs_nvcc),
                                      pytest.param("nvrtc", marks=needs_nvrtc)])
def test_compile_errors_start_with_the_compilers_message(compiler, monkeypatch):
    monkeypatch.setenv("TILELANG_CUDA_COMPILER", compiler)
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")
    _forget(monkeypatch)
    with pytest.raises(CudaCompileError) as info:
        _compile(_calls_undefined())
    first = str(info.value).splitlines()[0]
    assert "error" in first and "tl_no_such_function" in first, str(info.value)[:2000]
    assert "__global__" not in str(info.value)  # the generated source is not in the message


@pytest.mark.parametrize("compiler", [pytest.param("nvcc", marks=needs_nvcc),
                                      pytest.param("nvrtc", marks=needs_nvrtc)])
def test_compile_flags_reach_the_compiler_and_fast_math_is_opt_in(compiler, monkeypatch):
    """In the PTX: by default a*b+c is one fma and a/b an IEEE division (``div.rn``), no flush-to-zero;
    ``compile_flags=["--fmad=false"]`` splits the fma; ``tl.enable_fast_math`` makes the division approximate."""
    monkeypatch.setenv("TILELANG_CUDA_COMPILER", compiler)
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")
    _forget(monkeypatch)

    def ptx(**kwargs) -> str:
        kernel = _compile(_fma_div(), **kwargs)
        assert kernel.artifact.metadata["cuda_compiler"] == compiler
        return kernel.artifact.files["kernel.ptx"].decode()

    default = ptx()
    assert "fma.rn.f32" in default and "div.rn.f32" in default and ".ftz." not in default, default
    no_fmad = ptx(compile_flags=["--fmad=false"])
    assert "fma.rn.f32" not in no_fmad and "mul.rn.f32" in no_fmad and "add.rn.f32" in no_fmad, no_fmad
    also_string = ptx(compile_flags="--fmad=false --ftz=true")
    assert "fma." not in also_string and "mul.rn.ftz.f32" in also_string, also_string
    fast = ptx(pass_configs={"tl.enable_fast_math": True})
    assert "div.rn.f32" not in fast and ".ftz.f32" in fast, fast


def test_the_flags_of_a_build_are_kept_with_its_artifact(bare, tmp_path):
    """A kernel built where no compiler ran still knows its flags: a later compile of the artifact uses them."""
    from tilelang_cuda import compiler

    bare.setattr(compiler, "compiler_available", lambda: False)
    kernel = _compile(_fma_div(), compile_flags=["--fmad=false"], pass_configs={"tl.enable_fast_math": True})
    assert kernel.artifact.metadata["cuda_compiler"] == "unavailable"
    assert kernel.artifact.metadata[compiler.FLAGS_KEY] == ["--fmad=false", "--use_fast_math"]
    seen = []
    bare.setattr(compiler, "compile_source", lambda source, arch, comp=None, flags=None: seen.append(flags) or
                 compiler.CudaBinary(b"\x7fELF", "", "nvrtc"))
    compiler.compile_artifact(kernel.artifact)
    assert seen == [["--fmad=false", "--use_fast_math"]]


def test_nothing_found_names_every_place_looked(bare):
    assert shutil.which("nvcc") is None
    ok, detail = toolkit.nvcc_status()
    assert not ok and "CUDA_PATH, CUDA_HOME, PATH, the nvidia-cuda-nvcc wheel, conda" in detail
