"""The reference's ``tilelang.language.fill_op``: ``fill`` and ``clear``."""

from tilelang.language.tileops import clear, fill

__all__ = ["clear", "fill"]
