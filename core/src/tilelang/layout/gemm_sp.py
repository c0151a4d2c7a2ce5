"""Storage layouts of the metadata of 2:4 structured-sparse GEMM operands, as CUTLASS's compressors write them.

The metadata of a sparse operand A (M x K/2 kept values) says which 2 of every 4 values were kept. CUTLASS
stores it in an interleaved order its sparse tensor-core kernels read directly; these layouts map the
logical ``(row, column)`` of the metadata tensor to that storage, so a kernel can read metadata produced by
CUTLASS (sm_90) or by torch's semi-structured conversion (sm_8x).
"""

from __future__ import annotations

import math
import re
import warnings
from typing import Any

from tilelang.layout.layout import Layout

__all__ = ["decompose_col_major", "make_cutlass_metadata_layout", "make_cutlass_metadata_layout_sm8x",
           "make_cutlass_metadata_layout_sm90"]

_MMA_BITS = {"float16": 16, "bfloat16": 16, "float32": 32, "int8": 8, "float8_e4m3": 8, "float8_e4m3fn": 8,
             "float8_e4m3fnuz": 8, "float8_e5m2": 8, "float8_e5m2fnuz": 8}


def decompose_col_major(index_1d: Any, basis: list[int]) -> list[Any]:
    """The mixed-radix digits of `index_1d` over `basis`, first digit fastest."""
    digits = []
    for radix in basis:
        digits.append(index_1d % radix)
        index_1d //= radix
    return digits


def _strides_in_order(shape: list[int], order: list[int]) -> list[int]:
    """Compact strides for `shape` where mode ``m`` is the ``order[m]``-th fastest."""
    strides = [0] * len(shape)
    acc = 1
    for m in sorted(range(len(shape)), key=lambda k: order[k]):
        strides[m] = acc
        acc *= shape[m]
    return strides


def make_cutlass_metadata_layout_sm90(buffer: Any, mma_dtype: str, block_k: int) -> Layout:
    """The sm_90 sparse-GMMA metadata layout (8-bit metadata) for operands of `mma_dtype` tiled `block_k` deep."""
    mma_dtype = str(mma_dtype)
    if mma_dtype not in _MMA_BITS:
        raise NotImplementedError(f"Unsupported dtype: {mma_dtype}")
    if str(buffer.ty.dtype) not in ("uint8", "int8"):
        raise ValueError(f"metadata should be 8 bit, got {buffer.ty.dtype}")
    if block_k > 128:
        warnings.warn(f"block_k {block_k} is too large, set to 128 for {mma_dtype}.", stacklevel=2)
        block_k = 128
    bits = _MMA_BITS[mma_dtype]
    atom_k = 512 // bits
    if block_k % atom_k:
        raise ValueError(f"Tile K is too small, which should be at least {atom_k} for {mma_dtype}")
    if bits == 8:
        shape_i, stride_i, shape_k, stride_k = [64], [block_k // 8], [block_k // 8], [1]
    else:
        shape = [8, 2, 4, bits // 8, 2, block_k // atom_k]
        strides = _strides_in_order(shape, [3, 1, 5, 0, 4, 2])
        shape_i, shape_k, stride_i, stride_k = shape[:3], shape[3:], strides[:3], strides[3:]
    rows, cols = (int(s) for s in buffer.ty.shape)
    stride_i = [*stride_i, math.prod(shape_i + shape_k)]
    shape_i = [*shape_i, -(-rows // 64)]
    stride_k = [*stride_k, math.prod(shape_i + shape_k)]
    shape_k = [*shape_k, -(-cols // math.prod(shape_k))]

    def offset(i: Any, k: Any) -> Any:
        di, dk = decompose_col_major(i, shape_i), decompose_col_major(k, shape_k)
        return sum(d * s for d, s in zip(di, stride_i)) + sum(d * s for d, s in zip(dk, stride_k))

    return Layout(list(buffer.ty.shape), offset)


def make_cutlass_metadata_layout_sm8x(buffer: Any, mma_dtype: str) -> Layout:
    """The sm_8x sparse-MMA metadata layout (16-bit metadata for 16-bit operands, 32-bit for 8-bit ones), as
    torch's semi-structured conversion writes it: column-major, interleaved in groups of rows, the 2x2
    off-diagonal blocks swapped."""
    mma_dtype, meta = str(mma_dtype), str(buffer.ty.dtype)
    if mma_dtype in ("float16", "bfloat16") and meta not in ("uint16", "int16"):
        raise ValueError(f"metadata should be 16 bit, got {meta}")
    if mma_dtype in ("float8_e4m3", "float8_e5m2", "int8", "uint8") and meta not in ("uint32", "int32"):
        raise ValueError(f"metadata should be 32 bit, got {meta}")
    m, k = (int(s) for s in buffer.ty.shape)
    sixteen = meta.endswith("16")
    group, interleave = (32, 4) if sixteen else (16, 2)

    def storage(i: Any, j: Any) -> list[Any]:
        row = i // group * group + (i % 8) * interleave + (i % group) // 8
        swap = (1 - row % 2) * (j % 2) - (row % 2) * (1 - j % 2)  # +1: top-right, -1: bottom-left
        row, col = row + swap, j - swap
        flat = (col // 2) * m * 2 + row * 2 + col % 2
        return [flat // k, flat % k]

    return Layout(list(buffer.ty.shape), storage)


def _compute_version(arch: Any) -> tuple[int, int]:
    text = str(arch)
    match = re.fullmatch(r"(?:sm_)?(\d+)\.?(\d)?a?", text.strip()) if "." not in text else \
        re.fullmatch(r"(\d+)\.(\d+)", text.strip())
    if not match:
        raise ValueError(f"cannot read a CUDA compute version from arch={arch!r} (use e.g. 'sm_90' or '8.0')")
    if "." in text:
        return int(match.group(1)), int(match.group(2))
    digits = match.group(1) + (match.group(2) or "")
    return int(digits[:-1]), int(digits[-1])


def make_cutlass_metadata_layout(buffer: Any, mma_dtype: str = "float16", arch: str | None = None,
                                 **extra_args: Any) -> Layout:
    """The CUTLASS metadata layout for `arch` (default: the visible GPU's): sm_90 and newer take ``block_k=``."""
    if arch is None:
        from tilelang.testing import cuda_compute_version

        version = cuda_compute_version()
        if version is None:
            raise ValueError("make_cutlass_metadata_layout: no CUDA GPU to read the architecture from; pass "
                             "arch='sm_90' (or 'sm_80')")
    else:
        version = _compute_version(arch)
    if version >= (9, 0):
        return make_cutlass_metadata_layout_sm90(buffer=buffer, mma_dtype=mma_dtype, **extra_args)
    if version >= (8, 0):
        return make_cutlass_metadata_layout_sm8x(buffer=buffer, mma_dtype=mma_dtype)
    raise NotImplementedError(f"Unsupported architecture: {arch}")
