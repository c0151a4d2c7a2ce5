"""Execution backends: what runs a compiled kernel on real tensors.

Each backend plugin's ``execution_backend`` module exposes ``EXECUTION_BACKENDS``, a sequence ordered by
preference, and registers it (usually lazily) for the target kinds it serves. ``execution_backend="auto"``
takes the first one available here; asking for an unavailable one by name says why it cannot run.

Names: a backend is asked for by its own `name` or by the reference TileLang's names for it on a target
(`names_for`, e.g. the CPU's TVM-runtime backend answers to ``"cython"`` and ``"tvm_ffi"`` on target ``c``), and
by `aliases` (accepted, not listed). A name no backend of the target answers to raises `InvalidExecutionBackend`
listing the names that do.

============== ==================== ============================ =================== ============== ======
reference name CPU (c / llvm)       CUDA                         ROCm                Metal          WebGPU
============== ==================== ============================ =================== ============== ======
``cython``     TVM runtime (c only) CUDA driver                  HIP runtime         n/a            n/a
``tvm_ffi``    TVM runtime          CUDA driver                  HIP runtime         Metal (direct) wgpu
``ctypes``     TVM runtime (alias)  CUDA driver (alias)          HIP runtime (alias) n/a            n/a
``nvrtc``      n/a                  CUDA driver, NVRTC compile   n/a                 n/a            n/a
``torch``      n/a                  n/a                          n/a                 torch MPS      n/a
``cutedsl``    n/a                  CuTeDSL (nvidia-cutlass-dsl) n/a                 n/a            n/a
============== ==================== ============================ =================== ============== ======
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tilelang.backend._registry import Registry
from tilelang.backend.target import kind_of
from tilelang.errors import ExecutionBackendUnavailable, InvalidExecutionBackend, TileLangError

__all__ = ["ExecutionBackend", "register_execution_backends", "register_lazy_execution_backends",
           "execution_backends_for", "resolve_execution_backend", "execution_backend_names"]


class ExecutionBackend(ABC):
    """Runs compiled artifacts of some target kinds.

    Subclasses set `name` and implement `unavailable_reason` (cheap: no device initialisation beyond what is
    needed to answer) and `load`, which turns a compiled artifact into a callable taking tensors in the
    kernel's parameter order. Overridable: `export_files` (what rebuilds a kernel elsewhere: the kernel cache,
    remote autotuning), `export_library`, `device_timer` (device-side timing for the profiler);
    ``argument_alignment(artifact)`` (the byte alignment each parameter's data pointer needs, in parameter order;
    without it the artifact's ``param_align`` metadata, else ``default_alignment``; a backend that copies tensors
    into device buffers answers 1s; less aligned tensors are passed as aligned copies); attributes
    ``torch_device_type``, ``launcher_checks_arguments``, ``default_alignment``.
    """

    name: str = ""
    description: str = ""
    reference_names: tuple[str, ...] = ()  # the reference TileLang's names for this backend (listed)
    aliases: tuple[str, ...] = ()  # further names it answers to (accepted, not listed)
    enable_host_codegen: bool = True  # the compiled artifact carries a host module (reference spec field)
    enable_device_compile: bool = True  # device code is compiled to a binary at lowering (reference spec field)
    torch_device_type: str = "cpu"  # where the launcher wants its torch tensors ("cuda", "mps", ...)

    def supports_target(self, target: Any) -> bool:
        """Whether this backend runs kernels of `target` (a variant of its kind may need another one)."""
        return True

    def names_for(self, target: Any) -> tuple[str, ...]:
        """The names listed for `target`, in preference order: the reference's names when it has any (our own
        `name` is still accepted), else our own."""
        return self.reference_names or (self.name,)

    def answers_to(self, name: str, target: Any) -> bool:
        return name == self.name or name in self.names_for(target) or name in self.aliases

    def is_installed(self) -> bool:
        """Whether the packages this backend needs are importable (a device may still be missing)."""
        return True

    @abstractmethod
    def unavailable_reason(self) -> str | None:
        """None when this backend can run kernels here, else a sentence saying what is missing."""

    def is_available(self) -> bool:
        """Whether this backend can run kernels on this machine."""
        return self.unavailable_reason() is None

    @abstractmethod
    def load(self, artifact: Any) -> Any:
        """Prepare `artifact` for calls; returns a callable ``launcher(*tensors_and_scalars)``."""

    def export_files(self, artifact: Any) -> dict[str, bytes]:
        """The named files that rebuild `artifact` elsewhere with `load` (kept by the kernel cache, shipped by
        remote autotuning): by default what its device codegen built (``artifact.files``)."""
        return dict(artifact.files)

    def export_library(self, artifact: Any, path: str | os.PathLike[str]) -> None:
        """Write `artifact` as a shared library loadable by ``tvm_ffi.load_module``: by default TVM's
        ``export_library`` of its runtime module, else the shared library among its files."""
        if artifact.rt_mod is not None and hasattr(artifact.rt_mod, "export_library"):
            artifact.rt_mod.export_library(os.fspath(path))
            return
        libs = [n for n in artifact.files if n.endswith((".so", ".dylib", ".dll"))]
        if not libs:
            raise TileLangError(f"kernel {artifact.name!r}: the {self.name} execution backend has no library to "
                                f"export for target {artifact.target}")
        Path(path).write_bytes(artifact.files[libs[0]])

    def device_timer(self, launcher: Any) -> Callable[..., float] | None:
        """Optional: how to time `launcher` (what `load` returned) on the device, or None for wall-clock timing.

        The returned callable is called as ``timer(*tensors_and_scalars, warmup=0, rep=1)`` with every
        parameter (outputs included) and returns the device time of one call in milliseconds (GPU timestamps,
        device events). The profiler (``Profiler.do_bench``) uses it for the kernel's own latency. The default
        offers the launcher's ``time_ms`` method when it has one; CPU backends keep wall-clock timing.
        """
        timer = getattr(launcher, "time_ms", None)
        return timer if callable(timer) else None

    def __repr__(self) -> str:
        return f"<ExecutionBackend {self.name}>"


def _check(obj: Any) -> None:
    if not obj.name:
        raise TypeError(f"{type(obj).__name__} has an empty name")


_EXECUTION: Registry[ExecutionBackend] = Registry("execution backend", ExecutionBackend, validate=_check)


def register_execution_backends(target_kind: str, backends: Any, *, override: bool = False) -> None:
    """Register one backend or a sequence (in preference order) for `target_kind`."""
    for backend in backends if isinstance(backends, (list, tuple)) else [backends]:
        _EXECUTION.register(target_kind, backend, override=override)


def register_lazy_execution_backends(target_kind: str, import_path: str) -> None:
    """Register ``"module:EXECUTION_BACKENDS"`` for `target_kind`, imported on first use."""
    _EXECUTION.register_lazy(target_kind, import_path)


def execution_backends_for(target: Any) -> list[ExecutionBackend]:
    """Every execution backend registered for `target`'s kind that serves it, in preference order."""
    found = _EXECUTION.get(kind_of(target))
    if isinstance(target, (str, dict)):
        return found
    return [b for b in found if b.supports_target(target)]


