"""The hardware-swizzled shared layouts ``wgmma`` reads through matrix descriptors (sm_90a), for 16-bit and 8-bit
(fp8, K-major only) tiles.

A tile ``[R, L]`` (last dim contiguous) is stored as column blocks of ``W`` bytes (``W`` in 128, 64, 32): block
``b`` holds columns ``[b * W/e, (b+1) * W/e)`` as a dense ``[R, W/e]`` sub-tile, blocks one after another
(block-major). Inside a block, row ``r`` is ``W`` bytes and its 16-byte chunk ``c`` sits at chunk
``c ^ ((r // (8 // P)) % P)`` with ``P = W / 16``: CuTe's ``Swizzle<log2 P, 4, 3>`` on the byte offset, which
is what the hardware applies to descriptor addresses when the tile starts at a multiple of ``8 * W`` bytes.

Descriptors (PTX "Matrix Descriptor Format"): start address, leading / stride byte offsets (LBO / SBO) and the
swizzle mode (1 = 128B, 2 = 64B, 3 = 32B). One instruction's K step is 32 bytes (k16 of 16-bit elements, k32
of fp8). For an operand stored K-major (rows = M or N, K contiguous) a K step starts ``32`` bytes further inside a
block, rows of 8 are ``SBO = 8 * W`` apart and LBO is unused (1). For an MN-major operand (rows = K, 16-bit only)
a k16 step is 16 rows further, ``SBO = 8 * W`` (8 K rows) and ``LBO = R * W`` (the next ``W``-byte MN block).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tvm import tirx

from tilelang.transform import utils as C

CHUNK_BYTES = 16
K_STEP_BYTES = 32  # K bytes of one wgmma instruction (k16 for 16-bit types, k32 for fp8)
SWIZZLE_MODE = {128: 1, 64: 2, 32: 3}  # descriptor bits 62-63


def _is_int(x: Any) -> bool:
    return isinstance(x, int)


def _xor(a: Any, b: Any) -> Any:
    return a ^ b if _is_int(a) and _is_int(b) else tirx.bitwise_xor(a, b)


def _div(a: Any, b: int) -> Any:
    return a // b if _is_int(a) else tirx.floordiv(a, b)


def _mod(a: Any, b: int) -> Any:
    return a % b if _is_int(a) else tirx.floormod(a, b)


def pick_width(cols: int, elem_bytes: int) -> int | None:
    """The swizzle width in bytes for rows of `cols` elements, or None when no hardware layout fits."""
    row = cols * elem_bytes
    if row % 128 == 0:
        return 128
    return row if row in (64, 32) else None


@dataclass(frozen=True)
class SwizzledTile:
    """A ``rows x cols`` tile of `elem`-byte elements in the block-major swizzled layout of width `width`."""

    rows: int
    cols: int
    elem: int
    width: int

    @property
    def block(self) -> int:
        """Elements per column block (one swizzled row)."""
        return self.width // self.elem

    @property
    def vec(self) -> int:
        """Elements per 16-byte chunk."""
        return CHUNK_BYTES // self.elem

    @property
    def period(self) -> int:
        """16-byte chunks per swizzled row (``P``)."""
        return self.width // CHUNK_BYTES

    @property
    def k_step(self) -> int:
        """Elements of K per wgmma instruction."""
        return K_STEP_BYTES // self.elem

    @property
    def mode(self) -> int:
        return SWIZZLE_MODE[self.width]

    @property
    def elements(self) -> int:
        return self.rows * self.cols

    def phase(self, row: Any) -> Any:
        """The chunk XOR of `row`."""
        return _mod(_div(row, max(1, 8 // self.period)), self.period)

    def offset(self, row: Any, col: Any) -> Any:
        """Storage offset (elements, from the tile start) of element (`row`, `col`); ints or TIR expressions."""
        inner = _mod(col, self.block)
        chunk = _xor(_div(inner, self.vec), self.phase(row))
        return (_div(col, self.block) * (self.rows * self.block) + row * self.block
                + chunk * self.vec + _mod(inner, self.vec))

    def split(self, flat: Any) -> tuple[Any, Any, Any]:
        """``(lead, row, col)`` of a row-major element offset into ``[lead.., rows, cols]``."""
        return _div(flat, self.elements), _mod(_div(flat, self.cols), self.rows), _mod(flat, self.cols)

    def flat_offset(self, flat: Any) -> Any:
        """The storage offset of row-major offset `flat` (leading dims in front, one tile each)."""
        lead, row, col = self.split(flat)
        return lead * self.elements + self.offset(row, col)

    def descriptor(self, k_major: bool, row_block: int, k_step: int) -> tuple[int, int, int, int]:
        """``(start_bytes, lbo, sbo, mode)`` of the operand sub-matrix at MN offset `row_block` and instruction K
        step `k_step` (start relative to the tile start)."""
        if k_major:
            start = self.offset(row_block, k_step * self.k_step) * self.elem
            return start, 1 * CHUNK_BYTES, 8 * self.width, self.mode
        start = self.offset(k_step * self.k_step, row_block) * self.elem
        return start, self.rows * self.width, 8 * self.width, self.mode


def tile_layout(shape: list[Any], elem_bytes: int, elem_sizes: tuple[int, ...] = (1, 2)) -> SwizzledTile | None:
    """The swizzled layout of a shared tile of `shape` (the last two dims; leading dims are whole copies), or
    None when wgmma cannot read it through a swizzled descriptor. `elem_sizes`: the element sizes (bytes) the
    reading instruction takes (wgmma: 16-bit, and 8-bit for fp8; tcgen05 block-scaled MMAs read 8-bit tiles too)."""
    dims = [C.as_int(s) for s in shape]
    if len(dims) < 2 or elem_bytes not in elem_sizes or any(d is None for d in dims[-2:]):
        return None
    rows, cols = dims[-2], dims[-1]
    width = pick_width(cols, elem_bytes)
    if width is None or rows % 8:
        return None
    return SwizzledTile(rows, cols, elem_bytes, width)


def descriptor_fields(start: int, lbo: int, sbo: int, mode: int) -> int:
    """The 64-bit descriptor (base offset 0) for a shared byte address `start`."""
    return (((start & 0x3FFFF) >> 4) | (((lbo & 0x3FFFF) >> 4) << 16) | (((sbo & 0x3FFFF) >> 4) << 32)
            | (mode << 62))
