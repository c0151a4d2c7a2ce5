"""TileLang's Metal backend (target kind ``metal``); loaded by tilelang-core through entry points.

``is_metal_simdgroup`` / ``is_metal_cooperative_tensor`` (the reference's ``tilelang.metal`` names) come from
`tilelang_metal.utils` on first use, so importing the package stays cheap.
"""

from typing import Any

from tilelang_metal._version import __version__  # one version for every distribution (a link to core's)

__all__ = ["__version__", "is_metal_cooperative_tensor", "is_metal_simdgroup"]


def __getattr__(name: str) -> Any:
    if name in ("is_metal_cooperative_tensor", "is_metal_simdgroup"):
        from tilelang_metal import utils

        return getattr(utils, name)
    raise AttributeError(f"module 'tilelang_metal' has no attribute {name!r}")
