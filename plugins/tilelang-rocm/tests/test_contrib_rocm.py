"""tilelang.contrib.{hipcc,rocm,hip_resource_info}: HIP builds (through a clang-based hipcc stand-in when no
ROCm is installed), resource remarks, ld.lld discovery and AMDGPU code-object linking."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess

import pytest

from tilelang_rocm.contrib import hip_resource_info as hri
from tilelang_rocm.contrib import hipcc, rocm

CLANG = shutil.which("clang++-22") or shutil.which("clang++")
LLD = next(iter(rocm.find_lld(required=False)), None)
needs_amdgpu_tools = pytest.mark.skipif(CLANG is None or LLD is None, reason="needs clang++ and ld.lld")

REMARKS = """\
k.cc:1:1: remark: Function Name: add_one [-Rpass-analysis=kernel-resource-usage]
k.cc:1:1: remark:     VGPRs: 5 [-Rpass-analysis=kernel-resource-usage]
k.cc:1:1: remark:     ScratchSize [bytes/lane]: 16 [-Rpass-analysis=kernel-resource-usage]
k.cc:1:1: remark:     VGPRs Spill: 2 [-Rpass-analysis=kernel-resource-usage]
k.cc:3:2: warning: unused variable 'y' [-Wunused-variable]
k.cc:9:1: remark: Function Name: other [-Rpass-analysis=kernel-resource-usage]
k.cc:9:1: remark:     VGPRs: 7 [-Rpass-analysis=kernel-resource-usage]
"""

HIP_KERNEL = 'extern "C" __attribute__((amdgpu_kernel)) void add_one(float* x) {\n' \
             "  x[__builtin_amdgcn_workitem_id_x()] += 1.0f;\n}\n"


def test_remarks_are_recorded_and_stripped(tmp_path):
    hri.reset_recorder()
    kept = hri.filter_and_record(REMARKS)
    assert kept == "k.cc:3:2: warning: unused variable 'y' [-Wunused-variable]\n"
    usage = hri.pop_recorded()
    assert usage["add_one"].n_regs == 5 and usage["add_one"].scratch_bytes == 16
    assert usage["add_one"].n_spills == 2 + 16 // 4 and usage["other"].n_regs == 7
    assert hri.pop_recorded() == {}
    path = tmp_path / "usage.json"
    hri.dump_to_file(usage, str(path))
    assert hri.load_from_file(str(path)) == usage
    assert hri.filter_and_record("no remarks here\n") == "no remarks here\n"


def _fake_hipcc(directory, clang: str, lld: str) -> None:
    """A ``hipcc`` translating the flags compile_hip uses to clang (AMDGPU object) + ld.lld (code object)."""
    script = directory / "hipcc"
    script.write_text(f"""#!/bin/sh
out=""; arch=""; args=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift ;;
    --offload-arch=*) arch="${{1#--offload-arch=}}" ;;
    --genco|-c) ;;
    *) args="$args $1" ;;
  esac
  shift
done
{clang} --target=amdgcn-amd-amdhsa -mcpu=$arch -x c++ -c $args -o "$out.o" || exit 1
exec {lld} --no-undefined -shared "$out.o" -o "$out"
""")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


@needs_amdgpu_tools
def test_compile_hip_builds_a_code_object_and_records_resources(tmp_path, monkeypatch):
    _fake_hipcc(tmp_path, CLANG, LLD)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    hri.reset_recorder()
    hsaco = hipcc.compile_hip(HIP_KERNEL, arch="gfx942", options=["-std=c++17"])
    assert bytes(hsaco[:4]) == b"\x7fELF"
    assert hri.pop_recorded()["add_one"].n_regs > 0
    with pytest.raises(RuntimeError, match="Compilation error"):
        hipcc.compile_hip("this is not C++", arch="gfx942")
    with pytest.raises(ValueError, match="hsaco"):
        hipcc.compile_hip(HIP_KERNEL, target_format="ptx", arch="gfx942")


def test_missing_hipcc_is_explained(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("ROCM_PATH", str(tmp_path))
    if os.path.exists("/opt/rocm/bin/hipcc"):
        pytest.skip("a ROCm install is present")
    with pytest.raises(RuntimeError, match="hipcc was not found"):
        hipcc.get_hipcc()


def test_find_lld_searches_rocm_path_first(tmp_path, monkeypatch):
    bin_dir = tmp_path / "llvm" / "bin"
    bin_dir.mkdir(parents=True)
    fake = bin_dir / "ld.lld"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("ROCM_PATH", str(tmp_path))
    assert rocm.find_lld()[0] == str(fake)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("ROCM_PATH", str(tmp_path / "none"))
    if not os.path.exists("/opt/rocm/llvm/bin"):
        assert rocm.find_lld(required=False) == []
        with pytest.raises(RuntimeError, match="cannot find ld.lld"):
            rocm.find_lld()


@needs_amdgpu_tools
def test_rocm_link_turns_an_object_into_a_code_object(tmp_path):
    src, obj = tmp_path / "k.cc", tmp_path / "k.o"
    src.write_text(HIP_KERNEL)
    subprocess.run([CLANG, "--target=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-x", "c++", "-c", "-o", str(obj),
                    str(src)], check=True)
    linked = rocm.callback_rocm_link(obj.read_bytes())
    assert bytes(linked[:4]) == b"\x7fELF" and b"add_one" in bytes(linked)
    with pytest.raises(RuntimeError, match="Linking error"):
        rocm.callback_rocm_link(b"not an object")


def test_rocm_callbacks_are_registered_and_bitcode_is_checked(tmp_path):
    import tvm_ffi

    assert tvm_ffi.get_global_func("tvm_callback_rocm_link") is not None
    for name in ("ocml", "oclc_daz_opt_on", "oclc_isa_version_900"):
        (tmp_path / f"{name}.bc").write_bytes(b"BC")
    with pytest.raises(RuntimeError, match="could not find bitcode oclc_correctly_rounded_sqrt_off"):
        rocm.callback_rocm_bitcode_path(str(tmp_path))
    for name in rocm._BITCODE_NAMES:
        if "isa_version" not in name and name != "irif":
            (tmp_path / f"{name}.bc").write_bytes(b"BC")
    found = rocm.callback_rocm_bitcode_path(str(tmp_path))
    assert str(tmp_path / "ocml.bc") in found and str(tmp_path / "oclc_isa_version_900.bc") in found
    assert rocm.parse_compute_version("9.4") == (9, 4) and rocm.have_matrixcore("9.0")
    with pytest.warns(UserWarning, match="ROCm not detected"):
        assert rocm.get_rocm_arch(str(tmp_path / "no-rocm")) == "gfx900"
