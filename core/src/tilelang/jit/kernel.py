"""`JITKernel`: a compiled kernel bound to an execution backend, called with torch tensors."""

from __future__ import annotations

import operator
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tilelang.artifact import CompiledArtifact, ParamInfo
from tilelang.backend.execution import ExecutionBackend, resolve_execution_backend
from tilelang.errors import ExecutionBackendUnavailable, TileLangError
from tilelang.jit.arguments import make_caller, normalize_out_idx, param_alignment
from tilelang.jit.host_arrays import has_host_array, make_array_caller
from tilelang.transform.config import check_compile_flags, check_pass_configs, warn_deprecated

__all__ = ["JITKernel"]


class JITKernel:
    """A compiled kernel. Call it with the input tensors (every parameter not in ``out_idx``); outputs are
    allocated on the inputs' device and returned (one tensor, a list, or None without outputs).

    Attributes: `artifact` (the `CompiledArtifact`), `params`, `out_idx`, `target`, `execution_backend` (its
    name), `cache_key` (program key, when cached), `from_cache`; after autotuning also `config`, `latency`
    and `ref_latency`.
    """

    def __new__(cls, artifact: Any = None, *args: Any, **kwargs: Any) -> JITKernel:
        if artifact is None or isinstance(artifact, CompiledArtifact):
            return super().__new__(cls)
        # the reference's form: JITKernel(func, out_idx, execution_backend, target, ...) compiles `func`
        from tilelang.jit.compiler import compile as jit_compile

        names = ("out_idx", "execution_backend", "target", "target_host", "verbose", "pass_configs")
        options = dict(zip(names, args))
        options.update({k: v for k, v in kwargs.items() if k in (*names, "compile_flags")})
        return jit_compile(artifact, **options)

    def __init__(self, artifact: CompiledArtifact | None = None, out_idx: int | Sequence[int] | None = None,
                 execution_backend: str | ExecutionBackend | None = "auto", *args: Any, cache_key: str | None = None,
                 from_cache: bool = False, prim_func: Any = None, pass_configs: dict[str, Any] | None = None,
                 compile_flags: Any = None, **kwargs: Any):
        if artifact is None:  # the reference's ``JITKernel(from_database=True, ...)``: a shell filled by the database
            if not kwargs.get("from_database"):
                raise TypeError("JITKernel needs a compiled artifact, or a function to compile "
                                "(JITKernel(func, out_idx, ...)), or from_database=True")
            self._init_shell(out_idx, execution_backend, pass_configs, compile_flags, kwargs)
            return
        if not isinstance(artifact, CompiledArtifact):  # built by `__new__` from the reference's form
            return
        self.artifact = artifact
        self.params: list[ParamInfo] = list(artifact.params)
        self.out_idx = normalize_out_idx(out_idx, len(self.params))
        self.target = artifact.target
        self.target_host = artifact.target_host
        self.cache_key = cache_key
        self.from_cache = from_cache
        self.prim_func = prim_func
        self.pass_configs = check_pass_configs(pass_configs)
        warn_deprecated(self.pass_configs)
        self.compile_flags = check_compile_flags(compile_flags)
        self.config: dict[str, Any] | None = None
        self.latency: float | None = None
        self.ref_latency: float | None = None
        self._backend: ExecutionBackend | None = None
        self._launcher: Any = None
        self._unavailable: ExecutionBackendUnavailable | None = None
        try:
            if isinstance(execution_backend, ExecutionBackend):
                self._backend = execution_backend
            else:
                self._backend = resolve_execution_backend(artifact.target, execution_backend)
            self._call = self._make_caller()
        except ExecutionBackendUnavailable as exc:
            self._unavailable = exc
            self._call = self._raise_unavailable

    def _init_shell(self, out_idx: Any, execution_backend: Any, pass_configs: dict[str, Any] | None,
                    compile_flags: Any, kwargs: dict[str, Any]) -> None:
        """A kernel with options but no compiled code yet (calling it says so)."""
        self.artifact = None
        self.params = []
        self.out_idx = out_idx
        self.target = kwargs.get("target", "auto")
        self.target_host = kwargs.get("target_host")
        self.cache_key, self.from_cache, self.prim_func = None, False, kwargs.get("func")
        self.pass_configs = check_pass_configs(pass_configs)
        warn_deprecated(self.pass_configs)
        self.compile_flags = check_compile_flags(compile_flags)
        self.config = self.latency = self.ref_latency = None
        self._backend = self._launcher = None
        self._requested_backend = execution_backend
        self._unavailable = ExecutionBackendUnavailable(
            "this JITKernel was made with from_database=True and holds no compiled kernel yet "
            "(load one with JITKernel.from_database(...) or tilelang.compile)")
        self._call = self._raise_unavailable

    # ------------------------------------------------------------------------------------------ calling
    def _make_caller(self) -> Any:
        backend = self._backend
        launcher = self._launcher = backend.load(self.artifact)
        by_backend = getattr(backend, "argument_alignment", None)  # a backend that copies tensors needs none
        align = (list(by_backend(self.artifact)) if by_backend is not None else
                 param_alignment(self.params, self.artifact.metadata, getattr(backend, "default_alignment", 64)))
        checks = getattr(launcher, "checks_arguments", getattr(backend, "launcher_checks_arguments", False))
        device_type = backend.torch_device_type
        callers: dict[str, Any] = {}

        def array_caller() -> Any:  # NumPy arguments (host kernels): built on the first such call
            if "numpy" not in callers:
                callers["numpy"] = make_array_caller(self.artifact.name, self.params, self.out_idx, launcher,
                                                     device_type=device_type, align=align, others=torch_caller)
            return callers["numpy"]

        def torch_caller() -> Any:
            if "torch" not in callers:
                callers["torch"] = make_caller(self.artifact.name, self.params, self.out_idx, launcher,
                                               device_type=device_type, launcher_checks=bool(checks), align=align,
                                               array_caller=array_caller if device_type in (None, "cpu") else None)
            return callers["torch"]

        if "torch" in sys.modules or device_type not in (None, "cpu"):
            return torch_caller()

        def first_call(*args: Any) -> Any:  # torch not imported yet: NumPy arguments need none of it
            self._call = array_caller() if has_host_array(args) else torch_caller()
            return self._call(*args)

        return first_call

    def _raise_unavailable(self, *args: Any) -> Any:
        raise ExecutionBackendUnavailable(str(self._unavailable)) from self._unavailable

    # ``kernel(*inputs)`` calls the generated caller directly: a C-level attribute getter as the ``__call__``
    # descriptor saves the Python frame a ``def __call__(self, *args)`` wrapper would add to every call.
    __call__ = property(operator.attrgetter("_call"), doc="Call the kernel with its inputs (see the class doc).")

    @property
    def execution_backend(self) -> str | None:
        """The name of the execution backend that runs this kernel (None when none can run here)."""
        backend = getattr(self, "_backend", None)
        return backend.name if backend is not None else getattr(self, "_requested_backend", None)

    @execution_backend.setter
    def execution_backend(self, name: str | None) -> None:
        """The execution backend to use when this kernel is (re)bound (the reference sets it before compiling)."""
        self._requested_backend = name

    @property
    def backend(self) -> ExecutionBackend:
        """The `ExecutionBackend` instance (raises when none can run this kernel here)."""
        if self._backend is None:
            self._raise_unavailable()
        return self._backend  # type: ignore[return-value]

    def device_timer(self) -> Any:
        """The backend's device timer for this kernel (`ExecutionBackend.device_timer`), or None: the
        profiler then times wall-clock. It takes every parameter, outputs included."""
        if self._backend is None or self._launcher is None:
            return None
        return self._backend.device_timer(self._launcher)

    @property
    def is_runnable(self) -> bool:
        return self._unavailable is None

    @property
    def name(self) -> str:
        return self.artifact.name

    # ------------------------------------------------------------------------------------------ sources
    @property
    def kernel_source(self) -> str:
        return self.artifact.kernel_source

    def get_kernel_source(self, kernel_only: bool = True) -> str:
        """The device source (LLVM IR, C, CUDA C, MSL, WGSL, ...); with ``kernel_only=False`` plus the host's."""
        if kernel_only or not self.artifact.host_source:
            return self.artifact.kernel_source
        return f"{self.artifact.kernel_source}\n\n// ---- host ----\n{self.artifact.host_source}"

    def get_host_source(self) -> str:
        """The host side's source; a clear error for targets whose host code is not kept as text."""
        if self.artifact.host_source is None:
            raise TileLangError(f"kernel {self.name!r} ({self.target.get('kind')}) has no separate host source")
        return self.artifact.host_source

    @property
    def host_source(self) -> str | None:
        """The host side's source (None for targets whose host code is the kernel itself)."""
        return self.artifact.host_source

    def run_once(self, func: Any = None) -> Any:
        """Run the kernel (or `func`) once on supplied inputs (the profiler's `run_once`)."""
        return self.get_profiler().run_once(func)

    def _sources(self, which: str) -> str:
        if which not in ("kernel", "host", "both"):
            raise ValueError(f"which must be 'kernel', 'host' or 'both', got {which!r}")
        if which == "kernel":
            return self.kernel_source
        host = self.artifact.host_source or ""
        return host if which == "host" else f"{self.kernel_source}\n\n{host}" if host else self.kernel_source

    def show_source(self, which: str = "kernel") -> None:
        """Print the kernel's source (``"kernel"``, ``"host"`` or ``"both"``)."""
        print(self._sources(which))

    def print_source_code(self, which: str = "kernel", file: str | None = None) -> None:
        """Print the source (or write it to `file`)."""
        text = self._sources(which)
        if file is None:
            print(text)
        else:
            Path(file).write_text(text)

    def export_sources(self, kernel_path: str | None = None, host_path: str | None = None) -> None:
        """Write the device source to `kernel_path` and the host source to `host_path` (either may be None)."""
        if kernel_path is not None:
            Path(kernel_path).write_text(self.kernel_source)
        if host_path is not None:
            if self.artifact.host_source is None:
                raise TileLangError(f"kernel {self.name!r} ({self.target.get('kind')}) has no separate host source")
            Path(host_path).write_text(self.artifact.host_source)

    # ------------------------------------------------------------------------------------------ resources
    @property
    def resource_usage(self) -> dict[str, Any]:
        """What the device compiler reports: registers, spills, shared memory (bytes), threads per block."""
        meta = self.artifact.metadata
        usage = {k: meta[k] for k in ("registers", "spill_stores", "spill_loads", "stack_bytes",
                                      "static_shared_bytes", "shared_bytes") if k in meta}
        threads = 1
        for extent in meta.get("threads", []) or []:
            threads = threads * extent if isinstance(extent, int) else threads
        if meta.get("threads"):
            usage["threads"] = threads
        return usage

    @property
    def n_regs(self) -> int | None:
        return self.artifact.metadata.get("registers")

    @property
    def n_spills(self) -> int | None:
        meta = self.artifact.metadata
        if "spill_stores" not in meta and "spill_loads" not in meta:
            return None
        return int(meta.get("spill_stores", 0)) + int(meta.get("spill_loads", 0))

    @property
    def n_max_threads(self) -> int | None:
        return self.resource_usage.get("threads")

    @property
    def shared_memory_bytes(self) -> int | None:
        """Shared memory of the kernel in bytes (planned, or reported by the device compiler)."""
        meta = self.artifact.metadata
        return meta.get("shared_bytes", meta.get("static_shared_bytes"))

    # ------------------------------------------------------------------------------------------ tuning
    def update_tuner_result(self, latency: float, config: dict[str, Any], ref_latency: float | None) -> JITKernel:
        self.latency, self.config, self.ref_latency = latency, config, ref_latency
        return self

    def get_tuner_result(self) -> dict[str, Any]:
        if self.latency is None:
            raise ValueError("this kernel has no tuning result (it was not produced by the autotuner)")
        return {"latency": self.latency, "config": self.config, "ref_latency": self.ref_latency}

    @classmethod
    def from_database(cls, func: Any = None, kernel_global_source: str | None = None,
                      kernel_lib_path: str | None = None,
                      params: Any = None, target: Any = "auto", target_host: Any = None, out_idx: Any = None,
                      execution_backend: str = "auto", pass_configs: dict[str, Any] | None = None,
                      compile_flags: Any = None, cache_key: str | None = None, **_: Any) -> JITKernel:
        """The kernel stored in the kernel cache under program key `cache_key` (or compiled from `func`)."""
        from tilelang.jit.compiler import CompileOptions, compile_with, kernel_from_cache

        options = CompileOptions(out_idx, target, target_host, execution_backend, pass_configs, compile_flags)
        if cache_key is not None:
            kernel = kernel_from_cache(cache_key, options, options.resolved_target(), prim_func=func)
            if kernel is not None:
                return kernel
        if func is None:
            raise TileLangError("JITKernel.from_database: no stored kernel under this key and no func to compile")
        return compile_with(func, options)

    # ------------------------------------------------------------------------------------------ reference stages
    def _compile_and_create_adapter(self, tilelang_func: Any, out_idx: Any) -> Any:
        """Compile `tilelang_func` and set this kernel up to run it, in one pass-instrumentation session (pass
        timing from ``tl.pass_profile`` covers both stages)."""
        from tilelang.instrumentation.session import compile_pass_instrumentation
        from tilelang.tools.pass_timing import create_pass_timing_tool
        from tilelang.transform.config import with_compile_flags

        attrs = getattr(tilelang_func, "attrs", None)
        name = str(attrs["global_symbol"]) if attrs is not None and "global_symbol" in attrs else "<unknown>"
        pass_configs = with_compile_flags(self.pass_configs, getattr(self, "compile_flags", None))
        tool = create_pass_timing_tool(pass_configs)
        context = {"kernel": name, "target": str(self.target), "backend": getattr(self, "execution_backend", None)}
        with compile_pass_instrumentation(name=name, tools=[tool] if tool is not None else []):
            self.artifact = self._compile_artifact(tilelang_func, pass_configs, context)
            return self._create_adapter_from_artifact(tilelang_func, out_idx, self.artifact, pass_configs, context)

    def _compile_artifact(self, tilelang_func: Any, pass_configs: dict[str, Any], phase_context: Any) -> Any:
        from tilelang.engine import lower

        return lower(tilelang_func, target=self.target, target_host=getattr(self, "target_host", None),
                     pass_configs=pass_configs)

    def _create_adapter_from_artifact(self, tilelang_func: Any, out_idx: Any, artifact: CompiledArtifact,
                                      pass_configs: dict[str, Any], phase_context: Any) -> Any:
        """Bind `artifact` to this kernel's execution backend; returns the callable that runs it."""
        backend = getattr(self, "_requested_backend", None) or "auto"
        JITKernel.__init__(self, artifact, out_idx, backend, prim_func=tilelang_func, pass_configs=pass_configs)
        return self._call

    @classmethod
    def from_tilelang_function(cls, tilelang_func: Any, **kwargs: Any) -> JITKernel:
        from tilelang.jit.compiler import compile as jit_compile

        return jit_compile(tilelang_func, **kwargs)

    # ------------------------------------------------------------------------------------------ exports
    def export_library(self, path: str | os.PathLike[str]) -> None:
        """Write the compiled kernel as a shared library (loadable by ``tvm_ffi.load_module``)."""
        self._backend.export_library(self.artifact, path)

    def _export(self, what: str) -> str:
        backends = [self._backend]
        if self._backend is None and self.artifact is not None:  # none can run here: exporting needs no device
            from tilelang.backend.execution import execution_backends_for

            backends = list(execution_backends_for(self.artifact.target))
        for backend in backends:
            method = getattr(backend, f"export_{what}", None)
            if method is not None:
                return method(self.artifact)
        for name, blob in self.artifact.files.items():
            if name.endswith(f".{what}"):
                return blob.decode() if isinstance(blob, bytes) else str(blob)
        kind = self.target.get("kind")
        raise TileLangError(
            f"export_{what}() is not available for kernel {self.name!r}: target kind {kind!r} "
            f"(execution backend {self.execution_backend!r}) produces no {what.upper()}; it exists for CUDA targets"
        )

    def export_ptx(self, path: str | os.PathLike[str] | None = None) -> str:
        """The PTX of a CUDA kernel; written to `path` when given (the text is returned either way)."""
        text = self._export("ptx")
        if path is not None:
            Path(path).write_text(text)
        return text

    def export_sass(self, path: str | os.PathLike[str] | None = None) -> str:
        """The SASS of a CUDA kernel (disassembled cubin); written to `path` when given."""
        text = self._export("sass")
        if path is not None:
            Path(path).write_text(text)
        return text

    def show_ptx(self) -> None:
        print(self.export_ptx())

    def show_sass(self) -> None:
        print(self.export_sass())

    # ------------------------------------------------------------------------------------------ tools
    def get_profiler(self, tensor_supply_type: Any = "auto") -> Any:
        """A `tilelang.profiler.Profiler` for this kernel."""
        from tilelang.profiler import Profiler

        return Profiler(self, tensor_supply_type)

    def __repr__(self) -> str:
        params = ", ".join(f"{p.name}: {p.dtype}{list(p.shape)}" if p.is_tensor else f"{p.name}: {p.dtype}"
                           for p in self.params)
        return (f"<JITKernel {self.name}({params}) out_idx={self.out_idx} target={self.target.get('kind')} "
                f"backend={self.execution_backend}>")
