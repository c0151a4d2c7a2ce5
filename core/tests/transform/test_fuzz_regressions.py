"""Regression tests for the bugs the program fuzzer (core/tests/fuzz) found, each at its minimal program.

Every kernel lowers for every installed target (CUDA sm_80 / sm_90a, ROCm gfx942, Metal, WebGPU, CPU) and runs
on the CPU and WebGPU backends against torch.
"""

from __future__ import annotations

import linecache
import warnings

import pytest
import torch

import tilelang
import tilelang.language as T

TARGETS = [{"kind": "cuda", "arch": "sm_80"}, {"kind": "cuda", "arch": "sm_90a"}, {"kind": "rocm", "mcpu": "gfx942"},
           "metal", "webgpu", "cpu"]


def _installed(kind: str) -> bool:
    from tilelang.backend import plugins

    return kind in plugins.installed_kinds()


def _kind(target) -> str:
    return target if isinstance(target, str) and target != "cpu" else ("llvm" if target == "cpu" else target["kind"])


def _lower_everywhere(func) -> None:
    for target in TARGETS:
        if not _installed(_kind(target)):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            artifact = tilelang.lower(func, target=target)
        assert artifact.kernel_source, target


def _runners():
    yield "cpu", {}
    if _installed("webgpu"):
        from tilelang_webgpu.execution_backend import WgpuBackend

        if WgpuBackend().unavailable_reason() is None:
            yield "webgpu", {"execution_backend": "wgpu"}


def _run_everywhere(func, make_args, expected, atol=1e-4) -> None:
    for target, kw in _runners():
        if not _installed(_kind(target)):
            continue
        args = make_args()
        tilelang.compile(func, target=target, **kw)(*args)
        torch.testing.assert_close(args[-1].float(), expected(*args).float(), atol=atol, rtol=1e-4)


def row_sum_one_row(M: int, N: int, threads: int = 128):
    """block_M = 1: a (1, N) fragment reduced into a (1,) fragment (its copy out is a one-element region)."""

    @T.prim_func
    def kernel(A: T.Tensor((M, N), "float32"), Out: T.Tensor((M,), "float32")):
        with T.Kernel(M, threads=threads) as bx:
            t = T.alloc_fragment((1, N), "float32")
            r = T.alloc_fragment((1,), "float32")
            T.copy(A[bx, 0], t)
            T.reduce_sum(t, r, dim=1)
            T.copy(r, Out[bx])

    return kernel


@pytest.mark.backend("llvm")
@pytest.mark.parametrize("M, N, threads", [(5, 37, 128), (3, 64, 32), (4, 300, 256)])
def test_one_row_reduction_lowers_and_runs_everywhere(M, N, threads):
    """Was: "fragment(s) ['r'] are used outside parallel loops" on CUDA / ROCm / Metal / WebGPU (a one-element
    T.copy lowered to a bare store instead of a parallel nest), then, on CUDA, a barrier "inside condition"
    (rows < warps) and a 4-byte shared.dyn scratch that TVM's shared-memory merge lost."""
    kernel = row_sum_one_row(M, N, threads)
    _lower_everywhere(kernel)
    _run_everywhere(kernel, lambda: [torch.randn(M, N), torch.zeros(M)], lambda a, o: a.sum(1), atol=1e-4 * N)


