"""Rewriting a Python function into calls on a builder object (the reference's ``tilelang.language.eager.ast``).

`mutate(func)` rewrites the body of `func` so that every construct is handed to a builder named ``__tb``:

- ``x = e`` becomes ``x = __tb.bind('x', e)``; ``a[i] = e`` ``__tb.assign_slice(a, i, e)``; ``x += e``
  ``x = __tb.aug_assign('Add', x, e, name='x')``; tuple targets are unpacked through ``__tb.unwrap_value``;
- ``if c:`` loops over ``__tb.ctx_if(c)`` then ``__tb.ctx_then`` / ``__tb.ctx_else``; ``for t in it:`` iterates
  ``__tb.ctx_for(it)``; ``while c:`` iterates ``__tb.ctx_while(lambda: c)``; ``break`` / ``continue`` ask
  ``__tb.ctx_break()`` / ``__tb.ctx_continue()`` first;
- reads of a name go through ``__tb.rval('x', x)``, parameters through ``__tb.arg``; ``and`` / ``or`` / ``not``,
  chained comparisons and ``a if c else b`` through ``__tb.boolop`` / ``__tb.ifexp`` (operands that must be
  evaluated lazily are passed as lambdas); expression statements through ``__tb.eval``, ``return`` through
  ``__tb.ret``, ``with`` items through ``__tb.ctx_with``, ``assert`` through ``__tb.assert_expr``;
- every statement is preceded by ``__tb.set_fileline(file, line, function)``.

`BaseBuilder` gives each hook its plain-Python meaning, so ``mutate(f).gen(BaseBuilder())`` computes what ``f``
does; a subclass overrides hooks to trace or stage the program. TileLang's own front end interprets kernels directly
(`tilelang.frontend.interpreter`) and does not use this module: it serves programs written against the builder
protocol.
"""

from __future__ import annotations

import ast
import builtins
import inspect
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tilelang.language.eager import utils

__all__ = ["BaseBuilder", "DSLMutator", "IRGenerator", "eval_op", "mutate", "utils"]

Operator = Literal["Add", "Sub", "Mult", "MatMult", "Div", "Mod", "Pow", "LShift", "RShift", "BitOr", "BitXor",
                   "BitAnd", "FloorDiv"]
BoolOp = Literal["And", "Or", "Not"]

_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mult": lambda a, b: a * b,
    "MatMult": lambda a, b: a @ b, "Div": lambda a, b: a / b, "Mod": lambda a, b: a % b,
    "Pow": lambda a, b: a ** b, "LShift": lambda a, b: a << b, "RShift": lambda a, b: a >> b,
    "BitOr": lambda a, b: a | b, "BitXor": lambda a, b: a ^ b, "BitAnd": lambda a, b: a & b,
    "FloorDiv": lambda a, b: a // b,
}
_INPLACE: dict[str, str] = {"Add": "__iadd__", "Sub": "__isub__", "Mult": "__imul__", "MatMult": "__imatmul__",
                            "Div": "__itruediv__", "Mod": "__imod__", "Pow": "__ipow__", "LShift": "__ilshift__",
                            "RShift": "__irshift__", "BitOr": "__ior__", "BitXor": "__ixor__", "BitAnd": "__iand__",
                            "FloorDiv": "__ifloordiv__"}


def eval_op(op: Operator, left: Any, right: Any) -> Any:
    """``left <op> right`` for the name of an `ast.operator` class (``"Add"``, ``"FloorDiv"``, ...)."""
    try:
        fn = _BINARY[op]
    except KeyError:
        raise ValueError(f"Unknown operator: {op}") from None
    return fn(left, right)


def eval_aug_assign(op: Operator, target: Any, sl: Any, value: Any) -> Any:
    """``target[sl] <op>= value`` (the element's in-place operator when it has one); returns `target`."""
    if op not in _INPLACE:
        raise ValueError(f"Unknown operator: {op}")
    current = target[sl]
    inplace = getattr(current, _INPLACE[op], None)
    result = inplace(value) if inplace is not None else NotImplemented
    target[sl] = eval_op(op, current, value) if result is NotImplemented else result
    return target


class _empty:
    """The value of a declaration without one (``x: T.int32``)."""


