"""Device printing and assertions: the core language's ``T.print`` and ``T.device_assert`` (lowered on CUDA to
``printf`` and ``__trap``, `tilelang_cuda.tileops.debug`)."""

from __future__ import annotations

from tilelang.language import device_assert, print

__all__ = ["device_assert", "print"]