@pytest.mark.backend("cuda")
@pytest.mark.parametrize("block_M", [1, 2, 3])
def test_cuda_row_reduction_with_fewer_rows_than_warps(block_M):
    """Fewer rows than warps: the idle warps' guard used to wrap the staged tile's reads (and the barrier)."""
    M, N = 7, 45

    @T.prim_func
    def kernel(A: T.Tensor((M, N), "float32"), Out: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            t = T.alloc_fragment((block_M, N), "float32")
            r = T.alloc_fragment((block_M,), "float32")
            T.copy(A[bx * block_M, 0], t)
            T.reduce_max(t, r, dim=1)
            T.copy(r, Out[bx * block_M])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        source = tilelang.lower(kernel, target={"kind": "cuda", "arch": "sm_80"}).kernel_source
    assert "tl_warp_max" in source


@pytest.mark.backend("cuda")
def test_tiny_shared_buffer_lowers_for_cuda():
    """A shared buffer of 4 bytes or less (``T.alloc_shared((1,), "float32")``) beside another one."""

    @T.prim_func
    def kernel(A: T.Tensor((4, 64), "float32"), Out: T.Tensor((4, 64), "float32")):
        with T.Kernel(4, threads=64) as bx:
            s = T.alloc_shared((1,), "float32")
            t = T.alloc_shared((64,), "float32")
            T.copy(A[bx, 0], t)
            if T.get_thread_binding() == 0:
                s[0] = t[3]
            for j in T.Parallel(64):
                Out[bx, j] = t[j] + s[0]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        artifact = tilelang.lower(kernel, target={"kind": "cuda", "arch": "sm_80"})
    assert "extern \"C\" __global__" in artifact.kernel_source


@pytest.mark.backend("llvm")
def test_bf16_operand_of_exp_on_cpu():
    """Was (CPU): "Load/Store of buffer B_f occurred before its declaration": the vectorisable exp bound its
    argument in a Let that TVM's BF16ComputeLegalize does not rewrite."""
    M, N = 17, 64

    @T.prim_func
    def kernel(B: T.Tensor((M, N), "bfloat16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, 2), T.ceildiv(M, 64), threads=128) as (bx, by):
            B_f = T.alloc_fragment((64, 2), "bfloat16")
            T.copy(B[by * 64, bx * 2], B_f)
            C_f = T.alloc_fragment((64, 2), "float32")
            for i, j in T.Parallel(64, 2):
                C_f[i, j] = T.max(T.cast(B_f[i, j], "float32"), T.exp(T.min(T.cast(B_f[i, j], "float32"), 4.0)))
            T.copy(C_f, C[by * 64, bx * 2])

    b, c = torch.randn(M, N).bfloat16(), torch.zeros(M, N)
    tilelang.compile(kernel, target="cpu")(b, c)
    expected = torch.maximum(b.float(), torch.exp(b.float().clamp(max=4)))
    torch.testing.assert_close(c, expected, atol=1e-5, rtol=1e-5)


@pytest.mark.backend("llvm")
def test_same_body_in_two_files_parses_each_signature():
    """Was: the frontend cached kernel sources by code-object equality, which ignores the file: a kernel with the
    same body at the same line of another file (notebook cells, generated modules) got the first one's
    signature (here A's dtype)."""
    template = ("import tilelang.language as T\n@T.prim_func\ndef kernel(A: T.Tensor((4, 4), '{dtype}'), "
                "C: T.Tensor((4, 4), 'float32')):\n    with T.Kernel(1, threads=32) as bx:\n"
                "        for i, j in T.Parallel(4, 4):\n            C[i, j] = 1.0\n")
    dtypes = []
    for n, dtype in enumerate(["bfloat16", "float32"]):
        text = template.format(dtype=dtype)
        filename = f"<fuzz-regression-cell-{n}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        namespace: dict = {}
        exec(compile(text, filename, "exec"), namespace)
        dtypes.append(str(namespace["kernel"].params[0].ty.dtype))
    assert dtypes == ["bfloat16", "float32"]


@pytest.mark.backend("llvm")
@pytest.mark.parametrize("M, N, block_M, block_N, threads", [(1, 1, 1, 1, 32), (37, 45, 16, 8, 64)])
def test_transpose_of_a_partitioned_fragment(M, N, block_M, block_N, threads):
    """Was (every threaded target): "a parallel loop that every thread runs whole touches the partitioned
    fragment(s) ['s']": T.transpose read its fragment source across threads without staging it."""

    @T.prim_func
    def kernel(A: T.Tensor((M, N), "float32"), B: T.Tensor((N, M), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            s = T.alloc_fragment((block_M, block_N), "float32")
            d = T.alloc_fragment((block_N, block_M), "float32")
            T.copy(A[by * block_M, bx * block_N], s)
            T.transpose(s, d)
            T.copy(d, B[bx * block_N, by * block_M])

    _lower_everywhere(kernel)
    _run_everywhere(kernel, lambda: [torch.randn(M, N), torch.zeros(N, M)], lambda a, b: a.T, atol=0)


@pytest.mark.backend("llvm")
@pytest.mark.parametrize("threads", [32, 128])
def test_one_element_atomic_region_runs_once(threads):
    """Was (WebGPU, and every threaded target): ``T.atomic_add(S[0], part)`` with a one-element ``part`` was a
    bare statement that every thread ran: S got ``threads`` times the sum."""

    @T.prim_func
    def kernel(A: T.Tensor((3, 1), "float32"), S: T.Tensor((1,), "float32")):
        with T.Kernel(3, threads=threads) as bx:
            t = T.alloc_fragment((1, 1), "float32")
            part = T.alloc_fragment((1,), "float32")
            T.copy(A[bx, 0], t)
            T.reduce_sum(t, part, dim=0)
            T.atomic_add(S[0], part)

    _lower_everywhere(kernel)
    _run_everywhere(kernel, lambda: [torch.randn(3, 1), torch.zeros(1)], lambda a, s: a.sum(0), atol=1e-5)
