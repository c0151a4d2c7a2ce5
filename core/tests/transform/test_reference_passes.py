"""The reference's small passes: LetInline / Simplify (and `apply_simplify`, `simplify_prim_func`),
AddWrapperForSingleBufStore, HoistBroadcastValues and DecoupleTypeCast, each run alone on a `Before` kernel,
and kernels run on the CPU before and after each rewrite to check it keeps what they compute."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from transform_helpers import as_module, body_equal
from tvm.script import tirx as S

import tilelang
import tilelang.language as T
from tilelang.transform import (
    AddWrapperForSingleBufStore,
    DecoupleTypeCast,
    HoistBroadcastValues,
    LetInline,
    Simplify,
    apply_simplify,
    simplify_prim_func,
)
from tilelang.transform import utils as C


def _run_llvm(func, *arrays):
    lib = tvm.compile(as_module(func.with_attr("global_symbol", "main")), target="llvm")
    out = [np.array(a) if isinstance(a, np.ndarray) else a for a in arrays]
    lib["main"](*out)
    return out


# ---------------------------------------------------------------- LetInline


def test_let_inline_substitutes_pure_and_safe_bindings():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((8,), "float32"), B: S.Buffer((8,), "float32")):
        for i in range(8):
            factor = S.Bind(S.float32(2))
            value = S.Bind(A[i] * factor)
            B[i] = value + factor

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((8,), "float32"), B: S.Buffer((8,), "float32")):
        for i in range(8):
            B[i] = A[i] * S.float32(2) + S.float32(2)

    assert body_equal(LetInline()(as_module(before)), expected)


def test_let_inline_keeps_a_binding_whose_buffer_is_written_later():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((8,), "float32"), B: S.Buffer((8,), "float32")):
        for i in range(8):
            old = S.Bind(A[i])
            A[i] = S.float32(0)
            B[i] = old

    after = LetInline()(as_module(before))
    assert body_equal(after, before)
    a = np.arange(8, dtype="float32")
    a_out, b_out = _run_llvm(after["main"], a, np.zeros(8, "float32"))
    np.testing.assert_array_equal(b_out, a)
    np.testing.assert_array_equal(a_out, np.zeros(8))


# ---------------------------------------------------------------- Simplify


def test_simplify_folds_and_drops_unused_parameters_only_when_asked():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((8,), "float32"), Unused: S.Buffer((4,), "float32"), n: S.int32):
        for i in range(8):
            if i < 8:
                A[i] = A[i] * S.float32(1) + S.float32(1)

    kept = Simplify()(as_module(before))["main"]
    assert len(kept.params) == 3
    dropped = Simplify(simplify_arguments=True)(as_module(before))["main"]
    assert [p.name for p in dropped.params] == ["A"]

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((8,), "float32")):
        for i in range(8):
            A[i] = A[i] + S.float32(1)

    assert body_equal(dropped, expected)


def test_simplify_keeps_a_scalar_that_sizes_a_kept_buffer():
    n = tvm.tirx.Var("n", "int32")
    A = tvm.tirx.decl_buffer((n,), "float32", name="A")
    i = tvm.tirx.Var("i", "int32")
    body = tvm.tirx.For(i, 0, n, tvm.tirx.ForKind.SERIAL,
                        tvm.tirx.BufferStore(A, tvm.tirx.const(1.0, "float32"), [i]))
    func = tvm.tirx.PrimFunc([A, n], body)
    assert len(apply_simplify(func).params) == 2


def _kernel(n=64):
    @T.prim_func
    def scale(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=1):
            for i in T.serial(n):
                B[i] = A[i] * 2.0 + 0.0 * A[i]

    return scale


@pytest.mark.backend("cpu")
def test_apply_simplify_and_decorator_give_kernels_that_still_compute():
    import torch

    simplified = apply_simplify(_kernel(), inline_let=True)
    assert isinstance(simplified, tvm.tirx.PrimFunc)
    decorated = simplify_prim_func(_kernel)(64)
    assert tvm_ffi_equal(decorated.body, simplified.body)
    kernel = tilelang.compile(simplified, target="cpu")
    a, b = torch.randn(64), torch.empty(64)
    kernel(a, b)
    torch.testing.assert_close(b, 2 * a)
    with pytest.raises(ValueError, match="apply_simplify expects a PrimFunc or an IRModule, got int"):
        apply_simplify(3)


def tvm_ffi_equal(a, b):
    import tvm_ffi

    return tvm_ffi.structural_equal(a, b, map_free_vars=True)


# ---------------------------------------------------------------- AddWrapperForSingleBufStore


def test_lone_fragment_store_is_wrapped_in_parallel_one():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((8,), "float32")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 8)
        acc = S.alloc_buffer((1,), scope="local.fragment")
        acc[0] = S.float32(0)
        for k in S.parallel(8, annotations={"tl.parallel": 1}):
            A[k] = acc[0]
        A[tx] = S.float32(1)

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((8,), "float32")):
        S.launch_thread("blockIdx.x", 1)
        tx = S.launch_thread("threadIdx.x", 8)
        acc = S.alloc_buffer((1,), scope="local.fragment")
        for _ in S.parallel(1, annotations={"tl.parallel": 1}):
            acc[0] = S.float32(0)
        for k in S.parallel(8, annotations={"tl.parallel": 1}):
            A[k] = acc[0]
        A[tx] = S.float32(1)

    assert body_equal(AddWrapperForSingleBufStore()(as_module(before)), expected)


def test_lone_store_to_another_fragment_element_is_rejected():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((8,), "float32")):
        acc = S.alloc_buffer((2,), scope="local.fragment")
        acc[1] = A[0]

    with pytest.raises(Exception, match=r"Fragment buffer access with non-zero index \[1\] is not supported"):
        AddWrapperForSingleBufStore()(as_module(before))


# ---------------------------------------------------------------- HoistBroadcastValues


def _vector_kernel():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((8,), "float32"), B: S.Buffer((8,), "float32")):
        for i in range(2):
            x = S.Bind(A[S.ramp(i * 4, 1, 4)] * S.Broadcast(S.float32(2), 4))
            B[S.ramp(i * 4, 1, 4)] = x + S.Broadcast(S.float32(3), 4)

    return before


def test_literal_broadcasts_read_a_bound_variable():
    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((8,), "float32"), B: S.Buffer((8,), "float32")):
        for i in range(2):
            c2 = S.Bind(S.float32(2))
            x = S.Bind(A[S.ramp(i * 4, 1, 4)] * S.Broadcast(c2, 4))
            c3 = S.Bind(S.float32(3))
            B[S.ramp(i * 4, 1, 4)] = x + S.Broadcast(c3, 4)

    after = HoistBroadcastValues()(as_module(_vector_kernel()))
    assert body_equal(after, expected)
    a = np.arange(8, dtype="float32")
    _, b = _run_llvm(after["main"], a, np.zeros(8, "float32"))
    np.testing.assert_allclose(b, a * 2 + 3)


# ---------------------------------------------------------------- DecoupleTypeCast


def test_converting_vectorized_store_is_split_into_compute_and_copy():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((16,), "float32"), B: S.Buffer((16,), "float16")):
        a = S.alloc_buffer((16,), "float32", scope="local")
        for v in S.vectorized(16):
            a[v] = A[v]
        for v in S.vectorized(16):
            B[v] = S.Cast("float16", a[v])

    @S.prim_func(check_well_formed=False)
    def expected(A: S.Buffer((16,), "float32"), B: S.Buffer((16,), "float16")):
        a = S.alloc_buffer((16,), "float32", scope="local")
        for v in S.vectorized(16):
            a[v] = A[v]
        cast = S.alloc_buffer((16,), "float16", scope="local")
        for v in S.vectorized(16):
            cast[v] = S.Cast("float16", a[v])
        for v_copy in S.vectorized(16):
            B[v_copy] = cast[v_copy]

    assert body_equal(DecoupleTypeCast()(as_module(before)), expected)


def test_converting_load_and_read_modify_write_are_staged():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((16,), "float32"), B: S.Buffer((16,), "float16"), n: S.int32):
        a = S.alloc_buffer((16,), "float32", scope="local")
        for v in S.vectorized(16):
            a[v] = A[v]
        for v in S.vectorized(16):
            a[v] = S.Cast("float32", B[v]) + a[v]
        for v in S.vectorized(16):
            if v < n:
                B[v] = S.Cast("float16", S.Cast("float32", B[v]) * a[v])
        for v in S.vectorized(16):
            A[v] = a[v]

    after = DecoupleTypeCast()(as_module(before))
    text = after["main"].script()
    assert text.count("B_local_cast") >= 6 and "v_copy" in text
    assert text.count("for v_copy in T.vectorized(16)") == 3  # B in (load), B in and out (read-modify-write)
    a = np.linspace(-2, 2, 16).astype("float32")
    b = np.linspace(1, 3, 16).astype("float16")
    ref = _run_llvm(before, a, b, 11)[:2]
    got = _run_llvm(after["main"], a, b, 11)[:2]
    for r, g in zip(ref, got):
        np.testing.assert_array_equal(r, g)
    assert not np.array_equal(ref[1], b)


def test_loops_without_conversion_or_memory_are_left_alone():
    @S.prim_func(check_well_formed=False)
    def before(A: S.Buffer((16,), "float32"), B: S.Buffer((16,), "float32")):
        a = S.alloc_buffer((16,), "float32", scope="local")
        h = S.alloc_buffer((16,), "float16", scope="local")
        for v in S.vectorized(16):
            B[v] = A[v]
        for v in S.vectorized(16):
            h[v] = S.Cast("float16", a[v])
        for v in range(16):
            B[v] = S.Cast("float32", h[v])

    assert body_equal(DecoupleTypeCast()(as_module(before)), before)


# ---------------------------------------------------------------- LowerAccessPtr


def test_access_ptr_becomes_tvm_access_ptr_at_the_linear_offset():
    from tilelang.transform import LowerAccessPtr

    @T.prim_func
    def kernel(A: T.Tensor((8, 16), "float32")):
        with T.Kernel(1, threads=1):
            Sh = T.alloc_shared((8, 16), "float32")
            T.ptx_cp_async(T.access_ptr(Sh[2, 4], "w", 4), T.access_ptr(A[3, 1], "r", 4), 4)

    def ptr_calls(func, name):
        return [c for c in C.collect(func.body, tvm.ir.Call) if isinstance(c.op, tvm.ir.Op) and c.op.name == name]

    after = LowerAccessPtr()(as_module(kernel))["main"]
    assert not ptr_calls(after, "tl.access_ptr")
    lowered = ptr_calls(after, "tirx.tvm_access_ptr")
    assert [(int(c.args[2]), int(c.args[3]), int(c.args[4])) for c in lowered] == [(36, 4, 2), (49, 4, 1)]
