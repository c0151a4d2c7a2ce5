"""The call path: outputs per out_idx, symbolic dims, scalars, and every bad argument -> KernelArgumentError."""

from __future__ import annotations

import jit_artifacts as artifacts
import pytest
import torch

from tilelang.errors import KernelArgumentError
from tilelang.jit import JITKernel

pytestmark = pytest.mark.backend("llvm")


@pytest.fixture(scope="module")
def vadd_artifact():
    return artifacts.vadd(16)


@pytest.fixture(scope="module")
def rowsum_artifact():
    return artifacts.rowsum_dyn()


def test_all_params_passed(vadd_artifact):
    kernel = JITKernel(vadd_artifact)
    a, b, c = torch.randn(16), torch.randn(16), torch.empty(16)
    assert kernel(a, b, c) is None
    torch.testing.assert_close(c, a + b)


def test_out_idx_allocates_and_returns(vadd_artifact):
    kernel = JITKernel(vadd_artifact, out_idx=[-1])
    a, b = torch.randn(16), torch.randn(16)
    c = kernel(a, b)
    assert c.shape == (16,) and c.dtype == torch.float32 and c.device.type == "cpu"
    torch.testing.assert_close(c, a + b)
    assert kernel(a, b).data_ptr() != c.data_ptr()  # a fresh output per call


def test_symbolic_dims_and_scalars(rowsum_artifact):
    kernel = JITKernel(rowsum_artifact, out_idx=-1)
    for m in (1, 5, 33):
        x = torch.randn(m, 8)
        s = kernel(x, 2.0)
        assert s.shape == (m,)
        torch.testing.assert_close(s, 2.0 * x.sum(1))


def test_zero_copy(vadd_artifact):
    kernel = JITKernel(vadd_artifact)
    a, b, c = torch.ones(16), torch.ones(16), torch.zeros(16)
    ptr = c.data_ptr()
    kernel(a, b, c)
    assert c.data_ptr() == ptr and float(c[0]) == 2.0


@pytest.mark.parametrize(
    ("make_args", "pattern"),
    [
        (lambda: (torch.randn(16),), r"takes 2 argument\(s\) \(A, B\), got 1"),
        (lambda: (torch.randn(16), torch.randn(16), torch.randn(16)), r"takes 2 argument\(s\)"),
        (lambda: (torch.randn(16).double(), torch.randn(16)), r"argument 'A': expected dtype float32, got .*float64"),
        (lambda: (torch.randn(16), torch.randn(17)), r"argument 'B': expected shape \[16\], got \[17\]"),
        (lambda: (torch.randn(4, 4), torch.randn(16)), r"argument 'A': expected 1 dimension"),
        (lambda: (torch.randn(32)[::2], torch.randn(16)), r"argument 'A': expected a contiguous tensor"),
        (lambda: (torch.randn(16), [1.0] * 16), r"argument 'B': expected a torch.Tensor"),
        (lambda: (torch.randn(16), torch.empty(16, device="meta")), r"argument 'B': expected a tensor on device 'cpu'"),
    ],
    ids=["too-few", "too-many", "dtype", "shape", "ndim", "strides", "not-a-tensor", "device"],
)
def test_bad_arguments(vadd_artifact, make_args, pattern):
    kernel = JITKernel(vadd_artifact, out_idx=[-1])
    with pytest.raises(KernelArgumentError, match=pattern):
        kernel(*make_args())


def test_symbolic_dim_mismatch(rowsum_artifact):
    kernel = JITKernel(rowsum_artifact)
    expected = r"argument 'S': dim 0 is symbolic 'm' = 4 \(bound by X.shape\[0\]\), but this tensor has 5"
    with pytest.raises(KernelArgumentError, match=expected):
        kernel(torch.randn(4, 8), 1.0, torch.empty(5))


def test_bad_scalar(rowsum_artifact):
    kernel = JITKernel(rowsum_artifact, out_idx=-1)
    with pytest.raises(KernelArgumentError, match=r"argument 'w': expected a float32 scalar"):
        kernel(torch.randn(4, 8), torch.ones(1))


def test_every_misaligned_offset_runs_on_an_aligned_copy(vadd_artifact):
    """The hand-built kernel assumes 64-byte alignment: each misaligned input is passed as an aligned copy."""
    kernel = JITKernel(vadd_artifact, out_idx=[-1])
    b = torch.randn(16)
    for offset in range(1, 16):
        view = torch.randn(16 + offset)[offset:]
        assert view.data_ptr() % 64
        torch.testing.assert_close(kernel(view, b), view + b)


def test_misaligned_output_is_written_back(vadd_artifact):
    kernel = JITKernel(vadd_artifact)
    a, b = torch.randn(16), torch.randn(16)
    base = torch.zeros(19)
    c = base[3:]
    assert kernel(a, b, c) is None
    torch.testing.assert_close(c, a + b)
    assert float(base[:3].abs().sum()) == 0.0  # nothing written outside the view


