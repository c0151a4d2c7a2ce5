"""Names that TileLang programs use on ``tvm`` and that apache-tvm 0.27 renamed or moved.

The reference TileLang ships a TVM fork that still has them; a TileLang program (and the reference's own tests)
therefore writes ``tvm.arith.Analyzer()``, ``tvm.ir.structural_equal(a, b)``, ``tvm.tirx.PrimExpr`` or
``tvm.tirx.stmt_functor.post_order_visit``. After ``import tilelang`` these resolve on the installed TVM:

- ``tvm.ffi`` is the ``tvm_ffi`` package; ``tvm.arith`` is ``tvm.sym`` (the same analyzer, iter-map and
  interval-set API under its 0.27 name);
- ``tvm.ir.structural_equal`` / ``structural_hash`` are ``tvm_ffi``'s; ``tvm.tirx.PrimExpr`` is ``tvm.ir.Expr``,
  ``tvm.tirx.Call`` is ``tvm.ir.Call`` (also callable in the fork's order ``Call(dtype, op, args)``), scalar
  expressions have ``.dtype`` (buffer vars keep TVM's own) and ``PrimFunc.buffer_map`` maps each buffer
  parameter to itself (parameters are buffers in 0.27);
- ``tvm.testing`` loads on first use as an attribute of ``tvm`` and has the fork's ``requires_package``;
- ``tvm.tirx.stmt_functor`` provides ``post_order_visit``, ``pre_order_visit``, ``ir_transform`` and
  ``substitute`` on top of ``tvm_ffi.structural_walk`` / ``structural_mutate`` / ``structural_map``.

They also accept what the fork accepts: ``isinstance(x, tvm.tirx.BufferLoad)`` / ``BufferRegion`` (0.27's are
constructor functions; they become classes that call them), ``tirx.PrimFunc(params, body, buffer_map=...)``, and
``x & 0xFFFFFFFF`` on an unsigned ``x``. Otherwise only missing names are added (TVM's own behaviour is kept wherever
it does not fail), and nothing is imported until TVM is: the finder
installed by `install` patches ``tvm``, ``tvm.ir`` and ``tvm.tirx`` right after they load (or at once when
they already have).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Callable
from typing import Any

__all__ = ["install"]

_PATCHED: set[str] = set()


# ---------------------------------------------------------------------------------------------- stmt_functor
def _stmt_functor() -> types.ModuleType:
    module = types.ModuleType("tvm.tirx.stmt_functor", "The fork's tirx.stmt_functor on top of tvm_ffi.structural_*.")

    def post_order_visit(stmt: Any, fvisit: Callable[[Any], Any]) -> None:
        """Call `fvisit` on every node of `stmt`, children first."""
        import tvm_ffi

        tvm_ffi.structural_walk(stmt, lambda node: fvisit(node), order="post")

    def pre_order_visit(stmt: Any, fvisit: Callable[[Any], Any]) -> None:
        """Call `fvisit` on every node of `stmt`, parents first; a False result skips the node's children."""
        import tvm_ffi

        def visit(node: Any) -> Any:
            return tvm_ffi.WalkResult.SKIP if fvisit(node) is False else None

        tvm_ffi.structural_walk(stmt, visit, order="pre")

    def ir_transform(stmt: Any, preorder: Callable[[Any], Any] | None, postorder: Callable[[Any], Any] | None,
                     only_enable: list[str] | None = None) -> Any:
        """Rewrite `stmt`: `preorder(node)` may return a replacement (not visited further) or None; `postorder`
        then sees each node after its children were rewritten and may return its replacement."""
        import tvm_ffi

        def selected(node: Any) -> bool:
            if not only_enable:
                return True
            key = getattr(type(node), "__tvm_ffi_type_key__", None) or type(node).__name__
            names = {str(key), f"tirx.{type(node).__name__}", type(node).__name__}
            return any(n in names for n in only_enable)

        def mutate(node: Any, mutator: Any) -> Any:
            if preorder is not None and selected(node):
                replaced = preorder(node)
                if replaced is not None:
                    return replaced
            node = mutator.default_mutate(node)
            if postorder is not None and selected(node):
                replaced = postorder(node)
                if replaced is not None:
                    return replaced
            return node

        return tvm_ffi.structural_mutate(stmt, mutate)

    def substitute(node: Any, vmap: Any) -> Any:
        """`node` with every Var of `vmap` replaced by its value (a dict Var -> expr, or a callable)."""
        import tvm_ffi
        from tvm import tirx

        if callable(vmap):
            def lookup(var: Any) -> Any:
                found = vmap(var)
                return var if found is None else found
        else:
            table = dict(vmap)

            def lookup(var: Any) -> Any:
                return table.get(var, var)

        return tvm_ffi.structural_map(node, (tirx.Var, lookup))

    for fn in (post_order_visit, pre_order_visit, ir_transform, substitute):
        setattr(module, fn.__name__, fn)
    module.__all__ = ["post_order_visit", "pre_order_visit", "ir_transform", "substitute"]
    return module