class BaseBuilder:
    """The hooks that code rewritten by `mutate` calls, each with its plain-Python meaning; subclass to change them."""

    empty = _empty

    # control flow -------------------------------------------------------------------------------
    def ctx_if(self, cond: Any) -> Iterable[Any]:
        yield cond

    def ctx_then(self, val: Any) -> Iterable[None]:
        if val:
            yield

    def ctx_else(self, val: Any) -> Iterable[None]:
        if not val:
            yield

    def ctx_for(self, iterable: Iterable[Any]) -> Iterable[Any]:
        return iterable

    def ctx_while(self, cond: Callable[[], Any]) -> Iterator[None]:
        while cond():
            yield

    def ctx_continue(self) -> bool:
        return True

    def ctx_break(self) -> bool:
        return True

    def ctx_with(self, ctx: AbstractContextManager[Any]) -> AbstractContextManager[Any]:
        return ctx

    def skip_kernel_ctx(self) -> bool:
        """Whether to return before a ``with T.Kernel(...)`` block (a builder that only collects the signature)."""
        return False

    # values -------------------------------------------------------------------------------------
    def eval(self, val: Any) -> None:  # a hook: plain Python discards the value
        """An expression statement's value."""

    def bind(self, name: str, value: Any, annot: Any = empty) -> Any:
        """The value `name` takes; a bare declaration (``x: T.int32``, value `empty`) keeps what `name` holds."""
        if value is _empty:
            return self.get_parent_locals().get(name, value)
        return value

    def unwrap_value(self, value: Any) -> Any:
        return value

    def assign_slice(self, lval: Any, sl: Any, value: Any, annot: Any = empty) -> None:
        lval[sl] = value

    def aug_assign(self, op: Operator, target: Any, aug_value: Any, name: str | None = None) -> Any:
        return eval_op(op, target, aug_value)

    def aug_assign_slice(self, op: Operator, target: Any, sl: Any, aug_value: Any) -> None:
        eval_aug_assign(op, target, sl, aug_value)

    def boolop(self, op: BoolOp, left: Any, right: Callable[[], Any] | None = None) -> Any:
        if op == "Not":
            return not left
        if right is None:
            raise ValueError(f"boolop {op!r} needs a right operand")
        if op == "And":
            return left and right()
        if op == "Or":
            return left or right()
        raise ValueError(f"Unknown boolop: {op}")

    def ifexp(self, cond: Any, then: Callable[[], Any], otherwise: Callable[[], Any]) -> Any:
        return then() if cond else otherwise()

    def ret(self, value: Any) -> Any:
        return value

    def assert_expr(self, cond: Any, msg: Any) -> None:
        assert cond, msg

    def rval(self, name: str, value: Any) -> Any:
        return value

    def arg(self, name: str, value: Any) -> Any:
        return value

    def override(self, name: str) -> Any:
        """What a builtin the rewritten code looks up by name (``range``) means: the builtin itself here."""
        return getattr(builtins, name)

    def set_fileline(self, filename: str, lineno: int, name: str) -> None:
        """The statement at `filename`:`lineno` of function `name` runs next."""

    def get_parent_locals(self) -> dict[str, Any]:
        """The locals of the frame that called the hook calling this (the rewritten function's frame)."""
        frame = inspect.currentframe()
        try:
            caller = frame.f_back.f_back if frame is not None and frame.f_back is not None else None
            if caller is None:
                raise RuntimeError("get_parent_locals must be called from a builder hook")
            return caller.f_locals
        finally:
            del frame  # the frame refers to itself through its locals: break the cycle now


# ------------------------------------------------------------------------------------------------ AST helpers
_TB = "__tb"
_JUMP = "__tl_jump"


def _name(ident: str, store: bool = False) -> ast.Name:
    return ast.Name(id=ident, ctx=ast.Store() if store else ast.Load())


def _hook(method: str, *args: ast.expr, **kwargs: ast.expr) -> ast.Call:
    """``__tb.<method>(*args, **kwargs)``."""
    return ast.Call(func=ast.Attribute(value=_name(_TB), attr=method, ctx=ast.Load()), args=list(args),
                    keywords=[ast.keyword(arg=k, value=v) for k, v in kwargs.items()])


