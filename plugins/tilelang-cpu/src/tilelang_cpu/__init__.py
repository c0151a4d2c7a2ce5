"""TileLang's CPU backend (target kinds ``cpu``, ``llvm``, ``c``); loaded by tilelang-core through entry points."""

from tilelang_cpu._version import __version__  # one version for every distribution (a link to core's)

__all__ = ["__version__"]
