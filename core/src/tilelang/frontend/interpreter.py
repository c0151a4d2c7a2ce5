"""The statement interpreter: walks a kernel's AST and drives TVM's tirx IRBuilder.

Statements are interpreted here; expressions run as Python (see `rewrite`), so compile-time values are
ordinary Python values and only runtime values become IR. Scoping follows the IR: names bound inside a loop,
a runtime ``if`` or a ``with`` end with it; compile-time ``if``s and Python-iterable loops do not open scopes.
A plain nested ``def`` in a kernel body is interpreted like a ``T.macro`` where it is called.
"""

from __future__ import annotations

import ast
import builtins
import copy
import operator
import os
from typing import Any

from tilelang.errors import KernelSyntaxError, KernelTypeError, SourceError
from tilelang.frontend import rewrite
from tilelang.frontend.source import FunctionSource
from tilelang.frontend.state import BuildState

_MISSING = object()
_BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift, ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.BitAnd: operator.and_,
    ast.MatMult: operator.matmul,
}
_MAX_STATIC_WHILE = 1 << 20


class ReturnSignal(Exception):
    """`return` in a kernel or macro body."""

    def __init__(self, value: Any, node: ast.AST):
        self.value, self.node = value, node


class _LoopSignal(Exception):
    def __init__(self, kind: str):
        self.kind = kind


class StopInterpretation(Exception):
    """Raised by a DSL call to end the parse early (the eager signature pass)."""


def _is_prim(x: Any) -> bool:
    import tvm

    return isinstance(x, tvm.ir.Expr) and tvm.ir.is_prim_expr(x)


def _is_frame(x: Any) -> bool:
    """Is `x` a TVM IRBuilder frame (``T.attr``, ``T.launch_thread``, ``T.sblock``, ...)?"""
    from tvm.script.ir_builder.base import IRBuilderFrame

    return isinstance(x, IRBuilderFrame)


def _reads_memory(value: Any) -> bool:
    """Does a PrimExpr load from a buffer or call anything that is not pure?"""
    import tvm
    import tvm_ffi
    from tvm import tirx

    found = []

    def on_load(_: Any) -> None:
        found.append(True)

    def on_call(c: Any) -> None:
        op = c.op
        if isinstance(op, tvm.ir.Op):
            kind = op.get_attr("TCallEffectKind")
            if kind is not None and int(kind) <= int(tirx.CallEffectKind.Pure.value):
                return
        found.append(True)

    tvm_ffi.structural_walk(value, [(tvm.ir.TensorLoad, on_load), (tvm.ir.Call, on_call)])
    return bool(found)


def _tvm_origin(e: BaseException) -> bool:
    text = str(e)
    if any(m in text for m in ("Check failed", "/project/src/", "tvm::", "ffi::", "InternalError")):
        return True
    tb = e.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return last is not None and (f"{os.sep}tvm{os.sep}" in last or "tvm_ffi" in last)


def _short_reason(e: BaseException) -> str:
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    reason = lines[-1] if lines else type(e).__name__
    for prefix in ("ValueError:", "TypeError:", "AttributeError:", "IndexError:", "RuntimeError:", "InternalError:"):
        if reason.startswith(prefix):
            reason = reason[len(prefix):].strip()
    if "Check failed" in reason:
        reason = reason.split(":", 2)[-1].strip() or reason
    if "::" in reason or "/project/src/" in reason:
        reason = "the operands do not fit together"
    return reason


_LOCATED: dict[type, type] = {}


def located_class(cls: type[BaseException]) -> type[SourceError]:
    """The error class that reports a `cls` raised by a DSL call at the kernel's source line.

    A KernelTypeError that is also a `cls` (ValueError, RuntimeError, NotImplementedError, ...), so that
    ``except ValueError`` around a kernel still catches what the DSL call raised.
    """
    if issubclass(cls, KernelTypeError) or not issubclass(cls, Exception) or issubclass(cls, TypeError):
        return KernelTypeError
    found = _LOCATED.get(cls)
    if found is None:
        try:
            found = type(f"Kernel{cls.__name__}", (KernelTypeError, cls), {"__module__": "tilelang.errors"})
        except TypeError:  # an exception type that cannot be mixed in (incompatible layout)
            found = KernelTypeError
        _LOCATED[cls] = found
    return found


