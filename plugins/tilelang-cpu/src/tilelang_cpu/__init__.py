"""TileLang's CPU backend (target kinds ``cpu``, ``llvm``, ``c``); loaded by tilelang-core through entry points."""

__version__ = "0.1.0"
