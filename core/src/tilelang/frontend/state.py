"""The state of the kernel being built, visible to ``tilelang.language`` calls made while it is parsed."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from tilelang.errors import KernelSyntaxError


@dataclass
class LaunchInfo:
    """One entered ``T.Kernel``: its block and thread index vars (x, y, z order)."""

    block_vars: list[Any]
    thread_vars: list[Any]
    is_cpu: bool = False


@dataclass
class EagerState:
    """What an eager (``@tilelang.jit``) kernel declares while it is parsed.

    `phase` is ``"signature"`` while only the constants are being discovered (kernel bodies are skipped) and
    ``"build"`` for the real parse.
    """

    phase: str
    args: dict[str, Any]                      # parameter name -> call value (tensor, spec or Python value)
    consts: dict[str, Any] = field(default_factory=dict)        # T.const name -> int (or a Var while unknown)
    const_vars: dict[str, Any] = field(default_factory=dict)    # T.const name -> its placeholder Var
    tensor_params: dict[str, Any] = field(default_factory=dict) # param name -> buffer, in declaration order
    outputs: list[Any] = field(default_factory=list)           # T.empty buffers in allocation order
    returned: list[Any] | None = None
    # T.const name -> (parameter, its annotation's node): a tensor argument not passed whose shape binds the name
    missing: dict[str, tuple[str, Any]] = field(default_factory=dict)

    def unbound(self) -> list[str]:
        return [n for n, v in self.consts.items() if not isinstance(v, int)]


class BuildState:
    """Per-parse state shared by the interpreter and the DSL functions."""

    def __init__(self, eager: EagerState | None = None):
        self.launches: list[LaunchInfo] = []
        self.eager = eager
        self.depth = 0                        # IR frames (loops, ifs, withs) entered around the current statement
        self.unnamed: dict[int, Any] = {}     # id -> IR object that takes the name it is first bound to
        self.var_buffers: dict[int, Any] = {} # id -> local.var buffer (reads of its name yield buf[0])
        self.block_frames: list[list[Any]] = []  # frames that scope over the rest of the current block
        self.interpreters: list[Any] = []     # interpreter stack (kernel, then macros)
        self.span: Any = None                 # tvm.ir.Span of the statement being interpreted (None: spans off)
        self.matched: dict[Any, Any] = {}     # handle parameter -> the buffer T.match_buffer declared over it
        self.params: list[Any] = []           # the T.prim_func's parameters, as they are declared
        self.func_attrs: dict[str, Any] = {}  # PrimFunc attributes set by the body (T.annotate_pass_configs, ...)
        self.let_values: dict[int, tuple[Any, Any]] = {}  # id(var) -> (var, value) of each `x = expr` Bind

    # naming -------------------------------------------------------------------------------------
    def fresh(self, obj: Any) -> Any:
        """Register an IR object that should take the Python name it is first assigned to."""
        self.unnamed[id(obj)] = obj
        return obj

    def register_var_buffer(self, buf: Any) -> Any:
        self.var_buffers[id(buf)] = buf
        return buf

    def enter_block_frame(self, frame: Any) -> Any:
        """Enter `frame` until the end of the enclosing statement block (``T.annotate_layout`` and friends)."""
        if not self.block_frames:
            raise KernelSyntaxError("this call is only valid inside a kernel body")
        value = frame.__enter__()
        self.block_frames[-1].append(frame)
        return value


_LOCAL = threading.local()


def current() -> BuildState | None:
    """The state of the kernel being parsed on this thread, or None."""
    return getattr(_LOCAL, "state", None)


def require(what: str) -> BuildState:
    """The current state; raises a KernelSyntaxError naming `what` when no kernel is being parsed."""
    state = current()
    if state is None:
        raise KernelSyntaxError(f"{what} can only be used inside a kernel (a @T.prim_func or @tilelang.jit body)")
    return state


def push(state: BuildState) -> BuildState | None:
    prev = current()
    _LOCAL.state = state
    return prev


def pop(prev: BuildState | None) -> None:
    _LOCAL.state = prev


def in_kernel(what: str) -> LaunchInfo:
    """The innermost ``T.Kernel`` launch; raises when there is none."""
    state = require(what)
    if not state.launches:
        raise KernelSyntaxError(f"{what} can only be used inside `with T.Kernel(...)`")
    return state.launches[-1]
