"""tilelang_cuda.contrib.nvcc: target parsing, fatbin code lists, timeouts and temp files, and real nvcc builds."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tilelang_cuda.contrib import nvcc

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")

KERNEL = 'extern "C" __global__ void add_one(float* x) { x[threadIdx.x] += 1.0f; }\n'


def test_code_lists_are_checked_and_formatted():
    assert nvcc.get_target_code_list(None) == []
    assert nvcc.get_target_code_list(("sm_100a", "sm_103a")) == ["sm_100a", "sm_103a"]
    for bad in ("sm_100a", [], ["compute_100f"], ["sm_100a", ""], 7):
        with pytest.raises(ValueError, match="CUDA target code"):
            nvcc.get_target_code_list(bad)
    assert nvcc.format_target_code_for_gencode(None) is None
    assert nvcc.format_target_code_for_gencode(["sm_90a"]) == "sm_90a"
    assert nvcc.format_target_code_for_gencode(["sm_100a", "sm_103a"]) == "[sm_100a,sm_103a]"


def test_arch_and_code_come_from_targets_and_dicts():
    from tvm.target import Target

    assert nvcc.get_target_arch_and_code(Target({"kind": "cuda", "arch": "sm_90a"})) == ("90a", None)
    assert nvcc.get_target_arch_and_code({"kind": "cuda", "arch": "sm_100f", "code": ["sm_100a", "sm_103a"]}) == (
        "100f", ["sm_100a", "sm_103a"])
    with pytest.raises(ValueError, match="exact SM token"):
        nvcc.get_target_arch_and_code({"kind": "cuda", "arch": "compute_90"})


def test_compute_versions_and_capabilities():
    assert nvcc.get_target_compute_version({"kind": "cuda", "arch": "sm_89"}) == "8.9"
    assert nvcc.get_target_compute_version({"kind": "cuda", "arch": "sm_100f"}) == "10.0"
    assert nvcc.get_target_compute_version({"kind": "cuda", "arch": "sm_120a"}) == "12.0"
    assert nvcc.parse_compute_version("9.0") == (9, 0)
    with pytest.raises(RuntimeError, match="parsing"):
        nvcc.parse_compute_version("nine")
    assert nvcc.get_target_arch("8.6") == "86" and nvcc.get_target_arch((9, 0)) == "90a"
    assert nvcc.have_fp16("5.3") and not nvcc.have_fp16("5.2")
    assert nvcc.have_bf16("8.0") and not nvcc.have_bf16("7.5")
    assert nvcc.have_fp8("8.9") and not nvcc.have_fp8("8.6") and nvcc.have_fp8("10.0")
    assert nvcc.have_int8("6.1") and nvcc.have_tensorcore("7.0")
    hopper, ampere = {"kind": "cuda", "arch": "sm_90a"}, {"kind": "cuda", "arch": "sm_80"}
    assert nvcc.have_tma(hopper) and not nvcc.have_tma(ampere) and not nvcc.have_tma({"kind": "rocm"})
    assert nvcc.is_hopper(hopper) and not nvcc.is_hopper({"kind": "cuda", "arch": "sm_100a"})
    assert nvcc.have_pdl(hopper) and nvcc.have_mbarrier(hopper) and not nvcc.have_mbarrier(ampere)


def test_timeout_setting_is_validated(monkeypatch):
    monkeypatch.setenv("TILELANG_COMPILE_TIMEOUT_SECONDS", "")
    assert nvcc._get_compile_timeout_seconds() is None
    monkeypatch.setenv("TILELANG_COMPILE_TIMEOUT_SECONDS", "2.5")
    assert nvcc._get_compile_timeout_seconds() == 2.5
    monkeypatch.setenv("TILELANG_COMPILE_TIMEOUT_SECONDS", "-1")
    with pytest.raises(ValueError, match="TILELANG_COMPILE_TIMEOUT_SECONDS"):
        nvcc._get_compile_timeout_seconds()


class _Hanging:
    returncode = 0

    def __init__(self):
        self.killed = False

    def communicate(self, timeout=None):
        if timeout is not None and not self.killed:
            raise subprocess.TimeoutExpired(["nvcc"], timeout)
        return b"partial output", None

    def kill(self):
        self.killed = True


def test_a_hanging_nvcc_is_killed_and_reported(monkeypatch):
    proc = _Hanging()
    monkeypatch.setenv("TILELANG_COMPILE_TIMEOUT_SECONDS", "0.5")
    monkeypatch.setattr(nvcc, "get_nvcc_compiler", lambda: "nvcc")
    monkeypatch.setattr(nvcc.subprocess, "Popen", lambda *a, **k: proc)
    with pytest.raises(RuntimeError) as info:
        nvcc.compile_cuda(KERNEL, "cubin", arch=["-arch=sm_80"])
    message = str(info.value)
    assert proc.killed
    assert "timed out after 0.5 seconds" in message and "-arch=sm_80" in message
    assert "Source:" in message and "Output:\npartial output" in message


class _Writes:
    returncode = 0

    def __init__(self, cmd):
        self.cmd = cmd

    def communicate(self, timeout=None):
        with open(self.cmd[self.cmd.index("-o") + 1], "wb") as f:
            f.write(b"binary")
        return b"", None


def _capture(monkeypatch):
    seen = {}

    def popen(cmd, *args, **kwargs):
        seen["cmd"] = cmd
        return _Writes(cmd)

    monkeypatch.setattr(nvcc, "get_nvcc_compiler", lambda: "nvcc")
    monkeypatch.setattr(nvcc.subprocess, "Popen", popen)
    return seen


def test_temp_files_are_removed_unless_asked_to_keep_them(monkeypatch):
    seen = _capture(monkeypatch)
    monkeypatch.setattr(nvcc.env, "TILELANG_CLEANUP_TEMP_FILES", "1")
    assert nvcc.compile_cuda(KERNEL, "ptx", arch=["-arch=sm_80"]) == bytearray(b"binary")
    assert not os.path.exists(os.path.dirname(seen["cmd"][-1]))
    monkeypatch.setattr(nvcc.env, "TILELANG_CLEANUP_TEMP_FILES", "0")
    nvcc.compile_cuda(KERNEL, "ptx", arch=["-arch=sm_80"])
    kept = seen["cmd"][-1]
    try:
        assert open(kept).read() == KERNEL
    finally:
        shutil.rmtree(os.path.dirname(kept))
        monkeypatch.setattr(nvcc.env, "TILELANG_CLEANUP_TEMP_FILES", "1")


def test_arch_comes_from_the_current_target(monkeypatch):
    from tvm.target import Target

    seen = _capture(monkeypatch)
    with Target({"kind": "cuda", "arch": "sm_90a"}):
        nvcc.compile_cuda(KERNEL, "cubin")
    assert "-arch=sm_90a" in seen["cmd"] and "--cubin" in seen["cmd"] and "-lineinfo" in seen["cmd"]
    with pytest.raises(ValueError, match="target_format"):
        nvcc.compile_cuda(KERNEL, "elf", arch=["-arch=sm_80"])


@needs_nvcc
def test_nvcc_builds_ptx_cubin_and_reports_errors(tmp_path):
    from tvm.target import Target

    with Target({"kind": "cuda", "arch": "sm_80"}):
        ptx = nvcc.get_ptx_from_source(KERNEL)
    assert ".target sm_80" in ptx and ".visible .entry add_one" in ptx
    result = nvcc.run_nvcc(KERNEL, "cubin", arch=["-arch=sm_90a"], options=["-Xptxas", "-v"])
    assert bytes(result.data[:4]) == b"\x7fELF"
    assert "Used" in result.output and "registers" in result.output
    out = tmp_path / "k.cubin"
    nvcc.compile_cuda(KERNEL, "cubin", arch=["-arch=sm_80"], path_target=str(out))
    assert out.read_bytes()[:4] == b"\x7fELF"
    with pytest.raises(RuntimeError, match="Compilation error") as info:
        nvcc.compile_cuda("__global__ void broken( {}", "cubin", arch=["-arch=sm_80"])
    assert "Command:" in str(info.value)


@needs_nvcc
def test_nvcc_builds_a_fatbin_for_several_sms():
    flags = ["-gencode", f"arch=compute_100f,code={nvcc.format_target_code_for_gencode(['sm_100a', 'sm_103a'])}"]
    fatbin = bytes(nvcc.compile_cuda(KERNEL, "fatbin", arch=flags))
    assert fatbin[:4] == b"\x50\xed\x55\xba"  # the fatbin magic
    assert fatbin.count(b"\x7fELF") == 2  # one cubin per SM of the code list


@needs_nvcc
def test_toolkit_location_and_version():
    root = nvcc.find_cuda_path()
    assert os.path.exists(nvcc.get_nvcc_compiler())
    version = nvcc.get_cuda_version(root)
    assert len(version) >= 2 and version[0] >= 11
    assert nvcc.have_cudagraph()
    assert all(os.path.isdir(d) for d in nvcc.get_cuda_library_dirs(root))
    assert nvcc.default_compile_options(["-DX=1 -lineinfo"])[-2:] == ["-DX=1", "-lineinfo"]


@needs_nvcc
def test_sass_of_a_source():
    from tvm.target import Target

    if shutil.which("nvdisasm") is None and shutil.which("cuobjdump") is None:
        pytest.skip("neither nvdisasm nor cuobjdump is on PATH")
    with Target({"kind": "cuda", "arch": "sm_80"}):
        sass = nvcc.get_sass_from_source(KERNEL)
    assert "FADD" in sass or "FADD" in sass.upper()
