"""The CPU lowering pipeline as one call (``tilelang.cpu.pipeline.CPUPassPipelineBody``).

The passes themselves are core's target-neutral pipeline (`tilelang.transform.pipeline`) with this backend's
passes at its extension points (`tilelang_cpu.passes.PASSES`: launch nest to a parallel loop over blocks,
copy elision, K merging, ...); this module runs that sequence for a CPU target, the way the engine does.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CPUPassPipelineBody"]


def _cpu_target(target: Any) -> Any:
    from tvm.target import Target

    from tilelang.backend.target import determine_target

    if not isinstance(target, Target):
        config = determine_target(target)
        target = Target({k: v for k, v in config.items() if k != "host"})
    if str(target.kind.name) not in ("llvm", "c"):
        raise ValueError(f"CPUPassPipelineBody lowers for CPU targets (llvm, c, cpu), not {target.kind.name!r}")
    return target


def CPUPassPipelineBody(mod: Any, target: Any) -> Any:
    """Lower tile program `mod` (an IRModule) for CPU `target` up to the packed API: the result holds the host
    entry functions, still to be split and built (`tilelang.lower` does both). The CPU kernel is host code, so
    the target is its own host."""
    from tilelang.transform.pipeline import lower_tile_program

    target = _cpu_target(target)
    return lower_tile_program(mod, target, target)
