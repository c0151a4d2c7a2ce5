"""CUDA fast-math and packed-arithmetic intrinsics of the reference's ``tilelang.cuda.language.math``: the core
language's ``T.__exp`` ... ``T.ieee_*`` and ``T.add2`` ... names, lowered to CUDA's device functions."""

from __future__ import annotations

from tilelang.language import fastmath as _fastmath

__all__ = list(_fastmath.__all__)  # the reference module re-exports the whole family
globals().update({name: getattr(_fastmath, name) for name in __all__})
