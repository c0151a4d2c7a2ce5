"""`tilelang.testing`: the reference's helpers with this project's meaning."""

from __future__ import annotations

import pytest
import torch

import tilelang.testing as tt
from tilelang.testing import Requirement


def test_torch_assert_close_allows_a_share_of_mismatches():
    a = torch.zeros(1000)
    b = a.clone()
    b[0] = 1.0  # one element in a thousand
    assert tt.torch_assert_close(a, b, max_mismatched_ratio=0.001)
    b[1] = 1.0
    with pytest.raises(AssertionError, match=r"(?s)Too many mismatched elements: 2 > 1.*index \[0\]"):
        tt.torch_assert_close(a, b, max_mismatched_ratio=0.001)


def test_torch_assert_close_checks_attributes():
    with pytest.raises(AssertionError, match="attribute 'shape'"):
        tt.torch_assert_close(torch.zeros(2), torch.zeros(3))
    with pytest.raises(AssertionError, match="attribute 'dtype'"):
        tt.torch_assert_close(torch.zeros(2), torch.zeros(2, dtype=torch.float16))
    assert tt.torch_assert_close(torch.zeros(2), torch.zeros(2, dtype=torch.float16), check_dtype=False)
    assert tt.torch_assert_close(torch.arange(4), torch.arange(4))


def test_set_random_seed_is_reproducible():
    tt.set_random_seed(7)
    first = torch.rand(4)
    tt.set_random_seed(7)
    assert torch.equal(first, torch.rand(4))


def test_requirements_name_what_is_missing():
    # no GPU on the machines this suite runs on without the `gpu` marker; the reasons must say what is missing
    if tt.requires_cuda.holds:
        pytest.skip("a GPU is visible")
    # without the CUDA backend the reason names the distribution to install, with it the missing GPU
    missing = ("NVIDIA GPU", "pip install tilelang-cuda")
    assert any(m in tt.requires_cuda.reason for m in missing)
    reason = tt.requires_cuda_compute_version_ge(9, 0).reason or ""
    assert "compute capability" in reason or any(m in reason for m in missing)
    with pytest.raises(ValueError, match="Invalid mode"):
        tt.requires_cuda_compute_version(8, 0, mode="about")


@pytest.mark.backend("llvm")
def test_requires_llvm_holds_with_the_cpu_backend():
    assert tt.requires_llvm.holds and tt.requires_llvm.reason is None


def test_requirement_as_decorator_and_marks(pytester=None):
    never = Requirement("never", lambda: "needs a unicorn")
    always = Requirement("always", lambda: None)
    marks = never.marks()
    assert marks[0].args == (True,) and marks[0].kwargs["reason"] == "needs a unicorn"
    assert always.marks()[0].args == (False,)

    @never
    def decorated():
        pass

    assert any(m.name == "skipif" for m in decorated.pytestmark)


def test_a_probe_that_raises_skips_instead_of_erroring():
    broken = Requirement("broken", lambda: 1 / 0)
    assert "ZeroDivisionError" in broken.reason


def test_requires_package():
    assert tt.requires_package("torch").holds
    missing = tt.requires_package("no_such_package_xyz")
    assert "pip install no_such_package_xyz" in missing.reason
