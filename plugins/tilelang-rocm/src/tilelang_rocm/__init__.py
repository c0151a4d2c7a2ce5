"""TileLang's rocm backend; loaded by tilelang-core through entry points."""

__version__ = "0.1.0"
