"""The CUDA backend's toolchain surface: its TVM callbacks (nvcc through tilelang_cuda.contrib.nvcc, the on-disk
CUDABinaryCache), target normalisation details, and the CuTeDSL variant backend."""

from __future__ import annotations

import shutil
import warnings

import pytest

import tilelang
from tilelang.backend import determine_target, get_backend
from tilelang.errors import ExecutionBackendUnavailable, InvalidTargetError, LoweringError, TargetError

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")
SOURCE = 'extern "C" __global__ void add_one(float* x) { x[threadIdx.x] += 1.0f; }\n'


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    # through the environment, not `monkeypatch.setattr(env, ...)`: assigning a `tilelang.env` variable forces its
    # value for the rest of the process (monkeypatch's undo assigns the old value, forcing that), which turned
    # TILELANG_DISABLE_CACHE=1 of later tests in the same process into a no-op
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "0")
    monkeypatch.setenv("TILELANG_KERNEL_CACHE_USE_LIB_STAMP", "0")
    tilelang.enable_cache()
    return tmp_path / "cache"


@pytest.fixture
def fake_nvcc(monkeypatch):
    from tilelang.cuda import backend as cuda_backend

    calls = []

    def compile_cuda(code, target_format, arch, options=None, verbose=False):
        calls.append((target_format, list(arch), list(options or [])))
        return bytearray(b"binary:" + target_format.encode())

    monkeypatch.setattr(cuda_backend.nvcc, "compile_cuda", compile_cuda)
    return calls


def test_backend_module_declares_and_registers_the_callbacks():
    import tvm  # noqa: F401 (get_backend reads TVM's target kinds)
    import tvm_ffi

    from tilelang.cuda import backend as cuda_backend
    from tilelang_cuda.contrib import nvcc

    assert cuda_backend.nvcc is nvcc
    module = get_backend("cuda")
    assert set(module.callbacks) == {"tilelang_callback_cuda_validate", "tilelang_callback_cuda_compile"}
    assert module.callbacks["tilelang_callback_cuda_compile"] is cuda_backend.tilelang_callback_cuda_compile
    assert tvm_ffi.get_global_func("tilelang_callback_cuda_compile", allow_missing=True) is not None
    assert tvm_ffi.get_global_func("tilelang_callback_cuda_validate", allow_missing=True) is not None


def test_compile_callback_caches_per_source_target_and_options(cache_dir, fake_nvcc):
    from tvm.target import Target

    from tilelang.cuda.backend import tilelang_callback_cuda_compile
    from tilelang.transform import PassConfigKey

    target = Target({"kind": "cuda", "arch": "sm_90a"})
    fast = {PassConfigKey.TL_ENABLE_FAST_MATH: True, PassConfigKey.TL_PTXAS_REGISTER_USAGE_LEVEL: "5",
            PassConfigKey.TL_DEVICE_COMPILE_FLAGS: ["-DFOO=1 --extra-device-vectorization"]}
    for configs in (None, None, fast, fast):
        assert bytes(tilelang_callback_cuda_compile(SOURCE, target, configs)) == b"binary:cubin"
    assert len(fake_nvcc) == 2  # the repeats were cache hits
    (_, arch, plain), (_, _, tuned) = fake_nvcc
    assert arch == ["-arch=sm_90a"] and "--use_fast_math" not in plain
    assert {"--use_fast_math", "--ptxas-options=--register-usage-level=5", "-DFOO=1",
            "--extra-device-vectorization"} <= set(tuned)
    files = sorted(cache_dir.glob("*/cuda-binaries/*.cubin"))
    assert len(files) == 2 and all(f.read_bytes() == b"binary:cubin" for f in files)
    tilelang_callback_cuda_compile(SOURCE + "// changed\n", target)
    assert len(fake_nvcc) == 3


def test_compile_callback_skips_the_cache_when_disabled(cache_dir, fake_nvcc):
    from tvm.target import Target

    from tilelang.cuda.backend import tilelang_callback_cuda_compile

    tilelang.disable_cache()
    try:
        for _ in range(2):
            tilelang_callback_cuda_compile(SOURCE, Target({"kind": "cuda", "arch": "sm_80"}))
    finally:
        tilelang.enable_cache()
    assert len(fake_nvcc) == 2 and not list(cache_dir.glob("**/*.cubin"))


