"""Pass extension points: where backends insert their own passes into core's target-neutral pipeline.

Core's pipeline (``tilelang.transform``) never names a target. At each point in `EXTENSION_POINTS` it asks
`passes_at(point, target)` for the passes that backends registered for the target's kind, and runs them in
registration order (highest ``priority`` first). Plugins may also answer the ``tilelang_extend_pipeline``
hook (see `tilelang.backend.hookspecs`) for passes that depend on more than the target.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tilelang.backend._registry import Registry, accepts
from tilelang.backend.host_codegen import TargetPredicate
from tilelang.backend.target import kind_of

PassFactory = Callable[[Any], Any]  # target -> tvm.ir.transform.Pass

EXTENSION_POINTS: tuple[str, ...] = (
    "pre_layout",         # after semantic checks, before layout inference (tile ops still whole)
    "post_layout",        # layouts of fragments and shared buffers are decided
    "post_tile_lowering", # tile ops replaced by loops / intrinsics
    "post_parallel",      # T.Parallel partitioned over threads and vectorised
    "post_pipelining",    # T.Pipelined expanded into multi-buffered stages
    "post_storage",       # shared memory planned
    "post_barriers",      # barriers inserted
    "device_module",      # the device IRModule after the host/device split, before device codegen
    "host_module",        # the host IRModule after the split, before host codegen hooks
)

__all__ = ["EXTENSION_POINTS", "PipelinePass", "PassFactory", "register_pass", "register_lazy_passes",
           "passes_at", "host_launch_pass"]


@dataclass(frozen=True, slots=True)
class PipelinePass:
    """A backend pass: ``factory(target)`` returns a ``tvm.ir.transform.Pass`` run at extension point `point`."""

    name: str
    point: str
    factory: PassFactory
    supports_target: TargetPredicate | None = None
    priority: int = 0

    def __post_init__(self) -> None:
        if self.point not in EXTENSION_POINTS:
            raise ValueError(f"unknown pipeline extension point {self.point!r} for pass {self.name!r}; "
                             f"known points: {', '.join(EXTENSION_POINTS)}")

    def matches(self, target: Any) -> bool:
        """Whether this pass applies to `target` (always, without a predicate)."""
        return accepts(self.supports_target, target)


_PASSES: Registry[PipelinePass] = Registry("pipeline pass", PipelinePass)


def host_launch_pass(name: str) -> PipelinePass:
    """Core's launch lowering for a backend whose kernels are host code (`tilelang.transform.lower_launch_to_host`:
    the block grid becomes one parallel loop, threads become loops split at barriers, shared tiles become
    block-local workspace), as a pass at ``post_storage`` named `name`; register it for the backend's kind
    (``register_pass("ccpu", host_launch_pass("ccpu.lower_launch"))``)."""

    def factory(target: Any) -> Any:
        from tilelang.transform.lower_launch_to_host import LowerLaunchToHost

        return LowerLaunchToHost(target, name=name)

    return PipelinePass(name, "post_storage", factory)


def register_pass(target_kind: str, pipeline_pass: PipelinePass, *, override: bool = False) -> PipelinePass:
    """Register `pipeline_pass` for target kind `target_kind`."""
    return _PASSES.register(target_kind, pipeline_pass, override=override)


def register_lazy_passes(target_kind: str, import_path: str) -> None:
    """Register the PipelinePass (or sequence) at ``"module:attr"`` for `target_kind`, imported on first use."""
    _PASSES.register_lazy(target_kind, import_path)


def passes_at(point: str, target: Any) -> list[Any]:
    """The tvm passes backends registered at `point` for `target`, highest priority first, then in order."""
    if point not in EXTENSION_POINTS:
        raise ValueError(f"unknown pipeline extension point {point!r}; known points: {', '.join(EXTENSION_POINTS)}")
    entries = [p for p in _PASSES.get(kind_of(target)) if p.point == point and p.matches(target)]
    entries.sort(key=lambda p: -p.priority)  # stable: equal priorities keep registration order
    passes = [p.factory(target) for p in entries]
    from tilelang.backend import hooks

    for extra in hooks.plugin_manager().hook.tilelang_extend_pipeline(point=point, target=target):
        passes.extend(extra or [])
    return passes
