"""CuTe swizzles (``Sw<B, M, S>``) and swizzled layouts (``Sw o offset o layout``).

``Sw<B, M, S>`` XORs the `B` address bits starting at bit ``M + S`` into the `B` bits starting at bit `M`:
``x ^ ((x & (mask << (M + S))) >> S)``. The shared-memory bank swizzles are ``Sw<1|2|3, 4, 3>`` in byte
addresses (32, 64, 128 bytes). A `ComposedLayout` maps a coordinate to ``Sw(offset + layout(coord))``.
"""

from __future__ import annotations

import re
from typing import Any

from tvm_ffi import Object
from tvm_ffi.dataclasses import py_class

from tilelang.layout.cute import int_tuple as it
from tilelang.layout.cute.int_tuple import check
from tilelang.layout.cute.layout import Layout, _py, make


def _log2_exact(v: int) -> int:
    check(v > 0 and v & (v - 1) == 0, f"expected a power-of-two element size, got {v}")
    return v.bit_length() - 1


@py_class("tl.cute.Swizzle", structural_eq="tree", repr=False)
class Swizzle(Object):
    """``Sw<b_bits, m_base, s_shift>`` (see the module docstring); ``b_bits == 0`` is the identity."""

    b_bits: int
    m_base: int
    s_shift: int

    @property
    def is_swizzled(self) -> bool:
        return self.b_bits > 0

    def apply(self, offset: int) -> int:
        if self.b_bits <= 0:
            return offset
        mask = ((1 << self.b_bits) - 1) << (self.m_base + self.s_shift)
        return offset ^ ((offset & mask) >> self.s_shift)

    def recast(self, old_bits: int, new_bits: int) -> Swizzle:
        """The same swizzle over elements of `new_bits` instead of `old_bits` (CuTe ``recast_layout``)."""
        if not self.is_swizzled:
            return Swizzle(0, 0, 0)
        old_log, new_log = _log2_exact(int(old_bits)), _log2_exact(int(new_bits))
        if new_bits >= old_bits:
            m = self.m_base - (new_log - old_log)
            return Swizzle(self.b_bits, m, self.s_shift) if m >= 0 else Swizzle(max(self.b_bits + m, 0), 0,
                                                                                   self.s_shift)
        return Swizzle(self.b_bits, self.m_base + (old_log - new_log), self.s_shift)

    def to_swizzle_mode(self) -> Any:
        """The TMA / GMMA `SwizzleMode` of this byte-address swizzle (ValueError when it is not a bank swizzle)."""
        from tilelang.layout.swizzle_mode import SwizzleMode

        if not self.is_swizzled:
            return SwizzleMode.NONE
        if self.m_base == 4 and self.s_shift == 3 and 1 <= self.b_bits <= 3:
            return SwizzleMode(self.b_bits)
        raise ValueError(f"{self} is not a 32/64/128-byte bank swizzle (expected Sw<1..3,4,3> in bytes)")

    @staticmethod
    def parse(text: str) -> Swizzle:
        m = re.fullmatch(r"\s*Sw<\s*(-?\d+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*>\s*", str(text))
        check(m is not None, f"Swizzle text must be 'Sw<b,m,s>', got {text!r}")
        return Swizzle(*(int(g) for g in m.groups()))  # type: ignore[union-attr]

    def __str__(self) -> str:
        return f"Sw<{self.b_bits},{self.m_base},{self.s_shift}>"

    def __repr__(self) -> str:
        return str(self)


def _recast_mode(factor: int, up: bool, shape: int, stride: int) -> tuple[int, int]:
    """CuTe upcast / downcast of one mode: the unit-stride mode scales its shape, the others their stride."""
    if factor == 1 or (up and stride == 0):
        return shape, stride
    if up:
        a = abs(stride)
        sign = (stride > 0) - (stride < 0)
        return -(-shape // -(-factor // a)), sign * -(-a // factor)
    if stride in (1, -1):
        return shape * factor, stride
    return shape, stride * factor


@py_class("tl.cute.ComposedLayout", structural_eq="tree", repr=False)
class ComposedLayout(Object):
    """``Sw o offset o layout``: coordinate ``c`` maps to ``swizzle.apply(offset + layout(c))``."""

    swizzle: Swizzle
    offset: int
    layout: Layout

    def recast(self, old_bits: int, new_bits: int) -> ComposedLayout:
        """The same map over elements of `new_bits` instead of `old_bits` (addresses rescaled)."""
        old_log, new_log = _log2_exact(int(old_bits)), _log2_exact(int(new_bits))
        up = new_bits >= old_bits
        factor = 1 << abs(new_log - old_log)
        sh, st = _py(self.layout)

        def tree(s: Any, d: Any) -> tuple[Any, Any]:
            if it.is_tuple(s):
                parts = [tree(a, b) for a, b in zip(s, d)]
                return tuple(p[0] for p in parts), tuple(p[1] for p in parts)
            check(it.is_int(s) and it.is_int(d), "recast requires plain integer shapes and strides")
            return _recast_mode(factor, up, s, d)

        new_sh, new_st = tree(sh, st)
        offset = int(self.offset)
        if factor != 1:
            if up:
                check(offset % factor == 0, f"recast cannot scale offset {offset} up by {factor}")
                offset //= factor
            else:
                offset *= factor
        return ComposedLayout(self.swizzle.recast(old_bits, new_bits), offset, make(new_sh, new_st))

    def __call__(self, coord: Any) -> int:
        value = self.layout(coord)
        check(it.is_int(value), f"a swizzled layout maps to integer addresses, got {value}")
        return self.swizzle.apply(int(self.offset) + value)

    @staticmethod
    def from_tilelang(layout: Any, buffer: Any = None) -> ComposedLayout | None:
        """Recover ``Sw o offset o affine`` from a `tilelang.layout.Layout` (element addresses; with `buffer`,
        recast to byte addresses). None when the layout is not one XOR swizzle over an affine map."""
        from tilelang.layout.cute.recover import composed_layout_from_tilelang

        mode = composed_layout_from_tilelang(layout)
        if buffer is None or mode is None:
            return mode
        from tilelang.layout.buffers import buffer_info, dtype_bits

        _, _, dtype = buffer_info(buffer)  # type: ignore[misc]
        return mode.recast(dtype_bits(dtype), 8)

    def __str__(self) -> str:
        return f"{self.swizzle} o {self.offset} o {self.layout}"

    def __repr__(self) -> str:
        return str(self)
