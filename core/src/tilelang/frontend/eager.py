"""Eager kernels (the ``@tilelang.jit`` quickstart form), specialised per call signature.

An eager kernel is a plain function called with tensors::

    @tilelang.jit
    def matmul(A, B, block_M: int = 128, ...):
        M, N, K = T.const("M, N, K")          # sizes fixed per specialisation
        A: T.Tensor((M, K), T.float16)        # declares parameter A (binds M, K from A's shape)
        B: T.Tensor((K, N), T.float16)
        C = T.empty((M, N), T.float16)        # an output the JIT allocates
        with T.Kernel(...) as (bx, by):
            ...
        return C

Entry point for the JIT::

    program = EagerProgram(fn)                 # once per function (parses nothing yet)
    key = program.key(*args, **kwargs)         # cheap, TVM-free cache key of a call
    kernel = program.specialize(*args, **kwargs)   # -> EagerKernel (PrimFunc + calling convention)
    parse_eager(fn, *args, **kwargs)           # == EagerProgram(fn).specialize(*args, **kwargs)

`args` are what the user passes: tensors (anything with ``.shape`` and ``.dtype``: torch tensors, numpy
arrays, :class:`TensorArg`) and Python values (compile-time constants). Keywords naming a ``T.const`` size give
its value (``get_tir``-style calls without tensors). Tensor parameters not passed are declared from their
annotation alone. Parameters annotated with a dtype in the signature (``n: T.int32``) are runtime scalars.

Specialisation: ``T.const`` names are bound in a first, cheap pass that runs the top-level statements up to
the last size binding (kernel bodies are skipped); the real parse then sees them as Python ints.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass, field
from typing import Any

from tilelang.errors import KernelSyntaxError, KernelTypeError
from tilelang.frontend import state as _state
from tilelang.frontend.build import annotation_of, finish, run_kernel
from tilelang.frontend.interpreter import Interpreter, StopInterpretation
from tilelang.frontend.source import FunctionSource


class _Unbound:
    """A tensor parameter that was not passed (declared by its annotation only)."""

    def __repr__(self) -> str:
        return "<not passed>"


UNBOUND = _Unbound()


@dataclass(frozen=True)
class TensorArg:
    """A stand-in for a tensor argument: a shape and a dtype."""

    shape: tuple[int, ...]
    dtype: str


@dataclass
class EagerKernel:
    """One specialisation of an eager kernel.

    `func` takes ``inputs`` (names of the Python function's parameters, in ``func.params`` order) followed by
    the outputs; ``out_idx`` are the outputs' positions in ``func.params`` in ``return`` order; ``outputs`` their
    (shape, dtype) in the same order (shape entries are ints, or PrimExprs over ``T.dynamic`` vars).
    """

    func: Any
    inputs: list[str]
    out_idx: list[int]
    outputs: list[tuple[tuple[Any, ...], str]]
    consts: dict[str, int] = field(default_factory=dict)

    @property
    def returns_tuple(self) -> bool:
        return len(self.out_idx) != 1


def is_tensor_like(x: Any) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, (int, float, bool, str))


def _shape_of(x: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in x.shape)


def _dtype_of(x: Any) -> str:
    from tilelang.language.dtypes import canonical

    name = str(x.dtype)
    if name.removeprefix("torch.") == "float4_e2m1fn_x2":
        return "float4_e2m1fnx2"
    return canonical(name)


def _packs_two(x: Any, dtype: str) -> bool:
    """Whether tensor `x` is byte storage holding two elements of the 4-bit `dtype` per byte (an int8 / uint8 /
    ``float4_e2m1fn_x2`` tensor for a ``T.float4_e2m1fn`` parameter)."""
    return dtype in ("float4_e2m1fn", "int4", "uint4") and _dtype_of(x) in ("int8", "uint8", "float4_e2m1fnx2")


def _stored_as(x: Any, dtype: str) -> bool:
    """Whether tensor `x` is torch's storage of `dtype`, element for element, for a dtype torch has no type of
    its own for: a float32 tensor for a ``T.tfloat32`` parameter (as the reference takes it)."""
    import tvm_ffi

    from tilelang.language.dtypes import torch_dtype

    try:
        storage = torch_dtype(dtype)
    except (ValueError, TypeError):
        return False
    return storage is not None and x.dtype == storage and tvm_ffi.dtype(dtype).bits == storage.itemsize * 8


def _layout_of(x: Any, dtype: str) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
    """The shape and strides (in elements of `dtype`; strides None when `x` has none) that tensor `x` holds: a
    packed 4-bit tensor's last dimension and the other strides count two elements per byte."""
    shape = _shape_of(x)
    stride = getattr(x, "stride", None)
    strides = tuple(int(s) for s in stride()) if callable(stride) else None
    if shape and _packs_two(x, dtype):
        shape = (*shape[:-1], shape[-1] * 2)
        if strides is not None:
            strides = (*(s * 2 for s in strides[:-1]), strides[-1])
    return shape, strides


class _EagerInterpreter(Interpreter):
    def declare_tensor(self, name: str, spec: Any, node: ast.AST) -> None:
        eager = self.state.eager
        if self.state.depth != self.base_depth or self.state.launches:
            raise KernelSyntaxError(f"the annotation of parameter {name!r} must be at the top of the function")
        if name not in eager.args:
            raise KernelSyntaxError(f"{name!r} is not a parameter of {self.src.name}; only parameters can be "
                                    "declared with T.Tensor annotations")
        actual = eager.args[name]
        if eager.phase == "signature":
            self._bind_consts(name, spec, actual, node)
            self.set_name(name, spec.make_buffer(name))
            if eager.const_vars and not eager.unbound():
                raise StopInterpretation
            return
        buf = spec.make_buffer(name, self.state.span)
        if actual is not UNBOUND:
            self._check(name, spec, actual)
        eager.tensor_params[name] = buf
        self.set_name(name, buf)

    def _bind_consts(self, name: str, spec: Any, actual: Any, node: ast.AST) -> None:
        eager = self.state.eager
        by_var = {id(v): n for n, v in eager.const_vars.items()}
        if actual is UNBOUND:
            for dim in spec.shape:
                if id(dim) in by_var:
                    eager.missing.setdefault(by_var[id(dim)], (name, node))
            return
        if not is_tensor_like(actual):
            return
        shape, strides = _layout_of(actual, spec.dtype)
        if len(shape) != len(spec.shape):
            raise KernelTypeError(f"argument {name!r} is a {len(shape)}-D tensor of shape {tuple(shape)}, but the "
                                  f"kernel declares {name}: T.Tensor({_spelled(spec.shape)}, {spec.dtype}), a "
                                  f"{len(spec.shape)}-D tensor")
        pairs = list(zip(spec.shape, shape))
        if spec.strides is not None and strides is not None and len(strides) == len(spec.strides):
            pairs += list(zip(spec.strides, strides))
        for dim, value in pairs:
            cname = by_var.get(id(dim))
            if cname is not None and not isinstance(eager.consts.get(cname), int):
                eager.consts[cname] = value

    def _check(self, name: str, spec: Any, actual: Any) -> None:
        if not is_tensor_like(actual):
            raise KernelTypeError(f"parameter {name!r} is declared as a tensor but received {type(actual).__name__}")
        shape, dt = _layout_of(actual, spec.dtype)[0], _dtype_of(actual)
        ok = len(shape) == len(spec.shape) and (
            dt == spec.dtype or _packs_two(actual, spec.dtype) or _stored_as(actual, spec.dtype)) and all(
            not isinstance(e, int) or e == a for e, a in zip(spec.shape, shape))
        if not ok:
            raise KernelTypeError(
                f"argument {name!r} must have shape {_spelled(spec.shape)} and dtype {spec.dtype}, got shape "
                f"{tuple(shape)} and dtype {dt}"
            )

    def skip_with(self, ctx: Any) -> bool:
        from tilelang.language.kernel import Kernel

        return self.state.eager.phase == "signature" and isinstance(ctx, Kernel)


def _uses_const(fdef: ast.FunctionDef) -> bool:
    for node in ast.walk(fdef):
        if isinstance(node, ast.Call):
            f = node.func
            if (isinstance(f, ast.Attribute) and f.attr == "const") or (isinstance(f, ast.Name) and f.id == "const"):
                return True
    return False


class EagerProgram:
    """An eager kernel function, specialised per call signature (see the module docstring)."""

    def __init__(self, fn: Any):
        if not inspect.isfunction(fn):
            raise KernelSyntaxError(f"an eager kernel must be a function, got {type(fn).__name__}")
        self.fn = fn
        self.src = FunctionSource.of(fn)
        self.signature = inspect.signature(fn)
        self.param_names = list(self.signature.parameters)
        self.needs_signature_pass = _uses_const(self.src.fdef)
        self._attrs: dict[str, Any] = {}  # PrimFunc attributes the body set (T.annotate_pass_configs, ...)

    # ---------------------------------------------------------------------------------------- binding
    def bind(self, args: tuple, kwargs: dict) -> tuple[dict[str, Any], dict[str, int]]:
        """Map a call to (parameter name -> value, T.const name -> value)."""
        consts = {k: kwargs[k] for k in kwargs if k not in self.signature.parameters}
        params = {k: v for k, v in kwargs.items() if k in self.signature.parameters}
        for k, v in consts.items():
            if isinstance(v, bool) or not isinstance(v, int):
                raise KernelTypeError(f"{self.fn.__name__}() got an unexpected keyword argument {k!r} "
                                      f"(a T.const size must be an int, got {v!r})")
        try:
            bound = self.signature.bind_partial(*args, **params)
        except TypeError as e:
            raise KernelTypeError(f"{self.fn.__name__}(): {e}") from None
        bound.apply_defaults()
        values = {n: bound.arguments.get(n, UNBOUND) for n in self.param_names}
        return values, consts

    def key(self, *args: Any, **kwargs: Any) -> tuple:
        """A hashable key: equal keys give the same specialisation (computed without TVM)."""
        values, consts = self.bind(args, kwargs)
        parts: list[Any] = []
        for name in self.param_names:
            v = values[name]
            if is_tensor_like(v):
                parts.append((name, "tensor", _shape_of(v), str(v.dtype)))
            else:
                try:
                    hash(v)
                    parts.append((name, v))
                except TypeError:
                    parts.append((name, "id", id(v)))
        return tuple(parts) + tuple(sorted(consts.items()))

    # ---------------------------------------------------------------------------------------- parsing
    def _declare(self, interp: Interpreter, values: dict[str, Any], scalars: dict[str, Any]) -> None:
        from tvm import tirx

        from tilelang.language.dtypes import dtype as DType
        from tilelang.language.proxy import TensorSpec

        args = self.src.fdef.args
        ann_of = {a.arg: a.annotation for a in args.posonlyargs + args.args + args.kwonlyargs}
        for name in self.param_names:
            ann_node = ann_of.get(name)
            ann = None
            if ann_node is not None:
                ann = annotation_of(interp, name, ann_node)
            if isinstance(ann, DType):
                var = scalars.get(name)
                if var is None:
                    var = scalars[name] = tirx.Var(name, str(ann))
                interp.set_name(name, var)
            elif isinstance(ann, TensorSpec):  # `def f(A: T.Tensor(...))`: as `A: T.Tensor(...)` atop the body
                interp.declare_tensor(name, ann, ann_node)
            else:
                interp.set_name(name, values[name])

    def _run(self, phase: str, values: dict[str, Any], consts: dict[str, Any],
             scalars: dict[str, Any]) -> tuple[Any, Any, _state.EagerState]:
        eager = _state.EagerState(phase=phase, args=values, consts=dict(consts))
        st = _state.BuildState(eager)
        interp = _EagerInterpreter(self.src, self.fn, st)
        func, returned = run_kernel(self.fn, interp, lambda it: self._declare(it, values, scalars))
        self._attrs = st.func_attrs
        return func, returned, eager

    def _check_missing(self, sig: _state.EagerState) -> None:
        """A T.const left without a value because the tensor argument whose shape binds it was not passed: the
        error names that argument (at its annotation)."""
        for const in sig.unbound():
            if const in sig.missing:
                param, node = sig.missing[const]
                raise self.src.error(
                    KernelTypeError, f"{self.fn.__name__}() missing argument {param!r}: its shape gives T.const "
                    f"{const!r} its value (pass {param}, or give {const}=... as a keyword)", node)

    def specialize(self, *args: Any, **kwargs: Any) -> EagerKernel:
        """Parse the kernel for this call's shapes, dtypes and constants."""
        values, consts = self.bind(args, kwargs)
        scalars: dict[str, Any] = {}
        if self.needs_signature_pass:
            _, _, sig = self._run("signature", values, consts, scalars)
            consts = {n: v for n, v in sig.consts.items() if isinstance(v, int)}
            self._check_missing(sig)
        func, returned, eager = self._run("build", values, consts, scalars)
        src = self.src
        if func is None:
            raise src.error(KernelSyntaxError, "the kernel body stopped early", src.fdef)
        # outputs: the returned T.empty tensors, all of them
        ret_nodes = returned.value if returned is not None else None
        rets = [] if ret_nodes is None else list(ret_nodes) if isinstance(ret_nodes, (tuple, list)) else [ret_nodes]
        where = returned.node if returned is not None else src.fdef
        out_ids = {id(b): i for i, b in enumerate(eager.outputs)}
        for r in rets:
            if id(r) not in out_ids:
                raise src.error(KernelTypeError, "an eager kernel can only return tensors created with T.empty", where)
        if len({id(r) for r in rets}) != len(eager.outputs):
            raise src.error(KernelTypeError, "every tensor created with T.empty must be returned", where)
        # parameters: the Python parameters in signature order (tensors and runtime scalars), then outputs
        params, inputs = [], []
        for name in self.param_names:
            if name in eager.tensor_params:
                params.append(eager.tensor_params[name])
                inputs.append(name)
            elif name in scalars:
                params.append(scalars[name])
                inputs.append(name)
            elif is_tensor_like(values[name]):
                raise src.error(KernelTypeError, f"parameter {name!r} receives a tensor but the kernel never declares "
                                f"it; add `{name}: T.Tensor(shape, dtype)` at the top of the body", src.fdef)
        first_out = len(params)
        params.extend(eager.outputs)
        out_idx = [first_out + out_ids[id(r)] for r in rets]
        outputs = [(tuple(_static(d) for d in r.ty.shape), str(r.ty.dtype)) for r in rets]
        pf = finish(func, params, self.fn.__name__, src, self._attrs)
        return EagerKernel(pf, inputs, out_idx, outputs, {k: v for k, v in eager.consts.items() if isinstance(v, int)})


def _spelled(shape: Any) -> str:
    """A declared shape as the kernel spells it: ``(M, K)``, ``(128,)``."""
    dims = [str(d) for d in shape]
    return f"({dims[0]},)" if len(dims) == 1 else f"({', '.join(dims)})"


def _static(d: Any) -> Any:
    from tvm import tirx

    return int(d.value) if isinstance(d, tirx.IntImm) else d


def parse_eager(fn: Any, *args: Any, **kwargs: Any) -> EagerKernel:
    """Specialise eager kernel `fn` for one call (see :class:`EagerProgram`)."""
    return EagerProgram(fn).specialize(*args, **kwargs)