def _const(value: Any) -> ast.Constant:
    return ast.Constant(value=value)


def _lambda(body: ast.expr) -> ast.Lambda:
    return ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                                         kwarg=None, defaults=[]), body=body)


def _assign(target: str, value: ast.expr) -> ast.Assign:
    return ast.Assign(targets=[_name(target, store=True)], value=value)


def _loop(target: str, it: ast.expr, body: list[ast.stmt], orelse: list[ast.stmt] | None = None) -> ast.For:
    return ast.For(target=_name(target, store=True), iter=it, body=body or [ast.Pass()], orelse=orelse or [])


def _if_jump(check: ast.expr, then: list[ast.stmt]) -> ast.If:
    return ast.If(test=check, body=then, orelse=[])


def _located(nodes: list[ast.stmt], origin: ast.AST) -> list[ast.stmt]:
    for node in nodes:
        ast.copy_location(node, origin)
        for child in ast.walk(node):
            if not hasattr(child, "lineno") and isinstance(child, (ast.stmt, ast.expr)):
                ast.copy_location(child, origin)
    return nodes


class _FileLine(ast.Expr):
    """A ``__tb.set_fileline(...)`` statement inserted before a user statement (left as it is by the rewrite)."""

    _fields = ast.Expr._fields


def _with_filelines(stmts: list[ast.stmt]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for stmt in stmts:
        _add_filelines(stmt)
        marker = _FileLine(value=_hook("set_fileline", _name("__tb_fl"), _const(stmt.lineno), _name("__tb_fn")))
        out.extend([ast.copy_location(marker, stmt), stmt])
    return out


def _add_filelines(node: ast.AST) -> None:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return  # a nested definition runs later, under its own name
    for fname, value in ast.iter_fields(node):
        if isinstance(value, list) and value and all(isinstance(v, ast.stmt) for v in value):
            setattr(node, fname, _with_filelines(value))
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, ast.AST):
                    _add_filelines(item)
        elif isinstance(value, ast.AST):
            _add_filelines(value)


