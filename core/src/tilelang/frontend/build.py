"""Building a PrimFunc from a kernel function: the shared driver and the ``T.prim_func`` parse
(``T.prim_func`` itself is `tilelang.frontend.lazy.prim_func`)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from tilelang.errors import (
    KernelSyntaxError,
    KernelTypeError,
    SourceError,
)
from tilelang.frontend import state as _state
from tilelang.frontend.forms import declares_in_body, is_eager_function
from tilelang.frontend.interpreter import Interpreter, ReturnSignal, StopInterpretation
from tilelang.frontend.lazy import prim_func
from tilelang.frontend.source import FunctionSource

__all__ = ["build_prim_func", "build_eager_prim_func", "build_decorated", "is_eager_function", "prim_func",
           "run_kernel", "finish", "annotation_of"]


def run_kernel(fn: Any, interp: Interpreter, declare: Callable[[Interpreter], None],
               name: str | None = None) -> tuple[Any, Any]:
    """Interpret `fn`'s body inside a fresh IRBuilder PrimFunc frame.

    `declare` binds the parameters first. Returns (the builder's PrimFunc or None when stopped early, the
    value of a top-level ``return``).
    """
    from tvm.script.ir_builder import IRBuilder
    from tvm.script.ir_builder import tirx as B

    from tilelang.ir import ensure_registered

    ensure_registered()

    state, src = interp.state, interp.src
    prev = _state.push(state)
    state.interpreters.append(interp)
    returned = None
    try:
        try:
            with IRBuilder() as ib:
                with B.prim_func():
                    B.func_name(name or src.name)
                    declare(interp)
                    try:
                        interp.run_block(src.fdef.body)
                    except ReturnSignal as r:
                        returned = r
            return ib.get(), returned
        except StopInterpretation:
            return None, returned
        except SourceError:
            raise
        except Exception as e:
            raise src.error(KernelSyntaxError, f"the kernel body could not be built: {e}", src.fdef) from None
    finally:
        state.interpreters.pop()
        _state.pop(prev)


def finish(func: Any, params: list[Any], fn_name: str, src: FunctionSource,
           attrs: dict[str, Any] | None = None) -> Any:
    """The final PrimFunc: `params`, the built body, the ``global_symbol`` / ``tl.source`` attributes and the
    ones the body set (`attrs`: ``T.func_attr``, ``T.annotate_pass_configs``, ...)."""
    from tvm import tirx

    out = tirx.PrimFunc(params, func.body, attrs=func.attrs)
    return out.with_attr({**(attrs or {}), "global_symbol": fn_name,
                          "tl.source": f"{src.filename}:{src.def_line()}"})


def annotation_of(interp: Interpreter, name: str, node: ast.expr) -> Any:
    """The value of a parameter annotation: Python already evaluated it at ``def`` time unless it is a string."""
    value = interp.fn.__annotations__.get(name, None)
    if value is not None and not isinstance(value, str):
        return value
    try:
        return interp.eval(node)
    except Exception as e:
        raise interp.located(e, node) from None


def _declare_signature(interp: Interpreter, params: list[Any]) -> None:
    """Bind a ``T.prim_func``'s annotated parameters (tensors become buffers, dtypes scalar Vars)."""
    import tvm
    from tvm import tirx

    from tilelang.language.dtypes import canonical
    from tilelang.language.proxy import TensorSpec

    fdef = interp.src.fdef
    args = fdef.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
        raise interp.src.error(KernelSyntaxError, "kernel parameters must be plain positional parameters", fdef)
    for a in args.args:
        if a.annotation is None:
            raise interp.src.error(
                KernelSyntaxError,
                f"parameter {a.arg!r} needs an annotation such as T.Tensor((M, N), T.float32) or T.int32", a)
        ann = annotation_of(interp, a.arg, a.annotation)
        if isinstance(ann, TensorSpec):
            value = ann.make_buffer(a.arg, interp.src.span(a) if interp.spans else None)
        elif isinstance(ann, str):  # a dtype (T.int32, tvm.DataType) or a dtype string
            try:
                value = tirx.Var(a.arg, canonical(ann))
            except SourceError as e:
                raise interp.located(e, a) from None
        elif isinstance(ann, tvm.ir.Var) and not tirx.is_buffer_var(ann):  # T.handle("float32", "global") ...
            value = tirx.Var(a.arg, ann.ty)
        elif callable(ann):  # T.handle, T.ptr
            try:
                made = ann()
            except TypeError:
                made = None
            if not isinstance(made, tvm.ir.Var):
                raise interp.src.error(KernelTypeError, f"parameter {a.arg!r}: unsupported annotation {ann!r}", a)
            value = tirx.Var(a.arg, made.ty)
        else:
            raise interp.src.error(KernelTypeError, f"parameter {a.arg!r}: unsupported annotation {ann!r}; use "
                                   "T.Tensor(shape, dtype), T.Buffer(shape, dtype), a dtype or T.handle", a)
        params.append(value)
        interp.set_name(a.arg, value)


def build_prim_func(fn: Any, outer_locals: dict[str, Any] | None = None) -> Any:
    """Parse a ``T.prim_func`` kernel into a tirx PrimFunc.

    `outer_locals` (the locals of the function that defines the kernel) resolve names the kernel's closure
    lacks, such as names used only in string annotations (``from __future__ import annotations``).
    """
    src = FunctionSource.of(fn)
    state = _state.BuildState()
    interp = Interpreter(src, fn, state, outer_locals)
    params: list[Any] = state.params
    func, returned = run_kernel(fn, interp, lambda it: _declare_signature(it, params))
    if returned is not None and returned.value is not None:
        raise src.error(KernelSyntaxError, "a T.prim_func kernel cannot return a value "
                        "(eager @tilelang.jit kernels return T.empty tensors)", returned.node)
    params = [state.matched.get(p, p) for p in params]  # `T.match_buffer(handle, ...)`: the buffer is the param
    return finish(func, params, fn.__name__, src, state.func_attrs)


def build_eager_prim_func(fn: Any) -> Any:
    """A ``T.prim_func`` written in the eager form (``A: T.Tensor(...)`` in the body, ``T.empty`` outputs
    returned): the PrimFunc with the outputs' positions as its ``tilelang_out_idx`` attribute."""
    from tilelang.frontend.eager import parse_eager

    kernel = parse_eager(fn)
    func = kernel.func
    return func.with_attr("tilelang_out_idx", list(kernel.out_idx)) if kernel.out_idx else func


def build_decorated(fn: Any, outer: Any) -> Any:
    """Parse a kernel ``@T.prim_func`` decorates now: the eager form (``A: T.Tensor(...)`` in the body), else the
    annotated form with the defining frame `outer`'s locals (a kernel defined inside a function)."""
    if declares_in_body(fn):
        return build_eager_prim_func(fn)
    scope = outer.f_locals if outer.f_code.co_name != "<module>" else None
    return build_prim_func(fn, dict(scope) if scope else None)
