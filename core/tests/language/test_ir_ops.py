"""Tile-op registration (idempotent, opaque, printable) and region helpers."""

from __future__ import annotations

import pytest
import tvm
from tvm import tirx

import tilelang.ir as tl_ir


def test_all_ops_registered_opaque_and_printable():
    tl_ir.register_all()  # a second registration is a no-op
    tl_ir.register_tile_op("tl.copy", "again")
    for name in tl_ir.TILE_OPS:
        op = tvm.ir.Op.get(name)
        assert int(op.get_attr("TCallEffectKind")) == int(tirx.CallEffectKind.Opaque.value)
        assert op.get_attr("TScriptPrinterName") == name
    assert set(tl_ir.TILE_OPS) == {"tl.copy", "tl.fill", "tl.gemm", "tl.reduce", "tl.cumsum", "tl.atomic",
                                   "tl.transpose", "tl.im2col", "tl.gemm_sp"}
    pure = int(tirx.CallEffectKind.Pure.value)
    assert int(tvm.ir.Op.get("tl.__exp").get_attr("TCallEffectKind")) == pure
    assert int(tvm.ir.Op.get("tl.any_sync").get_attr("TCallEffectKind")) != pure


def test_tile_stmt_and_name():
    A = tirx.decl_buffer((8, 8), "float32", name="A")
    stmt = tl_ir.tile_stmt("tl.fill", [tl_ir.full_region(A), tirx.const(0.0, "float32")])
    assert isinstance(stmt, tirx.Evaluate) and tl_ir.tile_op_name(stmt) == "tl.fill"
    assert tl_ir.tile_op_name(tirx.Evaluate(0)) is None
    func = tirx.PrimFunc([A], stmt)
    assert "T.tl.fill(A[0:8, 0:8], T.float32(0.0))" in func.script()


def test_regions():
    A = tirx.decl_buffer((4, 16, 32), "float16", name="A", scope="shared.dyn")
    full = tl_ir.to_region(A)
    assert [int(r.extent) for r in full.region] == [4, 16, 32]
    corner = tl_ir.to_region(tirx.BufferLoad(A, [1, 2, 3]), [8, 16])
    assert [int(r.min) for r in corner.region] == [1, 2, 3]
    assert [int(r.extent) for r in corner.region] == [1, 8, 16]
    assert tl_ir.buffer_scope(A) == "shared.dyn" and tl_ir.buffer_dtype(A) == "float16"
    assert tl_ir.is_buffer(A) and tl_ir.is_region(full) and not tl_ir.is_load(full)
    with pytest.raises(ValueError):
        tl_ir.to_region(tirx.BufferLoad(A, [0, 0, 0]), [1, 2, 3, 4])
    with pytest.raises(TypeError):
        tl_ir.to_region(3)


def test_gemm_policy_values():
    assert [int(p) for p in tl_ir.GemmWarpPolicy] == [0, 1, 2]
    assert tl_ir.GemmWarpPolicy.FullRow == 1
