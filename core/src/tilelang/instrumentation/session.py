"""Compile sessions: the developer tools (lower trace, pass timing, ...) attached to one logical compilation.

A tool is a `PassInstrumentationTool`. A compile session (`compile_pass_instrumentation`) holds one fresh
instance of every registered tool (plus any passed explicitly); inside it

- `create_pass_instruments` gives each PassContext of the compilation its own TVM instruments, one per tool;
- `pass_pipeline(kind)` labels the backend pipeline (phase ``pipeline_<kind>``) and enters each tool's scope;
- `run_codegen_with_instrumentation` runs a code generator through the tools' codegen middleware;

and on exit every tool's ``finish`` runs (reports are written there). Sessions are per execution context:
compilations on other threads get their own. A nested request reuses the active session unless
``reuse_existing=False``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from tilelang.instrumentation.events import pass_phase

__all__ = [
    "CodegenEvent", "CompilePassInstrumentationSession", "PassInstrumentationTool", "compile_pass_instrumentation",
    "create_pass_instruments", "current_compile_pass_instrumentation", "current_pass_instrument_context",
    "instrument_current_pass_context", "pass_pipeline", "register_pass_instrumentation_tool",
    "run_codegen_with_instrumentation", "unregister_pass_instrumentation_tool",
]

_SESSION: ContextVar[CompilePassInstrumentationSession | None] = ContextVar(
    "tilelang_compile_pass_instrumentation", default=None)
_INSTRUMENT_CONTEXT: ContextVar[str | None] = ContextVar("tilelang_pass_instrument_context", default=None)

# Guards the factory table only (registration and the snapshot taken when a session starts).
_registry_lock = threading.RLock()
_factories: dict[str, Callable[[], PassInstrumentationTool]] = {}

T = TypeVar("T")
ToolT = TypeVar("ToolT", bound="PassInstrumentationTool")


@dataclass(frozen=True)
class CodegenEvent:
    """One code-generator call: its name (e.g. ``target.build.tilelang_cuda``), input module and target."""

    name: str
    mod: Any
    target: Any


class PassInstrumentationTool:
    """Base class of a per-compilation developer tool; override what the tool needs."""

    #: Instruments are handed to TVM sorted by this key (lower first), then by tool order.
    pass_instrument_priority: int = 0

    def create_pass_instrument(self) -> object | None:
        """A fresh TVM pass instrument for one PassContext, or None to stay out of it."""
        return None

    def pipeline_scope(self, base_phase: str) -> AbstractContextManager[None]:
        """A scope entered around one backend pipeline run (phase `base_phase`)."""
        return nullcontext()

    def run_codegen(self, event: CodegenEvent, next_call: Callable[[], Any]) -> Any:
        """Wrap a code-generator call; must call `next_call` exactly once and return (or replace) its result."""
        return next_call()

    def finish(self, error: BaseException | None) -> None:
        """The compilation is over (`error` is its exception, if it failed)."""


class CompilePassInstrumentationSession:
    """The tools of one compilation, in order."""

    def __init__(self, tools: Sequence[PassInstrumentationTool], *, name: str | None = None) -> None:
        self.name = name
        self.tools = tuple(tools)
        self._created: list[object] = []

    def create_pass_instruments(self, *, context: str | None = None) -> list[object]:
        """One new instrument per tool that wants one, ordered by ``pass_instrument_priority``.

        `context` describes the PassContext being built; tools read it with `current_pass_instrument_context`.
        """
        token = _INSTRUMENT_CONTEXT.set(None if context is None else str(context))
        try:
            made = [(tool.pass_instrument_priority, i, tool.create_pass_instrument())
                    for i, tool in enumerate(self.tools)]
        finally:
            _INSTRUMENT_CONTEXT.reset(token)
        out = [inst for _, _, inst in sorted((m for m in made if m[2] is not None), key=lambda m: m[:2])]
        self._created.extend(out)
        return out

    def created(self, instrument: object) -> bool:
        """Whether `instrument` was made by this session (e.g. it is already in an enclosing PassContext)."""
        same = getattr(instrument, "same_as", None)
        return any(i is instrument or (same is not None and hasattr(i, "same_as") and same(i))
                   for i in self._created)

    @contextmanager
    def pipeline_scope(self, base_phase: str) -> Iterator[None]:
        """Every tool's pipeline scope, entered in tool order."""
        with ExitStack() as stack:
            for tool in self.tools:
                stack.enter_context(tool.pipeline_scope(base_phase))
            yield

    def run_codegen(self, event: CodegenEvent, call: Callable[[], T]) -> T:
        """Run `call` through every tool's codegen middleware (the first tool is the outermost)."""
        chain: Callable[[], Any] = call
        for tool in reversed(self.tools):
            chain = _wrap(tool, event, chain)
        return chain()

    def finish(self, error: BaseException | None) -> None:
        """Finish every tool, last first; a tool's failure is raised only when the compilation succeeded."""
        first: BaseException | None = None
        for tool in reversed(self.tools):
            try:
                tool.finish(error)
            except BaseException as exc:
                first = first or exc
        if error is None and first is not None:
            raise first

    def find_tool(self, tool_type: type[ToolT]) -> ToolT | None:
        """The first tool that is a `tool_type`, or None."""
        return next((t for t in self.tools if isinstance(t, tool_type)), None)


