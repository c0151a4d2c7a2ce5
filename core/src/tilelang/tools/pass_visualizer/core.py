"""Structure trees of tile programs and an instrument that snapshots one around every top-level pass.

`inspect_structure` prints each PrimFunc of a module as a tree: parameters (shape, dtype), attributes, then the
body with its nesting (thread launches, allocations, loops and their annotations, branches); tile operators
are expanded one field per line (``T.gemm`` -> ``a_region``, ``b_region``, ``c_region``, ``trans_A``, ...),
other statements stay on one line. `StructureTreePassInstrument` records the tree before and after every
top-level pass of a PassContext (nested passes are tracked but not recorded), which is what the viewer
(`tilelang.tools.pass_visualizer.viewer`) diffs.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import logging
from dataclasses import dataclass
from typing import Any

from tilelang.instrumentation import (
    IncompletePass,
    PassEvent,
    PassEventObserver,
    PassInstrumentationTool,
    StackedPassInstrument,
)

__all__ = [
    "PassStructureRecord", "StructureTreePassInstrument", "StructureTreePassTool", "build_module",
    "capture_structure", "discover_jit_kernels", "inspect_structure", "kernel_to_tir", "load_user_module",
]

logger = logging.getLogger("tilelang.pass_visualizer")

#: field names of each tile operator's arguments (the rest, if any, print as ``*rest``)
_TILEOP_FIELDS: dict[str, list[str]] = {
    "gemm": ["a_region", "b_region", "c_region", "trans_A", "trans_B", "policy", "clear_accum"],
    "copy": ["src_region", "dst_region"],
    "fill": ["dst", "value"],
    "reduce": ["src_region", "dst_region", "reduce_type", "dim", "clear"],
    "cumsum": ["src_region", "dst_region", "dim", "reverse"],
    "atomic": ["dst_region", "value", "kind"],
}


# ------------------------------------------------------------------------------------------ kernel loading
def load_user_module(path: str) -> Any:
    """Import the Python file at `path` as a module."""
    spec = importlib.util.spec_from_file_location("_tilelang_user_kernel", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"Cannot import a Python module from {path!r}.")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def discover_jit_kernels(module: Any) -> dict[str, Any]:
    """The ``@tilelang.jit`` kernels defined at the top level of `module`, by name, in definition order."""
    from tilelang.jit import JITImpl

    return {name: obj for name, obj in vars(module).items() if not name.startswith("__") and isinstance(obj, JITImpl)}


def kernel_to_tir(kernel: Any, **kwargs: Any) -> Any:
    """The un-lowered PrimFunc of a ``@tilelang.jit`` kernel (``get_tir(**kwargs)``), a factory returning a
    PrimFunc (called with `kwargs`), or a PrimFunc."""
    from tvm import tirx

    from tilelang.jit import JITImpl

    if isinstance(kernel, JITImpl):
        return kernel.get_tir(**kwargs)
    if isinstance(kernel, tirx.PrimFunc):
        return kernel
    if callable(kernel):
        func = kernel(**kwargs)
        if not isinstance(func, tirx.PrimFunc):
            raise SystemExit(f"{getattr(kernel, '__name__', kernel)!r} returned {type(func).__name__}, not a PrimFunc; "
                             "the factory must return its inner @T.prim_func.")
        return func
    raise SystemExit(f"Don't know how to turn a {type(kernel).__name__} into a PrimFunc.")


def build_module(func: Any, target: Any = "auto") -> tuple[Any, Any]:
    """``(IRModule holding func, resolved tvm Target)`` for `target` (any form `tilelang.lower` accepts)."""
    import tvm

    from tilelang.backend import create_backend_context

    name = str(func.attrs["global_symbol"]) if func.attrs is not None and "global_symbol" in func.attrs else "main"
    return tvm.IRModule({name: func.with_attr("global_symbol", name)}), create_backend_context(target).target


# ------------------------------------------------------------------------------------------ the tree
def _shape(buf: Any) -> list[Any]:
    out = []
    for d in buf.ty.shape:
        out.append(int(d.value) if hasattr(d, "value") else d)
    return out


def _describe_buffer(buf: Any) -> str:
    from tilelang.analysis._ir import scope_of

    return f"Buffer({buf.name}, shape={_shape(buf)}, dtype={buf.ty.dtype}, scope={scope_of(buf)})"


def _value(v: Any, indent: str, out: list[str]) -> None:
    """Print an annotation value: a map one key per line, anything else on one line."""
    if hasattr(v, "items") and not isinstance(v, str):
        items = list(v.items())
        for k, (key, val) in enumerate(items):
            out.append(f"{indent}{'└─' if k == len(items) - 1 else '├─'} {getattr(key, 'name', key)} = {val}")
    else:
        out.append(f"{indent}{v}")


def _tile_op(call: Any, short: str, indent: str, out: list[str]) -> None:
    out.append(f"{indent}Evaluate: T.{short}")
    args = list(call.args)
    names = _TILEOP_FIELDS.get(short)
    if names is None:
        named = [(f"arg{i}", a) for i, a in enumerate(args)]
        rest: list[Any] = []
    else:
        named = list(zip(names, args))
        rest = args[len(names):]
    for k, (field, arg) in enumerate(named):
        last = k == len(named) - 1 and not rest
        out.append(f"{indent}    {'└─' if last else '├─'} {field:<11}= {arg}")
    if rest:
        out.append(f"{indent}    └─ *rest      = {rest}")


def _stmt(node: Any, indent: str, out: list[str]) -> None:
    from tvm import tirx

    if isinstance(node, tirx.SeqStmt):
        for s in node.seq:
            _stmt(s, indent, out)
    elif isinstance(node, tirx.AttrStmt):
        if node.attr_key == "thread_extent":
            out.append(f"{indent}AttrStmt[launch_thread {node.node.var.name} = {node.node.thread_tag} "
                       f"(extent={node.value})]")
        else:
            out.append(f"{indent}AttrStmt[{node.attr_key}]")
            out.append(f"{indent}    └─ value = {node.value}")
        _stmt(node.body, indent + "    ", out)
    elif isinstance(node, tirx.AllocBuffer):
        out.append(f"{indent}AllocBuffer: {_describe_buffer(node.buffer)}")
        for key, val in (node.annotations or {}).items():
            out.append(f"{indent}    @ann {key} = {val}")
    elif isinstance(node, tirx.For):
        out.append(f"{indent}For({node.loop_var.name} in {node.min}..{node.min + node.extent}, "
                   f"kind={str(node.kind).rsplit('.', 1)[-1]})")
        for key, val in (node.annotations or {}).items():
            if hasattr(val, "items") and not isinstance(val, str):
                out.append(f"{indent}    @ann {key} :")
                _value(val, indent + "        ", out)
            else:
                out.append(f"{indent}    @ann {key} = {val}")
        _stmt(node.body, indent + "    ", out)
    elif isinstance(node, tirx.IfThenElse):
        out.append(f"{indent}IfThenElse({node.condition})")
        _stmt(node.then_case, indent + "    ", out)
        if node.else_case is not None:
            out.append(f"{indent}else")
            _stmt(node.else_case, indent + "    ", out)
    elif isinstance(node, tirx.Evaluate):
        call = node.value
        name = str(getattr(getattr(call, "op", None), "name", ""))
        if name.startswith("tl."):
            short = name.rsplit(".", 1)[-1]
            _tile_op(call, short, indent, out)
        elif hasattr(call, "op") and hasattr(call, "args"):
            out.append(f"{indent}Evaluate: T.{name.removeprefix('tirx.')}")
            args = list(call.args)
            out += [f"{indent}    {'└─' if k == len(args) - 1 else '├─'} arg{k} = {a}" for k, a in enumerate(args)]
        else:
            out.append(f"{indent}Evaluate: {call}")
    elif isinstance(node, tirx.BufferStore):
        out.append(f"{indent}BufferStore: {node.buffer.name}[{', '.join(str(i) for i in node.indices)}]")
        out.append(f"{indent}    └─ value = {node.value}")
    elif hasattr(tirx, "Bind") and isinstance(node, tirx.Bind):
        out.append(f"{indent}Bind: {node.var} = {node.value}")
    else:
        body = getattr(node, "body", None)
        out.append(f"{indent}{type(node).__name__}")
        if isinstance(body, tirx.Stmt):
            _stmt(body, indent + "    ", out)


def _structure_lines(mod: Any) -> list[str]:
    from tvm import tirx

    out: list[str] = []
    for gvar, func in mod.functions.items():
        if not isinstance(func, tirx.PrimFunc):
            continue
        out.append(f"PrimFunc `{gvar.name_hint}`")
        out.append("├─ params       →")
        for p in func.params:
            out.append(f"│      {_describe_buffer(p) if tirx.is_buffer_var(p) else f'{p.name}: {p.ty}'}")
        out.append("├─ attrs        →")
        attrs = func.attrs or {}
        if not attrs:
            out.append("│      {}")
        for key, val in attrs.items():
            if hasattr(val, "items") and not isinstance(val, str):
                out.append(f"│      {key} →")
                _value(val, "│          ", out)
            else:
                out.append(f"│      {key} = {val}")
        out.append("└─ body")
        _stmt(func.body, "       ", out)
        out.append("")
    return out


def inspect_structure(mod: Any) -> None:
    """Print the structure tree of every PrimFunc of `mod` (see the module docstring)."""
    print("\n".join(_structure_lines(mod)))


def capture_structure(mod: Any) -> list[str]:
    """`inspect_structure`'s output as a list of lines (for diffing)."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        inspect_structure(mod)
    return buf.getvalue().splitlines()


