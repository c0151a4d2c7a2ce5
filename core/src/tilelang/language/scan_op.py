"""The reference's ``tilelang.language.scan_op``: ``cumsum`` and ``cummax``."""

from tilelang.language.tileops import cummax, cumsum

__all__ = ["cummax", "cumsum"]
