"""Module-level ``@T.prim_func`` kernels decorated before TVM is imported are parsed on first use (`LazyPrimFunc`)
and still behave as PrimFuncs: isinstance, attributes, printing, TVM functions, ``tilelang.lower`` / ``compile``."""

from __future__ import annotations

import copy
import json
import os
import pickle
import subprocess
import sys
import textwrap

import pytest
import torch
import tvm

import tilelang
import tilelang.language as T
from tilelang.frontend.lazy import LazyPrimFunc

DEFERRED = '''
import json, os, sys
import tilelang
import tilelang.language as T

SCALE = 2.0


@T.prim_func
def scale(A: T.Tensor((8, 4), "float32"), C: T.Tensor((8, 4), "float32")):
    with T.Kernel(1, is_cpu=True):
        for i, j in T.Parallel(8, 4):
            C[i, j] = A[i, j] * SCALE


@T.prim_func
def broken(A: T.Tensor((8,), "float32")):
    with T.Kernel(1, is_cpu=True):
        A[0] = undefined_name


def inner():
    @T.prim_func
    def local(A: T.Tensor((8,), "float32")):
        with T.Kernel(1, is_cpu=True):
            A[0] = 1.0
    return local


out = {"type": type(scale).__name__, "tvm_after_decorating": "tvm" in sys.modules}
SCALE = 5.0  # after decoration: the kernel keeps the value it was decorated with
import tvm
out["isinstance"] = isinstance(scale, tvm.tirx.PrimFunc)
out["params"] = [str(p.name) for p in scale.params]
out["script"] = "def scale" in scale.script()
out["irmodule"] = isinstance(tvm.IRModule({"main": scale})["main"], tvm.tirx.PrimFunc)
out["lowered"] = "fmul" in tilelang.lower(scale, target="cpu").kernel_source
import torch
kernel = tilelang.compile(scale, out_idx=[-1], target="cpu")
out["value"] = float(kernel(torch.ones(8, 4))[0, 0])
try:
    broken.params
except Exception as exc:
    out["error"] = f"{type(exc).__name__}: {exc}"
out["inner"] = type(inner()).__name__
print(json.dumps(out))
'''


def _run(tmp_path, code: str, **env: str) -> dict:
    script = tmp_path / "kernels_script.py"
    script.write_text(textwrap.dedent(code))
    full_env = {**os.environ, "TILELANG_CACHE_DIR": str(tmp_path / "cache"), **env}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=full_env, timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


@pytest.mark.backend("cpu")  # the script lowers and compiles for the CPU
def test_a_deferred_kernel_acts_as_its_prim_func(tmp_path):
    out = _run(tmp_path, DEFERRED)
    assert out["type"] == "LazyPrimFunc" and out["tvm_after_decorating"] is False
    assert out["isinstance"] and out["params"] == ["A", "C"] and out["script"] and out["irmodule"] and out["lowered"]
    assert out["value"] == 2.0  # the globals as they were when it was decorated
    assert out["error"].startswith("KernelSyntaxError") and "undefined_name" in out["error"]
    assert "kernels_script.py:" in out["error"]  # the kernel's own line
    assert out["inner"] == "PrimFunc"  # inside a function: parsed at once, as before


def test_lazy_prim_func_can_be_turned_off(tmp_path):
    code = DEFERRED[:DEFERRED.index("@T.prim_func\ndef broken")] + \
        'print(json.dumps({"type": type(scale).__name__, "tvm": "tvm" in sys.modules}))\n'
    assert _run(tmp_path, code) == {"type": "LazyPrimFunc", "tvm": False}
    assert _run(tmp_path, code, TILELANG_LAZY_PRIM_FUNC="0") == {"type": "PrimFunc", "tvm": True}


def add_rows(A: T.Tensor((16, 4), "float32"), B: T.Tensor((16, 4), "float32"), C: T.Tensor((16, 4), "float32")):
    with T.Kernel(2, is_cpu=True) as bx:
        for i, j in T.Parallel(8, 4):
            C[bx * 8 + i, j] = A[bx * 8 + i, j] + B[bx * 8 + i, j]


def test_lazy_prim_func_builds_once_and_compares_by_identity():
    lazy = LazyPrimFunc(add_rows)
    assert not lazy.is_built
    func = lazy.materialize()
    assert lazy.is_built and lazy.materialize() is func
    assert isinstance(lazy, tvm.tirx.PrimFunc) and isinstance(lazy, LazyPrimFunc)
    assert lazy == lazy and lazy == func and LazyPrimFunc(add_rows) != lazy
    assert hash(lazy) == hash(lazy) and len({lazy, lazy}) == 1
    assert str(lazy) == str(func) and "add_rows" in repr(lazy)
    assert copy.copy(lazy) is func and copy.deepcopy(lazy) is func  # immutable IR
    with pytest.raises(TypeError, match="cannot pickle the T.prim_func kernel 'add_rows'"):
        pickle.dumps(lazy)
    tvm.ir.assert_structural_equal(lazy, func)  # passed to a TVM function as its PrimFunc


@pytest.mark.backend("llvm")
def test_compiling_an_unbuilt_kernel_records_its_source_key(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))
    tilelang.cache.manager.kernel_cache.clear(disk=False)
    first = tilelang.compile(LazyPrimFunc(add_rows), out_idx=[-1], target="cpu")
    assert not first.from_cache
    assert len(list((tmp_path / "cache" / "records" / "jit").glob("*.json"))) == 1
    tilelang.cache.manager.kernel_cache.clear(disk=False)
    lazy = LazyPrimFunc(add_rows)
    again = tilelang.compile(lazy, out_idx=[-1], target="cpu")
    assert again.from_cache and not lazy.is_built  # found by its source key: never parsed
    a, b = torch.randn(16, 4), torch.randn(16, 4)
    torch.testing.assert_close(again(a, b), a + b)
