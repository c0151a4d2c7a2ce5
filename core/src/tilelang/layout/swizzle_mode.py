"""`SwizzleMode`: the shared-memory swizzle a TMA descriptor or a GMMA / UMMA matrix descriptor names."""

from __future__ import annotations

import enum

# mode -> (byte width, wgmma layout_type, tcgen05 layout_type, shared-memory base alignment in bytes)
_FIELDS = {0: (1, 0, 0, 128), 1: (32, 3, 6, 256), 2: (64, 2, 4, 512), 3: (128, 1, 2, 1024)}


class SwizzleMode(enum.Enum):
    """None, 32-, 64- or 128-byte swizzle (ordinals 0..3)."""

    NONE = 0
    SWIZZLE_32B = 1
    SWIZZLE_64B = 2
    SWIZZLE_128B = 3

    def is_none(self) -> bool:
        return self is SwizzleMode.NONE

    def is_swizzle_32b(self) -> bool:
        return self is SwizzleMode.SWIZZLE_32B

    def is_swizzle_64b(self) -> bool:
        return self is SwizzleMode.SWIZZLE_64B

    def is_swizzle_128b(self) -> bool:
        return self is SwizzleMode.SWIZZLE_128B

    def wgmma_layout_type(self) -> int:
        """The GMMA descriptor's ``layout_type`` field (none 0, 128B 1, 64B 2, 32B 3)."""
        return _FIELDS[self.value][1]

    def tcgen05_layout_type(self) -> int:
        """The UMMA descriptor's swizzle field (none 0, 128B 2, 64B 4, 32B 6)."""
        return _FIELDS[self.value][2]

    def swizzle_byte_size(self) -> int:
        """Swizzle width in bytes (1 for none)."""
        return _FIELDS[self.value][0]

    def swizzle_atom_size(self) -> int:
        """Swizzle width in 16-byte vectors (1 for none)."""
        return 1 if self.is_none() else self.swizzle_byte_size() // 16

    def smem_alignment(self) -> int:
        """Required shared-memory base alignment in bytes."""
        return _FIELDS[self.value][3]

    @staticmethod
    def from_ordinal(ordinal: int) -> SwizzleMode:
        try:
            return SwizzleMode(int(ordinal))
        except ValueError:
            raise ValueError(f"no SwizzleMode with ordinal {ordinal} (0: none, 1: 32B, 2: 64B, 3: 128B)") from None

    @staticmethod
    def from_byte_size(nbytes: int) -> SwizzleMode:
        """The mode that swizzles `nbytes` (0 or 1: none)."""
        for mode in SwizzleMode:
            if mode.swizzle_byte_size() == nbytes or (nbytes == 0 and mode.is_none()):
                return mode
        raise ValueError(f"no {nbytes}-byte swizzle (32, 64 or 128 bytes, or none)")
