"""The vector ISA an LLVM CPU target compiles for: register width and count, read from the target's CPU features;
and the dot-product / tile units it has for low-precision GEMMs (`dot_units`).

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


class DotUnits(NamedTuple):
    """The low-precision dot-product units of a CPU, by LLVM feature (what each low-precision GEMM lowering needs):

    ``amx_bf16`` / ``amx_int8`` / ``amx_fp16``: AMX tiles with ``tdpbf16ps`` / ``tdpbssd`` / ``tdpfp16ps``
    (``amx-tile`` plus ``amx-bf16`` / ``amx-int8`` / ``amx-fp16``); ``avx512_bf16``: ``vdpbf16ps``
    (``avx512bf16``); ``vnni``: the width in bits of ``vpdpbusd`` (512 with ``avx512vnni``, 256 with ``avxvnni``,
    else 0); ``vnni_int8``: ``vpdpbssd`` on 256-bit vectors (``avxvnniint8``).
    """

    amx_bf16: bool = False
    amx_int8: bool = False
    amx_fp16: bool = False
    avx512_bf16: bool = False
    vnni: int = 0
    vnni_int8: bool = False


def dot_units_from_features(features: set[str] | frozenset[str]) -> DotUnits:
    """The `DotUnits` of a CPU with LLVM feature names `features`."""
    tile = "amx-tile" in features
    vnni = 512 if "avx512vnni" in features and "avx512f" in features else 256 if "avxvnni" in features else 0
    return DotUnits(amx_bf16=tile and "amx-bf16" in features, amx_int8=tile and "amx-int8" in features,
                    amx_fp16=tile and "amx-fp16" in features,
                    avx512_bf16="avx512bf16" in features and "avx512f" in features, vnni=vnni,
                    vnni_int8="avxvnniint8" in features)


@functools.cache
def _features_of_text(target_text: str) -> tuple[frozenset[str], str] | None:
    """``(LLVM CPU features, triple)`` of an llvm target's text; None for other kinds."""
    import tvm.target.codegen as cg
    from tvm.target import Target

    from tilelang_cpu.codegen import with_host_cpu

    target = Target(target_text)
    if str(target.kind.name) != "llvm":
        return None
    target = with_host_cpu(target)
    features = frozenset(str(f) for f in cg.llvm_get_cpu_features(target))
    return features, str(target.attrs.get("mtriple", "") or cg.llvm_get_system_triple())


def _target_text(target: Any) -> str:
    from tvm.target import Target

    return str(Target(target) if isinstance(target, dict) else target)


def target_features(target: Any) -> frozenset[str]:
    """The LLVM CPU feature names of `target` (``mcpu`` plus ``mattr``; no ``mcpu``: this machine); empty for the
    C target."""
    facts = _features_of_text(_target_text(target))
    return facts[0] if facts else frozenset()


def vector_isa(target: Any) -> VectorISA:
    """The `VectorISA` of `target` (a tvm Target, its config dict or its text; no ``mcpu``: this machine)."""
    facts = _features_of_text(_target_text(target))
    if facts is None:
        return SCALAR  # the C target: the system compiler decides, we emit scalar loops
    return isa_from_features(*facts)


def dot_units(target: Any) -> DotUnits:
    """The `DotUnits` of `target` (none on the C target, or off x86)."""
    facts = _features_of_text(_target_text(target))
    if facts is None or (facts[1] and not facts[1].startswith(("x86_64", "i686", "i386"))):
        return DotUnits()
    return dot_units_from_features(facts[0])
