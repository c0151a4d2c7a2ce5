"""Decoding packed int4 / fp4 values to fp16 / bf16 with bit tricks.

CuTe DSL device helpers of the reference TileLang: real where the CuTe DSL is installed (implemented in
``_dsl/quantize.py``), otherwise stand-ins that raise `CuTeDSLHelperUnavailable` naming what to install.
"""

from __future__ import annotations

from tilelang_cuda.contrib.cutedsl._unavailable import provide

BOTTOM_MASK = 0x000F000F
FP16_TOP_MAGIC_NUM = 0x64006400
IMMLUT = 0xEA  # (0xF0 & 0xCC) | 0xAA: the lop3 truth table
MEDIAN_NUM_UNSIGNED = 0x64006400
MEDIAN_NUM_SIGNED = 0x64086408

_FUNCTIONS = [
    'decode_i4u_to_f16', 'decode_i4s_to_f16', 'decode_fp4_to_bf16_twiddling',
]

globals().update(provide(__name__, _FUNCTIONS, impl="quantize"))

__all__ = ['BOTTOM_MASK', 'FP16_TOP_MAGIC_NUM', 'IMMLUT', 'MEDIAN_NUM_UNSIGNED', 'MEDIAN_NUM_SIGNED', *_FUNCTIONS]
