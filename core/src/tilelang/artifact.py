"""What compilation produces: the contract between the engine, execution backends and the kernel cache.

`tilelang.lower` returns a `CompiledArtifact`; an execution backend's ``load(artifact)`` turns it into a
callable; the kernel cache stores it (``files`` + the JSON of `to_json`) and rebuilds it without the compiler.
Nothing here imports TVM.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tilelang.engine.launch_plan import LaunchPlan


@dataclass(frozen=True)
class ParamInfo:
    """One kernel parameter: a tensor (shape entries are ints or the names of symbolic dims) or a scalar."""

    name: str
    dtype: str
    shape: tuple[int | str, ...] = ()
    is_tensor: bool = True

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ParamInfo:
        return cls(data["name"], data["dtype"], tuple(data["shape"]), data["is_tensor"])


@dataclass
class CompiledArtifact:
    """A kernel compiled for one target.

    name: the kernel's symbol. target / target_host: normalised target configs (dicts).
    params: every parameter in call order. kernel_source: the device source (LLVM IR, C, CUDA C, MSL, WGSL, ...).
    host_source: the host side's source, when there is one to show.
    device_mod / host_mod: the lowered tirx IRModules (absent when loaded from the cache).
    rt_mod: the runtime module to run, when the target's execution goes through TVM's runtime.
    files: named binary products (``{"kernel.so": b"..."}``, ``{"kernel.cubin": ...}``) the cache persists.
    metadata: JSON-able launch facts a backend needs (grid, threads, shared bytes, register usage, ...).
    launch_plan: the device functions to launch, their parameter binding, grid, block and dynamic shared
    bytes (`tilelang.engine.launch_plan.LaunchPlan`); None for kernels that run as host code.
    """

    name: str
    target: dict[str, Any]
    params: list[ParamInfo]
    kernel_source: str
    target_host: dict[str, Any] | None = None
    host_source: str | None = None
    device_mod: Any = None
    host_mod: Any = None
    rt_mod: Any = None
    files: dict[str, bytes] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    launch_plan: LaunchPlan | None = None

    @property
    def params_json(self) -> list[dict[str, Any]]:
        return [asdict(p) for p in self.params]

    def to_json(self) -> dict[str, Any]:
        """The JSON-able part (everything but the IR, the runtime module and the files)."""
        return {
            "name": self.name, "target": self.target, "target_host": self.target_host,
            "params": self.params_json, "kernel_source": self.kernel_source, "host_source": self.host_source,
            "metadata": self.metadata, "files": sorted(self.files),
            "launch_plan": self.launch_plan.to_json() if self.launch_plan is not None else None,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], files: dict[str, bytes]) -> CompiledArtifact:
        """Rebuild from `to_json` output and the stored files (runtime module reloaded by the backend)."""
        plan = data.get("launch_plan")
        if plan is not None:  # imported only when there is one: a CPU kernel's cache hit skips the engine package
            from tilelang.engine.launch_plan import LaunchPlan

            plan = LaunchPlan.from_json(plan)
        return cls(
            name=data["name"], target=data["target"], target_host=data.get("target_host"),
            params=[ParamInfo.from_json(p) for p in data["params"]], kernel_source=data["kernel_source"],
            host_source=data.get("host_source"), files=files, metadata=data.get("metadata", {}),
            launch_plan=plan,
        )
