"""Warm start: a new process finds every kernel form in the cache without importing TVM, and the source key that
finds it changes with everything that changes the kernel (helpers, macros, closures, globals, annotations,
modules a factory imports, pass configs, target)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import tilelang
from tilelang.cache.keys import function_fingerprint
from tilelang.jit import source_keys
from tilelang.jit.compiler import CompileOptions

pytestmark = pytest.mark.backend("llvm")

# The three forms a user writes, with the language imported at the top of the module as users do.
KERNELS = '''
import tilelang
import tilelang.language as T

N = 16


@tilelang.jit(out_idx=[-1], target="cpu")
def factory_add(M, block_M=8):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(M // block_M, is_cpu=True) as bx:
            for i, j in T.Parallel(block_M, N):
                C[bx * block_M + i, j] = A[bx * block_M + i, j] + B[bx * block_M + i, j]

    return main


@tilelang.jit(target="cpu")
def eager_add(A, B, block_M: int = 8):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float32)
    B: T.Tensor((M, K), T.float32)
    C = T.empty((M, K), T.float32)
    with T.Kernel(M // block_M, is_cpu=True) as bx:
        for i, j in T.Parallel(block_M, K):
            C[bx * block_M + i, j] = A[bx * block_M + i, j] + B[bx * block_M + i, j] * 2.0
    return C


@T.prim_func
def module_add(A: T.Tensor((32, N), "float32"), B: T.Tensor((32, N), "float32"), C: T.Tensor((32, N), "float32")):
    with T.Kernel(4, is_cpu=True) as bx:
        for i, j in T.Parallel(8, N):
            C[bx * 8 + i, j] = A[bx * 8 + i, j] - B[bx * 8 + i, j]
'''

PROBE = '''
import json, sys, torch
import warm_kernels as k
import tilelang

a, b = torch.randn(32, 16), torch.randn(32, 16)
deferred = type(k.module_add).__name__
results = {
    "factory": (k.factory_add(32), lambda kern: kern(a, b), a + b),
    "eager": (k.eager_add.compile(a, b), lambda kern: kern(a, b), a + 2 * b),
    "prim_func": (tilelang.compile(k.module_add, out_idx=[-1], target="cpu"), lambda kern: kern(a, b), a - b),
}
out = {name: {"from_cache": kern.from_cache, "ok": bool(torch.allclose(run(kern), want))}
       for name, (kern, run, want) in results.items()}
print(json.dumps({"forms": out, "tvm": "tvm" in sys.modules, "deferred": deferred,
                  "built": k.module_add.is_built if deferred == "LazyPrimFunc" else None}))
'''


def _run(tmp: Path, cache_dir: Path) -> dict:
    env = {**os.environ, "TILELANG_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(tmp)}
    out = subprocess.run([sys.executable, str(tmp / "probe.py")], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def test_every_kernel_form_loads_from_a_warm_cache_without_tvm(tmp_path, cache_dir):
    (tmp_path / "warm_kernels.py").write_text(KERNELS)
    (tmp_path / "probe.py").write_text(PROBE)
    cold = _run(tmp_path, cache_dir)
    assert cold["tvm"] and cold["deferred"] == "LazyPrimFunc" and cold["built"]  # a miss parses it
    assert all(form == {"from_cache": False, "ok": True} for form in cold["forms"].values()), cold
    warm = _run(tmp_path, cache_dir)
    assert warm["forms"] == {name: {"from_cache": True, "ok": True} for name in ("factory", "eager", "prim_func")}
    assert warm["tvm"] is False  # after every result: TVM never imported
    assert warm["deferred"] == "LazyPrimFunc" and warm["built"] is False  # the kernel was never parsed


# ------------------------------------------------------------------------------------------ source keys
def _module(tmp_path: Path, name: str, source: str):
    """Import (or re-import after an edit) module `name` written to `tmp_path` with `source`."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    os.utime(path, ns=(path.stat().st_mtime_ns + 10**9,) * 2)  # a new mtime even within the clock's resolution
    importlib.invalidate_caches()
    sys.path.insert(0, str(tmp_path))
    try:
        if name in sys.modules:
            return importlib.reload(sys.modules[name])
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(tmp_path))


def _key(fn, options: CompileOptions | None = None, call=(32,)) -> str:
    options = options or CompileOptions(out_idx=[-1], target="cpu")
    key = source_keys.source_key("lazy", fn, [list(call), {}], options, options.resolved_target())
    assert key is not None
    return key


@pytest.fixture
def clean_modules():
    names = set(sys.modules)
    yield
    for name in set(sys.modules) - names:
        if name.startswith("wk_"):
            del sys.modules[name]


FACTORY = """
import tilelang.language as T
{imports}

def factory(M):
    @T.prim_func
    def main(A: T.Tensor((M, 4), "float32"), C: T.Tensor((M, 4), "float32")):
        with T.Kernel(1, is_cpu=True):
            for i, j in T.Parallel(M, 4):
                C[i, j] = {expr}

    return main
"""


