"""TVM's CUDA C repaired where nvcc would reject it (`tilelang_cuda.source_fixes`)."""

from __future__ import annotations

import warnings

import pytest
import torch
from cuda_emulator import emulate
from cuda_helpers import needs_nvcc

import tilelang
from tilelang.testing import corpus
from tilelang_cuda.source_fixes import fix_special_floats


def test_bare_special_floats_become_bit_patterns():
    src = "x = __float2bfloat16_rn(-inff/*-inf*/); y = __float2bfloat16_rn(nanf); z = nanf(\"\"); w = inffo;"
    fixed = fix_special_floats(src)
    assert "__float2bfloat16_rn(-__int_as_float(0x7f800000)/*-inf*/)" in fixed
    assert "__float2bfloat16_rn(__int_as_float(0x7fffffff))" in fixed
    assert 'nanf("")' in fixed and "inffo" in fixed  # calls and longer names are left alone


def _row_max_bf16():
    ck = corpus.row_max(dtype="bfloat16")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ck, tilelang.lower(ck.prim_func(), target={"kind": "cuda", "arch": "sm_80"})


@needs_nvcc
def test_bf16_row_max_builds_to_cubin():
    _, art = _row_max_bf16()  # lower() runs nvcc: it used to fail on `-inff`
    assert "kernel.cubin" in art.files
    assert "inff" not in art.kernel_source


@pytest.mark.parametrize("seed", [0, 1])
def test_bf16_row_max_matches_torch_in_the_emulator(seed):
    ck, art = _row_max_bf16()
    ins, outs = ck.make_inputs(seed), ck.make_outputs()
    emulate(art, *ck.call_args(ins, outs))
    ref = ck.ref(*ins)
    torch.testing.assert_close(outs[0].float(), (ref[0] if isinstance(ref, tuple) else ref).float(),
                               atol=ck.atol, rtol=ck.rtol)
