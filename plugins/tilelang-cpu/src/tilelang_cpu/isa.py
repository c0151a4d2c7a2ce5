"""The vector ISA an LLVM CPU target compiles for: register width and count, read from the target's CPU features.

Code shapes that must fit the register file (the GEMM micro-tile, vector widths of reductions) are chosen from
these facts, never from the vendor or the CPU name: ``mcpu=haswell`` / ``znver3`` give AVX2 (16 x 256-bit
registers) even on an AVX-512 host, ``mcpu=znver4`` / ``sapphirerapids`` AVX-512 (32 x 512-bit), an aarch64
triple NEON (32 x 128-bit). The features come from LLVM for the target's ``mcpu`` / ``mattr`` (``mattr=-avx512f``
turns an AVX-512 CPU into an AVX2 one); a target without ``mcpu`` is this machine's CPU.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple


class VectorISA(NamedTuple):
    """``name`` (``avx512``, ``avx2``, ``avx``, ``sse``, ``neon``, ``scalar``), ``bits`` per vector register,
    ``registers`` (architectural vector registers), ``fma`` (fused multiply-add instructions)."""

    name: str
    bits: int
    registers: int
    fma: bool

    def lanes(self, dtype_bits: int = 32) -> int:
        """Elements of `dtype_bits` bits per vector register (1 for scalar code)."""
        return max(1, self.bits // dtype_bits)


SCALAR = VectorISA("scalar", 32, 16, False)


def isa_from_features(features: set[str] | frozenset[str], triple: str = "") -> VectorISA:
    """The `VectorISA` of a CPU with LLVM feature names `features` (``avx512f``, ``avx2``, ``fma``, ``neon``, ...)
    on target triple `triple` (empty: x86-64)."""
    fma = "fma" in features
    if triple.startswith(("aarch64", "arm64")):
        # fixed-width code on SVE machines is NEON as well: 32 x 128-bit, FMA always
        return VectorISA("neon", 128, 32, True) if "neon" in features or not features else SCALAR
    if triple and not triple.startswith(("x86_64", "i686", "i386")):
        return VectorISA("generic", 128, 16, fma)
    if "avx512f" in features:
        return VectorISA("avx512", 512, 32, True)
    if "avx2" in features or "avx" in features:
        return VectorISA("avx2" if "avx2" in features else "avx", 256, 16, fma)
    if "sse2" in features or "sse" in features:
        return VectorISA("sse", 128, 16, fma)
    return SCALAR


@functools.cache
def _isa_of_text(target_text: str) -> VectorISA:
    import tvm.target.codegen as cg
    from tvm.target import Target

    from tilelang_cpu.codegen import with_host_cpu

    target = Target(target_text)
    if str(target.kind.name) != "llvm":
        return SCALAR  # the C target: the system compiler decides, we emit scalar loops
    target = with_host_cpu(target)
    features = {str(f) for f in cg.llvm_get_cpu_features(target)}
    triple = str(target.attrs.get("mtriple", "") or cg.llvm_get_system_triple())
    return isa_from_features(frozenset(features), triple)


def vector_isa(target: Any) -> VectorISA:
    """The `VectorISA` of `target` (a tvm Target, its config dict or its text; no ``mcpu``: this machine)."""
    from tvm.target import Target

    if isinstance(target, dict):
        target = Target(target)
    return _isa_of_text(str(target))
