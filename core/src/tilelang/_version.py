"""The version of tilelang-core; plugins depend on the same minor version."""

__version__ = "0.1.0"
