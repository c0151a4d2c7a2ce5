"""The IR helpers of TileLang's passes -- public, for backends' passes and tile ops too (the backend SDK,
documented in docs/writing_a_backend.md): IR walking and rewriting (`walk`, `collect`, `substitute`, `seq`,
`with_body`), ``T.Parallel`` nests (`parallel_nest`, `make_parallel_nest`), buffers and allocations
(`buffer_with`, `scope_of`, `allocations`, `num_elements`), launch facts (`launch_extents`, `block_threads`,
`thread_vars`, `linear_thread`), the target's `pipeline_options`, and errors at the kernel's source line
(`lowering_error`, raised from a pass made with `prim_func_pass`)."""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from tilelang.errors import LoweringError, TileLangError

PARALLEL_ANN = "tl.parallel"
PIPELINE_KEYS = ("tl.pipeline_stages", "tl.pipeline_order", "tl.pipeline_stage")
FRAGMENT_ANN = "tl.fragment"  # AllocBuffer annotation written by LayoutInference: "partitioned" | "replicated"
THREAD_TAGS = ("threadIdx.x", "threadIdx.y", "threadIdx.z")
BLOCK_TAGS = ("blockIdx.x", "blockIdx.y", "blockIdx.z")

__all__ = [
    "PARALLEL_ANN", "PIPELINE_KEYS", "FRAGMENT_ANN", "THREAD_TAGS", "BLOCK_TAGS",
    "pipeline_options",
    "has_threads",
    "as_int",
    "is_const",
    "add",
    "substitute",
    "walk",
    "collect",
    "uses_var",
    "seq",
    "with_body",
    "tile_op_of",
    "is_parallel",
    "parallel_nest",
    "make_parallel_nest",
    "buffer_with",
    "scope_of",
    "allocations",
    "num_elements",
    "launch_extents",
    "block_threads",
    "thread_vars",
    "linear_thread",
    "source_location",
    "func_name",
    "short_error",
    "lowering_error",
    "prim_func_pass",
    "take_pending_error",
]


# ----------------------------------------------------------------------------- target facts
def pipeline_options(target: Any) -> Mapping[str, Any]:
    """The `TargetKind.pipeline_options` registered for `target`'s kind (empty when none)."""
    from tilelang.backend.target import kind_of, target_kind_spec

    try:
        return target_kind_spec(kind_of(target)).pipeline_options
    except Exception:
        return {}


def has_threads(target: Any) -> bool:
    """Whether `target` runs the threads of a block as real hardware threads (GPU-style)."""
    return bool(pipeline_options(target).get("has_threads", True))


# ----------------------------------------------------------------------------- small IR helpers
def as_int(e: Any) -> int | None:
    """The value of a constant integer expression, else None."""
    if isinstance(e, int):
        return e
    if isinstance(e, tirx.IntImm):
        return int(e.value)
    return None


def is_const(e: Any, value: int) -> bool:
    return as_int(e) == value


def add(a: Any, b: Any) -> Any:
    """``a + b`` without the ``0 +`` noise."""
    if is_const(a, 0):
        return b
    if is_const(b, 0):
        return a
    return a + b


def substitute(node: Any, vmap: Mapping[Any, Any]) -> Any:
    """Replace vars (and buffers, which are vars) by `vmap` everywhere in `node`."""
    if not vmap:
        return node
    return tvm_ffi.structural_map(node, (tvm.ir.Var, lambda v: vmap.get(v, v)))


def walk(node: Any, callbacks: list[tuple[type, Callable[[Any], Any]]]) -> None:
    """Post-order visit of every node of the given types."""
    tvm_ffi.structural_walk(node, callbacks)


def collect(node: Any, typ: type, pred: Callable[[Any], bool] = lambda _: True) -> list[Any]:
    found: list[Any] = []
    walk(node, [(typ, lambda n: found.append(n) if pred(n) else None)])
    return found


def uses_var(node: Any, variables: Iterable[Any]) -> bool:
    wanted = list(variables)
    if not wanted:
        return False
    hit = []

    def on_var(v: Any) -> None:
        if not hit and any(v.same_as(w) for w in wanted):
            hit.append(v)

    walk(node, [(tvm.ir.Var, on_var)])
    return bool(hit)


def seq(stmts: Iterable[Any]) -> Any:
    """A SeqStmt of `stmts` (flattening nested sequences), or the single statement."""
    flat: list[Any] = []
    for s in stmts:
        if s is None:
            continue
        if isinstance(s, tirx.SeqStmt):
            flat.extend(s.seq)
        else:
            flat.append(s)
    if not flat:
        return tirx.Evaluate(0)
    return flat[0] if len(flat) == 1 else tirx.SeqStmt(flat)