# ---------------------------------------------------------------------------------------------- patches
def _patch_tvm(tvm: Any) -> None:
    if not hasattr(tvm, "ffi"):  # the fork re-exports tvm-ffi as tvm.ffi (get_global_func, register_global_func)
        import tvm_ffi

        tvm.ffi = tvm_ffi
    if not hasattr(tvm, "arith"):
        sym = importlib.import_module("tvm.sym")
        tvm.arith = sym
        sys.modules.setdefault("tvm.arith", sym)
    if "__getattr__" not in vars(tvm):  # the fork's `tvm.testing` is reachable without importing it

        def lazy_submodule(name: str) -> Any:
            if name == "testing":
                return importlib.import_module("tvm.testing")
            raise AttributeError(f"module 'tvm' has no attribute {name!r}")

        tvm.__getattr__ = lazy_submodule


def _patch_testing(testing: Any) -> None:
    if not hasattr(testing, "requires_package"):  # the fork's decorator (the reference's examples use it)
        from tilelang.testing import requires_package

        testing.requires_package = requires_package


def _patch_ir(ir: Any) -> None:
    import tvm_ffi

    for name in ("structural_equal", "structural_hash"):
        if not hasattr(ir, name):
            setattr(ir, name, getattr(tvm_ffi, name))
    from tilelang.transform.config import install_pass_context_configs

    install_pass_context_configs(ir.transform.PassContext)


def _expr_dtype(expr: Any) -> Any:
    """``expr.dtype``: the dtype of a scalar expression (the fork's ``PrimExpr.dtype``)."""
    ty = expr.ty
    if not hasattr(ty, "dtype"):
        raise AttributeError(f"{type(expr).__name__} of type {ty} has no dtype")
    return ty.dtype


def _add_expr_dtype(tirx: Any) -> None:
    """``.dtype`` on every scalar expression; buffer vars keep apache-tvm's own ``Var.dtype``."""
    from tvm.ir import Expr, Var

    if "dtype" not in Expr.__dict__:
        Expr.dtype = property(_expr_dtype)
    buffer_dtype = Var.__dict__.get("dtype")
    if isinstance(buffer_dtype, property) and not getattr(buffer_dtype.fget, "_tilelang_scalar", False):
        def var_dtype(var: Any) -> Any:
            return buffer_dtype.fget(var) if tirx.is_buffer_var(var) else _expr_dtype(var)

        var_dtype._tilelang_scalar = True  # type: ignore[attr-defined]
        Var.dtype = property(var_dtype)


def _simplify_pass() -> Any:
    """``tvm.tirx.transform.Simplify()``: the fork's name of 0.27's ``StmtSimplify``, as one pass named
    ``tirx.Simplify`` (the inner pass runs in a context without instruments, so it is not reported twice)."""
    import tvm

    @tvm.transform.module_pass(opt_level=0, name="tirx.Simplify")
    def simplify(mod: Any, ctx: Any) -> Any:
        from tvm import tirx

        with tvm.transform.PassContext(opt_level=ctx.opt_level, config=dict(ctx.config)):
            return tirx.transform.StmtSimplify()(mod)

    return simplify


def _annotate_device_regions_pass() -> Any:
    """``tvm.tirx.transform.AnnotateDeviceRegions()``: in the fork, the step before ``SplitHostDevice`` that marks
    each device launch region with its target. apache-tvm 0.27 folds that step into ``SplitHostDevice`` (which finds
    the ``thread_extent`` regions itself), so the pass keeps the fork's name for pass chains written against it and
    leaves the module as it is."""
    import tvm

    @tvm.transform.module_pass(opt_level=0, name="tirx.AnnotateDeviceRegions")
    def annotate_device_regions(mod: Any, ctx: Any) -> Any:
        return mod

    return annotate_device_regions


