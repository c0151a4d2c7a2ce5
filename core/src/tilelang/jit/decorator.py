"""``@tilelang.jit``: lazy kernel factories and eager kernels, each compiled once per call signature.

Lazy: the decorated function returns a PrimFunc (``@T.prim_func def main(...)`` inside, ``return main``);
calling it with compile-time parameters returns a `JITKernel`. Eager: the body is the kernel (``T.const``,
``A: T.Tensor(...)`` annotations, ``T.empty`` outputs, ``return C``); calling it with tensors compiles for
their shapes and dtypes and runs.

Lookups, cheapest first: this decorator's dict (call arguments -> kernel, same process); then the *source
key* (function fingerprint + arguments + options, `tilelang.jit.source_keys`) to the on-disk record naming the
program key, which loads the stored kernel without building the PrimFunc or importing TVM; then building the
PrimFunc and `compile_with` (memory, disk by program key, or a real compile). The fingerprint is taken again
for each new call signature: a global changed since the last one changes the key.

Eager kernels are specialised per call signature except for runtime values: once a specialisation exists, a
call that differs from it only in a ``T.dynamic`` dim or a runtime scalar (``n: T.int32``) reuses its kernel
without parsing again (`JITImpl._eager_lookup`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from tilelang.cache.keys import Unkeyable, canonical, digest
from tilelang.errors import USER_ERRORS, KernelArgumentError, for_the_user, surface_user_errors
from tilelang.frontend.lazy import LazyPrimFunc
from tilelang.jit import source_keys
from tilelang.jit.binding import CALL_FORM_MISS, CallFormCache, JITFunc
from tilelang.jit.compiler import CompileOptions, compile_with
from tilelang.jit.diagnostics import jit_phase
from tilelang.jit.kernel import JITKernel

__all__ = ["jit", "JITImpl"]

_TENSOR_TYPES: tuple[type, ...] = ()


def _is_tensor(value: Any) -> bool:
    cls = type(value)
    if cls in _TENSOR_TYPES:
        return True
    if hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, (int, float, bool, str)):
        _remember_tensor_type(cls)
        return True
    return False


def _remember_tensor_type(cls: type) -> None:
    global _TENSOR_TYPES
    if cls.__module__.startswith("torch"):
        _TENSOR_TYPES = (*_TENSOR_TYPES, cls)


_MAX_SIGNATURES = 4096  # exact call signatures memoised per eager function


def _masked_signature(args: tuple, kwargs: dict, mask: tuple) -> Any:
    """The call signature of an eager call with the runtime values named by `mask` blanked (None when a masked
    value does not fit: no match then). The rest (static dims, dtypes, Python constants) is kept as is: equal
    masked signatures specialise to the same kernel, since runtime values never reach the parse."""
    blank: dict[Any, Any] = {(where, v): axes for where, v, axes in mask}
    try:
        parts = []
        for key in [*(("pos", i) for i in range(len(args))), *(("kw", k) for k in sorted(kwargs))]:
            value = args[key[1]] if key[0] == "pos" else kwargs[key[1]]
            if key not in blank:
                parts.append((key, (value.shape, value.dtype) if _is_tensor(value) else value))
            elif blank[key] is None:
                parts.append((key, "runtime scalar", type(value)))
            else:
                axes = blank[key]
                shape = tuple(value.shape)
                if not _is_tensor(value) or len(shape) <= max(axes):
                    return None
                parts.append((key, tuple(None if a in axes else d for a, d in enumerate(shape)), value.dtype))
        result = tuple(parts)
        hash(result)
    except (TypeError, KeyError, IndexError, AttributeError):
        return None
    return result


class _EagerEntry:
    """One compiled specialisation of an eager kernel: the kernel and where its inputs come from in a call."""

    __slots__ = ("as_tuple", "kernel", "missing", "picks")

    def __init__(self, kernel: JITKernel, picks: list[tuple[str, Any]] | None, as_tuple: bool,
                 missing: str | None = None):
        self.kernel = kernel
        self.picks = picks  # None: the call's positional args are exactly the kernel inputs
        self.as_tuple = as_tuple
        self.missing = missing  # the error of a call that left out a tensor argument (compiled without it)

    def __call__(self, args: tuple, kwargs: dict) -> Any:
        if self.picks is None:
            out = self.kernel(*args)
        else:
            if self.missing is not None:
                raise KernelArgumentError(self.missing)
            out = self.kernel(*[args[v] if where == "pos" else kwargs[v] if where == "kw" else v
                                for where, v in self.picks])
        return tuple(out) if self.as_tuple and out is not None else out


class JITImpl:
    """What ``@tilelang.jit`` returns; see the module docstring. ``.compile(*args)`` returns the kernel of a
    call without running it (both modes); ``.get_tir(*args)`` the PrimFunc."""

    def __init__(self, fn: Callable[..., Any], options: CompileOptions):
        from tilelang.frontend.forms import is_eager_function

        self.fn = fn
        self.options = options
        self.mode = "eager" if is_eager_function(fn) else "lazy"
        self.func = JITFunc(fn, self.mode)
        self.signature = self.func.signature
        self.__tilelang_jit_function__ = fn
        self._kernels: dict[Any, Any] = {}  # eager: call signature -> specialisation
        self._kernel_cache: dict[Any, JITKernel] = {}  # lazy: `func.parse_args` key -> kernel
        self._call_form_cache = CallFormCache()  # lazy: raw call form -> kernel
        # eager: which call values are runtime values of a specialisation (dynamic dims, runtime scalars), and the
        # specialisations by their call signature with those values masked out (see `_eager_lookup`)
        self._runtime_masks: list[Any] = []
        self._by_mask: dict[Any, _EagerEntry] = {}
        self._program: Any = None
        functools.update_wrapper(self, fn)

    # ------------------------------------------------------------------------------------------ calling
    # the reference's JITImpl fields, read from the compile options
    out_idx = property(lambda self: self.options.out_idx)
    target = property(lambda self: self.options.target)
    target_host = property(lambda self: self.options.target_host)
    execution_backend = property(lambda self: self.options.execution_backend)
    pass_configs = property(lambda self: self.options.pass_configs)
    compile_flags = property(lambda self: self.options.compile_flags)
    verbose = property(lambda self: self.options.verbose)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            if self.mode == "lazy":
                return self._lazy_call(args, kwargs)
            entry = self._kernels.get(self._eager_signature(args, kwargs))
            if entry is None:
                entry = self._eager_lookup(args, kwargs)
            return entry(args, kwargs)
        except USER_ERRORS as exc:
            raise for_the_user(exc) from exc.__cause__  # the error is in your kernel: read its message

    def _lazy_call(self, args: tuple, kwargs: dict) -> JITKernel:
        """Lazy factories: by raw call form (TypeError for unhashable arguments, as in the reference), then by
        the canonical key of `func.parse_args` (defaults applied, any call form), then compile."""
        kernel, form = self._call_form_cache.lookup(args, kwargs)
        if kernel is not CALL_FORM_MISS:
            return kernel
        key, _ = self.func.parse_args(*args, **kwargs)
        kernel = self._kernel_cache.get(key)
        if kernel is None:
            kernel = self._lazy_kernel(args, kwargs)
            self._kernel_cache[key] = kernel
        if form is not None:
            self._call_form_cache.store(form, kernel)
        return kernel

    @surface_user_errors
    def compile(self, *args: Any, **kwargs: Any) -> JITKernel:
        """The kernel for these call arguments (compiled, or found in a cache)."""
        if self.mode == "eager":
            return self._eager_lookup(args, kwargs).kernel
        try:
            hash((args, tuple(kwargs.items())))
        except TypeError:  # unhashable call values: compiled through the canonical source key, no memo
            return self._lazy_kernel(args, kwargs)
        return self._lazy_call(args, kwargs)

    def get_kernel_source(self, *args: Any, **kwargs: Any) -> str:
        """The device source of the kernel for these call arguments (compiled first when needed)."""
        return self.compile(*args, **kwargs).get_kernel_source()

    @surface_user_errors
    def get_tir(self, *args: Any, **kwargs: Any) -> Any:
        """The PrimFunc this call compiles."""
        if self.mode == "eager":
            return self._eager_program().specialize(*args, **kwargs).func
        return self.fn(*args, **kwargs)

    def clear_kernels(self) -> None:
        """Forget this function's compiled kernels (the process-wide cache keeps its own)."""
        self._kernels.clear()
        self._kernel_cache.clear()
        self._call_form_cache.clear()
        self._runtime_masks.clear()
        self._by_mask.clear()

    # ------------------------------------------------------------------------------------------ lazy
    def _lazy_kernel(self, args: tuple, kwargs: dict) -> JITKernel:
        options = self.options
        target = options.resolved_target()
        try:
            call = canonical([list(args), kwargs])
        except Unkeyable:
            call = None
        key = source_keys.source_key("lazy", self.fn, call, options, target) if call is not None else None
        kernel, _ = source_keys.load(key, options, target)
        if kernel is not None:
            return kernel
        with jit_phase("parse", kernel=self.fn.__qualname__):
            prim = self.fn(*args, **kwargs)
        if isinstance(prim, JITKernel):
            return prim
        kernel = compile_with(prim, options, target)
        source_keys.remember(key, kernel)
        return kernel

    # ------------------------------------------------------------------------------------------ eager
    def _eager_program(self) -> Any:
        if self._program is None:
            from tilelang.frontend import EagerProgram

            self._program = EagerProgram(self.fn)
        return self._program

    @staticmethod
    def _eager_signature(args: tuple, kwargs: dict) -> Any:
        """A cheap in-process key of a call: (shape, dtype) of tensors, other values as they are."""
        sig = tuple([(a.shape, a.dtype) if _is_tensor(a) else a for a in args])
        if kwargs:
            sig += tuple([(k, (v.shape, v.dtype) if _is_tensor(v) else v) for k, v in sorted(kwargs.items())])
        try:
            hash(sig)
        except TypeError:  # e.g. a list argument: key by its canonical spelling (by identity if it has none)
            try:
                sig = ("canonical", digest(JITImpl._canonical_call(args, kwargs)))
            except Unkeyable:
                sig = tuple([id(a) for a in args]) + tuple([(k, id(v)) for k, v in sorted(kwargs.items())])
        return sig

    @staticmethod
    def _canonical_call(args: tuple, kwargs: dict) -> Any:
        def one(value: Any) -> Any:
            if _is_tensor(value):
                return ["tensor", [int(d) for d in value.shape], str(value.dtype)]
            return canonical(value)

        return [[one(a) for a in args], sorted([k, one(v)] for k, v in kwargs.items())]

    def _picks(self, inputs: list[str], args: tuple, kwargs: dict) -> list[tuple[str, Any]] | None:
        program = self._eager_program()
        values, _ = program.bind(args, kwargs)
        positions = {name: i for i, name in enumerate(program.param_names)}
        picks: list[tuple[str, Any]] = []
        for name in inputs:
            pos = positions[name]
            if pos < len(args):
                picks.append(("pos", pos))
            elif name in kwargs:
                picks.append(("kw", name))
            else:
                picks.append(("const", values[name]))
        if [v for w, v in picks if w == "pos"] == list(range(len(args))) and len(picks) == len(args):
            return None
        return picks

    def _eager_lookup(self, args: tuple, kwargs: dict) -> _EagerEntry:
        """The specialisation for a call: by its exact signature, else by the signature with the runtime values
        of a known specialisation masked out (a ``T.dynamic`` dim of another size, another runtime scalar: the
        same kernel, no new parse), else a new one (`_eager_entry`)."""
        sig = self._eager_signature(args, kwargs)
        entry = self._kernels.get(sig)
        if entry is None:
            for mask in self._runtime_masks:
                entry = self._by_mask.get((mask, _masked_signature(args, kwargs, mask)))
                if entry is not None:
                    break
            else:
                entry = self._eager_entry(args, kwargs)
            if len(self._kernels) < _MAX_SIGNATURES:  # exact signatures are a memo: bounded for dynamic shapes
                self._kernels[sig] = entry
        return entry

    def _remember_runtime_values(self, entry: _EagerEntry, args: tuple, kwargs: dict) -> None:
        """Index `entry` by the call signature without its runtime values (dynamic dims, runtime scalars)."""
        kernel = entry.kernel
        n_inputs = len(kernel.params) - len(kernel.out_idx)
        picks = entry.picks if entry.picks is not None else [("pos", i) for i in range(n_inputs)]
        mask = []
        for param, (where, v) in zip(kernel.params[:n_inputs], picks):
            if where == "const":
                continue
            if not param.is_tensor:
                mask.append((where, v, None))  # the whole value is a runtime scalar
                continue
            axes = tuple(axis for axis, d in enumerate(param.shape) if isinstance(d, str))
            if axes:
                mask.append((where, v, axes))
        if not mask:
            return
        mask_key = tuple(mask)
        masked = _masked_signature(args, kwargs, mask_key)
        if masked is None:
            return
        if mask_key not in self._runtime_masks:
            self._runtime_masks.append(mask_key)
        self._by_mask[(mask_key, masked)] = entry

    def _eager_entry(self, args: tuple, kwargs: dict) -> _EagerEntry:
        options = self.options
        target = options.resolved_target()
        try:
            call = self._canonical_call(args, kwargs)
        except Unkeyable:
            call = None
        key = source_keys.source_key("eager", self.fn, call, options, target) if call is not None else None
        kernel, record = source_keys.load(key, options, target)
        if kernel is not None:
            inputs, as_tuple = record["inputs"], record["as_tuple"]
        else:
            with jit_phase("parse", kernel=self.fn.__qualname__):
                spec = self._eager_program().specialize(*args, **kwargs)
            kernel = compile_with(spec.func, options.with_out_idx(spec.out_idx), target)
            inputs, as_tuple = list(spec.inputs), len(spec.out_idx) > 1
            source_keys.remember(key, kernel, inputs=inputs, as_tuple=as_tuple)
        from tilelang.frontend.eager import UNBOUND

        picks = self._picks(inputs, args, kwargs)
        absent = [name for name, (where, v) in zip(inputs, picks or ()) if where == "const" and v is UNBOUND]
        missing = (f"{self.fn.__name__}() missing {len(absent)} tensor argument(s): "
                   f"{', '.join(repr(n) for n in absent)}") if absent else None
        entry = _EagerEntry(kernel, picks, as_tuple, missing)
        self._remember_runtime_values(entry, args, kwargs)
        return entry

    def __repr__(self) -> str:
        return f"<tilelang.jit {self.mode} {self.fn.__module__}.{self.fn.__qualname__}>"


def jit(func: Callable[..., Any] | None = None, *, out_idx: Any = None, target: Any = "auto",
        target_host: Any = None, execution_backend: str = "auto", pass_configs: dict[str, Any] | None = None,
        compile_flags: Any = None, verbose: bool = False, debug_root_path: str | None = None) -> Any:
    """Decorate a kernel function (lazy factory or eager kernel); see the module docstring.

    ``@tilelang.jit`` and ``@tilelang.jit(out_idx=[-1], target="cpu", ...)`` both work. Applied to a
    PrimFunc it compiles it right away and returns the `JITKernel`.
    """
    del debug_root_path  # accepted for reference compatibility
    options = CompileOptions(out_idx, target, target_host, execution_backend, pass_configs, compile_flags,
                             verbose)

    def wrap(fn: Any) -> Any:
        if type(fn) is LazyPrimFunc or (hasattr(fn, "script") and hasattr(fn, "params")):  # a PrimFunc
            return compile_with(fn, options)
        return JITImpl(fn, options)

    return wrap(func) if func is not None else wrap
