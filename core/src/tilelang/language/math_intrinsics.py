"""The reference's ``tilelang.language.math_intrinsics``: fast, IEEE and packed math."""

from tilelang.language.fastmath import *  # noqa: F403
from tilelang.language.fastmath import __all__  # noqa: F401