def with_body(func: tirx.PrimFunc, body: Any) -> tirx.PrimFunc:
    return tirx.PrimFunc(func.params, body, func.ret_type, func.attrs)


def tile_op_of(stmt: Any) -> tuple[str, tvm.ir.Call] | None:
    """``(op name, call)`` when `stmt` is ``Evaluate(tl.*(...))`` of a tile operator (not an intrinsic)."""
    if isinstance(stmt, tirx.Evaluate):
        call = stmt.value
        if isinstance(call, tvm.ir.Call) and isinstance(call.op, tvm.ir.Op) and call.op.name.startswith("tl."):
            from tilelang.ir.ops import INTRINSICS

            if call.op.name not in INTRINSICS:
                return call.op.name, call
    return None


def is_parallel(loop: Any) -> bool:
    return isinstance(loop, tirx.For) and PARALLEL_ANN in loop.annotations


def parallel_nest(loop: tirx.For) -> tuple[list[tirx.For], Any]:
    """The perfectly nested ``tl.parallel`` loops starting at `loop`, and the innermost body."""
    loops = [loop]
    body = loop.body
    while is_parallel(body):
        loops.append(body)
        body = body.body
    return loops, body


def make_parallel_nest(extents: list[Any], make_body: Callable[[list[Any]], Any], names: str = "ijklmn") -> Any:
    """``for v0, v1, .. in T.Parallel(*extents): make_body([v0, v1, ..])`` (``tl.parallel`` loops).

    With no extents (a one-element region) the nest is ``T.Parallel(1)``: PartitionParallel gives it to one
    thread (fragment accesses must stay inside a nest; an atomic must run once, not once per thread). Only a
    body storing to a per-thread buffer (``local``, not a fragment) is returned bare, for every thread to run."""
    if not extents:
        body = make_body([])
        if any(scope_of(st.buffer).startswith("local") and scope_of(st.buffer) != "local.fragment"
               for st in collect(body, tirx.BufferStore)):
            return body
        unit = tirx.Var(names[0], "int32")
        return tirx.For(unit, 0, 1, tirx.ForKind.PARALLEL, body, annotations={PARALLEL_ANN: 1})
    vs = [tirx.Var(names[n % len(names)] + ("" if n < len(names) else str(n)), "int32") for n in range(len(extents))]
    stmt = make_body(vs)
    for v, e in reversed(list(zip(vs, extents))):
        stmt = tirx.For(v, 0, e, tirx.ForKind.PARALLEL, stmt, annotations={PARALLEL_ANN: 1})
    return stmt


def buffer_with(buf: Any, *, shape: Any = None, scope: str | None = None, name: str | None = None,
                align: int | None = None) -> Any:
    """A new buffer like `buf` with some properties replaced."""
    ty = buf.ty
    return tirx.decl_buffer(
        list(ty.shape) if shape is None else shape, str(ty.dtype), name=name or str(buf.name),
        scope=str(ty.storage_scope) if scope is None else scope,
        data_alignment=int(ty.data_alignment) if align is None else align,
    )


def scope_of(buf: Any) -> str:
    return str(buf.ty.storage_scope)


def allocations(node: Any) -> list[tirx.AllocBuffer]:
    return collect(node, tirx.AllocBuffer)


def num_elements(shape: Iterable[Any]) -> int | None:
    values = [as_int(s) for s in shape]
    if any(v is None for v in values):
        return None
    return math.prod(values)  # type: ignore[arg-type]


def launch_extents(func: tirx.PrimFunc | tirx.Stmt) -> dict[str, tuple[Any, Any]]:
    """``{"blockIdx.x": (var, extent), "threadIdx.x": ...}`` of the function's launch, or of the launches in one
    statement (a function may hold several ``T.Kernel`` launches, each with variables of its own)."""
    found: dict[str, tuple[Any, Any]] = {}

    def on_attr(s: Any) -> None:
        if s.attr_key == "thread_extent":
            found[str(s.node.thread_tag)] = (s.node.var, s.value)

    walk(func.body if isinstance(func, tirx.PrimFunc) else func, [(tirx.AttrStmt, on_attr)])
    return found


def block_threads(func: tirx.PrimFunc) -> int:
    """The number of threads of a block (1 when the kernel has no thread launch)."""
    ext = launch_extents(func)
    total = 1
    for tag in THREAD_TAGS:
        if tag in ext:
            value = as_int(ext[tag][1])
            if value is None:
                raise LoweringError(f"the thread count of a block must be a constant, got {tag}={ext[tag][1]}",
                                    location=source_location(func))
            total *= value
    return total