# ------------------------------------------------------------------------------------------ the instrument
@dataclass
class PassStructureRecord:
    """The structure tree before and after one top-level pass."""

    name: str
    sequence: int
    before_lines: list[str]
    after_lines: list[str]

    @property
    def changed(self) -> bool:
        return self.before_lines != self.after_lines


class _TreeObserver(PassEventObserver):
    def __init__(self) -> None:
        self.records: list[PassStructureRecord] = []
        self.input_lines: list[str] | None = None
        self.incomplete_passes: list[str] = []

    def enter_pass_context(self) -> None:
        self.records.clear()
        self.input_lines = None
        self.incomplete_passes.clear()

    def pass_started(self, mod: Any, event: PassEvent) -> list[str]:
        lines = capture_structure(mod)
        if self.input_lines is None:
            self.input_lines = lines
        return lines

    def pass_finished(self, mod: Any, event: PassEvent, state: list[str]) -> None:
        self.records.append(PassStructureRecord(event.name, event.sequence, state, capture_structure(mod)))

    def passes_incomplete(self, passes: Any, error: BaseException | None) -> None:
        self.incomplete_passes.extend(p.name for p in passes if isinstance(p, IncompletePass))

    def callback_mismatch(self, actual: str, expected: str | None) -> None:
        logger.warning("Ignoring mismatched after-pass callback for %s (expected %s)", actual, expected)


