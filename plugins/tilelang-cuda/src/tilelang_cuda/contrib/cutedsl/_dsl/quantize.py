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


# The "twiddled" fp4 layout (Triton's Hopper weight layout): after a byte reversal, each 16-bit half of the packed
# word holds four e2m1 nibbles with their bits spread out: (sign bit, exponent bits, mantissa bit) positions below.
# Moving a nibble's bits to bf16 positions (sign 15, exponent 8:7, mantissa 6) gives a bf16 2**126 times too
# small (e2m1's exponent bias is 1, bf16's 127), which one multiplication by 2**126 corrects, subnormals included.
_TWIDDLED = ((15, (8, 7), 6), (12, (5, 4), 3), (9, (2, 1), 0), (14, (11, 10), 13))
_BF16_TARGET = (15, (8, 7), 6)
_TWO_POW_126 = 0x7E807E80  # bf16x2 (2**126, 2**126)
_NEG_ZERO = 0x80008000  # bf16x2 (-0, -0): the addend that leaves every product unchanged


def _move_bits(word, nibble):
    """`word` (both halves at once) with nibble `nibble`'s bits moved to the bf16 positions, other bits cleared."""
    out = Uint32(0)
    sources = (nibble[0], *nibble[1], nibble[2])
    targets = (_BF16_TARGET[0], *_BF16_TARGET[1], _BF16_TARGET[2])
    for source, target in zip(sources, targets):
        bit = word >> Uint32(source - target) if source > target else word << Uint32(target - source)
        out = out | (bit & Uint32((1 << target) | (1 << (target + 16))))
    return out


def decode_fp4_to_bf16_twiddling(src_ptr, dst_ptr, N: int = 8):
    """Decode `N` words of 8 twiddled fp4 (e2m1) values at `src_ptr` to 8 bf16 each at `dst_ptr`: output word
    ``4i + 0`` holds the high halves of nibbles 0 and 1 of input word `i`, ``4i + 1`` those of nibbles 2 and 3,
    ``4i + 2`` / ``4i + 3`` the low halves likewise (``tl::decode_fp4_to_bf16_twiddling``)."""
    src = cute.make_tensor(cute.recast_ptr(src_ptr, dtype=cutlass.Uint32), cute.make_layout(N))
    dst = cute.make_tensor(cute.recast_ptr(dst_ptr, dtype=cutlass.Uint32), cute.make_layout(4 * N))
    for i in range(N):
        word = Uint32(src[i])
        word = ((word >> Uint32(24)) | ((word >> Uint32(8)) & Uint32(0xFF00)) | ((word << Uint32(8)) & Uint32(0xFF0000))
                | (word << Uint32(24)))  # byte reversal
        r = [Uint32(asm(T.i32(), [_move_bits(word, nibble).ir_value(), Uint32(_TWO_POW_126).ir_value(),
                                  Uint32(_NEG_ZERO).ir_value()], "fma.rn.bf16x2 $0, $1, $2, $3;", "=r,r,r,r",
                        side_effects=False)) for nibble in _TWIDDLED]
        high, low = Uint32(0xFFFF0000), Uint32(0xFFFF)
        dst[4 * i + 0] = (r[0] >> Uint32(16)) | (r[1] & high)
        dst[4 * i + 1] = (r[2] >> Uint32(16)) | (r[3] & high)
        dst[4 * i + 2] = (r[0] & low) | (r[1] << Uint32(16))
        dst[4 * i + 3] = (r[2] & low) | (r[3] << Uint32(16))
