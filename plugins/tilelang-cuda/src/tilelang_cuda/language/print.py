"""Device printing and assertions (CUDA ``printf`` / ``__trap``): the core language's ``T.print`` and
``T.device_assert``, lowered by the CUDA backend."""

from __future__ import annotations

from tilelang.language.debug import device_assert, print

__all__ = ["device_assert", "print"]
