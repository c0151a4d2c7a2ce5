"""tilelang.contrib.cc: the system C compiler builds real libraries; cross compilers keep options per call."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import tarfile

import pytest

from tilelang.contrib import cc

needs_cc = pytest.mark.skipif(cc.get_cc() is None, reason="no C compiler on PATH")

# get_cc() prefers g++, which compiles .c files as C++: keep the symbols unmangled either way
C_SOURCE = ('#ifdef __cplusplus\nextern "C" {\n#endif\nint tl_add(int a, int b) { return a + b; }\n'
            "int tl_mul(int a, int b) { return a * b; }\n#ifdef __cplusplus\n}\n#endif\n")


def test_cross_compiler_keeps_base_options_and_forgets_per_call_ones():
    calls = []

    def compile_func(output, objects, options=None):
        calls.append((output, objects, options))

    compile_func.output_format = "dylib"
    fcompile = cc.cross_compiler(compile_func, options=["-base"], add_files=["extra.o"])
    fcompile("a.so", ["a.o"], options=["-first"])
    fcompile("b.so", ["b.o"])
    assert calls == [("a.so", ["a.o", "extra.o"], ["-base", "-first"]), ("b.so", ["b.o", "extra.o"], ["-base"])]
    assert fcompile.output_format == "dylib"


def test_cross_compiler_with_a_compiler_name_uses_create_shared(monkeypatch):
    seen = {}
    monkeypatch.setattr(cc, "create_shared", lambda out, objs, options=None, cc=None: seen.update(cc=cc, o=options))
    fcompile = cc.cross_compiler("my-gcc", options=["-O2"])
    fcompile("x.so", ["x.o"], options=["-g"])
    assert seen == {"cc": "my-gcc", "o": ["-O2", "-g"]}
    assert fcompile.output_format == "so"


def test_get_cc_prefers_the_environment(monkeypatch):
    monkeypatch.setenv("CXX", "/opt/custom/c++")
    assert cc.get_cc() == "/opt/custom/c++"
    monkeypatch.delenv("CXX")
    monkeypatch.delenv("CC", raising=False)
    found = cc.get_cc()
    assert found is None or os.access(found, os.X_OK)


@needs_cc
def test_create_shared_builds_a_loadable_library(tmp_path):
    src = tmp_path / "add.c"
    src.write_text(C_SOURCE)
    lib = tmp_path / "libadd.so"
    cc.create_shared(str(lib), [str(src)], options=["-O2"])
    loaded = ctypes.CDLL(str(lib))
    assert loaded.tl_add(2, 3) == 5 and loaded.tl_mul(4, 5) == 20
    if shutil.which("nm"):
        symbols = cc.get_global_symbol_section_map(str(lib))
        assert symbols["tl_add"] == "T" and symbols["tl_mul"] == "T"


@needs_cc
def test_compile_errors_name_the_command(tmp_path):
    src = tmp_path / "bad.c"
    src.write_text("int f( { return 0; }\n")
    with pytest.raises(RuntimeError, match="Compilation error") as info:
        cc.create_shared(str(tmp_path / "bad.so"), [str(src)])
    assert "Command line:" in str(info.value) and "bad.c" in str(info.value)


@needs_cc
def test_create_staticlib_unpacks_tars_of_objects(tmp_path):
    if shutil.which("ar") is None:
        pytest.skip("ar is not on PATH")
    src = tmp_path / "add.c"
    src.write_text(C_SOURCE)
    obj = tmp_path / "add.o"
    subprocess.run([cc.get_cc(), "-c", "-fPIC", "-o", str(obj), str(src)], check=True)
    archive = tmp_path / "objs.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(obj, arcname="add.o")
    out = tmp_path / "libadd.a"
    cc.create_staticlib(str(out), [str(archive)])
    members = subprocess.run(["ar", "t", str(out)], capture_output=True, text=True, check=True).stdout.split()
    assert members == ["add.o"]


@needs_cc
def test_target_triple_of_the_compiler():
    triple = cc.get_target_by_dump_machine(cc.get_cc())()
    assert triple and "-" in triple
    assert cc.get_target_by_dump_machine(None)() is None
