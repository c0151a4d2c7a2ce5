"""The reference's module path of `PassConfigKey` (defined in `tilelang.transform.config`)."""

from tilelang.transform.config import PassConfigKey

__all__ = ["PassConfigKey"]
