"""`SwizzleMode`: the shared-memory swizzle a TMA descriptor or a GMMA / UMMA matrix descriptor names."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

# mode -> (byte width, wgmma layout_type, tcgen05 layout_type, shared-memory base alignment in bytes)
_FIELDS = {0: (1, 0, 0, 128), 1: (32, 3, 6, 256), 2: (64, 2, 4, 512), 3: (128, 1, 2, 1024)}
_NAMES = {0: "NONE", 1: "SWIZZLE_32B", 2: "SWIZZLE_64B", 3: "SWIZZLE_128B"}


class _SwizzleModeMeta(type):
    """Iteration over the four modes and ``SwizzleMode(ordinal)`` returning the one instance of that mode."""

    _members: dict[int, SwizzleMode]

    def __call__(cls, ordinal: int | SwizzleMode) -> SwizzleMode:
        if isinstance(ordinal, cls):
            return ordinal
        try:
            return cls._members[int(ordinal)]
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"{ordinal!r} is not a valid SwizzleMode (0: none, 1: 32B, 2: 64B, 3: 128B)") from None

    def __iter__(cls) -> Iterator[SwizzleMode]:
        return iter(cls._members.values())

    def __len__(cls) -> int:
        return len(cls._members)


class SwizzleMode(metaclass=_SwizzleModeMeta):
    """None, 32-, 64- or 128-byte swizzle (ordinals 0..3).

    Like the reference's (a registered FFI enum rather than a Python ``enum.Enum``) the four modes are singleton
    objects: ``SwizzleMode(2) is SwizzleMode.SWIZZLE_64B``; ``.value`` is the ordinal and ``.name`` the mode's name.
    """

    NONE: ClassVar[SwizzleMode]
    SWIZZLE_32B: ClassVar[SwizzleMode]
    SWIZZLE_64B: ClassVar[SwizzleMode]
    SWIZZLE_128B: ClassVar[SwizzleMode]

    __slots__ = ("value",)

    @property
    def name(self) -> str:
        return _NAMES[self.value]

    def __repr__(self) -> str:
        return f"SwizzleMode.{self.name}"

    def __reduce__(self) -> tuple:
        return SwizzleMode, (self.value,)

    def __int__(self) -> int:
        return self.value

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


def _make_members() -> None:
    members = {}
    for ordinal, name in _NAMES.items():
        mode = object.__new__(SwizzleMode)
        mode.value = ordinal
        members[ordinal] = mode
        setattr(SwizzleMode, name, mode)
    SwizzleMode._members = members


_make_members()
