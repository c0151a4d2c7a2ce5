"""``vec4`` storage views of global memory (`tilelang_webgpu.passes.mark_vector_globals`): which bindings become
``array<vec4<T>>``, the WGSL of their accesses, and results against torch (aligned, fallback, mixed accesses,
offset and strided tensors)."""

from __future__ import annotations

import re

import pytest
import torch

import tilelang
from tilelang.testing import corpus
from tilelang_webgpu.passes.mark_vector_globals import MARK, vectorize_storage_views


@pytest.fixture
def options(monkeypatch):
    """Override pipeline options of the webgpu target kind (the kernel cache is bypassed: its key does not hold
    the override)."""
    from tilelang.transform import utils as transform_utils

    registered = transform_utils.pipeline_options
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")

    def force(**extra) -> None:
        monkeypatch.setattr(transform_utils, "pipeline_options", lambda target: {**registered(target), **extra})

    return force


def _binding(wgsl: str, name: str) -> str:
    m = re.search(rf"var<storage, \w+> {name}_ptr : (array<[^;]+>);", wgsl)
    assert m, wgsl
    return m.group(1)


def _vadd(n: int, vec_n: int, dtype: str = "float32", misalign: int = 0):
    """``C[i] = A[i + misalign] + B[i]``: threads do 4-lane accesses over the first `vec_n` elements (64 threads
    x 4 per block) and thread 0 of block 0 the scalar tail up to `n`; A holds ``n + misalign`` elements."""
    from tvm.script import tirx as T

    blocks = vec_n // 256

    @T.prim_func
    def vadd(A: T.Buffer((n + misalign,), dtype), B: T.Buffer((n,), dtype), C: T.Buffer((n,), dtype)):
        T.func_attr({"global_symbol": "vadd", "tirx.noalias": True})
        bx = T.launch_thread("blockIdx.x", blocks)
        tx = T.launch_thread("threadIdx.x", 64)
        C[T.Ramp(bx * 256 + tx * 4, 1, 4)] = (A[T.Ramp(bx * 256 + tx * 4 + misalign, 1, 4)]
                                              + B[T.Ramp(bx * 256 + tx * 4, 1, 4)])
        if bx == 0 and tx == 0:
            for i in range(n - vec_n):
                C[vec_n + i] = A[vec_n + i + misalign] + B[vec_n + i]

    return vadd


