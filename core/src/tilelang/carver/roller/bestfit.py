"""A best-fit allocator over one linear arena: how much shared memory a sequence of tile buffers needs."""

from __future__ import annotations

__all__ = ["Block", "BestFit"]


class Block:
    """A span ``[start, end)`` of the arena, free or taken."""

    def __init__(self, start: int, end: int, is_free: bool):
        self.start = start
        self.end = end
        self.is_free = is_free

    def size(self) -> int:
        return self.end - self.start

    def merge(self, other: Block) -> None:
        """Absorb an adjacent span of the same state."""
        if self.is_free != other.is_free:
            raise ValueError("cannot merge a free span with a taken one")
        self.start = min(self.start, other.start)
        self.end = max(self.end, other.end)

    def __repr__(self) -> str:
        return f"<Block offset={self.start} size={self.size()}>"


class BestFit:
    """Allocate from the smallest free span that fits; grow the arena at its end otherwise.

    `limit` is the arena's high-water mark: the bytes the allocations made so far need at once.
    """

    def __init__(self, align: int = 32):
        self.limit = 0
        self.list: list[Block] = []
        self.align = align

    def malloc(self, size: int) -> Block:
        size = -(-int(size) // self.align) * self.align
        fits = [b for b in self.list if b.is_free and b.size() >= size]
        if fits:
            block = min(fits, key=Block.size)
            block.is_free = False
            spare = block.size() - size
            if spare:
                block.end -= spare
                self.list.insert(self.list.index(block) + 1, Block(block.end, block.end + spare, True))
            return block
        if self.list and self.list[-1].is_free:  # extend the free tail
            block = self.list[-1]
            block.end = block.start + size
            block.is_free = False
            self.limit = block.end
            return block
        block = Block(self.limit, self.limit + size, False)
        self.list.append(block)
        self.limit += size
        return block

    def free(self, block: Block) -> None:
        if block.is_free:
            raise ValueError(f"{block} is already free")
        idx = self.list.index(block)
        freed = Block(block.start, block.end, True)
        self.list[idx] = freed
        if idx + 1 < len(self.list) and self.list[idx + 1].is_free:
            freed.merge(self.list.pop(idx + 1))
        if idx > 0 and self.list[idx - 1].is_free:
            freed.merge(self.list.pop(idx - 1))