def test_a_code_list_compiles_one_fatbin_with_gencode(cache_dir, fake_nvcc):
    from tilelang.cuda.backend import tilelang_callback_cuda_compile

    target = determine_target({"kind": "cuda", "arch": "sm_100f", "code": ["sm_100a", "sm_103a"]})
    assert target["code"] == ["sm_100a", "sm_103a"]
    assert bytes(tilelang_callback_cuda_compile(SOURCE, target)) == b"binary:fatbin"
    assert fake_nvcc[0][:2] == ("fatbin", ["-gencode", "arch=compute_100f,code=[sm_100a,sm_103a]"])
    single = {"kind": "cuda", "arch": "sm_90a", "code": ["sm_90a"]}
    tilelang_callback_cuda_compile(SOURCE, single)
    assert fake_nvcc[1][:2] == ("cubin", ["-gencode", "arch=compute_90a,code=sm_90a"])
    assert len(list(cache_dir.glob("*/cuda-binaries/*.fatbin"))) == 1


@needs_nvcc
def test_compile_callback_runs_nvcc(cache_dir):
    from tvm.target import Target

    from tilelang.cuda.backend import tilelang_callback_cuda_compile

    cubin = tilelang_callback_cuda_compile(SOURCE, Target({"kind": "cuda", "arch": "sm_80"}))
    assert bytes(cubin[:4]) == b"\x7fELF"
    fatbin = tilelang_callback_cuda_compile(SOURCE, {"kind": "cuda", "arch": "sm_100f", "code": ["sm_100a",
                                                                                                 "sm_103a"]})
    assert bytes(fatbin).count(b"\x7fELF") == 2


@needs_nvcc
def test_the_plugin_compiles_through_contrib_nvcc(monkeypatch):
    from tilelang_cuda import compiler
    from tilelang_cuda.contrib import nvcc

    commands = []
    run = nvcc.run_nvcc

    def spy(*args, **kwargs):
        result = run(*args, **kwargs)
        commands.append(result.command)
        return result

    monkeypatch.setattr(nvcc, "run_nvcc", spy)
    binary = compiler.compile_source(SOURCE + "// through contrib\n", "sm_90a")
    assert len(commands) == 1 and "-arch=sm_90a" in commands[0] and "--keep" in commands[0]
    assert binary.cubin[:4] == b"\x7fELF" and ".visible .entry add_one" in binary.ptx
    assert binary.resources["registers"] > 0
    with pytest.raises(compiler.CudaCompileError, match="nvcc failed for sm_80"):
        compiler.compile_source("__global__ void broken( {}", "sm_80")


def _device_mod(source: str | None, symbol: str = "main_kernel", entry: str | None = None):
    import tvm
    from tvm import tirx

    func = tirx.PrimFunc([], tirx.Evaluate(0)).with_attr("global_symbol", symbol)
    if source is not None:
        func = func.with_attr("code_block_source", source)
    if entry is not None:
        func = func.with_attr("code_block_entry_name", entry)
    return tvm.IRModule({symbol: func})


def test_validate_callback_checks_user_cuda_sources():
    from tilelang.cuda.backend import tilelang_callback_cuda_validate as validate

    validate(_device_mod(None))
    validate(_device_mod('extern "C" __global__ void __launch_bounds__(128) main_kernel(float* x) {}'))
    with pytest.raises(ValueError, match="at least one __global__"):
        validate(_device_mod("__device__ void helper() {}"))
    with pytest.raises(ValueError, match="Available entries: other, third"):
        validate(_device_mod("__global__ void other() {}\n__global__ void third() {}"))
    with pytest.raises(ValueError, match="match entry_name"):
        validate(_device_mod("__global__ void main_kernel() {}", entry="else"))


def test_arch_detection_and_checks(monkeypatch):
    from tilelang.cuda import target as cuda_target

    monkeypatch.setattr(cuda_target, "_detect_torch_cuda_arch", lambda: "sm_100a")
    assert determine_target("cuda")["arch"] == "sm_100a"
    assert str(determine_target("cuda", return_object=True).attrs["arch"]) == "sm_100a"
    monkeypatch.setattr(cuda_target, "_detect_torch_cuda_arch", lambda: None)
    with pytest.warns(UserWarning, match="compiling for sm_80"):
        assert determine_target("cuda")["arch"] == "sm_80"
    assert determine_target({"kind": "cuda", "arch": "sm_100f"})["arch"] == "sm_100f"
    for bad in ("compute_90", "sm90", "sm_90b"):
        with pytest.raises(InvalidTargetError, match="valid target config dict"):
            determine_target({"kind": "cuda", "arch": bad}, return_object=True)
    with pytest.raises(TargetError, match="list of exact SM code tokens"):
        determine_target({"kind": "cuda", "arch": "sm_100f", "code": "sm_100a"})


def test_torch_capability_becomes_an_exact_arch(monkeypatch):
    import torch

    from tilelang.cuda import target as cuda_target

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda _=None: (9, 0))
    assert cuda_target._detect_torch_cuda_arch() == "sm_90a"
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda _=None: (8, 6))
    assert cuda_target.detect() == {"kind": "cuda", "arch": "sm_86"}


