"""TileLang's metal backend; loaded by tilelang-core through entry points."""

from tilelang_metal._version import __version__  # one version for every distribution (a link to core's)

__all__ = ["__version__"]