def _checkable_constructor(fn: Callable[..., Any], result: type) -> type:
    """A class standing for the constructor function `fn`: calling it calls `fn`, and ``isinstance(x, it)`` holds
    for the `result` type that `fn` builds (the fork's ``tirx.BufferLoad`` is a node class, 0.27's a function)."""

    class _Meta(type):
        def __instancecheck__(cls, obj: Any) -> bool:
            return isinstance(obj, result)

    def construct(cls: type, *args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return _Meta(fn.__name__, (), {"__new__": construct, "__doc__": fn.__doc__, "__module__": fn.__module__})


def _fork_call(*args: Any, **kwargs: Any) -> Any:
    """``tirx.Call(dtype, op, args[, span])`` (the fork's order) or 0.27's ``Call(op, args, ..., ret_ty=)``."""
    from tvm import ir

    if len(args) >= 3 and isinstance(args[0], str) and isinstance(args[1], (ir.Op, str)):
        dtype, op, call_args, *rest = args
        op = ir.Op.get(op) if isinstance(op, str) else op
        span = rest[0] if rest else kwargs.pop("span", None)
        return ir.Call(op, list(call_args), span=span, ret_ty=str(dtype))
    return ir.Call(*args, **kwargs)


def _add_node_classes(tirx: Any) -> None:
    """``tirx.BufferLoad`` / ``tirx.BufferRegion`` usable with ``isinstance`` (0.27 builds them as functions)."""
    from tvm.ir import expr

    for name, result in (("BufferLoad", "TensorLoad"), ("BufferRegion", "TensorRegion")):
        fn = getattr(tirx, name, None)
        if callable(fn) and not isinstance(fn, type) and isinstance(getattr(expr, result, None), type):
            setattr(tirx, name, _checkable_constructor(fn, getattr(expr, result)))


def _accept_buffer_map(prim_func: type) -> None:
    """``PrimFunc(params, body, buffer_map={handle: buffer})``: the fork's signature; 0.27's parameters are the
    buffers themselves, so each mapped handle parameter is replaced by its buffer."""
    init = prim_func.__init__
    if getattr(init, "_tilelang_buffer_map", False):
        return

    def __init__(self: Any, params: Any, body: Any, *args: Any, buffer_map: Any = None, **kwargs: Any) -> None:
        if buffer_map:
            from tvm_ffi import structural_equal

            mapped = list(buffer_map.items())
            params = [next((b for h, b in mapped if h.same_as(p) or structural_equal(h, p)), p) for p in params]
        init(self, params, body, *args, **kwargs)

    __init__._tilelang_buffer_map = True  # type: ignore[attr-defined]
    __init__.__doc__ = init.__doc__
    prim_func.__init__ = __init__


def _unsigned_bitwise_operands(tirx: Any) -> None:
    """``x & 0xFFFFFFFF`` on an unsigned ``x``: the fork types an int literal that fits `x`'s unsigned range as
    `x`'s dtype; 0.27 first makes it a signed constant and then fails ("cannot make uint from negative value").
    Only that failing case changes: such a literal becomes ``tirx.const(value, x.dtype)`` before TVM's operator."""
    from tvm.ir import PrimType
    from tvm.ir.expr import ExprOperand

    def literal(expr: Any, other: Any) -> Any:
        if type(other) is not int or other < 0:
            return other
        ty = getattr(expr, "ty", None)
        dt = ty.dtype if isinstance(ty, PrimType) else None
        if dt is None or dt.type_code != 1 or dt.lanes != 1 or other >= 1 << dt.bits:  # 1: unsigned int
            return other
        return tirx.const(other, str(dt))

    for name in ("__and__", "__rand__", "__or__", "__ror__", "__xor__", "__rxor__"):
        op = ExprOperand.__dict__.get(name)
        if op is None or getattr(op, "_tilelang_unsigned", False):
            continue

        def wrapped(self: Any, other: Any, _op: Callable[[Any, Any], Any] = op) -> Any:
            return _op(self, literal(self, other))

        wrapped._tilelang_unsigned = True  # type: ignore[attr-defined]
        wrapped.__name__ = name
        setattr(ExprOperand, name, wrapped)


def _patch_tirx(tirx: Any) -> None:
    if not hasattr(tirx, "PrimExpr"):
        from tvm.ir import Expr

        tirx.PrimExpr = Expr
    call_class = importlib.import_module("tvm.ir").Call
    if getattr(tirx, "Call", call_class) is call_class:  # also the fork's argument order (dtype, op, args)
        tirx.Call = _checkable_constructor(_fork_call, call_class)
    _add_expr_dtype(tirx)
    _add_node_classes(tirx)
    _accept_buffer_map(tirx.PrimFunc)
    _unsigned_bitwise_operands(tirx)
    if not hasattr(tirx.PrimFunc, "buffer_map"):  # params are the buffers in 0.27: each maps to itself
        tirx.PrimFunc.buffer_map = property(lambda f: {p: p for p in f.params if tirx.is_buffer_var(p)})
    if not hasattr(tirx, "stmt_functor"):
        module = _stmt_functor()
        tirx.stmt_functor = module
        sys.modules.setdefault("tvm.tirx.stmt_functor", module)


def _patch_tirx_transform(transform: Any) -> None:
    if not hasattr(transform, "Simplify"):
        transform.Simplify = _simplify_pass
    if not hasattr(transform, "AnnotateDeviceRegions"):
        transform.AnnotateDeviceRegions = _annotate_device_regions_pass


_PATCHES: dict[str, Callable[[Any], None]] = {"tvm": _patch_tvm, "tvm.ir": _patch_ir, "tvm.tirx": _patch_tirx,
                                              "tvm.tirx.transform": _patch_tirx_transform,
                                              "tvm.testing": _patch_testing}


def _apply(name: str) -> None:
    module = sys.modules.get(name)
    if module is None or name in _PATCHED:
        return
    _PATCHED.add(name)
    try:
        _PATCHES[name](module)
    except Exception:  # a TVM that differs more than expected: leave it as it is
        _PATCHED.discard(name)


class _PatchingLoader(importlib.abc.Loader):
    def __init__(self, inner: importlib.abc.Loader, name: str):
        self.inner = inner
        self.name = name

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        self.inner.exec_module(module)
        _apply(self.name)
        if self.name == "tvm":  # tvm imports its submodules itself, before it finishes
            for name in _PATCHES:
                _apply(name)
            _tvm_loaded()


class _TVMCompatFinder(importlib.abc.MetaPathFinder):
    """Patches ``tvm``, ``tvm.ir`` and ``tvm.tirx`` right after they load; resolves ``tvm.arith`` and
    ``tvm.tirx.stmt_functor``."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname in ("tvm.arith", "tvm.tirx.stmt_functor"):
            return importlib.util.spec_from_loader(fullname, _AliasLoader(fullname))
        if fullname not in _PATCHES or fullname in _PATCHED:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _PatchingLoader(spec.loader, fullname)
                return spec
        return None


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, name: str):
        self.name = name

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        import tvm  # noqa: F401 (patches the parents)

        _apply("tvm")
        _apply("tvm.tirx")
        return importlib.import_module("tvm.sym") if self.name == "tvm.arith" else sys.modules["tvm.tirx.stmt_functor"]

    def exec_module(self, module: types.ModuleType) -> None:
        """The aliased module is already executed."""


def _tvm_loaded() -> None:
    """Once TVM is imported: register TileLang's ``tl.*`` ops and the TVM global functions that plugins declare
    (``target.build.tilelang_*``), as the reference's library does when it loads (the programs and tests call
    ``tvm.ir.Op.get("tl.abs2")`` / ``tvm.get_global_func(...)`` directly). Cheap: no plugin is imported."""
    global _TVM_READY
    if _TVM_READY:
        return
    _TVM_READY = True
    try:
        from tilelang.backend.plugins import register_declared_global_funcs
        from tilelang.ir.ops import ensure_registered

        ensure_registered()
        register_declared_global_funcs()
    except Exception as exc:  # never break `import tvm`; the lazy paths register on first use anyway
        import warnings

        warnings.warn(f"tilelang: registering ops / plugin global functions with TVM failed: {exc}", stacklevel=2)


_TVM_READY = False


def install() -> None:
    """Install the finder (once) and patch whatever of TVM is already imported."""
    if not any(isinstance(f, _TVMCompatFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _TVMCompatFinder())
    for name in _PATCHES:
        _apply(name)
    if "tvm" in sys.modules and "tvm.tirx" in sys.modules:
        _tvm_loaded()
