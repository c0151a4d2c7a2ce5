"""The reference's ``tilelang.language.frame``: what a bound name stands for."""

from tilelang.language.misc import get_let_value, has_let_value

__all__ = ["get_let_value", "has_let_value"]
