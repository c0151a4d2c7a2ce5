"""The reference's ``tilelang.language.copy_op``: copies, transposes and im2col."""

from tilelang.language.tileops import async_copy, c2d_im2col, copy, im2col, transpose

__all__ = ["async_copy", "c2d_im2col", "copy", "im2col", "transpose"]
