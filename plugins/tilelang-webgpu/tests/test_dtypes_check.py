"""dtypes WGSL cannot store (bfloat16, float64, 8/16-bit integers, fp8 and narrower floats) are a clear error at
the kernel's line, not a WGSL validation message about an unknown identifier."""

from __future__ import annotations

import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import LoweringError


def _double(dtype: str, tile_dtype: str | None = None):
    @T.prim_func
    def double(A: T.Tensor((16, 32), dtype), B: T.Tensor((16, 32), dtype)):
        with T.Kernel(1, threads=32):
            tile = T.alloc_shared((16, 32), tile_dtype or dtype)
            T.copy(A, tile)
            for i, j in T.Parallel(16, 32):
                B[i, j] = tile[i, j] + tile[i, j]

    return double


@pytest.mark.parametrize(("dtype", "advice"), [("bfloat16", "use float16"), ("float64", "use float32"),
                                               ("int8", "8-bit"), ("uint16", "16-bit"),
                                               ("float8_e4m3fn", "8-bit or narrower float"),
                                               ("float8_e5m2", "fp8 / fp6 / fp4")])
def test_unstorable_tensor_dtype_is_a_clear_error(dtype: str, advice: str) -> None:
    with pytest.raises(LoweringError, match=rf"test_dtypes_check\.py:\d+: double: target 'webgpu' cannot store "
                                            rf"A \({dtype}\), B \({dtype}\), tile \({dtype}\): .*{advice}"):
        tilelang.compile(_double(dtype), target="webgpu")


def test_unstorable_tile_dtype_is_named() -> None:
    with pytest.raises(LoweringError, match=r"cannot store tile \(bfloat16\)"):
        tilelang.compile(_double("float32", "bfloat16"), target="webgpu")


def test_storable_dtypes_lower() -> None:
    for dtype in ("float32", "float16", "int32", "uint32"):
        source = tilelang.lower(_double(dtype), target="webgpu").kernel_source
        assert "@compute" in source, source