def thread_vars(func: tirx.PrimFunc) -> list[Any]:
    ext = launch_extents(func)
    return [ext[t][0] for t in THREAD_TAGS if t in ext]


def linear_thread(func: tirx.PrimFunc) -> Any:
    """The linear thread index ``tx + ty * X + tz * X * Y`` of the block (0 without threads)."""
    ext = launch_extents(func)
    index: Any = 0
    stride = 1
    for tag in THREAD_TAGS:
        if tag in ext:
            var, extent = ext[tag]
            index = add(index, var if stride == 1 else var * stride)
            stride *= as_int(extent) or 1
    return index


# ----------------------------------------------------------------------------- errors
def source_location(func: Any) -> tuple[str, int, int] | None:
    """``(file, line, 0)`` from the ``tl.source`` attribute the front end puts on the PrimFunc."""
    attrs = getattr(func, "attrs", None)
    if attrs is None or "tl.source" not in attrs:
        return None
    text = str(attrs["tl.source"])
    file, _, line = text.rpartition(":")
    if not file or not line.isdigit():
        return (text, 0, 0)
    return (file, int(line), 0)


def func_name(func: Any) -> str:
    attrs = getattr(func, "attrs", None)
    if attrs is not None and "global_symbol" in attrs:
        return str(attrs["global_symbol"])
    return "kernel"


_NOISE = ("File ", "at ", "#", "Stack trace", "^", "(... ")


def short_error(exc: BaseException) -> str:
    """The meaningful line of a (possibly C++) error message: the last one, except that TVM's pass errors put
    the message first, then ``Error in pass: <name>`` and a dump of the IR (its last line is the dump's); for
    those the message and the pass: ``Check failed: ... (in pass tl.InsertBarriers)``."""
    text = str(exc).strip()
    head, found, tail = text.partition("Error in pass:")
    suffix = ""
    if found:
        text, suffix = head, f" (in pass {tail.strip().split(maxsplit=1)[0]})" if tail.strip() else ""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    useful = [ln for ln in lines if not ln.startswith(_NOISE)]
    return ((useful or lines or [type(exc).__name__])[-1] + suffix)[:500]


def lowering_error(func: Any, message: str) -> LoweringError:
    """A LoweringError at the kernel's location, remembered for the engine (TVM's C++ callbacks that a pass
    raises through turn it into a plain RuntimeError)."""
    err = LoweringError(f"{func_name(func)}: {message}", location=source_location(func))
    _PENDING.error = err
    return err


def span_location(span: Any) -> tuple[str, int, int] | None:
    """``(file, line, column)`` of a TVM ``Span`` the front end recorded (a statement's or a buffer's), else None."""
    name = getattr(getattr(span, "source_name", None), "name", None)
    line = getattr(span, "line", 0)
    if not name or not line:
        return None
    return (str(name), int(line), int(getattr(span, "column", 0) or 0))


def lowering_error_at(func: Any, span: Any, message: str) -> LoweringError:
    """`lowering_error` at `span` (e.g. the line that allocated the buffer at fault), with that source line; at the
    kernel's location when the span is unknown."""
    import linecache

    location = span_location(span)
    if location is None:
        return lowering_error(func, message)
    err = LoweringError(f"{func_name(func)}: {message}", location=location,
                        source_line=linecache.getline(location[0], location[1]) or None)
    _PENDING.error = err
    return err


_PENDING = threading.local()


def prim_func_pass(name: str) -> Callable[[Callable[..., Any]], Any]:
    """``tirx.transform.prim_func_pass`` that keeps a `TileLangError` raised inside the pass.

    TVM turns exceptions raised in Python passes into plain RuntimeErrors; the engine re-raises the original
    (with its kernel location) through `take_pending_error`.
    """

    def deco(fn: Callable[..., Any]) -> Any:
        @functools.wraps(fn)
        def wrapped(func: Any, mod: Any, ctx: Any) -> Any:
            try:
                return fn(func, mod, ctx)
            except TileLangError as exc:
                _PENDING.error = exc
                raise

        return tirx.transform.prim_func_pass(opt_level=0, name=name)(wrapped)

    return deco


def take_pending_error() -> TileLangError | None:
    """The TileLangError the last failing pass raised on this thread (cleared on read)."""
    err = getattr(_PENDING, "error", None)
    _PENDING.error = None
    return err
