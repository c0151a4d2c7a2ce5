"""`CuTeDSLKernelAdapter`: runs a kernel whose host side is a generated CuTe DSL Python module.

The module (``kernel.py``) exposes ``call(*args, stream=..., device_id=...)``; the adapter allocates outputs,
resolves dynamic shapes and strides from the call's tensors and passes torch's current stream. This project
does not generate CuTe DSL kernels, so a fresh adapter (``CuTeDSLKernelAdapter(...)``) raises
`CuTeDSLCodegenUnavailable`; `from_database` restores one from cached files (sources are read lazily, and a
missing generated module stays distinct from the host wrapper source).
"""

from __future__ import annotations

import logging
import os
import shutil
import weakref
from collections.abc import Callable
from typing import Any

from tilelang.backend.sdk import BaseKernelAdapter, CachedTextSource
from tilelang_cuda.adapters.cutedsl import checks
from tilelang_cuda.adapters.cutedsl.libgen import CuTeDSLLibraryGenerator

__all__ = ["CuTeDSLKernelAdapter", "CuTeDSLCodegenUnavailable", "cutedsl_target"]

logger = logging.getLogger(__name__)

SymbolSource = tuple[int, int, int]  # (0: shape / 1: stride, parameter index, dimension)


class CuTeDSLCodegenUnavailable(RuntimeError):
    """A CuTe DSL kernel was to be generated; this project offers no CuTeDSL code generator."""


CODEGEN_UNAVAILABLE = ("building a CuTeDSL kernel needs the reference TileLang's CuTeDSL code generator, which this "
                       "project does not offer; compile for target {'kind': 'cuda', 'arch': ...} instead (CUDA C "
                       "through nvcc or NVRTC, run by the CUDA execution backend)")


def cutedsl_target(target: Any) -> Any:
    """`target` as a CUDA ``tvm.target.Target`` carrying the ``cutedsl`` key (``{"kind": "cutedsl", ...}`` dicts
    become ``{"kind": "cuda", ..., "keys": [..., "cutedsl"]}``); other targets go through `split_targets`."""
    from tvm.target import Target

    if isinstance(target, dict) and target.get("kind") == "cutedsl":
        config = {**target, "kind": "cuda"}
        config["keys"] = list(dict.fromkeys([*config.get("keys", ("cuda", "gpu")), "cutedsl"]))
        return Target(config)
    if isinstance(target, Target):
        return target
    from tilelang.backend.sdk import split_targets

    return split_targets(target).tvm_device


def _prim_func_of(mod: Any) -> Any:
    from tvm import tirx

    funcs = [f for f in mod.functions.values() if isinstance(f, tirx.PrimFunc)]
    if not funcs:
        raise ValueError("the IRModule holds no PrimFunc")
    return funcs[0]


def _native_shape(param: Any) -> list[Any]:
    """A KernelParam's shape with constant dims as ints (dynamic dims stay tirx Vars)."""
    from tvm import tirx

    return [int(d) if isinstance(d, tirx.IntImm) else d for d in param.shape]


