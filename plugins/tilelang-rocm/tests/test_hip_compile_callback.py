"""The ROCm backend's ``tilelang_callback_hip_compile``: declared in the manifest, registered with TVM, and
compiling HIP C++ for the target's mcpu through tilelang_rocm.contrib.hipcc."""

from __future__ import annotations

import os
import shutil
import stat

import pytest

CLANG = shutil.which("clang++-22") or shutil.which("clang++")
HIP_SOURCE = 'extern "C" __attribute__((amdgpu_kernel)) void scale(float* x) {\n' \
             "  x[__builtin_amdgcn_workitem_id_x()] *= 2.0f;\n}\n"


def test_callback_is_declared_and_registered():
    import tvm  # noqa: F401 (get_backend reads TVM's target kinds)
    import tvm_ffi

    from tilelang.backend import get_backend
    from tilelang_rocm.compiler import tilelang_callback_hip_compile

    assert get_backend("rocm").callbacks["tilelang_callback_hip_compile"] is tilelang_callback_hip_compile
    assert tvm_ffi.get_global_func("tilelang_callback_hip_compile", allow_missing=True) is not None


def test_callback_passes_the_mcpu_and_includes(monkeypatch):
    from tilelang_rocm.compiler import tilelang_callback_hip_compile
    from tilelang_rocm.contrib import hipcc

    seen = {}
    monkeypatch.setattr(hipcc, "compile_hip", lambda code, **kw: seen.update(kw) or bytearray(b"hsaco"))
    monkeypatch.setenv("TL_TEMPLATE_PATH", "/opt/tl_templates")  # not setattr(env, ...): that forces it for good
    monkeypatch.delenv("TL_COMPOSABLE_KERNEL_PATH", raising=False)
    assert tilelang_callback_hip_compile(HIP_SOURCE, {"kind": "rocm", "mcpu": "gfx90a"}) == bytearray(b"hsaco")
    assert seen["arch"] == "gfx90a" and seen["target_format"] == "hsaco"
    assert seen["options"] == ["-std=c++17", "-I/opt/tl_templates"]


@pytest.mark.skipif(CLANG is None, reason="needs clang++ with the AMDGPU target")
def test_callback_builds_a_code_object(tmp_path, monkeypatch):
    """hipcc is stood in for by clang (AMDGPU object) + ld.lld (code object) when ROCm is not installed."""
    from tvm.target import Target

    from tilelang_rocm.compiler import tilelang_callback_hip_compile
    from tilelang_rocm.contrib import hip_resource_info, rocm

    lld = next(iter(rocm.find_lld(required=False)), None)
    if lld is None:
        pytest.skip("needs ld.lld")
    if shutil.which("hipcc") is None:
        script = tmp_path / "hipcc"
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
{CLANG} --target=amdgcn-amd-amdhsa -mcpu=$arch -x c++ -c $args -o "$out.o" || exit 1
exec {lld} --no-undefined -shared "$out.o" -o "$out"
""")
        script.chmod(script.stat().st_mode | stat.S_IEXEC)
        monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    hip_resource_info.reset_recorder()
    hsaco = tilelang_callback_hip_compile(HIP_SOURCE, Target({"kind": "rocm", "mcpu": "gfx942"}))
    assert bytes(hsaco[:4]) == b"\x7fELF" and b"scale" in bytes(hsaco)
    assert hip_resource_info.pop_recorded()["scale"].n_regs > 0
