"""T.<dtype>: tvm.DataType objects made on first use (scalars, vectors, custom types, aliases)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

import tilelang.language as T
from tilelang.errors import KernelTypeError


def test_importing_the_language_imports_no_tvm():
    code = "import sys, tilelang.language as T; print('tvm' in sys.modules, 'tvm_ffi' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_dtypes_are_tvm_datatypes_equal_to_their_names():
    import tvm

    for name in ("float16", "bfloat16", "float32x4", "int4", "uint64x2", "float8_e4m3", "float4_e2m1fnx2"):
        dt = getattr(T, name)
        assert isinstance(dt, tvm.DataType) and dt == name
    assert T.int == "int32" and T.half == "float16" and T.long == "int64" and T.short == "int16"
    assert T.uint == "uint32" and T.double == "float64" and T.bool == "bool"
    assert T.float32x4.lanes == 4 and T.float32x4.bits == 32 and T.float16.bytes == 2
    assert T.dtype("float") is not None and T.dtype(torch.float16) == "float16"


def test_every_reference_dtype_name_exists():
    from tilelang.language.dtypes import _all_dtypes

    assert len(_all_dtypes) == len(set(_all_dtypes)) > 150
    for name in _all_dtypes:
        assert getattr(T, name) is getattr(T, name)  # made once


def test_custom_dtypes():
    assert str(T.tfloat32) == "custom[tfloat32]" and T.tfloat32.bits == 32
    unpacked = T.float4_e2m1_unpacked
    assert unpacked.bits == 8 and int(unpacked.type_code) == 131 and unpacked.is_float4_e2m1_unpacked()
    assert T.float4_e2m1fn.is_float4_e2m1fn() and T.float4_e2m1fnx2.is_float4() and not T.float16.is_float4()


def test_calling_a_dtype_makes_constants_casts_vectors_and_vars():
    from tvm import tirx

    c = T.float32(1.5)
    assert isinstance(c, tirx.FloatImm) and float(c.value) == 1.5 and str(c.dtype) == "float32"
    assert int(T.uint64(0xFFFFFFFFFFFFFFFF).value) == 0xFFFFFFFFFFFFFFFF
    v = T.int32()
    assert isinstance(v, tirx.Var) and str(v.dtype) == "int32"
    assert str(T.float16(v).dtype) == "float16"
    packed = T.float16x2(T.float16(1.0), T.float16(2.0))
    assert isinstance(packed, tirx.Shuffle) and str(packed.dtype) == "float16x2"
    assert str(T.float32x4(0.0).dtype) == "float32x4"
    assert str(T.tfloat32(1.0).dtype) == "custom[tfloat32]"


def test_as_torch_and_storage_dtypes():
    from tilelang.language.dtypes import resolve_torch_storage_dtype

    assert T.bfloat16.as_torch() is torch.bfloat16 and T.int4.as_torch() is torch.int8
    assert resolve_torch_storage_dtype(T.int4) == "int8"
    if hasattr(torch, "float4_e2m1fn_x2"):
        assert T.float4_e2m1fn.as_torch() is torch.float4_e2m1fn_x2


def test_unknown_dtype_is_a_clear_error():
    with pytest.raises(KernelTypeError, match="unsupported dtype 'complex64'"):
        T.dtype("complex64")


def test_float32_constant_out_of_range():
    with pytest.raises(ValueError, match="exceeds maximum of float32"):
        T.cast(1e300, "float32")


def test_torch_dtype_table_of_the_reference():
    """``tilelang.language.dtypes._TORCH_DTYPE_TO_STR`` (what the reference's examples import, e.g. gemm_sp's
    sparse_utils: ``dtype(_TORCH_DTYPE_TO_STR[t])``) maps torch dtypes to TileLang names, and back."""
    from tilelang.language import dtypes

    table = dtypes._TORCH_DTYPE_TO_STR
    assert table[torch.float16] == "float16" and table[torch.float] == "float32" and table[torch.long] == "int64"
    assert table[torch.bfloat16] == "bfloat16" and table[torch.float8_e4m3fn] == "float8_e4m3fn"
    assert table[torch.bool] == "bool" and table[torch.uint8] == "uint8"
    assert dtypes.dtype(table[torch.half]) == T.float16
    assert dtypes._STR_TO_TORCH_DTYPE["int32"] is torch.int32


def test_tfloat32_parameter_takes_a_float32_tensor():
    """torch has no tf32 dtype: a ``T.tfloat32`` tensor parameter takes a float32 tensor (its storage, as in the
    reference; deepseek_mhc's pre kernel); a tensor of another dtype is still refused, naming both dtypes."""
    import tilelang

    @tilelang.jit(target="cuda")
    def scale(A, block_M: int = 8):
        M, N = T.const("M, N")
        A: T.Tensor((M, N), T.tfloat32)
        C = T.empty((M, N), T.float32)
        with T.Kernel(T.ceildiv(M, block_M), threads=32) as bx:
            for i, j in T.Parallel(block_M, N):
                C[bx * block_M + i, j] = T.cast(A[bx * block_M + i, j], T.float32) * 2.0
        return C

    func = scale.get_tir(torch.randn(16, 8))
    assert "tfloat32" in func.script()
    with pytest.raises(KernelTypeError, match=r"dtype custom\[tfloat32\], got shape \(16, 8\) and dtype float16"):
        scale.get_tir(torch.randn(16, 8).half())
