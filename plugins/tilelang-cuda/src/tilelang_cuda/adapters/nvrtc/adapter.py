"""`NVRTCKernelAdapter`: a CUDA kernel compiled by NVRTC and launched through the CUDA driver (cuda-python).

A fresh adapter generates the launcher (`TLNVRTCSourceWrapper`), compiles the device source with NVRTC and
loads it (`NVRTCLibraryGenerator`), then looks up each kernel in the loaded library. `from_database` rebuilds
one from a cached cubin and launcher; its sources are read on first use. A call takes the inputs, allocates the
outputs (``result_idx``), resolves dynamic dims from the arguments and launches on torch's current stream.
Without cuda-python the module imports, and using it raises ImportError saying what to install.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from tilelang.backend.sdk import BaseKernelAdapter, CachedTextSource
from tilelang_cuda.adapters.nvrtc import MissingCudaPython, check_nvrtc_available, is_nvrtc_available

if is_nvrtc_available:
    import cuda.bindings.driver as cuda
else:  # the module imports; using it raises ImportError saying what to install
    cuda = MissingCudaPython()

from tilelang_cuda.adapters.nvrtc.libgen import NVRTCLibraryGenerator
from tilelang_cuda.adapters.nvrtc.wrapper import TLNVRTCSourceWrapper

__all__ = ["NVRTCKernelAdapter"]

logger = logging.getLogger(__name__)

# (kind: 0 shape / 1 stride / 2 scalar parameter, parameter index, dimension, stride scale)
SymbolSource = tuple[int, int, int, int]


def _as_module(func_or_mod: Any) -> Any:
    import tvm
    from tvm import tirx

    if isinstance(func_or_mod, tirx.PrimFunc):
        return tvm.IRModule({str(func_or_mod.attrs["global_symbol"]): func_or_mod})
    return func_or_mod


def _native_shape(param: Any) -> list[Any]:
    from tvm import tirx

    return [int(d) if isinstance(d, tirx.IntImm) else d for d in param.shape]


class NVRTCKernelAdapter(BaseKernelAdapter):
    """See the module docstring."""

    pymodule: Any = None
    kernels: dict[str, Any]

    def __init__(self, params: list[Any], result_idx: list[int], target: Any, func_or_mod: Any,
                 host_mod: Any = None, device_mod: Any = None, device_kernel_source: str | None = None,
                 verbose: bool = False, pass_configs: dict[str, Any] | None = None,
                 compile_flags: list[str] | None = None):
        from tilelang.backend.sdk import split_targets

        check_nvrtc_available()
        self.params = params
        self.result_idx = self._legalize_result_idx(result_idx)
        self.device_kernel_source = device_kernel_source
        self.ir_module = _as_module(func_or_mod)
        self._cache_params()
        self.target = split_targets(target).tvm_device
        self.verbose = verbose
        wrapper = TLNVRTCSourceWrapper(self.ir_module, device_kernel_source, self.target, device_mod, host_mod,
                                       pass_configs, arg_names=self._argument_names())
        self.host_func = wrapper.host_func
        self.host_kernel_source = self.host_func
        self.function_names = wrapper.function_names
        self.lib_generator = NVRTCLibraryGenerator(self.target, verbose)
        self.lib_generator.update_lib_code(device_kernel_source)
        self.lib_generator.update_host_func(self.host_func)
        self.lib_generator.assign_compile_flags(compile_flags)
        self.lib_generator.compile_lib()
        self._load(self.lib_generator.libpath)
        self._post_init()

    @classmethod
    def from_database(cls, params: list[Any], result_idx: list[int], target: Any, func_or_mod: Any,
                      host_kernel_source: CachedTextSource | str | None,
                      device_kernel_source: CachedTextSource | str | None, kernel_lib_path: str,
                      verbose: bool = False, pass_configs: dict[str, Any] | None = None,
                      compile_flags: list[str] | None = None) -> NVRTCKernelAdapter:
        """Rebuild an adapter from a cached cubin (`kernel_lib_path`, its launcher beside it) and sources."""
        from tilelang.backend.sdk import split_targets

        adapter = cls.__new__(cls)
        adapter.params = params
        adapter.result_idx = adapter._legalize_result_idx(result_idx)
        host = adapter._set_cached_text_source("host_func", "_host_kernel_source_path", host_kernel_source)
        adapter.host_kernel_source = host.text
        adapter._set_cached_text_source("device_kernel_source", "_device_kernel_source_path", device_kernel_source)
        adapter.ir_module = _as_module(func_or_mod)
        adapter._cache_params()
        adapter.target = split_targets(target).tvm_device
        adapter.verbose = verbose
        adapter.lib_generator = NVRTCLibraryGenerator(adapter.target, verbose)
        adapter.lib_generator.assign_compile_flags(compile_flags)
        adapter._load(kernel_lib_path)
        adapter.function_names = list(adapter.pymodule._function_names)
        adapter._post_init()
        return adapter

    def _cache_params(self) -> None:
        self.param_dtypes = [param.torch_dtype() for param in self.params]
        self.param_shapes = [_native_shape(param) for param in self.params]
        self.dynamic_symbolic_map = self._process_dynamic_symbolic()

    def _load(self, lib_path: str) -> None:
        self.lib_generator.load_lib(lib_path=lib_path)
        self.libpath = self.lib_generator.libpath
        self.pymodule = self.lib_generator.pymodule
        self.kernels = {}
        for name in self.pymodule._function_names:
            status, self.kernels[name] = cuda.cuLibraryGetKernel(self.lib_generator.culib, name.encode())
            if status != cuda.CUresult.CUDA_SUCCESS:
                raise RuntimeError(f"Failed to get kernel {name}: {status}")

    @property
    def prim_func(self) -> Any:
        from tvm import tirx

        return next(f for f in self.ir_module.functions.values() if isinstance(f, tirx.PrimFunc))

    # ------------------------------------------------------------------------------------------ dynamic symbols
    def _process_dynamic_symbolic(self) -> dict[Any, SymbolSource]:
        """Where each symbol can be read at call time: scalar parameters, then buffer shapes, then strides (the
        launcher's order). Strides of sub-byte types are scaled to elements."""
        from tvm import tirx

        first: dict[Any, SymbolSource] = {}
        self._dynamic_symbolic_candidates_map: dict[Any, list[SymbolSource]] = {}
        self._dynamic_symbolic_name_candidates_map: dict[str, list[SymbolSource]] = {}
        self._dynamic_symbolic_name_map: dict[str, SymbolSource] = {}

        def add(var: Any, source: SymbolSource) -> None:
            self._dynamic_symbolic_candidates_map.setdefault(var, []).append(source)
            self._dynamic_symbolic_name_candidates_map.setdefault(var.name, []).append(source)
            if var not in first and var.name not in self._dynamic_symbolic_name_map:
                first[var] = source
                self._dynamic_symbolic_name_map[var.name] = source

        params = list(self.prim_func.params)
        buffers = [(i, p.ty) for i, p in enumerate(params) if isinstance(p.ty, tirx.buffer.BufferType)]
        for i, p in enumerate(params):
            if not isinstance(p.ty, tirx.buffer.BufferType):
                add(p, (2, i, -1, 1))
        for i, ty in buffers:
            for j, dim in enumerate(ty.shape):
                if isinstance(dim, tirx.Var):
                    add(dim, (0, i, j, 1))
        for i, ty in buffers:
            bits = ty.dtype.bits * ty.dtype.lanes
            for j, stride in enumerate(ty.strides or ()):
                if isinstance(stride, tirx.Var):
                    add(stride, (1, i, j, 8 // bits if bits < 8 else 1))
        return first

    def _argument_names(self) -> list[str]:
        """What the launcher's ``call`` receives: the parameters, then the dynamic symbols that are not one."""
        names = [str(p.name) for p in self.prim_func.params]
        return names + [str(v.name) for v, src in self.dynamic_symbolic_map.items() if src[0] != 2]

    def _lookup_dynamic_symbolic_candidates(self, v: Any) -> list[SymbolSource]:
        if v in self._dynamic_symbolic_candidates_map:
            return self._dynamic_symbolic_candidates_map[v]
        if v.name in self._dynamic_symbolic_name_candidates_map:
            return self._dynamic_symbolic_name_candidates_map[v.name]
        raise KeyError(f"Dynamic symbolic variable '{v.name}' not found in symbolic map")

    def _resolve_dynamic_symbolic_value(self, v: Any, param_values: list[Any]) -> Any:
        """The value of symbol `v` from its first source available in this call."""
        import torch

        unavailable = []
        for kind, index, dim, scale in self._lookup_dynamic_symbolic_candidates(v):
            value = param_values[index]
            if kind == 2 and value is not None:
                return value
            if isinstance(value, torch.Tensor):
                return value.shape[dim] if kind == 0 else value.stride()[dim] * scale
            unavailable.append(f"parameter {index}: {type(value).__name__}")
        raise TypeError(f"Dynamic symbolic variable '{v.name}' has no available runtime source "
                        f"({', '.join(unavailable)})")

    # ------------------------------------------------------------------------------------------ sources
    def get_kernel_source(self, kernel_only: bool = True) -> str | None:
        """The CUDA source (``kernel_only``) or the launcher source."""
        if kernel_only:
            return self._load_cached_text_source("device_kernel_source", "_device_kernel_source_path")
        return self._load_cached_text_source("host_func", "_host_kernel_source_path")

    def get_host_source(self) -> str | None:
        """The launcher source (read from the cache on first use)."""
        return self._load_cached_text_source("host_func", "_host_kernel_source_path")

    # ------------------------------------------------------------------------------------------ calling
    def _forward_from_prebuild_lib(self, *args: Any, stream: int | None = None, device: int = 0) -> Any:
        return self.pymodule.call(self.kernels, *args, stream=stream, device=device)

    def _wrap_forward_from_prebuild_lib(self, *ins: Any, stream: int | None = None) -> Any:
        import torch

        if len(ins) + len(self.result_idx) != len(self.params):
            raise ValueError(f"Expected {len(self.params)} inputs, got {len(ins) + len(self.result_idx)} with "
                             f"{len(ins)} inputs and {len(self.result_idx)} outputs")
        inputs = iter(ins)
        values: list[Any] = [None if i in self.result_idx else next(inputs) for i in range(len(self.params))]
        first = next((v for v in values if isinstance(v, torch.Tensor)), None)
        device = first.device if first is not None else torch.device("cuda", torch.cuda.current_device())
        for i in self.result_idx:
            shape = [s if isinstance(s, int) else self._resolve_dynamic_symbolic_value(s, values)
                     for s in self.param_shapes[i]]
            values[i] = torch.empty(*shape, dtype=self.param_dtypes[i], device=device)
        args = list(values) + [self._resolve_dynamic_symbolic_value(v, values)
                               for v, src in self.dynamic_symbolic_map.items() if src[0] != 2]
        if stream is None:
            stream = torch.cuda.current_stream().cuda_stream if torch.cuda.is_available() else 0
        self._forward_from_prebuild_lib(*args, stream=stream, device=device.index or 0)
        outputs = [args[i] for i in self.result_idx]
        return outputs[0] if len(outputs) == 1 else outputs

    def _convert_torch_func(self) -> Callable[..., Any]:
        return self._wrap_forward_from_prebuild_lib
