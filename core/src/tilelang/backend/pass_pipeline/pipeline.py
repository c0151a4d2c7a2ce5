"""`PassPipeline`: one target kind's complete lowering sequence, as a backend module declares it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["PassPipeline"]

LowerFunc = Callable[[Any, Any], Any]


class PassPipeline:
    """The lowering pipeline of target kind `name`: ``lower(mod, target)`` returns the lowered IRModule
    (host and device functions, before the split). Errors keep their type; located ones name the kernel line."""

    def __init__(self, name: str, lower: LowerFunc):
        self.name = name
        self._lower = lower

    def lower(self, mod: Any, target: Any) -> Any:
        """Run the pipeline over `mod` for `target` (a ``tvm.target.Target``)."""
        return self._lower(mod, target)

    def __repr__(self) -> str:
        return f"<PassPipeline {self.name}>"
