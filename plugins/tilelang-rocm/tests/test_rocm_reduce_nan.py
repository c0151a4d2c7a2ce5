"""NaN in ROCm reductions (built, not run: no AMD GPU here): core's NaN-keeping max / min fold survives to the
gfx942 code object as an unordered compare (``v_cmp_u_f32``, "is either operand NaN") feeding the select."""

from __future__ import annotations

import re
import warnings

import pytest

import tilelang
from tilelang.testing.corpus import CORPUS
from tilelang_rocm.compiler import finalize


@pytest.mark.parametrize("name", ["row_max", "softmax"])
def test_max_reductions_test_for_nan_in_the_code_object(name, lld22):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        artifact = finalize(tilelang.lower(CORPUS[name]().prim_func(), target={"kind": "rocm", "mcpu": "gfx942"}))
    assert re.search(r"\bv_cmp_u_f32", artifact.kernel_source)