class DSLMutator(ast.NodeTransformer):
    """Rewrites a module holding one function definition (`utils.get_ast`) into ``make_closure(<nonlocals>)``,
    which returns ``<name>(__tb)``, which returns the rewritten function bound to builder ``__tb``.

    `nonlocals` are the function's closure variables (the parameters of ``make_closure``), `globals` its module
    namespace (used to recognise parameter annotations), `filename` the path passed to ``set_fileline``.
    """

    def __init__(self, nonlocals: dict[str, Any], globals: dict[str, Any], filename: str):
        self.nonlocals = nonlocals
        self.globals = globals
        self.filename = filename
        self.extra_type_hints: dict[str, Any] = {}
        self.tmp_counter = 0
        self._frames: list[str] = []    # enclosing "loop" (a user loop) / "wrap" (a loop standing for an if)
        self._jumped: list[bool] = []   # per enclosing If: did a break/continue leave one of its wrappers?
        self._def_depth = 0

    def get_tmp(self) -> str:
        name = f"__{self.tmp_counter}"
        self.tmp_counter += 1
        return name

    # the function -------------------------------------------------------------------------------
    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        if self._def_depth:
            return self._nested_def(node)
        self._def_depth += 1
        try:
            return self._top_def(node)
        finally:
            self._def_depth -= 1

    def _nested_def(self, node: ast.FunctionDef) -> ast.AST:
        frames, self._frames = self._frames, []
        try:
            return self.generic_visit(node)
        finally:
            self._frames = frames

    def _top_def(self, node: ast.FunctionDef) -> ast.FunctionDef:
        a = node.args
        params = [*a.posonlyargs, *a.args, *([a.vararg] if a.vararg else []), *a.kwonlyargs,
                  *([a.kwarg] if a.kwarg else [])]
        names = {p.arg for p in params}
        for stmt in node.body:
            self._record_hint(stmt, names)
        for p in params:
            p.annotation = None
        node.returns = None
        node.decorator_list = []
        prologue = _located([_assign(p.arg, _hook("arg", _const(p.arg), _name(p.arg))) for p in params], node)
        node.body = prologue + self._block(_with_filelines(node.body))
        fn = node.name
        builder_fn = _function(fn, [_TB], [_assign("__tb_fl", _const(self.filename)), _assign("__tb_fn", _const(fn)),
                                           _assign("range", _hook("override", _const("range"))), node,
                                           ast.Return(value=_name(fn))])
        make_closure = _function("make_closure", list(self.nonlocals), [builder_fn, ast.Return(value=_name(fn))])
        return ast.fix_missing_locations(_located([make_closure], node)[0])

    def _record_hint(self, stmt: ast.stmt, params: set[str]) -> None:
        """``A: T.Tensor(...)`` / ``n: T.int32`` declaring a parameter in the body: note its kind."""
        if not (isinstance(stmt, ast.AnnAssign) and stmt.value is None and isinstance(stmt.target, ast.Name)
                and stmt.target.id in params):
            return
        try:
            hint = eval(compile(ast.Expression(body=stmt.annotation), "<annotation>", "eval"),
                        self.globals, dict(self.nonlocals))
        except Exception:
            return
        from tilelang.language import dtypes, proxy, views

        if isinstance(hint, proxy.TensorSpec) or isinstance(hint, proxy._TensorProxy) or hint is views.ptr:
            self.extra_type_hints[stmt.target.id] = views.ptr
        elif isinstance(hint, dtypes._dtype_class()):
            self.extra_type_hints[stmt.target.id] = hint

    # statements ---------------------------------------------------------------------------------
    def _block(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in stmts:
            res = self.visit(stmt)
            if res is None:
                continue
            out.extend(res if isinstance(res, list) else [res])
        return out or [ast.Pass()]

    def visit__FileLine(self, node: _FileLine) -> ast.stmt:
        return ast.copy_location(ast.Expr(value=node.value), node)

    def visit_Expr(self, node: ast.Expr) -> ast.stmt:
        return ast.copy_location(ast.Expr(value=_hook("eval", self.visit(node.value))), node)

    def visit_Assign(self, node: ast.Assign) -> list[ast.stmt]:
        value = self.visit(node.value)
        if len(node.targets) == 1:
            return _located(self._store(node.targets[0], value), node)
        tmp = self.get_tmp()
        out: list[ast.stmt] = [_assign(tmp, value)]
        for target in node.targets:
            out.extend(self._store(target, _name(tmp)))
        return _located(out, node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> list[ast.stmt]:
        annot = self.visit(node.annotation)
        value = self.visit(node.value) if node.value is not None else ast.Attribute(
            value=_name(_TB), attr="empty", ctx=ast.Load())
        return _located(self._store(node.target, value, annot), node)

    def visit_AugAssign(self, node: ast.AugAssign) -> list[ast.stmt]:
        op = type(node.op).__name__
        value = self.visit(node.value)
        target = node.target
        if isinstance(target, ast.Name):
            call = _hook("aug_assign", _const(op), _name(target.id), value, name=_const(target.id))
            return _located([ast.Assign(targets=[_name(target.id, store=True)], value=call)], node)
        if isinstance(target, ast.Subscript):
            call = _hook("aug_assign_slice", _const(op), self.visit(target.value), self.visit(target.slice), value)
            return _located([ast.Expr(value=call)], node)
        node.value = value
        node.target = self.visit(target)
        return [node]

    def _store(self, target: ast.expr, value: ast.expr, annot: ast.expr | None = None) -> list[ast.stmt]:
        """Statements storing `value` into `target` through the builder."""
        extra = [annot] if annot is not None else []
        if isinstance(target, ast.Name):
            return [_assign(target.id, _hook("bind", _const(target.id), value, *extra))]
        if isinstance(target, ast.Subscript):
            return [ast.Expr(value=_hook("assign_slice", self.visit(target.value), self.visit(target.slice), value,
                                         *extra))]
        if isinstance(target, (ast.Tuple, ast.List)):
            return self._unpack(target, value)
        return [ast.Assign(targets=[self.visit(target)], value=value)]  # attributes, starred: plain Python

    def _unpack(self, target: ast.Tuple | ast.List, value: ast.expr) -> list[ast.stmt]:
        """``a, (b, c[i]) = v``: unpack into temporaries, snapshot each (``bind('_', t)``, so swaps read the old
        values), then store each into its target."""
        leaves: list[tuple[str, ast.expr]] = []

        def shape(t: ast.expr) -> ast.expr:
            if isinstance(t, (ast.Tuple, ast.List)):
                return ast.Tuple(elts=[shape(e) for e in t.elts], ctx=ast.Store())
            if isinstance(t, ast.Starred):
                return ast.Starred(value=shape(t.value), ctx=ast.Store())
            tmp = self.get_tmp()
            leaves.append((tmp, t))
            return _name(tmp, store=True)

        out: list[ast.stmt] = [ast.Assign(targets=[shape(target)], value=_hook("unwrap_value", value))]
        out += [_assign(tmp, _hook("bind", _const("_"), _name(tmp))) for tmp, _ in leaves]
        for tmp, t in leaves:
            out.extend(self._store(t, _name(tmp)))
        return out

    def visit_If(self, node: ast.If) -> list[ast.stmt]:
        cond = self.visit(node.test)
        flag = self.get_tmp()
        self._frames.append("wrap")
        self._frames.append("wrap")
        self._jumped.append(False)
        try:
            then = self._block(node.body)
            orelse = self._block(node.orelse) if node.orelse else None
        finally:
            self._frames.pop()
            self._frames.pop()
            jumped = self._jumped.pop()
        inner = [_loop("_", _hook("ctx_then", _name(flag)), then)]
        if orelse is not None:
            if jumped:
                inner.append(_if_jump(_name(_JUMP), [ast.Break()]))
            inner.append(_loop("_", _hook("ctx_else", _name(flag)), orelse))
        if jumped:
            inner.append(_if_jump(_name(_JUMP), [ast.Break()]))
        out: list[ast.stmt] = [_loop(flag, _hook("ctx_if", cond), inner)]
        if jumped:
            out.extend(self._propagate_jump())
        return _located(out, node)

    def _propagate_jump(self) -> list[ast.stmt]:
        """After an if's wrapper loops that a break/continue left: pass it on to the enclosing wrapper, or do it."""
        if self._frames and self._frames[-1] == "wrap":
            self._jumped[-1] = True
            return [_if_jump(_name(_JUMP), [ast.Break()])]
        return [_if_jump(ast.Compare(left=_name(_JUMP), ops=[ast.Eq()], comparators=[_const("break")]),
                         [ast.Break()]),
                _if_jump(ast.Compare(left=_name(_JUMP), ops=[ast.Eq()], comparators=[_const("continue")]),
                         [ast.Continue()])]

    def _jump(self, node: ast.stmt, kind: str) -> list[ast.stmt]:
        hook = "ctx_break" if kind == "break" else "ctx_continue"
        plain: ast.stmt = ast.Break() if kind == "break" else ast.Continue()
        if self._frames and self._frames[-1] == "wrap":  # leave the wrappers first, then jump (_propagate_jump)
            self._jumped[-1] = True
            body: list[ast.stmt] = [_assign(_JUMP, _const(kind)), ast.Break()]
        else:
            body = [plain]
        return _located([_if_jump(_hook(hook), body)], node)

    def visit_Break(self, node: ast.Break) -> list[ast.stmt]:
        return self._jump(node, "break")

    def visit_Continue(self, node: ast.Continue) -> list[ast.stmt]:
        return self._jump(node, "continue")

    def _loop_body(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        self._frames.append("loop")
        try:
            body = self._block(stmts)
        finally:
            self._frames.pop()
        if any(isinstance(n, ast.Name) and n.id == _JUMP for s in body for n in ast.walk(s)):
            body.insert(0, _assign(_JUMP, _const(None)))
        return body

    def visit_For(self, node: ast.For) -> list[ast.stmt]:
        it = self.visit(node.iter)
        tmp = self.get_tmp()
        body = self._store(node.target, _name(tmp)) + self._loop_body(node.body)
        orelse = self._block(node.orelse) if node.orelse else []
        return _located([_loop(tmp, _hook("ctx_for", it), body, orelse)], node)

    def visit_While(self, node: ast.While) -> list[ast.stmt]:
        cond = _lambda(self.visit(node.test))
        body = self._loop_body(node.body)
        orelse = self._block(node.orelse) if node.orelse else []
        return _located([_loop("_", _hook("ctx_while", cond), body, orelse)], node)

    def visit_Return(self, node: ast.Return) -> list[ast.stmt]:
        value = self.visit(node.value) if node.value is not None else _const(None)
        return _located([ast.Return(value=_hook("ret", value))], node)

    def visit_With(self, node: ast.With) -> list[ast.stmt]:
        kernel = any(isinstance(i.context_expr, ast.Call) and isinstance(i.context_expr.func, ast.Attribute)
                     and i.context_expr.func.attr in ("Kernel", "ClusterKernel") for i in node.items)
        for item in node.items:
            item.context_expr = _hook("ctx_with", self.visit(item.context_expr))
            if item.optional_vars is not None:
                item.optional_vars = self.visit(item.optional_vars)
        node.body = self._block(node.body)
        guard = [ast.If(test=_hook("skip_kernel_ctx"), body=[ast.Return(value=None)], orelse=[])] if kernel else []
        return [*_located(guard, node), node]

    def visit_Assert(self, node: ast.Assert) -> list[ast.stmt]:
        msg = self.visit(node.msg) if node.msg is not None else _const(None)
        return _located([ast.Expr(value=_hook("assert_expr", self.visit(node.test), msg))], node)

    # expressions --------------------------------------------------------------------------------
    def visit_Name(self, node: ast.Name) -> ast.expr:
        if isinstance(node.ctx, ast.Load):
            return ast.copy_location(_hook("rval", _const(node.id), node), node)
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.expr:
        op = type(node.op).__name__
        values = [self.visit(v) for v in node.values]
        result = values[-1]
        for left in reversed(values[:-1]):
            result = _hook("boolop", _const(op), left, _lambda(result))
        return ast.copy_location(result, node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        operand = self.visit(node.operand)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(_hook("boolop", _const("Not"), operand), node)
        node.operand = operand
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        left = self.visit(node.left)
        comparators = [self.visit(c) for c in node.comparators]
        if len(comparators) == 1:
            node.left, node.comparators = left, comparators
            return node
        pairs = []
        for op, right in zip(node.ops, comparators):
            pairs.append(ast.Compare(left=left, ops=[op], comparators=[right]))
            left = right
        result: ast.expr = pairs[-1]
        for pair in reversed(pairs[:-1]):
            result = _hook("boolop", _const("And"), pair, _lambda(result))
        return ast.copy_location(result, node)

    def visit_IfExp(self, node: ast.IfExp) -> ast.expr:
        call = _hook("ifexp", self.visit(node.test), _lambda(self.visit(node.body)), _lambda(self.visit(node.orelse)))
        return ast.copy_location(call, node)


def _function(name: str, params: list[str], body: list[ast.stmt]) -> ast.FunctionDef:
    args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in params], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])
    extra = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}
    return ast.FunctionDef(name=name, args=args, body=body, decorator_list=[], returns=None, **extra)


