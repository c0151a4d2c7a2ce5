"""Bad kernels raise KernelSyntaxError / KernelTypeError at the user's file:line, never with TVM's C++ text."""

from __future__ import annotations

import inspect

import pytest

import tilelang.language as T
from tilelang.errors import KernelSyntaxError, KernelTypeError, SourceError

HERE = __file__


def line_of(fn, marker: str) -> int:
    """The line number of the first source line of `fn` containing `marker`."""
    lines, first = inspect.getsourcelines(fn)
    for i, text in enumerate(lines):
        if marker in text:
            return first + i
    raise AssertionError(marker)


def expect(cls: type[SourceError], body, marker: str, *fragments: str) -> SourceError:
    with pytest.raises(cls) as info:
        T.prim_func(body)
    err = info.value
    assert f"{HERE}:{line_of(body, marker)}:" in str(err), str(err)
    assert err.location[0] == HERE and err.location[1] == line_of(body, marker)
    assert marker.strip() in str(err)  # the offending source line is shown
    for frag in fragments:
        assert frag in str(err), str(err)
    for cxx in ("Check failed", "/project/src/", "tvm::", "ffi::"):
        assert cxx not in str(err)
    return err


def test_unknown_name():
    def k(A: T.Tensor((4,), T.float32)):
        with T.Kernel(1) as _:
            A[0] = undefined_thing + 1  # noqa: F821

    expect(KernelSyntaxError, k, "undefined_thing + 1", "'undefined_thing' is not defined")


def test_unknown_dsl_function():
    def k(A: T.Tensor((4,), T.float32)):
        with T.Kernel(1) as _:
            T.not_a_function(A)

    expect(KernelSyntaxError, k, "T.not_a_function(A)", "not_a_function")


def test_wrong_index_arity():
    def k(A: T.Tensor((4, 4), T.float32)):
        with T.Kernel(1) as _:
            A[0] = 1.0

    expect(KernelTypeError, k, "A[0] = 1.0", "2 dimensions", "1 index")


def test_wrong_index_arity_in_load():
    def k(A: T.Tensor((4, 4), T.float32), B: T.Tensor((4,), T.float32)):
        with T.Kernel(1) as _:
            B[0] = A[1, 2, 3]

    expect(KernelTypeError, k, "B[0] = A[1, 2, 3]", "3 indices")


def test_wrong_call_arity():
    def k(A: T.Tensor((4, 4), T.float32)):
        with T.Kernel(1, 2, 3, 4) as _:
            A[0, 0] = 1.0

    expect(KernelTypeError, k, "T.Kernel(1, 2, 3, 4)", "1 to 3 grid extents")


@pytest.mark.backend("llvm")
def test_copy_shape_mismatch_is_reported_at_lowering_at_its_line():
    """As in the reference, the kernel builds and lowering names the copy (``--> file:line:col`` and its line)."""

    def k(A: T.Tensor((64, 64), T.float16)):
        with T.Kernel(1) as _:
            S = T.alloc_shared((32, 32), T.float16)
            T.copy(A[0:32, 0:16], S)

    err = _lowering_error(T.prim_func(k))
    line = line_of(k, "T.copy(A[0:32, 0:16], S)")
    assert err.location[:2] == (HERE, line)
    for frag in ("T.copy shape mismatch", "(32, 16)", "(32, 32)", f"--> {HERE}:{line}:", "T.copy(A[0:32, 0:16], S)"):
        assert frag in str(err), str(err)


def test_copy_unit_dims_are_ignored():
    @T.prim_func
    def k(Q: T.Tensor((2, 64, 4, 32), T.float16)):
        with T.Kernel(1) as _:
            S = T.alloc_shared((64, 32), T.float16)
            T.copy(Q[1, :, 2, :], S)

    assert "T.tl.copy" in k.script()


def test_gemm_k_mismatch():
    def k(A: T.Tensor((4,), T.float32)):
        with T.Kernel(1) as _:
            As = T.alloc_shared((64, 32), T.float16)
            Bs = T.alloc_shared((16, 64), T.float16)
            C = T.alloc_fragment((64, 64), T.float32)
            T.gemm(As, Bs, C)

    expect(KernelTypeError, k, "T.gemm(As, Bs, C)", "K differs")


def test_gemm_transpose_mismatch():
    def k(A: T.Tensor((4,), T.float32)):
        with T.Kernel(1) as _:
            As = T.alloc_shared((64, 32), T.float16)
            Bs = T.alloc_shared((32, 64), T.float16)
            C = T.alloc_fragment((64, 64), T.float32)
            T.gemm(As, Bs, C, transpose_B=True)

    expect(KernelTypeError, k, "transpose_B=True)", "transpose_B=True", "differs")


def test_gemm_mn_mismatch_and_scope():
    def k(A: T.Tensor((4,), T.float32)):
        with T.Kernel(1) as _:
            As = T.alloc_shared((64, 32), T.float16)
            Bs = T.alloc_shared((32, 64), T.float16)
            C = T.alloc_fragment((32, 64), T.float32)
            T.gemm(As, Bs, C)

    expect(KernelTypeError, k, "T.gemm(As, Bs, C)", "M differs")

    def g(A: T.Tensor((64, 32), T.float16)):
        with T.Kernel(1) as _:
            Bs = T.alloc_shared((64, 32), T.float16)
            v = T.alloc_var(T.float32)
            T.gemm(A, Bs, v)

    expect(KernelTypeError, g, "T.gemm(A, Bs, v)", "C is buffer v", "local.var", "scope")


