"""``tvm.tirx.Call`` takes the fork's argument order ``(dtype, op, args)`` as well as 0.27's ``(op, args, ...)``."""

from __future__ import annotations


def test_fork_and_tvm_argument_orders_build_the_same_call():
    from tilelang import tvm

    tirx, ir = tvm.tirx, tvm.ir
    x = tirx.Var("x", "float32x2")
    fork = tirx.Call("float32x2", ir.Op.get("tl.abs2"), [x])
    by_name = tirx.Call("float32x2", "tl.abs2", [x])
    native = tirx.Call(ir.Op.get("tl.abs2"), [x], ret_ty="float32x2")
    for call in (fork, by_name, native):
        assert isinstance(call, tirx.Call) and isinstance(call, ir.Call)
        assert str(call.dtype) == "float32x2" and call.op.name == "tl.abs2"
    assert tvm.ir.structural_equal(fork, native) and tvm.ir.structural_equal(by_name, native)


def test_tl_ops_are_registered_once_tvm_is_imported():
    from tilelang import tvm

    assert tvm.ir.Op.get("tl.add2").name == "tl.add2"
