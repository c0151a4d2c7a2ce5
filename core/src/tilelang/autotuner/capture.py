"""``with tilelang.autotuner.set_autotune_inputs(a, b):`` fixes the input tensors autotuning benchmarks on.

Inside the block, `get_autotune_inputs` returns them and `AutoTuner` uses them instead of supplying inputs
(a ``supply_prog`` is then ignored, with a warning). Blocks nest; each thread has its own stack.
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["set_autotune_inputs", "get_autotune_inputs", "AutotuneInputsCapture", "CaptureStack"]

_local = threading.local()


class CaptureStack:
    """A stack of captured input lists."""

    def __init__(self) -> None:
        self.stack: list[list[Any]] = []

    def push(self, item: list[Any]) -> None:
        self.stack.append(item)

    def pop(self) -> list[Any]:
        if not self.stack:
            raise IndexError("pop from an empty autotune input stack")
        return self.stack.pop()

    def top(self) -> list[Any]:
        if not self.stack:
            raise IndexError("no autotune inputs are set")
        return self.stack[-1]

    def size(self) -> int:
        return len(self.stack)

    def __len__(self) -> int:
        return len(self.stack)

    def __bool__(self) -> bool:
        return bool(self.stack)


def _stack() -> CaptureStack:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = CaptureStack()
    return stack


class AutotuneInputsCapture:
    """The context manager `set_autotune_inputs` returns."""

    def __init__(self, tensors: list[Any]):
        self.tensors = tensors

    def __enter__(self) -> None:
        _stack().push(self.tensors)

    def __exit__(self, *exc: object) -> None:
        _stack().pop()


def set_autotune_inputs(*args: Any) -> AutotuneInputsCapture:
    """Benchmark autotuning candidates on these tensors (one list argument, or the tensors themselves)."""
    tensors = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)
    return AutotuneInputsCapture(tensors)


def get_autotune_inputs() -> list[Any] | None:
    """The innermost inputs set by `set_autotune_inputs`, or None."""
    stack = _stack()
    return stack.top() if stack else None
