"""`TVMFFIKernelAdapter`: runs a kernel's TVM runtime module with torch tensors (the reference's ``tvm_ffi``
execution adapter).

The executable is created on the first call (once, under a lock) from the runtime module, or is the module
loaded from a cached library (`from_database`). `_convert_torch_func` builds the torch-facing callable: it
checks the input count, allocates the outputs (``result_idx``) on the inputs' device, resolving dynamic dims from
the inputs' shapes, strides or scalar arguments, and calls the executable. The kernels this project compiles for
the CPU run through `tilelang.backend.ExecutionBackend` objects; this adapter presents a runtime module under the
reference's interface.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from tilelang.jit.adapter.base import BaseKernelAdapter
from tilelang.jit.adapter.base import CachedTextSource as CachedTextSource  # re-exported (the reference has it here)

__all__ = ["TVMFFIKernelAdapter"]


def _entry_name(module: Any) -> str | None:
    if module is None:
        return None
    for gv, func in module.functions.items():
        attrs = getattr(func, "attrs", None)
        if attrs is not None and "global_symbol" in attrs:
            return str(attrs["global_symbol"])
        return str(gv.name_hint)
    return None


class _Entry:
    """An executable calling one named function of a runtime module (``main`` when unnamed)."""

    def __init__(self, rt_mod: Any, name: str | None):
        from tvm.runtime import Executable

        self.executable = Executable(rt_mod)
        self.name = name

    def __call__(self, *args: Any) -> Any:
        module = self.executable.jit()
        func = module.get_function(self.name, query_imports=True) if self.name else module.main
        return func(*args)

    def export_library(self, path: str, **kwargs: Any) -> None:
        self.executable.export_library(path, **kwargs)


class TVMFFIKernelAdapter(BaseKernelAdapter):
    """See the module docstring. `params` are `tilelang.engine.param.KernelParam`-like objects (``shape``,
    ``dtype``, ``torch_dtype()``)."""

    target: Any = None
    ir_module: Any = None
    host_kernel_source: str | None = None
    device_kernel_source: str | None = None
    _host_kernel_source_path: str | None = None
    _device_kernel_source_path: str | None = None
    executable: Any = None
    pass_configs: dict[str, Any] | None = None
    host_mod: Any = None
    device_mod: Any = None
    rt_mod: Any = None
    dynamic_symbolic_map: dict[Any, tuple[int, int, int, int]] | None = None

    def __init__(self, params: list[Any], result_idx: Any, target: Any, func_or_mod: Any, host_mod: Any = None,
                 device_mod: Any = None, rt_mod: Any = None, host_kernel_source: str | None = None,
                 device_kernel_source: str | None = None, verbose: bool = False,
                 pass_configs: dict[str, Any] | None = None, compile_flags: list[str] | None = None):
        self.params = params
        self.result_idx = self._legalize_result_idx(result_idx)
        self.host_kernel_source = host_kernel_source
        self.device_kernel_source = device_kernel_source
        self.ir_module = _as_module(func_or_mod)
        self.target = _as_target(target)
        self.host_mod, self.device_mod, self.rt_mod = host_mod, device_mod, rt_mod
        self.verbose, self.pass_configs, self.compile_flags = verbose, pass_configs, compile_flags
        self._ffi_callee_allocated_output_abi = self._uses_ffi_callee_allocated_output_abi()
        self.dynamic_symbolic_map = None if self._ffi_callee_allocated_output_abi else self._process_dynamic_symbolic()
        self.kernel_global_source = device_kernel_source
        self.executable = None
        self._executable_lock = threading.Lock()
        self._post_init()

    # ------------------------------------------------------------------------------------------ executable
    def _make_executable(self) -> Any:
        if self.rt_mod is None:
            raise RuntimeError("Cannot create TVM FFI executable without a runtime module.")
        return _Entry(self.rt_mod, _entry_name(self.ir_module))

    def _get_executable(self) -> Any:
        executable = self.executable
        if executable is not None:
            return executable
        with self._executable_lock:
            if self.executable is None:
                self.executable = self._make_executable()
            return self.executable

    def get_exportable_executable(self) -> Any:
        return self._get_executable()

    def _uses_ffi_callee_allocated_output_abi(self) -> bool:
        """Whether the kernel allocates its own outputs (CUDA kernels with a C host, in the reference). This
        project's CUDA launcher allocates outputs on the caller's side, so this holds for none of its kernels."""
        return False

    # ------------------------------------------------------------------------------------------ dynamic dims
    def _process_dynamic_symbolic(self) -> dict[Any, tuple[int, int, int, int]]:
        """Where each symbolic dim of the kernel comes from at call time: ``(0, param, axis, 1)`` a shape,
        ``(1, param, axis, scale)`` a stride, ``(2, param, 0, 1)`` a scalar argument."""
        func = self.prim_func
        if func is None:
            return {}
        from tvm import tirx

        found: dict[Any, tuple[int, int, int, int]] = {}
        for i, param in enumerate(func.params):
            if tirx.is_buffer_var(param):
                for axis, dim in enumerate(param.ty.shape):
                    if isinstance(dim, tirx.Var) and dim not in found:
                        found[dim] = (0, i, axis, 1)
            elif isinstance(param, tirx.Var) and param not in found:
                found[param] = (2, i, 0, 1)
        return found

    # ------------------------------------------------------------------------------------------ calling
    def _convert_torch_func(self) -> Callable[..., Any]:
        if self._ffi_callee_allocated_output_abi:
            return self._convert_ffi_callee_allocated_output_func()
        n_params = len(self.params)
        outputs = list(self.result_idx)
        out_set = set(outputs)
        dynamic = dict(self.dynamic_symbolic_map or {})
        device_of = self.get_current_device_functor

        def func(*inputs: Any) -> Any:
            if len(inputs) != n_params - len(outputs):
                raise ValueError(f"Kernel expected {n_params - len(outputs)} inputs, but {len(inputs)} are provided.")
            args: list[Any] = []
            it = iter(inputs)
            device = next((getattr(x, "device", None) for x in inputs if hasattr(x, "device")), None)
            for i in range(n_params):
                if i not in out_set:
                    args.append(next(it))
                    continue
                import torch

                param = self.params[i]
                shape = [self._resolve_dim(d, dynamic, args, inputs) for d in param.shape]
                if not shape:
                    raise ValueError(f"Cannot create output tensor (parameter {i}): 0-dimensional outputs are "
                                     "not supported")
                args.append(torch.empty(*shape, dtype=param.torch_dtype(), device=device or device_of()()))
            self._get_executable()(*args)
            if len(outputs) == 1:
                return args[outputs[0]]
            return [args[i] for i in outputs]

        return func

    @staticmethod
    def _resolve_dim(dim: Any, dynamic: dict[Any, tuple[int, int, int, int]], args: list[Any], inputs: tuple) -> int:
        if isinstance(dim, int):
            return dim
        for var, (kind, index, axis, scale) in dynamic.items():
            if str(var) == str(dim):
                if kind == 0:
                    return int(args[index].shape[axis])
                if kind == 1:
                    return int(args[index].stride()[axis]) * scale
                return int(args[index])
        try:
            return int(dim)
        except (TypeError, ValueError):
            raise ValueError(f"cannot infer the output dimension {dim} from the inputs") from None

    def _convert_ffi_callee_allocated_output_func(self) -> Callable[..., Any]:
        expected = len(self.params) - len(self.result_idx)
        device_of = self.get_current_device_functor()

        def func(*inputs: Any) -> Any:
            if len(inputs) != expected:
                raise ValueError(f"Kernel expected {expected} inputs, but {len(inputs)} are provided.")
            anchor = next((x for x in inputs if hasattr(x, "device") and hasattr(x, "shape")), None)
            if anchor is None:
                import torch

                anchor = torch.empty(0, device=device_of())
            result = self._get_executable()(*inputs, anchor)
            return result if len(self.result_idx) == 1 else list(result)

        return func

    # ------------------------------------------------------------------------------------------ cache
    @classmethod
    def from_database(cls, params: list[Any], result_idx: Any, target: Any, func_or_mod: Any,
                      host_kernel_source: Any, device_kernel_source: Any, kernel_lib_path: str,
                      verbose: bool = False, pass_configs: dict[str, Any] | None = None,
                      compile_flags: list[str] | None = None) -> TVMFFIKernelAdapter:
        """Rebuild an adapter from a cached library (`kernel_lib_path`) and its sources (text or paths)."""
        from tilelang.jit.runtime_loader import load_module

        adapter = cls.__new__(cls)
        adapter.params = params
        adapter.result_idx = adapter._legalize_result_idx(result_idx)
        host = adapter._set_cached_text_source("host_kernel_source", "_host_kernel_source_path", host_kernel_source)
        device = adapter._set_cached_text_source("device_kernel_source", "_device_kernel_source_path",
                                                 device_kernel_source)
        adapter.wrapped_source = (f"{device.text}\n\n{host.text}" if device.text is not None
                                  and host.text is not None else None)
        adapter.pass_configs, adapter.compile_flags, adapter.verbose = pass_configs, compile_flags, verbose
        adapter.ir_module = _as_module(func_or_mod)
        adapter.target = _as_target(target)
        adapter.libpath = kernel_lib_path
        adapter.kernel_global_source = device.text
        adapter.rt_mod = None
        module = load_module(kernel_lib_path)
        name = _entry_name(adapter.ir_module)
        adapter.executable = module[name] if name else module.main
        adapter._ffi_callee_allocated_output_abi = adapter._uses_ffi_callee_allocated_output_abi()
        adapter.dynamic_symbolic_map = (None if adapter._ffi_callee_allocated_output_abi
                                        else adapter._process_dynamic_symbolic())
        adapter._executable_lock = threading.Lock()
        adapter._post_init()
        return adapter

    # ------------------------------------------------------------------------------------------ sources
    def get_host_source(self) -> str | None:
        source = self._load_cached_text_source("host_kernel_source", "_host_kernel_source_path")
        if source is not None:
            return source
        rt_mod = getattr(self, "rt_mod", None)
        return None if rt_mod is None else str(rt_mod.inspect_source())

    def get_device_source(self) -> str | None:
        source = self._load_cached_text_source("device_kernel_source", "_device_kernel_source_path")
        if source is not None:
            self.kernel_global_source = source
            return source
        rt_mod = getattr(self, "rt_mod", None)
        if rt_mod is None:
            return None
        imports = list(getattr(rt_mod, "imports", []) or [])
        return str((imports[0] if imports else rt_mod).inspect_source())

    def get_kernel_source(self, kernel_only: bool = False) -> str:
        device = self.get_device_source() or ""
        if kernel_only:
            return device
        host = self.get_host_source() or ""
        return f"{device}\n\n{host}" if device and host else device or host

    @property
    def prim_func(self) -> Any:
        """The kernel's PrimFunc (the first function of its IRModule)."""
        module = self.ir_module
        if module is None:
            return None
        return next(iter(module.functions.values()), None)


def _as_module(func_or_mod: Any) -> Any:
    if func_or_mod is None:
        return None
    if hasattr(func_or_mod, "functions"):
        return func_or_mod
    import tvm

    attrs = getattr(func_or_mod, "attrs", None)
    name = str(attrs["global_symbol"]) if attrs is not None and "global_symbol" in attrs else "main"
    return tvm.IRModule({name: func_or_mod})


def _as_target(target: Any) -> Any:
    if target is None:
        return None
    from tilelang.backend.target import split_targets

    return split_targets(target).tvm_device