def test_reduce_shape_mismatch():
    def k(A: T.Tensor((4,), T.float32)):
        with T.Kernel(1) as _:
            F = T.alloc_fragment((64, 32), T.float32)
            r = T.alloc_fragment((32,), T.float32)
            T.reduce_sum(F, r, dim=1)

    expect(KernelTypeError, k, "T.reduce_sum(F, r, dim=1)", "shape mismatch")


def test_unsupported_dtype():
    def k(A: T.Tensor((4,), T.float32)):
        with T.Kernel(1) as _:
            S = T.alloc_shared((4,), "flaot16")  # noqa: F841

    expect(KernelTypeError, k, 'T.alloc_shared((4,), "flaot16")', "unsupported dtype 'flaot16'")


def test_unsupported_dtype_in_signature():
    def k(A: T.Tensor((4,), "complex64")):
        pass

    with pytest.raises(KernelTypeError, match="unsupported dtype"):
        T.prim_func(k)


def test_missing_annotation():
    def k(A):
        with T.Kernel(1) as _:
            pass

    expect(KernelSyntaxError, k, "def k(A):", "needs an annotation")


def test_unsupported_statement():
    def k(A: T.Tensor((4,), T.float32)):
        with T.Kernel(1) as _:
            try:
                A[0] = 1.0
            except Exception:
                pass

    expect(KernelSyntaxError, k, "try:", "Try")


def test_tile_op_outside_kernel():
    with pytest.raises(KernelSyntaxError, match="inside a kernel"):
        T.copy(None, None)


def test_tvm_error_is_translated():
    def k(A: T.Tensor((4,), T.float32), B: T.Tensor((4,), T.float32)):
        with T.Kernel(1) as _:
            A[0] = A + B

    expect(KernelTypeError, k, "A[0] = A + B")


def test_error_inside_macro_points_at_macro_line():
    @T.macro
    def bad(buf):
        T.fill(buf, missing_value)  # noqa: F821

    def k(A: T.Tensor((4,), T.float32)):
        with T.Kernel(1) as _:
            bad(A)

    with pytest.raises(KernelSyntaxError) as info:
        T.prim_func(k)
    assert f"{HERE}:{line_of(bad.fn, 'missing_value')}:" in str(info.value)


def test_error_in_loop_body_has_inner_line():
    def k(A: T.Tensor((4, 4), T.float32)):
        with T.Kernel(1) as _:
            for i, j in T.Parallel(4, 4):
                A[i, j] = 0.0
                A[i] = 1.0

    expect(KernelTypeError, k, "A[i] = 1.0", "2 dimensions")


def _lowering_error(func, target="llvm"):
    import tilelang
    from tilelang.errors import LoweringError

    with pytest.raises(LoweringError) as info:
        tilelang.lower(func, target=target)
    return info.value


@pytest.mark.backend("llvm")
def test_fixed_fragment_store_in_parallel_loop_points_at_the_fragment():
    """Every iteration of a T.Parallel loop storing frag[1] (the reference's "Only fragment[0] access is allowed")
    is reported at the line that allocated the fragment, as a ``--> file:line:col`` marker with that line."""

    @T.prim_func
    def one_element(A: T.Tensor((128,), T.float32)):
        with T.Kernel(1, threads=128):
            frag = T.alloc_fragment((4,), T.float32)  # the fragment at fault
            for i in T.Parallel(4):
                frag[0] = A[i]  # [0] is allowed (one value per thread)
                frag[1] = A[i]

    err = _lowering_error(one_element)
    line = line_of(test_fixed_fragment_store_in_parallel_loop_points_at_the_fragment, "the fragment at fault")
    assert err.location[:2] == (HERE, line)
    assert "Only fragment[0] access is allowed within T.Parallel loop" in str(err)
    assert f"--> {HERE}:{line}:" in str(err) and "# the fragment at fault" in str(err)


@pytest.mark.backend("llvm")
def test_fragment_indexed_by_the_parallel_loop_or_at_zero_lowers():
    import tilelang

    @T.prim_func
    def fine(A: T.Tensor((4,), T.float32), B: T.Tensor((4,), T.float32)):
        with T.Kernel(1, threads=4):
            frag = T.alloc_fragment((4,), T.float32)
            one = T.alloc_fragment((1,), T.float32)
            for i in T.Parallel(4):
                frag[i] = A[i]
            for _ in T.Parallel(1):
                one[0] = frag[3]
            for i in T.Parallel(4):
                B[i] = frag[i] + one[0]

    assert tilelang.lower(fine, target="llvm").kernel_source


def test_error_inside_a_runtime_elif_is_reported_as_itself():
    # closing the half-built frames used to raise TVM's "T.else_ must be called at the top of a T.if_()", hiding
    # the error of the statement (gemm_tcgen05's unsupported T.tcgen05_gemm(use_2cta=True) in an elif branch)
    def k(A: T.Tensor((4,), T.float32), B: T.Tensor((4,), T.float32)):
        with T.Kernel(1, threads=32) as _:
            tx = T.get_thread_binding()
            if tx < 4:
                B[0] = A[0]
            elif tx < 8:
                for i in T.serial(2):
                    A[i] = undefined_in_branch + 1  # noqa: F821

    expect(KernelSyntaxError, k, "undefined_in_branch + 1", "'undefined_in_branch' is not defined")
