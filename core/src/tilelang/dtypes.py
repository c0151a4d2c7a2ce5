"""The reference's ``tilelang.dtypes``: every dtype name of ``tilelang.language`` (``T.float16`` ...), importable
as ``from tilelang.dtypes import float16``."""

from tilelang.language.dtypes import *  # noqa: F403
from tilelang.language.dtypes import dtype  # noqa: F401
