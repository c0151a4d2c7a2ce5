"""CUDA fast-math and packed-arithmetic intrinsics of the reference's ``tilelang.cuda.language.math``: the core
language's ``T.__exp`` ... ``T.ieee_*`` and ``T.add2`` ... names, lowered to CUDA's device functions."""

from __future__ import annotations

from tilelang.language.fastmath import *  # noqa: F403 - the reference module re-exports the whole family
from tilelang.language.fastmath import __all__  # noqa: F401