@dataclass
class IRGenerator:
    """What `mutate` returns: ``gen(builder)`` is the rewritten function bound to `builder`; `source` its code;
    `extra_type_hints` the parameters declared in the body (``A: T.Tensor(...)`` -> ``T.ptr``, ``n: T.int32`` ->
    the dtype)."""

    gen: Callable[[BaseBuilder], Callable[..., Any]]
    source: str
    extra_type_hints: dict[str, Any] = field(default_factory=dict)


def mutate(func: Callable[..., Any]) -> IRGenerator:
    """Rewrite `func` (a function defined in a file) into builder calls; see the module docstring."""
    if not inspect.isfunction(func):
        raise TypeError(f"mutate expects a Python function, got {type(func).__name__}")
    tree = utils.get_ast(func)
    filename = inspect.getsourcefile(func) or inspect.getfile(func)
    nonlocals = utils.get_func_nonlocals(func)
    mutator = DSLMutator(nonlocals, func.__globals__, str(Path(filename).absolute()))
    tree = mutator.visit(tree)
    make_closure = utils.get_compiled_object(tree, "make_closure", filename, func.__globals__)
    return IRGenerator(gen=make_closure(**nonlocals), source=ast.unparse(tree),
                       extra_type_hints=mutator.extra_type_hints)