def _reference_params(fn: Any) -> set[str]:
    """Parameters of macro `fn` annotated ``T.Var`` or ``T.Ref`` (they alias the caller's variable)."""
    annotations = getattr(fn, "__annotations__", {}) or {}
    if not annotations:
        return set()
    import tvm

    from tilelang.language.eager.builder import Ref

    return {n for n, a in annotations.items() if a is Ref or a is tvm.ir.Var
            or (isinstance(a, str) and a in ("T.Var", "T.Ref"))}


class Interpreter:
    """Interprets one function body (a kernel or a macro) into the current IRBuilder frame."""

    def __init__(self, src: FunctionSource, fn: Any, state: BuildState, outer_locals: dict[str, Any] | None = None):
        self.src = src
        self.fn = fn
        self.state = state
        env = dict(fn.__globals__)
        if outer_locals:
            env.update(outer_locals)
        code = fn.__code__
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            try:
                env[name] = cell.cell_contents
            except ValueError:  # empty cell
                pass
        env.update(rewrite.helpers(state.var_buffers))
        self.env = env
        self.scopes: list[dict[str, Any]] = [{}]
        self.rewriter = rewrite.ExprRewriter()
        self.loops: list[str] = []  # enclosing loops, innermost last: "ir" (a device loop) or "static"
        self.base_depth = state.depth
        self.is_macro = False
        from tilelang.ir.spans import spans_enabled

        self.spans = spans_enabled()

    # ------------------------------------------------------------------------------------------ names
    def lookup(self, name: str, default: Any = _MISSING) -> Any:
        return self.env.get(name, default)

    def set_name(self, name: str, value: Any) -> None:
        scope = self.scopes[-1]
        if name not in scope:
            scope[name] = self.env.get(name, _MISSING)
        self.env[name] = value

    def push_scope(self) -> None:
        self.scopes.append({})

    def pop_scope(self) -> None:
        for name, old in self.scopes.pop().items():
            if old is _MISSING:
                self.env.pop(name, None)
            else:
                self.env[name] = old

    def bind_name(self, name: str, value: Any) -> None:
        """``name = value``: stores into a ``T.alloc_var`` scalar, binds immutable values otherwise."""
        import tvm
        from tvm import tirx
        from tvm.script.ir_builder import IRBuilder
        from tvm.script.ir_builder import tirx as B

        if hasattr(value, "asobject"):
            value = value.asobject()
        if _is_frame(value):  # `tx = T.launch_thread(...)`: the frame scopes over the rest of the block
            value = self.state.enter_block_frame(value)
        cur = self.env.get(name, _MISSING)
        vb = self.state.var_buffers
        if cur is not _MISSING and id(cur) in vb and id(value) not in vb and (
                _is_prim(value) or isinstance(value, (bool, int, float))):
            from tilelang.language.dtypes import cast

            B.buffer_store(cur, cast(value, str(cur.ty.dtype)), [0])
            return
        if _is_prim(value) and not isinstance(value, (tirx.IntImm, tirx.FloatImm, tvm.ir.Var)) and _reads_memory(value):
            bound = value
            value = B.Bind(value)
            IRBuilder.name(name, value)
            self.state.let_values[id(value)] = (value, bound)
        elif id(value) in self.state.unnamed:
            IRBuilder.name(name, self.state.unnamed.pop(id(value)))
        self.set_name(name, value)

    # ------------------------------------------------------------------------------------------ errors
    def located(self, e: BaseException, node: ast.AST) -> SourceError:
        """`e` as a SourceError at `node` (a located SourceError passes through)."""
        if isinstance(e, SourceError):
            if e.location is not None:
                return e
            return self.src.error(type(e), e.message, node)
        snippet = ast.unparse(node).split("\n")[0]
        snippet = snippet if len(snippet) <= 80 else snippet[:77] + "..."
        if isinstance(e, NameError):
            name = getattr(e, "name", None)
            msg = f"name {name!r} is not defined" if name else str(e)
            return self.src.error(KernelSyntaxError, f"{msg} (in `{snippet}`)", node)
        if _tvm_origin(e):
            return self.src.error(KernelTypeError, f"invalid operation in `{snippet}`: {_short_reason(e)}", node)
        if isinstance(e, AttributeError):
            return self.src.error(KernelSyntaxError, f"{e} (in `{snippet}`)", node)
        return self.src.error(located_class(type(e)), f"{type(e).__name__}: {e} (in `{snippet}`)", node)

    # ------------------------------------------------------------------------------------------ evaluation
    def eval(self, node: ast.expr) -> Any:
        return eval(self.src.compile_expr(node, self.rewriter), self.env)

    def run_block(self, stmts: list[ast.stmt]) -> None:
        frames: list[Any] = []
        self.state.block_frames.append(frames)
        ok = False
        try:
            for s in stmts:
                self.exec_stmt(s)
            ok = True
        finally:
            self.state.block_frames.pop()
            for f in reversed(frames):
                if ok:
                    f.__exit__(None, None, None)
                else:
                    try:
                        f.__exit__(None, None, None)
                    except Exception:
                        pass

    def exec_stmt(self, node: ast.stmt) -> None:
        handler = getattr(self, "stmt_" + type(node).__name__, None)
        if handler is None:
            raise self.src.error(KernelSyntaxError,
                                 f"`{type(node).__name__}` statements are not supported in a kernel", node)
        try:
            if self.spans:
                self.with_span(handler, node)
            else:
                handler(node)
        except (ReturnSignal, _LoopSignal, StopInterpretation):
            raise
        except SourceError as e:
            if e.location is not None:
                raise
            raise self.located(e, node) from None
        except Exception as e:
            err = self.located(e, node)
            raise err from (None if _tvm_origin(e) else e)

    def with_span(self, handler: Any, node: ast.stmt) -> None:
        """Run `handler(node)` with the IR it builds stamped with `node`'s source span (`tilelang.ir.spans`)."""
        from tvm.script.ir_builder import IRBuilder

        if not IRBuilder.is_in_scope():
            handler(node)
            return
        span = self.src.span(node)
        prev, self.state.span = self.state.span, span
        try:
            with IRBuilder.current().with_source_span(span):
                handler(node)
        finally:
            self.state.span = prev

    # ------------------------------------------------------------------------------------------ frames
    def in_frame(self, frame: Any, body: list[ast.stmt], target: ast.expr | None = None) -> None:
        value = frame.__enter__()
        self.state.depth += 1
        self.push_scope()
        ok = False
        try:
            if target is not None:
                self.assign(target, value)
            self.run_block(body)
            ok = True
        finally:
            self.pop_scope()
            self.state.depth -= 1
            if ok:
                frame.__exit__(None, None, None)
            else:  # the body's error is the one to report: a half-built frame may fail to close
                try:
                    frame.__exit__(None, None, None)
                except Exception:
                    pass

    # ------------------------------------------------------------------------------------------ statements
    def stmt_Expr(self, node: ast.Expr) -> None:
        import tvm
        from tvm.script.ir_builder import tirx as B

        from tilelang.language.kernel import Kernel
        from tilelang.language.loops import Loop

        value = self.eval(node.value)
        if hasattr(value, "asobject"):
            value = value.asobject()
        if isinstance(value, (Loop, Kernel)):
            raise KernelSyntaxError(f"{type(value).__name__} must be used in a `for` / `with` statement")
        if _is_frame(value):  # `T.launch_thread(...)`, `T.attr(...)` as a statement: scopes over the rest
            self.state.enter_block_frame(value)
        elif (_is_prim(value) or isinstance(value, tvm.ir.Call)) and not isinstance(value, tvm.ir.Var):
            B.evaluate(value)

    def stmt_Pass(self, node: ast.Pass) -> None:
        return

    def stmt_Assign(self, node: ast.Assign) -> None:
        value = self.eval(node.value)
        for target in node.targets:
            self.assign(target, value)

    def stmt_AnnAssign(self, node: ast.AnnAssign) -> None:
        from tilelang.language.dtypes import dtype as DType
        from tilelang.language.proxy import TensorSpec

        ann = self.eval(node.annotation)
        if not isinstance(node.target, ast.Name):
            raise KernelSyntaxError("annotated assignments must target a plain name")
        name = node.target.id
        if node.value is None:
            if isinstance(ann, TensorSpec):
                self.declare_tensor(name, ann, node)
                return
            raise KernelSyntaxError(f"`{name}: ...` without a value must annotate a tensor parameter with "
                                    "T.Tensor(shape, dtype)")
        value = self.eval(node.value)
        if isinstance(ann, DType):
            from tilelang.language.allocate import alloc_var

            buf = alloc_var(ann, value)
            self.bind_name(name, buf)
            return
        self.assign(node.target, value)

    def declare_tensor(self, name: str, spec: Any, node: ast.AST) -> None:
        raise KernelSyntaxError(
            f"`{name}: T.Tensor(...)` in the body declares a parameter, which only an eager @tilelang.jit kernel "
            "can do; annotate the parameter in the signature of a T.prim_func instead"
        )

    def stmt_AugAssign(self, node: ast.AugAssign) -> None:
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise KernelSyntaxError(f"unsupported augmented assignment {type(node.op).__name__}")
        rhs = self.eval(node.value)
        target = node.target
        if isinstance(target, ast.Name):
            cur = self.lookup(target.id)
            if cur is _MISSING:
                raise NameError(target.id, name=target.id)
            if id(cur) in self.state.var_buffers:
                from tvm import tirx
                from tvm.script.ir_builder import tirx as B

                from tilelang.language.dtypes import cast

                B.buffer_store(cur, cast(op(tirx.BufferLoad(cur, [0]), rhs), str(cur.ty.dtype)), [0])
                return
            self.bind_name(target.id, op(cur, rhs))
        elif isinstance(target, ast.Subscript):
            base, key = self.store_target(target)
            if base is None:
                raise KernelSyntaxError("augmented assignment to a Python container is not supported in a kernel")
            if self.reducer_update(base, key, node.op, rhs):
                return
            self.store(base, key, op(base[tuple(key) if len(key) != 1 else key[0]], rhs))
        else:
            raise KernelSyntaxError("augmented assignment must target a name or a buffer element")

    def reducer_update(self, base: Any, key: list[Any], op: ast.operator, rhs: Any) -> bool:
        """``acc[i] += v`` on a ``T.alloc_reducer`` buffer: a contribution (`tilelang.language.reducer`)."""
        from tvm import tirx
        from tvm.script.ir_builder import tirx as B

        from tilelang.language import reducer

        entry = reducer.reducer_of(base)
        if entry is None:
            return False
        buf, kind, _ = entry
        wanted = {ast.Add: "sum", ast.BitAnd: "bitand", ast.BitOr: "bitor", ast.BitXor: "bitxor"}.get(type(op))
        if wanted != kind:
            raise KernelTypeError(f"reducer {buf.name} combines with {kind!r}; a `{type(op).__name__}` compound "
                                  "assignment cannot contribute to it (use T.reducer_update)")
        B.evaluate(reducer.update(buf, kind, tirx.BufferLoad(buf, key), rhs))
        return True

    def store_target(self, target: ast.Subscript) -> tuple[Any, list[Any]]:
        import tvm
        from tvm import tirx

        base = self.eval(target.value)
        if isinstance(base, tvm.ir.TensorLoad) and id(base.source) in self.state.var_buffers:
            base = base.source
        elts = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
        key = [self.slice_index(e) if isinstance(e, ast.Slice) else self.eval(e) for e in elts]
        key = [k.asobject() if hasattr(k, "asobject") else k for k in key]
        if isinstance(base, tvm.ir.Var) and tirx.is_buffer_var(base):
            ndim = len(base.ty.shape)
            if len(key) != ndim:
                raise KernelTypeError(f"buffer {base.name} has {ndim} dimensions but is indexed with {len(key)} "
                                      f"{'index' if len(key) == 1 else 'indices'}")
            if sum(isinstance(k, tirx.Ramp) for k in key) > 1:
                raise KernelSyntaxError("a slice assignment may slice one dimension only; use a T.Parallel loop, "
                                        "T.fill or T.copy")
            return base, key
        if any(isinstance(e, ast.Slice) for e in elts):
            raise KernelSyntaxError("slice assignment is only supported on buffers")
        return None, [base, target]

    def slice_index(self, node: ast.Slice) -> Any:
        """``a:b`` in a store target: a Ramp over the constant number of elements it covers."""
        from tvm import tirx

        from tilelang.transform import utils as C

        start = 0 if node.lower is None else self.eval(node.lower)
        step = 1 if node.step is None else self.eval(node.step)
        if node.upper is None:
            raise KernelSyntaxError("a slice assignment needs an explicit end (A[i:i + 4] = ...)")
        stop = self.eval(node.upper)
        if not isinstance(step, int) or step != 1:
            raise RuntimeError("buffer slices with a step are not supported; use a T.Parallel loop")
        lanes = C.as_int(tirx.const(stop, "int32") - start if isinstance(stop, int) else stop - start)
        if lanes is None or lanes < 1:
            raise KernelSyntaxError(f"a slice assignment needs a constant positive length, got {start}:{stop}; "
                                    "use T.copy or a T.Parallel loop")
        start = tirx.const(start, "int32") if isinstance(start, int) else start
        return start if lanes == 1 else tirx.Ramp(start, 1, lanes)

    def store(self, buf: Any, key: list[Any], value: Any) -> None:
        from tvm import tirx
        from tvm.script.ir_builder import tirx as B

        from tilelang.language.dtypes import cast

        if hasattr(value, "asobject"):
            value = value.asobject()
        if not (_is_prim(value) or isinstance(value, (bool, int, float))):
            raise KernelTypeError(f"cannot store {type(value).__name__} into buffer element {buf.name}[...]")
        lanes = next((int(k.lanes) for k in key if isinstance(k, tirx.Ramp)), 1)
        dtype = str(buf.ty.dtype)
        if lanes > 1:
            value_lanes = int(value.ty.dtype.lanes) if _is_prim(value) else 1
            if value_lanes == 1:
                value = tirx.Broadcast(cast(value, dtype), lanes)
            elif value_lanes != lanes:
                raise KernelTypeError(f"cannot store a {value_lanes}-lane value into {lanes} elements of {buf.name}")
            elif str(value.ty.dtype) != f"{dtype}x{lanes}":
                value = tirx.Cast(f"{dtype}x{lanes}", value)
            B.buffer_store(buf, value, key)
            return
        B.buffer_store(buf, cast(value, dtype), key)

    def assign(self, target: ast.expr, value: Any) -> None:
        if isinstance(target, ast.Name):
            self.bind_name(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if hasattr(value, "__len__") and hasattr(value, "__getitem__") and not _is_prim(value):
                items = list(value)
            elif len(target.elts) == 1:
                items = [value]
            else:
                raise KernelTypeError(f"cannot unpack {type(value).__name__} into {len(target.elts)} names")
            if len(items) != len(target.elts):
                raise KernelTypeError(f"cannot unpack {len(items)} values into {len(target.elts)} names")
            for t, v in zip(target.elts, items):
                self.assign(t, v)
        elif isinstance(target, ast.Subscript):
            base, key = self.store_target(target)
            if base is None:
                container = key[0]
                container[self.eval(target.slice)] = value
                return
            self.store(base, key, value)
        elif isinstance(target, ast.Attribute):  # `self.x = v` in an inlined method: a plain Python attribute
            setattr(self.eval(target.value), target.attr, value)
        else:
            raise KernelSyntaxError(f"cannot assign to {type(target).__name__} in a kernel")

    def stmt_For(self, node: ast.For) -> None:
        from tilelang.language.loops import Loop, serial

        if node.orelse:
            raise KernelSyntaxError("`for ... else` is not supported in a kernel")
        it = node.iter
        if (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
                and self.lookup("range", builtins.range) is builtins.range):
            if it.keywords:
                raise KernelSyntaxError("range() takes no keyword arguments")
            loop = serial(*[self.eval(a) for a in it.args])
        else:
            loop = self.eval(it)
        from tilelang.language.misc import PersistentLoop

        if isinstance(loop, Loop):
            self.ir_loop(node, loop)
        elif isinstance(loop, PersistentLoop):
            self.persistent_loop(node, loop)
        elif hasattr(loop, "__enter__") and type(loop).__name__ == "ForFrame":
            self.in_frame(loop, node.body, node.target)
        else:
            self.static_loop(node, loop)

    def ir_loop(self, node: ast.For, loop: Any) -> None:
        from tvm.script.ir_builder import IRBuilder
        from tvm.script.ir_builder import tirx as B

        makers = {"serial": B.serial, "parallel": B.parallel, "unroll": B.unroll, "vectorized": B.vectorized}
        target = node.target
        names = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
        if len(names) != len(loop.ranges) and not (len(names) == 1 and isinstance(target, ast.Name)):
            raise KernelTypeError(f"the loop has {len(loop.ranges)} index variables but the target names {len(names)}")
        frames, loop_vars = [], []
        self.state.depth += 1
        self.push_scope()
        ok = False
        try:
            for start, stop, step in loop.ranges:
                kw: dict[str, Any] = {"annotations": dict(loop.annotations) or None}
                if step is not None:
                    kw["step"] = step
                frame = makers[loop.kind](start, stop, **kw)
                frames.append(frame)
                loop_vars.append(frame.__enter__())
            if len(names) == len(loop_vars):
                for n, v in zip(names, loop_vars):
                    if isinstance(n, ast.Name):
                        IRBuilder.name(n.id, v)
            self.assign(target, loop_vars[0] if len(loop_vars) == 1 else tuple(loop_vars))
            self.loops.append("ir" if loop.kind in ("serial", "unroll") else "parallel")
            try:
                self.run_block(node.body)
            finally:
                self.loops.pop()
            ok = True
        except _LoopSignal as sig:
            raise KernelSyntaxError(f"`{sig.kind}` inside a {loop.kind} loop is not supported (only in serial "
                                    "loops and while loops)") from None
        finally:
            self.pop_scope()
            self.state.depth -= 1
            for f in reversed(frames):
                if ok:
                    f.__exit__(None, None, None)
                else:  # keep the body's error
                    try:
                        f.__exit__(None, None, None)
                    except Exception:
                        pass

    def persistent_loop(self, node: ast.For, loop: Any) -> None:
        """``for bx, by in T.Persistent(...)``: a serial loop over waves, each visiting this worker's tile."""
        from tvm import tirx
        from tvm.script.ir_builder import tirx as B

        from tilelang.language.exprs import ceildiv

        waves = ceildiv(loop.total(), loop.wave_size)
        frame = B.serial(0, waves)
        wave = frame.__enter__()
        self.state.depth += 1
        self.push_scope()
        try:
            coords = loop.coords(wave * loop.wave_size + loop.index)
            inside = tirx.const(True, "bool")
            for c, extent in zip(coords, loop.domain):
                inside = tirx.And(inside, c < extent)
            with B.If(inside), B.Then():
                self.assign(node.target, tuple(coords) if len(coords) > 1 else coords[0])
                self.loops.append("ir")
                try:
                    self.run_block(node.body)
                finally:
                    self.loops.pop()
        finally:
            self.pop_scope()
            self.state.depth -= 1
            frame.__exit__(None, None, None)

    def static_loop(self, node: ast.For, values: Any) -> None:
        try:
            iterator = iter(values)
        except TypeError:
            raise KernelTypeError(f"cannot loop over {type(values).__name__}: use range(), T.serial, "
                                  "T.Parallel, T.Pipelined, ... or a Python list") from None
        for v in iterator:
            self.assign(node.target, v)
            self.loops.append("static")
            try:
                self.run_block(node.body)
            except _LoopSignal as sig:
                if sig.kind == "break":
                    break
            finally:
                self.loops.pop()

    def stmt_Break(self, node: ast.Break) -> None:
        if self.loops and self.loops[-1] == "ir":  # a device loop: a Break statement
            from tvm.script.ir_builder import tirx as B

            B.Break()
            return
        raise _LoopSignal("break")

    def stmt_Continue(self, node: ast.Continue) -> None:
        if self.loops and self.loops[-1] == "ir":
            from tvm.script.ir_builder import tirx as B

            B.Continue()
            return
        raise _LoopSignal("continue")

    def stmt_While(self, node: ast.While) -> None:
        from tvm.script.ir_builder import tirx as B

        if node.orelse:
            raise KernelSyntaxError("`while ... else` is not supported in a kernel")
        cond = rewrite._cond(self.eval(node.test))
        if rewrite.is_runtime(cond):
            self.loops.append("ir")
            try:
                self.in_frame(B.While(cond), node.body)
            finally:
                self.loops.pop()
            return
        count = 0
        while cond:
            count += 1
            if count > _MAX_STATIC_WHILE:
                raise KernelSyntaxError("compile-time while loop does not terminate")
            try:
                self.run_block(node.body)
            except _LoopSignal as sig:
                if sig.kind == "break":
                    break
            cond = rewrite._cond(self.eval(node.test))
            if rewrite.is_runtime(cond):
                raise KernelTypeError("a while condition must stay compile-time once it started so")

    def stmt_If(self, node: ast.If) -> None:
        from tvm.script.ir_builder import tirx as B

        cond = rewrite._cond(self.eval(node.test))
        if not rewrite.is_runtime(cond):
            self.run_block(node.body if cond else node.orelse)
            return
        with B.If(cond):
            self.in_frame(B.Then(), node.body)
            if node.orelse:
                self.in_frame(B.Else(), node.orelse)

    def stmt_With(self, node: ast.With) -> None:
        self._with(node, list(node.items))

    def _with(self, node: ast.With, items: list[ast.withitem]) -> None:
        if not items:
            self.run_block(node.body)
            return
        item, rest = items[0], items[1:]
        ctx = self.eval(item.context_expr)
        if self.skip_with(ctx):
            return
        if not hasattr(ctx, "__enter__"):
            raise KernelTypeError(f"{type(ctx).__name__} cannot be used in a `with` statement")
        value = ctx.__enter__()
        self.state.depth += 1
        self.push_scope()
        ok = False
        try:
            if item.optional_vars is not None:
                self.assign(item.optional_vars, value)
            self._with(node, rest)
            ok = True
        finally:
            self.pop_scope()
            self.state.depth -= 1
            if ok:
                ctx.__exit__(None, None, None)
            else:
                try:
                    ctx.__exit__(None, None, None)
                except Exception:
                    pass

    def skip_with(self, ctx: Any) -> bool:
        """Hook for the eager signature pass, which skips kernel bodies."""
        return False

    def stmt_Return(self, node: ast.Return) -> None:
        if self.state.depth != self.base_depth:
            raise KernelSyntaxError("`return` is only supported at the top level of a kernel or macro body, not "
                                    "inside loops, runtime ifs or with blocks")
        value = None if node.value is None else self.eval(node.value)
        raise ReturnSignal(value, node)

    def stmt_FunctionDef(self, node: ast.FunctionDef) -> None:
        tree = copy.deepcopy(node)
        ast.increment_lineno(tree, self.src.first_line - 1)
        module = ast.Module(body=[tree], type_ignores=[])
        exec(compile(module, self.src.filename, "exec"), self.env)
        fn = self.env[node.name]
        if not node.decorator_list:  # a plain nested def is interpreted like a T.macro where it is called
            from tilelang.frontend.macro import Macro

            fn = Macro(fn)
        self.set_name(node.name, fn)

    def stmt_Assert(self, node: ast.Assert) -> None:
        from tvm.script.ir_builder import tirx as B

        cond = rewrite._cond(self.eval(node.test))
        msg = "assertion failed" if node.msg is None else str(self.eval(node.msg))
        if rewrite.is_runtime(cond):
            self.state.enter_block_frame(B.Assert(cond, msg))
        elif not cond:
            raise KernelTypeError(msg)

    def stmt_Raise(self, node: ast.Raise) -> None:
        exc = self.eval(node.exc) if node.exc is not None else RuntimeError("raise")
        raise exc

    # ------------------------------------------------------------------------------------------ macros
    def var_buffer_of(self, value: Any, param: str, macro_name: str) -> Any:
        """The ``T.alloc_var`` buffer a macro argument reads (ValueError for anything else)."""
        import tvm

        buf = value.source if isinstance(value, tvm.ir.TensorLoad) else value
        found = self.state.var_buffers.get(id(buf)) if isinstance(buf, tvm.ir.Var) else None
        if found is None and isinstance(buf, tvm.ir.Var):
            found = next((b for b in self.state.var_buffers.values() if b.same_as(buf)), None)
        if found is not None:
            return found
        raise ValueError(f"macro {macro_name}: parameter {param!r} is annotated T.Var / T.Ref, so its argument "
                         f"must be a variable made with T.alloc_var, got {value!r}")

    def call_macro(self, macro: Any, args: tuple, kwargs: dict) -> Any:
        import inspect

        child = Interpreter(FunctionSource.of(macro.fn), macro.fn, self.state)
        child.is_macro = True
        try:
            bound = inspect.signature(macro.fn).bind(*args, **kwargs)
        except TypeError as e:
            raise KernelTypeError(f"macro {macro.fn.__name__}: {e}") from None
        bound.apply_defaults()
        refs = _reference_params(macro.fn)
        self.state.interpreters.append(child)
        try:
            for name, value in bound.arguments.items():
                if name in refs:  # `x: T.Var` / `x: T.Ref`: the caller's T.alloc_var itself, assigned through
                    value = self.var_buffer_of(value, name, macro.fn.__name__)
                    child.env[name] = value
                    child.scopes[-1].setdefault(name, _MISSING)
                    continue
                child.bind_name(name, value)
            child.run_block(child.src.fdef.body)
        except ReturnSignal as r:
            return r.value
        finally:
            self.state.interpreters.pop()
        return None
