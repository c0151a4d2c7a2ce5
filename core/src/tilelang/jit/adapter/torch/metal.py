"""`MetalKernelAdapter`: the reference's adapter that runs a Metal kernel through torch's MPS backend.

The reference builds it from the lowered program and its MSL and launches the MSL with
``torch.mps.compile_shader``. Here the launching belongs to the Metal plugin's execution backends: the adapter
compiles the program for ``metal`` (or takes a compiled artifact), then hands the launch to the execution
backend registered for the ``metal`` target kind under `execution_backend` (``"torch"`` by default, as the
reference) -- found through core's registry, so core never imports the plugin. As in the reference, the
adapter's callable takes every kernel argument, outputs included, and returns nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tilelang.errors import TileLangError
from tilelang.jit.adapter.base import BaseKernelAdapter

__all__ = ["MetalKernelAdapter"]


class MetalKernelAdapter(BaseKernelAdapter):
    """Runs a TileLang program on Metal; `func_or_mod` is the PrimFunc (or one-function IRModule) to run.

    `device_mod` and `kernel_global_source` are the reference's parameters: this adapter compiles
    `func_or_mod` itself (or uses `artifact`, a `CompiledArtifact` for a ``metal`` target), so they are kept
    for inspection only. `execution_backend` names the Metal execution backend that launches it (``"torch"``:
    ``torch.mps.compile_shader`` on MPS tensors; ``"metal"``: the Metal framework; ``"auto"``: the first that
    can run here). Launching needs an Apple GPU; building, `get_kernel_source` and the launch geometry do not.
    """

    def __init__(self, params: list[Any] | None, result_idx: Any, func_or_mod: Any, device_mod: Any = None,
                 kernel_global_source: str | None = None, verbose: bool = False, *, artifact: Any = None,
                 execution_backend: str = "torch", pass_configs: dict[str, Any] | None = None):
        self.device_mod = device_mod
        self.func_or_mod = func_or_mod
        self.verbose = verbose
        self.execution_backend = execution_backend
        self.artifact = artifact if artifact is not None else self._compile(func_or_mod, pass_configs)
        kind = self.artifact.target.get("kind") if isinstance(self.artifact.target, dict) else None
        if kind != "metal":
            raise TileLangError(f"MetalKernelAdapter runs kernels compiled for 'metal'; this one is for {kind!r}")
        self.kernel_global_source = kernel_global_source or self.artifact.kernel_source
        plan = self.artifact.launch_plan
        first = plan.kernels[0] if plan is not None and plan.kernels else None
        self.kernel_name = first.name if first is not None else f"{self.artifact.name}_kernel"
        self.block_info = list(first.block) if first is not None else [1, 1, 1]
        self.grid_info = list(first.grid) if first is not None else [1, 1, 1]
        self._launcher: Callable[..., Any] | None = None
        super().__init__(func_or_mod, list(params) if params is not None else list(self.artifact.params),
                         result_idx)

    @staticmethod
    def _compile(func_or_mod: Any, pass_configs: dict[str, Any] | None) -> Any:
        from tilelang.engine import lower

        if func_or_mod is None or not hasattr(func_or_mod, "script"):
            raise TileLangError(f"MetalKernelAdapter needs the program to run (a T.prim_func or an IRModule) as "
                                f"func_or_mod, or a compiled artifact=; got {type(func_or_mod).__name__}")
        return lower(func_or_mod, target="metal", pass_configs=pass_configs)

    def launcher(self) -> Callable[..., Any]:
        """The Metal execution backend's launcher for this kernel (resolved through the registry, loaded once)."""
        if self._launcher is None:
            from tilelang.backend.execution import resolve_execution_backend

            backend = resolve_execution_backend(self.artifact.target, self.execution_backend)
            self._launcher = backend.load(self.artifact)
        return self._launcher

    def _convert_torch_func(self) -> Callable[..., Any]:
        def func(*args: Any) -> None:
            if len(args) != len(self.params):
                raise TileLangError(f"{self.kernel_name}: MetalKernelAdapter takes every kernel argument, outputs "
                                    f"included ({len(self.params)}), got {len(args)}")
            self.launcher()(*args)

        return func

    def get_kernel_source(self, kernel_only: bool = True) -> str:
        """The MSL; with `kernel_only` from the first ``kernel void`` on (the reference's cut)."""
        source = self.kernel_global_source or ""
        if kernel_only:
            at = source.find("kernel void ")
            if at >= 0:
                return source[at:]
        return source
