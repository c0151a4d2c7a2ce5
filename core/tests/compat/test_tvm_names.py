"""The names TileLang programs use on ``tvm`` that apache-tvm 0.27 renamed or moved (`tilelang._tvm_compat`)."""

from __future__ import annotations

import subprocess
import sys


def test_fork_names_resolve_after_import_tilelang():
    code = """
import tilelang, sys
assert "tvm" not in sys.modules  # nothing imported early
import tvm
import tvm.arith
from tvm.tirx import stmt_functor
from tvm import tirx
assert tvm.arith is tvm.sym and tvm.arith.Analyzer is tvm.sym.Analyzer
x = tirx.Var("x", "int32")
assert tvm.ir.structural_equal(x + 1, x + 1) and not tvm.ir.structural_equal(x + 1, x + 2)
assert isinstance(x + 1, tvm.tirx.PrimExpr)
seen = []
stmt_functor.post_order_visit(x * 2 + 1, seen.append)
assert len(seen) == 5, seen  # x, 2, x*2, 1, x*2+1
assert str(stmt_functor.substitute(x + 1, {x: tirx.IntImm("int32", 4)})) == "T.Add(4, 1)"
doubled = stmt_functor.ir_transform(x + 1, None, lambda n: n * 2 if isinstance(n, tirx.Var) else None)
assert tvm.ir.structural_equal(doubled, x * 2 + 1)
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_tvm_imported_before_tilelang_is_patched_too():
    code = "import tvm; import tilelang; import tvm.arith; assert tvm.ir.structural_hash(1) is not None; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_tvm_testing_requires_package_as_the_fork_has_it():
    """The reference's dequantising GEMM example decorates a helper with ``@tvm.testing.requires_package("bitblas")``
    after ``from tilelang import tvm``, without importing ``tvm.testing``: the helper stays callable, and a test
    so marked is skipped without the package."""
    code = """
import tilelang.testing
from tilelang import tvm

@tvm.testing.requires_package("surely_not_a_package_here")
def helper(x):
    return x + 1

assert helper(1) == 2
marks = [m.name for m in getattr(helper, "pytestmark", [])]
assert "skipif" in marks or "skip" in marks, marks
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_registering_the_ops_before_tvm_is_imported_does_not_deadlock():
    """A fresh worker process (Ray, Dask, spawn) whose first TileLang call registers the ``tl.*`` ops: TVM's first
    import calls back into the registration, which must not wait for the lock its caller holds."""
    code = ("import sys; from tilelang.ir.ops import ensure_registered; assert 'tvm' not in sys.modules; "
            "ensure_registered(); import tvm; tvm.ir.Op.get('tl.gemm'); print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_annotate_device_regions_chains_before_split_host_device():
    """The fork's AnnotateDeviceRegions -> SplitHostDevice chain: 0.27's SplitHostDevice finds the launch regions
    itself, so the first pass keeps its name and changes nothing, and the split still happens."""
    import tvm
    from tvm.script import tirx as TS

    import tilelang  # noqa: F401  (installs the fork's names)

    @TS.prim_func(private=True)
    def func(A: TS.Buffer((16,), "float32")):
        tx = TS.launch_thread("threadIdx.x", 16)
        A[tx] = A[tx] + 1.0

    target = tvm.target.Target("cuda", host="llvm")
    mod = tvm.IRModule({"main": func.with_attr({"global_symbol": "main", "target": target})})
    annotate = tvm.tirx.transform.AnnotateDeviceRegions()
    assert annotate.info.name == "tirx.AnnotateDeviceRegions"
    annotated = annotate(mod)
    tvm.ir.assert_structural_equal(annotated, mod)
    split = tvm.tirx.transform.SplitHostDevice()(annotated)
    assert {gv.name_hint for gv in split.get_global_vars()} == {"main", "main_kernel"}
