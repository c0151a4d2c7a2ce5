"""mma.sync and sparse mma.sp on register fragments, per shape and type.

CuTe DSL device helpers of the reference TileLang: real where the CuTe DSL is installed (implemented in
``_dsl/ptx_mma.py``), otherwise stand-ins that raise `CuTeDSLHelperUnavailable` naming what to install.
"""

from __future__ import annotations

from tilelang_cuda.contrib.cutedsl._unavailable import provide

_FUNCTIONS = [
    'ptx_mma_m16n8k16_f16_f16_f32', 'ptx_mma_m16n8k16_f16_f16_f16', 'ptx_mma_m16n8k16_bf16_bf16_f32',
    'ptx_mma_m16n8k32_s8_s8_s32', 'ptx_mma_m16n8k32_u8_u8_s32', 'ptx_mma_m16n8k32_s4_s4_s32',
    'ptx_mma_m16n8k32_u4_u4_s32', 'ptx_mma_m16n8k4_tf32_tf32_f32', 'ptx_mma_m16n8k8_tf32_tf32_f32',
    'ptx_mma_m8n8k4_f64_f64_f64', 'ptx_mma_m16n8k32_e4m3_e4m3_f32', 'ptx_mma_m16n8k32_e4m3_e4m3_f16',
    'ptx_mma_m16n8k32_e5m2_e5m2_f32', 'ptx_mma', 'ptx_mma_sp', 'ptx_mma_sp_m16n8k32_f16_f16_f32',
    'ptx_mma_sp_m16n8k32_f16_f16_f16', 'ptx_mma_sp_m16n8k16_f16_f16_f32', 'ptx_mma_sp_m16n8k16_f16_f16_f16',
    'ptx_mma_sp_m16n8k32_bf16_bf16_f32', 'ptx_mma_sp_m16n8k16_bf16_bf16_f32', 'ptx_mma_sp_m16n8k64_s8_s8_s32',
    'ptx_mma_sp_m16n8k32_s8_s8_s32', 'ptx_mma_sp_m16n8k16_tf32_tf32_f32', 'ptx_mma_sp_m16n8k8_tf32_tf32_f32',
]

globals().update(provide(__name__, _FUNCTIONS, impl="ptx_mma"))

__all__ = [*_FUNCTIONS]
