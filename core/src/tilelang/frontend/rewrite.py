"""Expression rewriting: kernel expressions run as Python, with the operators Python cannot overload redirected.

``a and b`` / ``a or b`` / ``not a`` / ``x if c else y`` / chained comparisons become helper calls that fold
for compile-time values and build tirx expressions for runtime ones; name reads go through ``__tl_v`` (a
``T.alloc_var`` scalar reads as its value); subscripts go through ``__tl_index`` (arity checks).
"""

from __future__ import annotations

import ast
from typing import Any

from tilelang.errors import KernelTypeError


def _load(name: str) -> ast.Name:
    return ast.Name(id=name, ctx=ast.Load())


def _thunk(node: ast.expr) -> ast.Lambda:
    args = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    return ast.Lambda(args=args, body=node)


class ExprRewriter(ast.NodeTransformer):
    """Rewrites one expression tree (a deep copy) for evaluation by :class:`Evaluator`."""

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.expr:
        self.generic_visit(node)
        fn = "__tl_and" if isinstance(node.op, ast.And) else "__tl_or"
        out = node.values[0]
        for v in node.values[1:]:
            out = ast.Call(_load(fn), [out, _thunk(v)], [])
        return ast.copy_location(out, node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(ast.Call(_load("__tl_not"), [node.operand], []), node)
        return node

    def visit_IfExp(self, node: ast.IfExp) -> ast.expr:
        self.generic_visit(node)
        call = ast.Call(_load("__tl_select"), [node.test, _thunk(node.body), _thunk(node.orelse)], [])
        return ast.copy_location(call, node)

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        self.generic_visit(node)
        if len(node.ops) == 1:
            return node
        left, parts = node.left, []
        for op, right in zip(node.ops, node.comparators):
            parts.append(ast.Compare(left=left, ops=[op], comparators=[right]))
            left = right
        out = parts[0]
        for p in parts[1:]:
            out = ast.Call(_load("__tl_and"), [out, _thunk(p)], [])
        return ast.copy_location(out, node)

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if isinstance(node.ctx, ast.Load) and not node.id.startswith("__tl_"):
            return ast.copy_location(ast.Call(_load("__tl_v"), [node], []), node)
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load):
            return node
        key = node.slice
        elts = key.elts if isinstance(key, ast.Tuple) else [key]
        items = [self._slice(e) for e in elts]
        tup = ast.Tuple(elts=items, ctx=ast.Load())
        return ast.copy_location(
            ast.Call(_load("__tl_index"), [node.value, tup, ast.Constant(isinstance(key, ast.Tuple))], []), node
        )

    @staticmethod
    def _slice(e: ast.expr) -> ast.expr:
        if isinstance(e, ast.Slice):
            none = ast.Constant(None)
            return ast.Call(_load("__tl_slice"), [e.lower or none, e.upper or none, e.step or none], [])
        return e


def _cond(x: Any) -> Any:
    """A Python bool for compile-time conditions, else the tirx boolean expression."""
    import tvm
    from tvm import tirx

    if hasattr(x, "asobject"):
        x = x.asobject()
    if isinstance(x, tirx.IntImm):
        return bool(x.value)
    if isinstance(x, tvm.ir.Expr) and tvm.ir.is_prim_expr(x):
        return x if str(x.ty.dtype) == "bool" else x != 0
    return bool(x)


def is_runtime(x: Any) -> bool:
    import tvm

    return isinstance(x, tvm.ir.Expr)


def tl_and(a: Any, rest: Any) -> Any:
    from tvm import tirx

    ca = _cond(a)
    if not is_runtime(ca):
        return rest() if ca else a
    cb = _cond(rest())
    if not is_runtime(cb):
        return ca if cb else tirx.const(False, "bool")
    return tirx.And(ca, cb)


def tl_or(a: Any, rest: Any) -> Any:
    from tvm import tirx

    ca = _cond(a)
    if not is_runtime(ca):
        return a if ca else rest()
    cb = _cond(rest())
    if not is_runtime(cb):
        return tirx.const(True, "bool") if cb else ca
    return tirx.Or(ca, cb)


def tl_not(a: Any) -> Any:
    from tvm import tirx

    c = _cond(a)
    return tirx.Not(c) if is_runtime(c) else not c


def tl_select(c: Any, then: Any, otherwise: Any) -> Any:
    cond = _cond(c)
    if not is_runtime(cond):
        return then() if cond else otherwise()
    from tilelang.language.exprs import if_then_else

    return if_then_else(cond, then(), otherwise())


def make_name_reader(var_buffers: dict[int, Any]):
    """``__tl_v``: a ``local.var`` buffer reads as its element, everything else as itself."""
    from tvm import tirx

    def tl_v(x: Any) -> Any:
        if var_buffers and id(x) in var_buffers:
            return tirx.BufferLoad(x, [0])
        return x

    return tl_v


def tl_index(base: Any, key: tuple, is_tuple: bool) -> Any:
    """``base[key]`` with buffer arity checks; a ``local.var`` element read is unwrapped to its buffer."""
    import tvm
    from tvm import tirx

    if isinstance(base, tvm.ir.TensorLoad) and _is_var_scalar(base.source):
        base = base.source
    if isinstance(base, tvm.ir.Var) and tirx.is_buffer_var(base):
        ndim = len(base.ty.shape)
        key = tuple(k.asobject() if hasattr(k, "asobject") else k for k in key)
        if len(key) != ndim and not (ndim == 1 and _is_var_scalar(base)):
            raise KernelTypeError(f"buffer {base.name} has {ndim} dimensions but is indexed with {len(key)} "
                                  f"{'index' if len(key) == 1 else 'indices'}")
        for k in key:
            if isinstance(k, slice) and k.step not in (None, 1):
                raise RuntimeError(f"buffer {base.name}: slices with a step are not supported")
        return base[key if len(key) != 1 else key[0]]
    return base[key if is_tuple else key[0]]


def _is_var_scalar(buf: Any) -> bool:
    return str(buf.ty.storage_scope) == "local.var"


def helpers(var_buffers: dict[int, Any]) -> dict[str, Any]:
    """The ``__tl_*`` names every kernel expression may call."""
    return {
        "__tl_and": tl_and,
        "__tl_or": tl_or,
        "__tl_not": tl_not,
        "__tl_select": tl_select,
        "__tl_v": make_name_reader(var_buffers),
        "__tl_index": tl_index,
        "__tl_slice": slice,
    }
