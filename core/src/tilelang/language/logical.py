"""The reference's ``tilelang.language.logical``: ``any_of`` and ``all_of``."""

from tilelang.language.misc import all_of, any_of

__all__ = ["all_of", "any_of"]
