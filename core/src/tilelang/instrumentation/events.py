"""Pass events: TVM's before/after-pass callbacks paired into nested, numbered `PassEvent` records.

TVM reports every pass run inside a ``PassContext`` to its instruments twice (``run_before_pass`` and
``run_after_pass``), nested passes included, and says nothing when a pass raises. `StackedPassInstrument` keeps
the open passes on a stack, numbers them in start order, records depth and parent, and hands each finished
(or abandoned) pass to a `PassEventObserver`. What to snapshot and how to show it is the observer's business.

A phase label (``pass_phase("pipeline_cuda")``) set around a stretch of compilation is attached to every event
started inside it; it lives in a context variable, so threads and asyncio tasks keep their own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from tvm.ir.instrument import pass_instrument

__all__ = [
    "CapturePredicate", "IncompletePass", "PassEvent", "PassEventObserver", "SequenceAllocator",
    "StackedPassInstrument", "active_stacked_pass_instruments", "current_pass_phase", "pass_phase",
]

_PHASE: ContextVar[str | None] = ContextVar("tilelang_pass_phase", default=None)
_ACTIVE: ContextVar[tuple[Any, ...]] = ContextVar("tilelang_active_stacked_instruments", default=())

#: ``(pass name, depth) -> bool``: whether an event is reported to the observer.
CapturePredicate = Callable[[str, int], bool]
#: ``() -> int``: the next sequence number (lets several PassContexts share one numbering).
SequenceAllocator = Callable[[], int]


@contextmanager
def pass_phase(name: str | None) -> Iterator[None]:
    """Label the pass events started inside this scope with `name` (``None`` clears the label)."""
    token = _PHASE.set(None if name is None else str(name))
    try:
        yield
    finally:
        _PHASE.reset(token)


def current_pass_phase() -> str | None:
    """The phase label of the current execution context, or None."""
    return _PHASE.get()


def active_stacked_pass_instruments() -> tuple[StackedPassInstrument, ...]:
    """The `StackedPassInstrument` objects whose PassContext is entered in this execution context, oldest first."""
    return _ACTIVE.get()


@dataclass(frozen=True)
class PassEvent:
    """One observed pass run: its PassInfo name, start-order number, nesting depth, enclosing event, phase."""

    name: str
    sequence: int
    depth: int
    parent_sequence: int | None
    phase: str | None


@dataclass(frozen=True)
class IncompletePass:
    """A pass that started but never finished (it raised, or the callbacks went out of step)."""

    name: str
    depth: int
    event: PassEvent | None
    state: Any


class PassEventObserver:
    """What a `StackedPassInstrument` reports to; every method is optional (the defaults do nothing)."""

    def enter_pass_context(self) -> None:
        """The instrumented PassContext was entered."""

    def exit_pass_context(self) -> None:
        """The instrumented PassContext was left."""

    def pass_started(self, mod: Any, event: PassEvent) -> Any:
        """A captured pass is about to run on `mod`; the return value comes back in `pass_finished`."""
        return None

    def pass_finished(self, mod: Any, event: PassEvent, state: Any) -> None:
        """A captured pass produced `mod`; `state` is what `pass_started` returned."""

    def passes_incomplete(self, passes: Sequence[IncompletePass], error: BaseException | None) -> None:
        """These passes (outermost first) will never finish; `error` is the cause when known."""

    def callback_mismatch(self, actual: str, expected: str | None) -> None:
        """An after-pass callback named `actual` arrived while `expected` was the innermost open pass."""


@dataclass
class _Frame:
    name: str
    depth: int
    event: PassEvent | None
    state: Any = field(default=None)


@pass_instrument
class StackedPassInstrument:
    """A TVM pass instrument that pairs nested callbacks and reports `PassEvent` records to `observer`.

    ``capture_nested=False`` reports only top-level passes (nested ones are still tracked so pairing stays
    right); ``capture_predicate(name, depth)`` filters further. ``sequence_allocator`` numbers events from a
    shared counter (default: a counter restarted on each PassContext entry). ``phase_provider`` supplies each
    event's phase (default `current_pass_phase`).
    """

    def __init__(self, observer: PassEventObserver, *, capture_nested: bool = True,
                 capture_predicate: CapturePredicate | None = None,
                 sequence_allocator: SequenceAllocator | None = None,
                 phase_provider: Callable[[], str | None] = current_pass_phase) -> None:
        self.observer = observer
        self.capture_nested = capture_nested
        self.capture_predicate = capture_predicate
        self.sequence_allocator = sequence_allocator
        self.phase_provider = phase_provider
        self._stack: list[_Frame] = []
        self._counter = 0

    # ---------------------------------------------------------------------------------------------- helpers
    @property
    def pending_events(self) -> tuple[PassEvent, ...]:
        """The captured passes still open, outermost first."""
        return tuple(f.event for f in self._stack if f.event is not None)

    def _next_sequence(self) -> int:
        if self.sequence_allocator is not None:
            return self.sequence_allocator()
        n = self._counter
        self._counter += 1
        return n

    def _captures(self, name: str, depth: int) -> bool:
        if depth and not self.capture_nested:
            return False
        return self.capture_predicate is None or bool(self.capture_predicate(name, depth))

    def _remove_from_active(self) -> None:
        # TVM leaves instruments in registration (FIFO) order, not LIFO: drop this one by identity.
        active = _ACTIVE.get()
        for i in range(len(active) - 1, -1, -1):
            if active[i] is self:
                _ACTIVE.set(active[:i] + active[i + 1:])
                return

    # ------------------------------------------------------------------------------------ TVM callbacks
    def enter_pass_ctx(self) -> None:
        self._stack.clear()
        self._counter = 0
        _ACTIVE.set((*_ACTIVE.get(), self))
        try:
            self.observer.enter_pass_context()
        except BaseException:
            self._remove_from_active()
            raise

    def exit_pass_ctx(self) -> None:
        try:
            if self._stack:
                self.abort()
            self.observer.exit_pass_context()
        finally:
            self._remove_from_active()

    def run_before_pass(self, mod: Any, info: Any) -> None:
        name = str(info.name)
        depth = len(self._stack)
        frame = _Frame(name, depth, None)
        if self._captures(name, depth):
            parent = next((f.event.sequence for f in reversed(self._stack) if f.event is not None), None)
            frame.event = PassEvent(name, self._next_sequence(), depth, parent, self.phase_provider())
            frame.state = self.observer.pass_started(mod, frame.event)
        self._stack.append(frame)

    def run_after_pass(self, mod: Any, info: Any) -> None:
        name = str(info.name)
        if not self._stack or self._stack[-1].name != name:
            expected = self._stack[-1].name if self._stack else None
            self.observer.callback_mismatch(name, expected)
            self.abort(RuntimeError(f"after-pass callback for {name!r} does not match the open pass {expected!r}"))
            return
        frame = self._stack.pop()
        if frame.event is not None:
            self.observer.pass_finished(mod, frame.event, frame.state)

    def abort(self, error: BaseException | None = None) -> tuple[IncompletePass, ...]:
        """Close every open pass as incomplete (outermost first), tell the observer, and return them."""
        open_passes = tuple(IncompletePass(f.name, f.depth, f.event, f.state) for f in self._stack)
        self._stack.clear()
        if open_passes:
            self.observer.passes_incomplete(open_passes, error)
        return open_passes
