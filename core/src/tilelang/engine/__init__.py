"""Compilation entry point: ``tilelang.lower(func, target=None, target_host=None, pass_configs=None)``."""

from tilelang.engine.lower import lower

__all__ = ["lower"]