@pytest.mark.parametrize("imports, expr, helper_v1, helper_v2", [
    ("from wk_helpers import scale", "scale(A[i, j])", "def scale(x):\n    return x * 2\n",
     "def scale(x):\n    return x * 3\n"),
    ("import wk_helpers", "wk_helpers.scale(A[i, j])", "def scale(x):\n    return x * 2\n",
     "def scale(x):\n    return x * 3\n"),
    ("import wk_helpers", "A[i, j] * wk_helpers.FACTOR", "FACTOR = 2.0\n", "FACTOR = 3.0\n"),
    ("from wk_helpers import Config", "A[i, j] * Config.FACTOR", "class Config:\n    FACTOR = 2.0\n",
     "class Config:\n    FACTOR = 3.0\n"),
    ("import tilelang.language as T\nfrom wk_helpers import scaled",
     "A[i, j] * 1.0\n                scaled(C, A, i, j)",
     "import tilelang.language as T\n@T.macro\ndef scaled(C, A, i, j):\n    C[i, j] = A[i, j] * 2\n",
     "import tilelang.language as T\n@T.macro\ndef scaled(C, A, i, j):\n    C[i, j] = A[i, j] * 3\n"),
], ids=["helper-function", "module-function", "module-constant", "class-attribute", "macro"])
def test_editing_a_helper_changes_the_key(tmp_path, clean_modules, imports, expr, helper_v1, helper_v2):
    _module(tmp_path, "wk_helpers", helper_v1)
    kernels = _module(tmp_path, "wk_kernels", FACTORY.format(imports=imports, expr=expr))
    before = _key(kernels.factory)
    assert _key(kernels.factory) == before  # stable
    _module(tmp_path, "wk_helpers", helper_v2)
    kernels = _module(tmp_path, "wk_kernels", FACTORY.format(imports=imports, expr=expr))
    assert _key(kernels.factory) != before


def test_a_module_imported_inside_the_factory_is_keyed(tmp_path, clean_modules):
    source = """
    def factory(M):
        import wk_local
        return wk_local.make(M)
    """
    _module(tmp_path, "wk_local", "def make(M):\n    return M * 2\n")
    kernels = _module(tmp_path, "wk_kernels", source)
    before = _key(kernels.factory)
    _module(tmp_path, "wk_local", "def make(M):\n    return M * 3\n")
    assert _key(kernels.factory) != before


def test_closures_globals_and_annotations_change_the_key(tmp_path, clean_modules):
    source = """
    import tilelang.language as T
    SCALE = {scale}
    ROWS = {rows}

    def make(offset):
        def factory(M):
            return M * SCALE + offset
        return factory

    def annotated(A: T.Tensor((ROWS, 4), "float32")):
        pass
    """
    kernels = _module(tmp_path, "wk_kernels", source.format(scale=2, rows=8))
    factory, annotated = _key(kernels.make(1)), function_fingerprint(kernels.annotated)
    assert _key(kernels.make(2)) != factory  # closure value
    kernels = _module(tmp_path, "wk_kernels", source.format(scale=3, rows=8))
    assert _key(kernels.make(1)) != factory  # global read by the body
    assert function_fingerprint(kernels.annotated) == annotated
    kernels = _module(tmp_path, "wk_kernels", source.format(scale=3, rows=16))
    assert function_fingerprint(kernels.annotated) != annotated  # a global read only by an annotation


def test_pass_configs_and_target_change_the_key():
    from jit_kernels import add_factory

    base = _key(add_factory)
    assert _key(add_factory, CompileOptions(out_idx=[-1], target="cpu", pass_configs={"tl.disable_vectorize": True})) \
        != base
    assert _key(add_factory, CompileOptions(out_idx=[-1], target={"kind": "c"})) != base
    assert _key(add_factory, CompileOptions(out_idx=None, target="cpu")) != base
    assert _key(add_factory, call=(64,)) != base


def test_a_value_without_a_spelling_gives_no_source_key(tmp_path, clean_modules):
    kernels = _module(tmp_path, "wk_kernels", "STATE = object()\n\ndef factory(M):\n    return STATE\n")
    options = CompileOptions(out_idx=[-1], target="cpu")
    assert source_keys.source_key("lazy", kernels.factory, [[32], {}], options, options.resolved_target()) is None


SCALED = """
import tilelang
import tilelang.language as T

SCALE = 2.0


def scaled(M, N):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, is_cpu=True):
            for i, j in T.Parallel(M, N):
                C[i, j] = A[i, j] * SCALE

    return main
"""


def test_a_global_changed_between_two_calls_keys_the_second_by_its_new_value(tmp_path, clean_modules):
    # Regression: the fingerprint was taken once per decorated function, so a call made after the global changed was
    # stored under the old value's key, and a new process with the old value got the new value's kernel.
    kernels = _module(tmp_path, "wk_scaled", SCALED)
    a = torch.ones(4, 4)
    first = tilelang.jit(out_idx=[-1], target="cpu")(kernels.scaled)
    assert float(first(4, 4)(a)[0, 0]) == 2.0
    kernels.SCALE = 3.0
    assert float(first(8, 4)(torch.ones(8, 4))[0, 0]) == 3.0
    tilelang.cache.manager.kernel_cache.clear(disk=False)
    kernels.SCALE = 2.0  # as a new process that imports the module would have it
    fresh = tilelang.jit(out_idx=[-1], target="cpu")(kernels.scaled)
    assert float(fresh(8, 4)(torch.ones(8, 4))[0, 0]) == 2.0