def execution_backend_names(target: Any) -> list[str]:
    """Every name listed for `target` (reference names first), in preference order."""
    return list(dict.fromkeys(n for b in execution_backends_for(target) for n in b.names_for(target)))


def resolve_execution_backend(target: Any, name: str | None = "auto") -> ExecutionBackend:
    """The backend called `name`, or with ``"auto"`` the first available one (``TILELANG_EXECUTION_BACKEND``
    overrides ``"auto"``)."""
    from tilelang.backend import plugins

    kind = kind_of(target)
    if name in (None, "auto"):
        from tilelang.env import env

        name = env.get_default_execution_backend()
    backends = execution_backends_for(target)
    if not backends:
        plugins.check_kind(kind)
        raise ExecutionBackendUnavailable(f"no execution backend is registered for target kind {kind!r}")
    if name == "auto":
        reasons = []
        for backend in backends:
            reason = backend.unavailable_reason()
            if reason is None:
                return backend
            reasons.append(f"{backend.name}: {reason}")
        raise ExecutionBackendUnavailable(
            f"no execution backend for target kind {kind!r} can run here ({'; '.join(reasons)}). "
            "The kernel still compiles: its source is available through get_kernel_source()."
        )
    name = str(name).lower()
    for backend in backends:
        if backend.answers_to(name, target):
            reason = backend.unavailable_reason()
            if reason is not None:
                raise ExecutionBackendUnavailable(f"execution backend {name!r} cannot run here: {reason}")
            return backend
    raise InvalidExecutionBackend(
        f"Invalid execution backend {name!r} for target {kind!r}. Allowed: "
        f"{', '.join(execution_backend_names(target)) or '<none>'}. Tip: use execution_backend='auto'."
    )