def _wrap(tool: PassInstrumentationTool, event: CodegenEvent, inner: Callable[[], Any]) -> Callable[[], Any]:
    return lambda: tool.run_codegen(event, inner)


def register_pass_instrumentation_tool(name: str, factory: Callable[[], PassInstrumentationTool]) -> None:
    """Add (or replace) the tool `name`: every later compile session gets a fresh ``factory()``."""
    if not callable(factory):
        raise TypeError(f"the factory of instrumentation tool {name!r} must be callable, got {factory!r}")
    with _registry_lock:
        _factories[str(name)] = factory


def unregister_pass_instrumentation_tool(name: str) -> None:
    """Stop adding tool `name` to later compile sessions (no error when it is not registered)."""
    with _registry_lock:
        _factories.pop(str(name), None)


def current_compile_pass_instrumentation() -> CompilePassInstrumentationSession | None:
    """The compile session of this execution context, or None."""
    return _SESSION.get()


def current_pass_instrument_context() -> str | None:
    """The `context` string of the PassContext whose instruments are being created, or None."""
    return _INSTRUMENT_CONTEXT.get()


@contextmanager
def compile_pass_instrumentation(name: str | None = None, *, tools: Sequence[PassInstrumentationTool] = (),
                                 include_default_tools: bool = True,
                                 reuse_existing: bool = True) -> Iterator[CompilePassInstrumentationSession]:
    """Own the tool state of one compilation (see the module docstring).

    With an active session and ``reuse_existing`` the active one is yielded (asking for extra `tools` or to
    leave out the registered ones is then an error). Otherwise a new session holds a fresh instance of every
    registered tool (unless ``include_default_tools=False``) followed by `tools`.
    """
    active = _SESSION.get()
    if active is not None and reuse_existing:
        if tools or not include_default_tools:
            raise ValueError("compile_pass_instrumentation: a compile session is already active; extra tools or "
                             "include_default_tools=False need reuse_existing=False")
        yield active
        return
    with _registry_lock:
        factories = list(_factories.values()) if include_default_tools else []
    session = CompilePassInstrumentationSession([f() for f in factories] + list(tools), name=name)
    token = _SESSION.set(session)
    error: BaseException | None = None
    try:
        yield session
    except BaseException as exc:
        error = exc
        raise
    finally:
        try:
            session.finish(error)
        finally:
            _SESSION.reset(token)


def create_pass_instruments(*, context: str | None = None) -> list[object]:
    """Instruments of the active compile session for one new PassContext (``[]`` without a session)."""
    session = _SESSION.get()
    return [] if session is None else session.create_pass_instruments(context=context)


@contextmanager
def instrument_current_pass_context() -> Iterator[None]:
    """Add the active session's instruments to the PassContext that is current now, for this scope.

    For a compiler entry point that opened the session itself and runs in a caller's PassContext.
    """
    session = _SESSION.get()
    instruments = session.create_pass_instruments() if session is not None else []
    if not instruments:
        yield
        return
    import tvm

    ctx = tvm.transform.PassContext.current()
    before = list(ctx.instruments)
    try:
        ctx.override_instruments([*before, *instruments])
    except BaseException:
        ctx.override_instruments(before)  # the old ones were exited; put them back
        raise
    try:
        yield
    finally:
        ctx.override_instruments(before)


def run_codegen_with_instrumentation(name: str, mod: Any, target: Any, call: Callable[[], T]) -> T:
    """Run code generator `call` (named `name`, building `mod` for `target`) through the active session."""
    session = _SESSION.get()
    if session is None:
        return call()
    return session.run_codegen(CodegenEvent(name=name, mod=mod, target=target), call)


@contextmanager
def pass_pipeline(name: str) -> Iterator[None]:
    """Run a backend pipeline: phase ``pipeline_<name>`` plus the active session's pipeline scopes."""
    phase = f"pipeline_{name}"
    session = _SESSION.get()
    with pass_phase(phase), (session.pipeline_scope(phase) if session is not None else nullcontext()):
        yield