class CuTeDSLKernelAdapter(BaseKernelAdapter):
    """Runtime adapter for generated CuTe DSL Python modules (see the module docstring)."""

    pymodule: Any = None

    def __init__(self, params: list[Any], result_idx: list[int], target: Any, func_or_mod: Any,
                 host_mod: Any = None, device_mod: Any = None, host_kernel_source: str | None = None,
                 device_kernel_source: str | None = None, verbose: bool = False,
                 pass_configs: dict[str, Any] | None = None, compile_flags: list[str] | None = None):
        checks.check_cutedsl_available()
        raise CuTeDSLCodegenUnavailable(CODEGEN_UNAVAILABLE)

    @classmethod
    def from_database(cls, params: list[Any], result_idx: list[int], target: Any, func_or_mod: Any,
                      host_kernel_source: CachedTextSource | str | None,
                      device_kernel_source: CachedTextSource | str | None, kernel_lib_path: str,
                      verbose: bool = False, pass_configs: dict[str, Any] | None = None,
                      compile_flags: list[str] | None = None) -> CuTeDSLKernelAdapter:
        """Rebuild an adapter from a cache entry: the sources (text, or paths read on first use) and the
        generated module at `kernel_lib_path`."""
        adapter = cls.__new__(cls)
        adapter.params = params
        adapter.result_idx = adapter._legalize_result_idx(result_idx)
        host = adapter._set_cached_text_source("host_kernel_source", "_host_kernel_source_path", host_kernel_source)
        device = adapter._set_cached_text_source("device_kernel_source", "_device_kernel_source_path",
                                                 device_kernel_source)
        adapter.host_func = host.text
        adapter.kernel_global_source = device.text
        adapter.ir_module = adapter._as_module(func_or_mod)
        adapter.param_dtypes = [param.torch_dtype() for param in params]
        adapter.param_shapes = [_native_shape(param) for param in params]
        adapter.dynamic_symbolic_map, adapter.dynamic_symbolic_order = adapter._process_dynamic_symbolic()
        adapter.target = cutedsl_target(target)
        adapter.verbose = verbose
        adapter.lib_generator = CuTeDSLLibraryGenerator(adapter.target, verbose)
        adapter.lib_generator.assign_compile_flags(compile_flags)
        adapter.lib_generator.load_lib(lib_path=kernel_lib_path)
        adapter.libpath = kernel_lib_path
        try:
            with open(kernel_lib_path) as f:
                adapter.generated_module_source = f.read()
        except OSError:
            adapter.generated_module_source = None
        adapter.pymodule = adapter.lib_generator.pymodule
        adapter._post_init()
        return adapter

    @staticmethod
    def _as_module(func_or_mod: Any) -> Any:
        import tvm
        from tvm import tirx

        if isinstance(func_or_mod, tirx.PrimFunc):
            symbol = func_or_mod.attrs.get("global_symbol") if func_or_mod.attrs else None
            if symbol is None:
                raise ValueError("PrimFunc is missing required attr 'global_symbol'")
            return tvm.IRModule({str(symbol): func_or_mod})
        return func_or_mod

    @property
    def prim_func(self) -> Any:
        """The kernel's PrimFunc (the IRModule's)."""
        return _prim_func_of(self.ir_module)

    # ------------------------------------------------------------------------------------------ dynamic symbols
    def _process_dynamic_symbolic(self) -> tuple[dict[Any, SymbolSource], list[Any]]:
        """Where each dynamic shape / stride symbol can be read at call time, in the host wrapper's order:
        symbols of buffer shapes (parameter order) first, then those of strides.

        Returns ``(first source per symbol, symbols in order)``; every source of a symbol is kept too, by Var
        and by name (params and the PrimFunc may come from different compilations).
        """
        from tvm import tirx

        first: dict[Any, SymbolSource] = {}
        order: list[Any] = []
        self._dynamic_symbolic_candidates_map: dict[Any, list[SymbolSource]] = {}
        self._dynamic_symbolic_name_candidates_map: dict[str, list[SymbolSource]] = {}
        self._dynamic_symbolic_name_map: dict[str, SymbolSource] = {}

        def add(var: Any, source: SymbolSource) -> None:
            self._dynamic_symbolic_candidates_map.setdefault(var, []).append(source)
            self._dynamic_symbolic_name_candidates_map.setdefault(var.name, []).append(source)
            if var not in first:
                first[var] = source
                order.append(var)
                self._dynamic_symbolic_name_map[var.name] = source

        buffers = [(i, p.ty) for i, p in enumerate(self.prim_func.params)
                   if isinstance(getattr(p, "ty", None), tirx.buffer.BufferType)]
        for i, ty in buffers:
            for j, dim in enumerate(ty.shape):
                if isinstance(dim, tirx.Var):
                    add(dim, (0, i, j))
        for i, ty in buffers:
            for j, stride in enumerate(ty.strides or ()):
                if isinstance(stride, tirx.Var):
                    add(stride, (1, i, j))
        return first, order

    def _lookup_dynamic_symbolic(self, v: Any) -> SymbolSource:
        """The first source of symbol `v` (by Var, else by name)."""
        if v in self.dynamic_symbolic_map:
            return self.dynamic_symbolic_map[v]
        if v.name in self._dynamic_symbolic_name_map:
            return self._dynamic_symbolic_name_map[v.name]
        raise KeyError(f"Dynamic symbolic variable '{v.name}' not found in symbolic map")

    def _lookup_dynamic_symbolic_candidates(self, v: Any) -> list[SymbolSource]:
        """Every source of symbol `v` (by Var, else by name)."""
        if v in self._dynamic_symbolic_candidates_map:
            return self._dynamic_symbolic_candidates_map[v]
        if v.name in self._dynamic_symbolic_name_candidates_map:
            return self._dynamic_symbolic_name_candidates_map[v.name]
        raise KeyError(f"Dynamic symbolic variable '{v.name}' not found in symbolic map")

    def _resolve_dynamic_symbolic_value(self, v: Any, param_values: list[Any], *,
                                        require_live_shape: bool = True) -> int:
        """The value of symbol `v` from the first of its sources that is a tensor in this call.

        An optional input may be None: a symbol seen only in strides is then 0, and one seen in shapes is 0
        when ``require_live_shape=False`` (output allocation keeps the default and needs a live tensor).
        """
        import torch

        absent = []
        in_shape = in_stride = False
        for kind, index, dim in self._lookup_dynamic_symbolic_candidates(v):
            if kind not in (0, 1):
                raise ValueError(f"Unknown dynamic symbol ref id: {kind}")
            in_shape, in_stride = in_shape or kind == 0, in_stride or kind == 1
            value = param_values[index]
            if isinstance(value, torch.Tensor):
                return int(value.shape[dim] if kind == 0 else value.stride()[dim])
            absent.append((index, value))
        if in_stride and not in_shape:
            return 0
        if in_shape and not require_live_shape:
            return 0
        details = ", ".join(f"param {i}: {type(value).__name__}" for i, value in absent)
        raise TypeError(f"Dynamic symbolic var {v} has no live tensor source among candidates ({details})")

    # ------------------------------------------------------------------------------------------ sources
    def get_host_source(self) -> str | None:
        """The host wrapper source (read from the cache on first use)."""
        source = self._load_cached_text_source("host_kernel_source", "_host_kernel_source_path")
        return source if source is not None else getattr(self, "host_func", None)

    def get_generated_module_source(self) -> str | None:
        """The importable generated CuTe DSL module (None when its file is missing)."""
        return getattr(self, "generated_module_source", None)

    def get_kernel_source(self, kernel_only: bool = True) -> str | None:
        """The device source; with ``kernel_only=False`` followed by the host wrapper source."""
        source = self._load_cached_text_source("device_kernel_source", "_device_kernel_source_path")
        if source is not None:
            self.kernel_global_source = source
        device = source or getattr(self, "kernel_global_source", None)
        if kernel_only:
            return device
        parts = [s for s in (device, self.get_host_source()) if s]
        return "\n\n".join(parts) if parts else self.get_generated_module_source()

    # ------------------------------------------------------------------------------------------ calling
    def _forward_from_prebuild_lib(self, *args: Any, stream: int | None = None, device_id: int = 0) -> Any:
        """Call the generated module, then keep its cubin beside the cache entry (once)."""
        result = self.pymodule.call(*args, stream=stream, device_id=device_id)
        self._save_cubin_to_cache_if_needed()
        return result

    def _save_cubin_to_cache_if_needed(self) -> None:
        """Copy the cubin the module wrote next to itself into the cache entry (``_cache_path``), once."""
        if getattr(self, "_cubin_saved_to_cache", False):
            return
        self._cubin_saved_to_cache = True
        cache_path = getattr(self, "_cache_path", None)
        if cache_path is None:
            return
        stem = os.path.splitext(os.path.basename(self.libpath))[0]
        src = os.path.join(os.path.dirname(self.libpath), f"{stem}.cubin")
        dst = os.path.join(cache_path, "kernel.cubin")
        if not os.path.exists(src) or os.path.exists(dst):
            return
        try:
            shutil.copy2(src, dst)
        except OSError as exc:
            logger.warning("Failed to save the CuTeDSL cubin to the cache: %s", exc)

    def _wrap_forward_from_prebuild_lib(self, *ins: Any, stream: int | None = None) -> Any:
        """Call with the inputs: allocate the outputs, add the dynamic symbols, launch on the current stream."""
        import torch

        if len(ins) + len(self.result_idx) != len(self.params):
            raise ValueError(f"Expected {len(self.params)} inputs, got {len(ins) + len(self.result_idx)} with "
                             f"{len(ins)} inputs and {len(self.result_idx)} outputs")
        inputs = iter(ins)
        values: list[Any] = [None if i in self.result_idx else next(inputs) for i in range(len(self.params))]
        first = next((v for v in values if isinstance(v, torch.Tensor)), None)
        if first is None:
            raise ValueError("Expected at least one torch.Tensor argument to infer CUDA device")
        if not first.is_cuda:
            raise ValueError(f"CuTeDSL kernels require CUDA tensors, got tensor on device: {first.device}")
        for i in self.result_idx:
            shape = [self._resolve_dynamic_symbolic_value(s, values) if not isinstance(s, int) else s
                     for s in self.param_shapes[i]]
            values[i] = torch.empty(*shape, dtype=self.param_dtypes[i], device=first.device)
        args = list(values)
        args += [self._resolve_dynamic_symbolic_value(s, values, require_live_shape=False)
                 for s in self.dynamic_symbolic_order]
        if stream is None:
            stream = torch.cuda.current_stream().cuda_stream
        self._forward_from_prebuild_lib(*args, stream=stream, device_id=first.device.index or 0)
        outputs = [args[i] for i in self.result_idx]
        return outputs[0] if len(outputs) == 1 else outputs

    def _convert_torch_func(self) -> Callable[..., Any]:
        return self._wrap_forward_from_prebuild_lib

    def _post_init(self) -> None:
        super()._post_init()
        if self.pymodule is not None and hasattr(self.pymodule, "cleanup_module"):
            weakref.finalize(self, self._cleanup_module, self.pymodule)

    @staticmethod
    def _cleanup_module(pymodule: Any) -> None:
        """Release the generated module's CUDA module and contexts (errors at shutdown are ignored)."""
        try:
            if hasattr(pymodule, "cleanup_module"):
                pymodule.cleanup_module()
        except Exception:
            pass

    def cleanup(self) -> None:
        """Release this adapter's CUDA resources now (safe to call more than once)."""
        self._cleanup_module(self.pymodule)