class StructureTreePassInstrument(StackedPassInstrument):
    """Records the structure tree around each top-level pass of the PassContexts it is given to."""

    def __init__(self) -> None:
        self._tree = _TreeObserver()
        super().__init__(self._tree, capture_nested=False)

    @property
    def records(self) -> list[PassStructureRecord]:
        return self._tree.records

    @property
    def input_lines(self) -> list[str] | None:
        """The tree before the first pass."""
        return self._tree.input_lines

    @property
    def incomplete_passes(self) -> list[str]:
        """Passes that started and never finished (they raised)."""
        return self._tree.incomplete_passes

    def ordered_records(self) -> list[PassStructureRecord]:
        """The records in execution order."""
        return sorted(self.records, key=lambda r: r.sequence)


class StructureTreePassTool(PassInstrumentationTool):
    """Compile-session tool giving each PassContext a `StructureTreePassInstrument` (the last one is kept)."""

    def __init__(self) -> None:
        self.instrument: StructureTreePassInstrument | None = None

    def create_pass_instrument(self) -> StructureTreePassInstrument:
        self.instrument = StructureTreePassInstrument()
        return self.instrument


def _parse_kv(pairs: list[str]) -> dict[str, Any]:
    """``["M=1024", "dtype=float16"]`` -> ``{"M": 1024, "dtype": "float16"}`` (Python literals where possible)."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"Expected key=value, got: {pair!r}")
        try:
            out[key] = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            out[key] = raw
    return out
