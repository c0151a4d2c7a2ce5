"""Device-side debugging on CUDA (``tilelang.cuda.debug``): ``T.device_assert`` (a failed condition prints the
message and traps the kernel) and ``T.print``, as the core language defines them."""

from __future__ import annotations

from tilelang.language import device_assert, print

__all__ = ["device_assert", "print"]
