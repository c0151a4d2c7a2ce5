"""LowerIntrinsics alone on Before kernels, and the small passes LegalizeNegativeIndex / IfStmtBinding /
MergeIfStmt against Expected kernels (structural equality)."""

from __future__ import annotations

import pytest
import torch
from transform_helpers import as_module, body_equal

import tilelang
import tilelang.language as T
from tilelang.errors import LoweringError


def _lower_intrinsics(func, target="llvm"):
    from tilelang.transform import LowerIntrinsics

    return LowerIntrinsics({"kind": target})(as_module(func))


def test_fast_math_lowers_to_the_precise_function(options):
    options({"has_threads": False})

    @T.prim_func
    def before(A: T.Tensor((4,), "float32")):
        A[0] = T.__exp(A[1]) + T.__log2(A[2])

    @T.prim_func
    def expected(A: T.Tensor((4,), "float32")):
        A[0] = T.exp(A[1]) + T.log2(A[2])

    assert body_equal(_lower_intrinsics(before), as_module(expected))


def test_element_atomic_with_return_prev_without_threads(options):
    """The previous value goes through a local register, then the update runs under AttrStmt tl.atomic."""
    options({"has_threads": False})

    @T.prim_func
    def before(A: T.Tensor((4,), "float32"), P: T.Tensor((1,), "float32")):
        P[0] = T.atomic_add(A[1], 2.0, return_prev=True)

    after = _lower_intrinsics(before)["main"]
    text = after.script()
    assert "tl.atomic_add" not in text and 'T.attr("add", "tl.atomic", 0)' in text
    assert "atomic_prev = A[1]" in text and "A[1] = atomic_prev + T.float32(2.0)" in text


def test_element_atomic_with_threads_is_an_extern_call(options):
    options({"has_threads": True, "atomic_functions": {"max": "my_atomic_max"}})

    @T.prim_func
    def before(A: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=4):
            T.atomic_max(A[1], 2.0)
            T.atomic_add(A[2], 1.0)

    text = _lower_intrinsics(before, "cuda")["main"].script()
    assert 'T.call_extern("float32", "my_atomic_max", T.address_of(A[1]), T.float32(2.0))' in text
    assert '"atomicAdd", T.address_of(A[2])' in text


def test_intrinsics_see_their_arguments_as_written_and_nested_ones_are_lowered(options):
    options({"has_threads": False})

    @T.prim_func
    def before(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32")):
        T.ptx_cp_async(T.access_ptr(B[2], "w"), T.access_ptr(A[4], "r"), 3)
        T.ptx_commit_group()
        T.ptx_wait_group(0)
        B[0] = T.atomic_add(B[1], T.__exp(A[0]), return_prev=True)

    text = _lower_intrinsics(before)["main"].script()
    assert "T.tl." not in text
    assert "for k in range(3):" in text and "B[2 + k] = A[4 + k]" in text
    assert "T.exp(A[0])" in text


def test_an_unsupported_intrinsic_names_construct_target_and_alternative(options):
    options({"has_threads": True})

    @T.prim_func
    def before(A: T.Tensor((4,), "int32")):
        with T.Kernel(1, threads=32):
            A[0] = T.any_sync(A[1] > 0)

    with pytest.raises(Exception, match="T.any_sync on target 'metal': not supported by this backend; keep the"):
        _lower_intrinsics(before, "metal")
    with pytest.raises(LoweringError, match="T.any_sync on target 'metal'"):
        from tilelang.transform import utils as C

        try:
            _lower_intrinsics(before, "metal")
        except Exception:
            raise C.take_pending_error() from None


def test_legalize_negative_index():
    from tilelang.transform import LegalizeNegativeIndex

    @T.prim_func
    def before(A: T.Tensor((16,), "float32"), B: T.Tensor((4,), "float32"), s: T.int32):
        B[0] = A[-1]
        for i in T.serial(4):
            B[i] = A[-i - 1] + A[s + i]

    @T.prim_func
    def expected(A: T.Tensor((16,), "float32"), B: T.Tensor((4,), "float32"), s: T.int32):
        B[0] = A[15]
        for i in T.serial(4):
            B[i] = A[15 - i] + A[s + i]

    assert body_equal(LegalizeNegativeIndex()(as_module(before)), as_module(expected))


def test_if_binding_then_merge_keeps_one_evaluation():
    from tilelang.transform import IfStmtBinding, MergeIfStmt

    @T.prim_func
    def main(A: T.Tensor((2,), "int32")):
        if A[0] > 0:
            A[0] = 0
            A[1] = 1
        if A[0] > 0:
            A[1] = 2

    mod = MergeIfStmt()(IfStmtBinding()(as_module(main)))
    text = mod["main"].script()
    assert text.count("if ") == 2  # the bound condition's two ifs merged back; the re-test of A[0] kept
    lib = tilelang.compile(mod["main"], target="cpu")
    a = torch.tensor([1, 7], dtype=torch.int32)
    lib(a)
    assert a.tolist() == [0, 1]
