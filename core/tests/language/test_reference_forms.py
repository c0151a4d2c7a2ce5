"""Forms of the reference TileLang's language surface that TileLang here accepts too, run on the CPU backend and
compared with torch where they build kernels: pointer tables through ``T.make_tensor``, the fp4 dtype predicates
on every dtype TVM hands out, ``tirx.BufferLoad`` in ``isinstance`` and ``PrimFunc(..., buffer_map=...)``."""

from __future__ import annotations

import pytest
import torch

import tilelang
import tilelang.language as T


def test_make_tensor_over_a_pointer_table_indexed_by_the_block():
    groups, n = 3, 8

    @T.prim_func
    def gather(src_ptrs: T.Tensor([groups], T.ptr), out: T.Tensor([groups, n], T.float32)):
        with T.Kernel(groups, threads=1) as bx:
            src = T.make_tensor(src_ptrs[bx], (n,), T.float32)
            for i in T.serial(n):
                out[bx, i] = src[i] * 2.0

    table = gather.buffer_map[gather.params[0]]
    assert table.dtype == "int64" and [int(d) for d in table.shape] == [groups]
    srcs = [torch.randn(n) for _ in range(groups)]
    ptrs = torch.tensor([s.data_ptr() for s in srcs], dtype=torch.int64)
    out = torch.zeros(groups, n)
    tilelang.compile(gather, target="cpu")(ptrs, out)
    torch.testing.assert_close(out, torch.stack(srcs) * 2)


def test_make_tensor_over_a_pointer_parameter_makes_it_a_tensor_parameter():
    @T.prim_func
    def double(A_ptr: T.ptr, B: T.Tensor((16,), T.float32)):
        A = T.make_tensor(A_ptr, (16,), T.float32)
        with T.Kernel(1, threads=1):
            for i in T.serial(16):
                B[i] = A[i] * 2.0

    (a_buf, _) = double.buffer_map.values()
    assert a_buf.dtype == "float32" and [int(d) for d in a_buf.shape] == [16]
    a, b = torch.randn(16), torch.zeros(16)
    tilelang.compile(double, target="cpu")(a, b)
    torch.testing.assert_close(b, a * 2)


def test_fp4_predicates_on_expression_dtypes():
    from tvm import tirx

    @T.prim_func
    def tag():
        T.evaluate(T.float4_e2m1_unpacked(0.0))

    assert isinstance(tag.body, tirx.Evaluate) and tag.body.value.dtype.is_float4_e2m1_unpacked()

    for dt, packed, unpacked in (("float4_e2m1fn", True, False), ("float32", False, False)):
        expr = tirx.Var("x", dt)
        assert expr.dtype.is_float4_e2m1fn() is packed and expr.dtype.is_float4_e2m1_unpacked() is unpacked
        assert expr.dtype.is_float4() is (packed or unpacked)
    unpacked_expr = T.float4_e2m1_unpacked(1.0)
    assert unpacked_expr.dtype.is_float4_e2m1_unpacked() and unpacked_expr.dtype.is_float4()


def test_tirx_node_constructors_work_with_isinstance_and_buffer_map():
    import tvm
    from tvm import tirx

    buf = tirx.decl_buffer((8, 8), "float16", name="A")
    load = tirx.BufferLoad(buf, [tirx.IntImm("int32", 2), tirx.IntImm("int32", 3)])
    region = tirx.BufferRegion(buf, [tvm.ir.Range(0, 2), tvm.ir.Range(0, 8)])
    assert isinstance(load, tirx.BufferLoad) and not isinstance(load, tirx.BufferRegion)
    assert isinstance(region, tirx.BufferRegion) and not isinstance(buf, tirx.BufferLoad)
    ptr = T.access_ptr(load, "w", 4, 5)
    assert isinstance(ptr.args[0], tirx.BufferLoad) and int(ptr.args[1].value) == 20

    n = tirx.Var("n", "int32")
    func = tirx.PrimFunc([n, buf.data], tirx.Evaluate(load), buffer_map={buf.data: buf})
    assert func.params[0].same_as(n) and func.params[1].same_as(buf)
    assert next(iter(func.buffer_map.values())).same_as(buf)


def test_out_idx_given_for_a_kernel_that_returns_its_outputs_is_a_conflict():
    @T.prim_func
    def copy(A):
        A: T.Tensor[[32], T.float32]
        B = T.empty([32], T.float32)
        with T.Kernel(1):
            for i in T.serial(32):
                B[i] = A[i]
        return B

    with pytest.raises(ValueError, match="Out index conflict"):
        tilelang.compile(copy, out_idx=[-1], target="cpu")
    a = torch.randn(32)
    torch.testing.assert_close(tilelang.compile(copy, target="cpu")(a), a)


def test_unsigned_bitwise_ops_take_full_range_int_literals():
    x = T.uint32()
    for expr in (x & 0xFFFFFFFF, 0xFFFFFFFF | x, x ^ 0xFFFFFFFF):
        assert str(expr.dtype) == "uint32"
    assert str((T.uint64() & 0xFFFFFFFFFFFFFFFF).dtype) == "uint64"

    @T.prim_func
    def flip(A: T.Tensor((8,), T.int64), B: T.Tensor((8,), T.int64)):
        with T.Kernel(1, threads=1):
            for i in T.serial(8):
                B[i] = T.cast((T.cast(A[i], T.uint32) ^ 0xFFFFFFFF) & 0xFFFF00FF, T.int64)

    a = torch.randint(0, 1 << 32, (8,), dtype=torch.int64)
    b = torch.zeros(8, dtype=torch.int64)
    tilelang.compile(flip, target="cpu")(a, b)
    assert torch.equal(b, (a ^ 0xFFFFFFFF) & 0xFFFF00FF)
