"""tilelang.contrib.msvc off Windows."""

from __future__ import annotations

import os

import pytest

from tilelang.contrib import msvc


@pytest.mark.skipif(os.name == "nt", reason="checks the behaviour off Windows")
def test_msvc_answers_none_off_windows(tmp_path):
    assert msvc.get_msvc_subprocess_env() is None
    assert msvc.get_windows_compiler() == (None, None)
    assert msvc.get_msvc_environment_error() is None
    with pytest.raises(ValueError, match="only available on Windows"):
        msvc.create_shared(str(tmp_path / "x.dll"), [])


def test_msvc_source_and_option_translation(tmp_path):
    assert msvc._normalize_option("-I/inc") == "/I/inc" and msvc._normalize_option("-DX=1") == "/DX=1"
    assert msvc._normalize_option("-fPIC") is None and msvc._normalize_option("-std=c++17") is None
    assert msvc._normalize_option("/O2") == "/O2"
    src = tmp_path / "k.c"
    src.write_text("int32_t __tvm_ffi_main(void* a) { return 0; }\n"
                   "float buf[4] __attribute__((aligned(64)));\nvoid* __tvm_ffi__library_ctx;\n")
    patched = msvc._patch_source_for_msvc(str(src), str(tmp_path))
    assert patched != str(src) and "__declspec(align(64))" in open(patched).read()
    assert msvc._collect_tvm_ffi_exports(str(src)) == ["__tvm_ffi__library_ctx,DATA", "__tvm_ffi_main"]
    assert msvc.get_env_path({"Path": "C:/x"}) == "C:/x"