def test_misaligned_argument_passed_twice_gets_one_copy(vadd_artifact):
    """``kernel(x, b, x)`` (C aliases A, both misaligned): one copy, so the in-place result lands in x."""
    kernel = JITKernel(vadd_artifact)
    x, b = torch.randn(17)[1:], torch.randn(16)
    expected = x + b
    kernel(x, b, x)
    torch.testing.assert_close(x, expected)


def test_unchanged_misaligned_inputs_are_not_rewritten(vadd_artifact, monkeypatch):
    """Only tensors the kernel changed are copied back (an input may be read-only memory)."""
    kernel = JITKernel(vadd_artifact, out_idx=[-1])
    written = []
    original_copy = torch.Tensor.copy_
    monkeypatch.setattr(torch.Tensor, "copy_", lambda self, src, *a, **k: (written.append(self.data_ptr()),
                                                                           original_copy(self, src, *a, **k))[1])
    a = torch.randn(17)[1:]
    kernel(a, torch.randn(16))
    assert a.data_ptr() not in written


def test_out_idx_validation(vadd_artifact, rowsum_artifact):
    with pytest.raises(KernelArgumentError, match="out of range"):
        JITKernel(vadd_artifact, out_idx=[3])
    with pytest.raises(KernelArgumentError, match="names a parameter twice"):
        JITKernel(vadd_artifact, out_idx=[2, -1])
    with pytest.raises(KernelArgumentError, match="scalar parameter 'w'"):
        JITKernel(rowsum_artifact, out_idx=[1])


def test_checks_still_reject_after_fast_path_was_primed(vadd_artifact):
    """Good calls first (the planned allocation runs), then every kind of bad tensor: each is still rejected."""
    kernel = JITKernel(vadd_artifact, out_idx=[-1])
    a, b = torch.randn(16), torch.randn(16)
    for _ in range(3):
        torch.testing.assert_close(kernel(a, b), a + b)
    with pytest.raises(KernelArgumentError, match=r"argument 'B': expected shape \[16\], got \[17\]"):
        kernel(a, torch.randn(17))
    with pytest.raises(KernelArgumentError, match=r"argument 'A': expected a contiguous tensor"):
        kernel(torch.randn(32)[::2], b)
    with pytest.raises(KernelArgumentError, match=r"argument 'A': expected dtype float32, got .*float64"):
        kernel(a.double(), b)  # the output would inherit A's dtype: A is still named, not the output
    view = torch.randn(17)[1:]
    torch.testing.assert_close(kernel(view, b), view + b)  # misaligned: runs on an aligned copy
    with pytest.raises(KernelArgumentError, match=r"argument 'A': expected a tensor on device 'cpu'"):
        kernel(torch.empty(16, device="meta"), b)
    torch.testing.assert_close(kernel(a, b), a + b)  # and the fast path still works afterwards


def test_in_place_fast_path_rejects_bad_output_tensor(vadd_artifact):
    kernel = JITKernel(vadd_artifact)
    a, b, c = torch.randn(16), torch.randn(16), torch.empty(16)
    kernel(a, b, c)
    with pytest.raises(KernelArgumentError, match=r"argument 'C': expected a contiguous tensor"):
        kernel(a, b, torch.empty(16, 2)[:, 0])
    with pytest.raises(KernelArgumentError, match=r"argument 'C': expected dtype float32"):
        kernel(a, b, torch.empty(16, dtype=torch.float16))


def test_output_dtype_differs_from_inputs():
    kernel = JITKernel(artifacts.to_half(16), out_idx=[-1])
    a = torch.randn(16)
    h = kernel(a)
    assert h.dtype == torch.float16 and h.device.type == "cpu" and h.shape == (16,) and h.is_contiguous()
    torch.testing.assert_close(h, a.half())


def test_output_without_tensor_inputs():
    kernel = JITKernel(artifacts.fill(8), out_idx=[-1])
    c = kernel(3.5)
    assert c.shape == (8,) and c.dtype == torch.float32 and c.device.type == "cpu"
    assert (c == 3.5).all()


def test_allocation_plan_is_specialised(vadd_artifact, rowsum_artifact):
    """The generated caller allocates from the first input (no shape tuple, no dtype/device keywords)."""
    source = JITKernel(vadd_artifact, out_idx=[-1])._call.__source__
    assert "a0.new_empty(16)" in source and "dtype=" not in source
    dyn = JITKernel(rowsum_artifact, out_idx=-1)._call.__source__
    assert "a0.new_empty(s0[0])" in dyn
    half = JITKernel(artifacts.to_half(16), out_idx=[-1])._call.__source__
    assert "a0.new_empty(16, dtype=_dt1)" in half