def test_target_predicates():
    from tvm.target import Target

    from tilelang.cuda import target as t

    hopper, ampere, turing = (Target({"kind": "cuda", "arch": a}) for a in ("sm_90a", "sm_86", "sm_75"))
    assert t.target_is_cuda(hopper) and t.target_is_hopper(hopper) and not t.target_is_hopper(ampere)
    assert t.target_is_ampere(ampere) and t.target_is_turing(turing) and t.target_is_volta({"kind": "cuda",
                                                                                              "arch": "sm_70"})
    assert t.target_has_async_copy(ampere) and not t.target_has_async_copy(turing)
    assert t.target_has_ldmatrix(turing) and t.target_has_bulk_copy(hopper) and not t.target_has_bulk_copy(ampere)
    assert t.target_has_stmatrix(hopper) and not t.target_has_stmatrix(hopper, is_m16n8=True)
    assert t.target_is_sm120({"kind": "cuda", "arch": "sm_120a"}) and not t.target_is_cuda(Target("llvm"))


# ---------------------------------------------------------------------------------------------- CuTeDSL variant
@pytest.fixture
def cutedsl_installed(monkeypatch):
    from tilelang_cuda.adapters.cutedsl import checks

    monkeypatch.setattr(checks, "check_cutedsl_available", lambda: None)


def test_cutedsl_targets_normalise_to_marked_cuda_targets(cutedsl_installed):
    target = determine_target({"kind": "cutedsl", "arch": "sm_90a"}, return_object=True)
    assert target.kind.name == "cuda" and str(target.attrs["arch"]) == "sm_90a"
    assert list(target.keys) == ["cuda", "gpu", "cutedsl"]
    from tilelang.cuda.target import is_cutedsl_target, normalize_cutedsl_target

    assert is_cutedsl_target(target) and normalize_cutedsl_target(target) is target
    assert normalize_cutedsl_target({"kind": "cutedsl", "arch": "sm_80"}).keys[-1] == "cutedsl"
    assert normalize_cutedsl_target({"kind": "cuda", "arch": "sm_80"}) is None
    assert normalize_cutedsl_target("cuda") is None


def test_cutedsl_target_without_the_dsl_names_the_package(monkeypatch):
    from tilelang_cuda.adapters.cutedsl import checks

    def missing():
        raise ImportError("install via `pip install -U 'nvidia-cutlass-dsl>=4.7.0'`")

    monkeypatch.setattr(checks, "check_cutedsl_available", missing)
    with pytest.raises(InvalidTargetError, match="CuTeDSL backend is not available.*nvidia-cutlass-dsl"):
        determine_target({"kind": "cutedsl", "arch": "sm_80"})


def test_cutedsl_backend_shares_the_cuda_pipeline_and_refuses_to_build(cutedsl_installed):
    from tvm.target import Target

    from tilelang.backend import resolve_device_codegen, resolve_execution_backend
    from tilelang_cuda.adapters.cutedsl.adapter import CuTeDSLCodegenUnavailable

    cuda, cutedsl = get_backend("cuda"), get_backend("cutedsl")
    plain = Target({"kind": "cuda", "arch": "sm_90a"})
    marked = determine_target({"kind": "cutedsl", "arch": "sm_90a"}, return_object=True)
    assert cutedsl.target_kinds == ("cuda",) and cutedsl.get_pipeline(marked) is cuda.get_pipeline(plain)
    assert cuda.matches(plain) and not cuda.matches(marked) and cutedsl.matches(marked)
    assert resolve_device_codegen(marked).name == "cutedsl" and resolve_device_codegen(plain).name == "cuda"
    assert cutedsl.allowed_execution_backends(marked) == ("cutedsl",)
    assert "cutedsl" not in cuda.allowed_execution_backends(plain)
    with pytest.raises(CuTeDSLCodegenUnavailable, match="'kind': 'cuda'"):
        cutedsl.codegen_device(None, marked)
    with pytest.raises(ExecutionBackendUnavailable, match="does not generate CuTe DSL kernels"):
        resolve_execution_backend(marked, "cutedsl")


def test_lowering_for_cutedsl_says_what_to_use_instead(cutedsl_installed):
    from tilelang.testing.tirx_kernels import vector_add_gpu
    from tilelang_cuda.adapters.cutedsl.adapter import CuTeDSLCodegenUnavailable

    # core's lowering reports codegen failures as LoweringError, keeping the codegen's message
    with warnings.catch_warnings(), pytest.raises((CuTeDSLCodegenUnavailable, LoweringError), match="does not offer"):
        warnings.simplefilter("ignore")
        tilelang.lower(vector_add_gpu(1024, 128), target={"kind": "cutedsl", "arch": "sm_80"})