def _mixed(n: int = 1024):
    """Vector and scalar accesses of the same buffers: ``C[4k:4k+4] = 2 * A[4k:4k+4]``, then thread 0 of each
    block overwrites ``C[first] = A[first + 3] + A[n - 1]`` and reads back ``C[first + 1]`` into ``D``."""
    from tvm.script import tirx as T

    @T.prim_func
    def mixed(A: T.Buffer((n,), "float32"), C: T.Buffer((n,), "float32"), D: T.Buffer((n // 256,), "float32")):
        T.func_attr({"global_symbol": "mixed", "tirx.noalias": True})
        bx = T.launch_thread("blockIdx.x", n // 256)
        tx = T.launch_thread("threadIdx.x", 64)
        C[T.Ramp(bx * 256 + tx * 4, 1, 4)] = A[T.Ramp(bx * 256 + tx * 4, 1, 4)] * T.Broadcast(T.float32(2), 4)
        if tx == 0:
            C[bx * 256] = A[bx * 256 + 3] + A[n - 1]
            D[bx] = C[bx * 256 + 1]

    return mixed


def _run(func, *tensors):
    artifact = tilelang.lower(func, target="webgpu")
    from tilelang_webgpu.execution_backend import WgpuBackend

    WgpuBackend().load(artifact)(*tensors)
    return artifact.kernel_source


def test_aligned_buffers_become_vec4_views(wgpu_backend):
    a, b, c = torch.randn(1024), torch.randn(1024), torch.zeros(1024)
    wgsl = _run(_vadd(1024, 1024), a, b, c)
    for name in "ABC":
        assert _binding(wgsl, name) == "array<vec4<f32>>"
    assert re.search(r"C_ptr\[\(\w+\) >> 2u\] = ", wgsl), wgsl  # one vec4 store
    assert re.search(r"= \(?A_ptr\[\(\w+\) >> 2u\]", wgsl), wgsl  # one vec4 load
    assert "vec4<f32>(A_ptr[" not in wgsl and MARK not in wgsl
    torch.testing.assert_close(c, a + b)


def test_element_count_not_a_multiple_of_4_stays_scalar(wgpu_backend):
    a, b, c = torch.randn(1026), torch.randn(1026), torch.zeros(1026)
    wgsl = _run(_vadd(1026, 1024), a, b, c)
    for name in "ABC":
        assert _binding(wgsl, name) == "array<f32>"
    assert "vec4<f32>(A_ptr[" in wgsl and MARK not in wgsl
    torch.testing.assert_close(c, a + b)


def test_misaligned_vector_access_keeps_only_that_buffer_scalar(wgpu_backend):
    a, b, c = torch.randn(1028), torch.randn(1024), torch.zeros(1024)
    wgsl = _run(_vadd(1024, 1024, misalign=1), a, b, c)
    assert _binding(wgsl, "A") == "array<f32>"
    assert _binding(wgsl, "B") == _binding(wgsl, "C") == "array<vec4<f32>>"
    torch.testing.assert_close(c, a[1:1025] + b)


def test_vector_and_scalar_accesses_of_one_buffer(wgpu_backend):
    n = 1024
    a, c, d = torch.randn(n), torch.zeros(n), torch.zeros(n // 256)
    wgsl = _run(_mixed(n), a, c, d)
    assert _binding(wgsl, "A") == _binding(wgsl, "C") == "array<vec4<f32>>"
    assert re.search(r"A_ptr\[\(+\w+ \* 256i\) \+ 3i\)+ >> 2u\]\[\(+\w+ \* 256i\) \+ 3i\)+ & 3\]", wgsl), wgsl
    assert re.search(r"C_ptr\[\(+\w+ \* 256i\)+ >> 2u\]\[\(+\w+ \* 256i\)+ & 3\] = ", wgsl), wgsl
    assert "A_ptr[(1023i) >> 2u][(1023i) & 3]" in wgsl, wgsl
    expect = 2 * a
    expect[::256] = a[3::256] + a[n - 1]
    torch.testing.assert_close(c, expect)
    torch.testing.assert_close(d, 2 * a[1::256])


def test_int32_buffers(wgpu_backend):
    a, b = torch.randint(-1000, 1000, (512,), dtype=torch.int32), torch.randint(-9, 9, (512,), dtype=torch.int32)
    c = torch.zeros(512, dtype=torch.int32)
    wgsl = _run(_vadd(512, 512, "int32"), a, b, c)
    assert _binding(wgsl, "C") == "array<vec4<i32>>"
    assert torch.equal(c, a + b)


def test_float16_buffers_when_the_device_has_shader_f16(wgpu_backend):
    from tilelang_webgpu.adapter import has_feature

    if not has_feature("shader-f16"):
        pytest.skip("the adapter lacks shader-f16")
    a, b, c = torch.randn(512).half(), torch.randn(512).half(), torch.zeros(512).half()
    wgsl = _run(_vadd(512, 512, "float16"), a, b, c)
    assert _binding(wgsl, "C") == "array<vec4<f16>>"
    torch.testing.assert_close(c, a + b)


def test_option_off_keeps_scalar_arrays(wgpu_backend, options):
    options(webgpu_vector_globals=False)
    a, b, c = torch.randn(1024), torch.randn(1024), torch.zeros(1024)
    wgsl = _run(_vadd(1024, 1024), a, b, c)
    assert _binding(wgsl, "C") == "array<f32>" and "vec4<f32>(A_ptr[" in wgsl
    torch.testing.assert_close(c, a + b)


# ------------------------------------------------------------------------------------------ DSL kernels
def _compile(case):
    return tilelang.compile(case.func, out_idx=case.out_idx, target="webgpu", execution_backend="wgpu")


def _check(case, kernel):
    inputs = case.make_inputs()
    out = kernel(*inputs)
    torch.testing.assert_close(out.float(), case.ref(*inputs).float(), atol=case.atol, rtol=case.rtol)


def test_elementwise_add(wgpu_backend, options):
    options(fragment_vector_scope="all")
    case = corpus.elementwise_add(M=256, N=256)
    kernel = _compile(case)
    wgsl = kernel.artifact.kernel_source
    for name in "ABC":
        assert _binding(wgsl, name) == "array<vec4<f32>>"
    assert "vec4<f32>(B_ptr[" not in wgsl
    _check(case, kernel)


def test_elementwise_add_offset_and_strided_tensors(wgpu_backend, options):
    """The host copies each tensor contiguously from its first element: a storage offset or a transposed
    view reaches the shader aligned, and an output view is written back in place."""
    options(fragment_vector_scope="all")
    case = corpus.elementwise_add(M=64, N=64)
    launcher = wgpu_backend.load(tilelang.lower(case.func, target="webgpu"))
    base = torch.randn(64 * 64 + 1)
    a = base[1:].view(64, 64)  # storage offset of one element
    b = torch.randn(64, 64).t()  # not contiguous
    out = torch.zeros(64, 64 * 2)[:, ::2]  # a strided output view
    launcher(a, b, out)
    torch.testing.assert_close(out, a + b)


def test_offset_views_run_and_strided_tensors_are_refused_clearly(wgpu_backend, options):
    """vec4 views index the GPU buffers, not the host tensors: an offset view (copied in from its first
    element) runs; a non-contiguous tensor is a `KernelArgumentError` naming the argument."""
    from tilelang.errors import KernelArgumentError

    options(fragment_vector_scope="all")
    case = corpus.elementwise_add(M=64, N=64)
    kernel = _compile(case)
    assert "array<vec4" in kernel.artifact.kernel_source
    a, b = torch.randn(64 * 64 + 1)[1:].view(64, 64), torch.randn(64, 64)
    torch.testing.assert_close(kernel(a, b), a + b)
    with pytest.raises(KernelArgumentError, match="'B'.*contiguous"):
        kernel(a.clone(), b.t())


def test_dynamic_shape_stays_scalar(wgpu_backend, options):
    options(fragment_vector_scope="all")
    case = corpus.dynamic_add(M=100, N=64)
    kernel = _compile(case)
    assert "array<vec4" not in kernel.artifact.kernel_source
    _check(case, kernel)


def test_softmax(wgpu_backend, options):
    options(fragment_vector_scope="all")
    case = corpus.softmax(M=64, N=256, block_M=4)
    kernel = _compile(case)
    wgsl = kernel.artifact.kernel_source
    assert _binding(wgsl, "X") == _binding(wgsl, "Y") == "array<vec4<f32>>", wgsl
    _check(case, kernel)


def test_gemm_tile_copies_read_vec4(wgpu_backend):
    case = corpus.gemm(M=128, N=128, K=128, dtype="float32")
    kernel = _compile(case)
    wgsl = kernel.artifact.kernel_source
    for name in "ABC":
        assert _binding(wgsl, name) == "array<vec4<f32>>"
    assert re.search(r"A_shared\[[^\n]+\] = A_ptr\[\(\w+\) >> 2u\];", wgsl), wgsl
    _check(case, kernel)


def test_gemm_with_unaligned_rows_stays_correct(wgpu_backend):
    """Rows of 130 elements: the copies' tiles start off a multiple of 4, the generic copy and scalar arrays
    serve them."""
    case = corpus.gemm(M=130, N=132, K=130, dtype="float32")
    kernel = _compile(case)
    assert _binding(kernel.artifact.kernel_source, "A") == "array<f32>"
    _check(case, kernel)


# ------------------------------------------------------------------------------------------ the text rewrite
_SRC = f"""@group(0) @binding(0) var<storage, read_write> X_ptr{MARK} : array<f32>;
fn main() {{
  let v : vec4<f32> = vec4<f32>(X_ptr{MARK}[b + 0], X_ptr{MARK}[b + 1], X_ptr{MARK}[b + 2], X_ptr{MARK}[b + 3]);
  X_ptr{MARK}[i] = 1.0f;
  {{extra}}
}}
"""


def test_rewrite_of_marked_bindings():
    out = vectorize_storage_views(_SRC.replace("{extra}", ""))
    assert "var<storage, read_write> X_ptr : array<vec4<f32>>;" in out
    assert "= X_ptr[(b) >> 2u];" in out and "X_ptr[(i) >> 2u][(i) & 3] = 1.0f;" in out and MARK not in out


@pytest.mark.parametrize("extra", ["atomicAdd(&X_ptr{m}[0], 1);", "X_ptr{m}[X_ptr{m}[0]] = 0;"])
def test_rewrite_leaves_unreadable_bindings_scalar(extra):
    out = vectorize_storage_views(_SRC.replace("{extra}", extra.format(m=MARK)))
    assert "X_ptr : array<f32>;" in out and "vec4<f32>(X_ptr[b + 0]" in out and MARK not in out
