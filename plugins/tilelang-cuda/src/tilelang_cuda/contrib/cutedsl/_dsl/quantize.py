"""int4 -> fp16 decoding with the fp16 magic-number trick (``tl::decode_i4b_to_f16``) on the CuTe DSL.

A nibble ``v`` or'ed into the mantissa of fp16 1024.0 (``0x6400``) is the fp16 ``1024 + v``; subtracting 1024
(unsigned) or 1032 (signed, two's-complement nibbles biased by 8) leaves ``v``. One ``lop3`` places two nibbles
(bits ``4i`` and ``16 + 4i`` of the packed word) into both halves of an f16x2, one ``sub.f16x2`` removes the bias.
"""

from __future__ import annotations

import cutlass
import cutlass.cute as cute
from cutlass.base_dsl.typing import Uint32
from cutlass.cutlass_dsl import T

from tilelang_cuda.contrib.cutedsl._dsl._asm import asm
from tilelang_cuda.contrib.cutedsl.quantize import (  # defined before this module is imported
    BOTTOM_MASK,
    FP16_TOP_MAGIC_NUM,
    IMMLUT,
    MEDIAN_NUM_SIGNED,
    MEDIAN_NUM_UNSIGNED,
)


def _decode(src_ptr, dst_ptr, n, median):
    if n not in (2, 4, 6, 8):
        raise ValueError(f"decode int4: N must be 2, 4, 6 or 8 elements (one 32-bit word), got {n}")
    packed = cute.make_tensor(cute.recast_ptr(src_ptr, dtype=cutlass.Uint32), cute.make_layout(1))[0]
    out = cute.make_tensor(cute.recast_ptr(dst_ptr, dtype=cutlass.Uint32), cute.make_layout(n // 2))
    for i in range(n // 2):
        shifted = Uint32(packed) >> Uint32(4 * i)
        out[i] = Uint32(asm(
            T.i32(), [shifted.ir_value(), Uint32(median).ir_value()],
            f"{{ .reg .b32 h; lop3.b32 h, $1, {BOTTOM_MASK:#010x}, {FP16_TOP_MAGIC_NUM:#010x}, {IMMLUT:#04x}; "
            "sub.f16x2 $0, h, $2; }", "=r,r,r", side_effects=False))


def decode_i4u_to_f16(src_ptr, dst_ptr, N: int = 8):
    """Decode `N` unsigned int4 packed in the 32-bit word at `src_ptr` to fp16 at `dst_ptr`, as pairs: f16x2 `i`
    holds the nibbles `i` and `i + 4`."""
    _decode(src_ptr, dst_ptr, N, MEDIAN_NUM_UNSIGNED)


def decode_i4s_to_f16(src_ptr, dst_ptr, N: int = 8):
    """`decode_i4u_to_f16` for signed (two's-complement) int4."""
    _decode(src_ptr, dst_ptr, N, MEDIAN_NUM_SIGNED)
