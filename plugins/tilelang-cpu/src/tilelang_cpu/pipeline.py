"""The CPU backend's passes in the order they run, at core's pipeline extension points (`PASSES`), and the
whole CPU lowering as one call (``tilelang.cpu.pipeline.CPUPassPipelineBody``).

Each pass lives in `tilelang_cpu.passes.<name>` and is registered under ``cpu.<name>``, the name its TVM pass
carries too; passes at one extension point run in the order of this list.
"""

from __future__ import annotations

from typing import Any

from tilelang.backend import PipelinePass

__all__ = ["PASSES", "CPUPassPipelineBody"]


def _elide_tile_copies(target: Any) -> Any:
    from tilelang_cpu.passes.elide_tile_copies import ElideTileCopies

    return ElideTileCopies(target)


def _merge_gemm_k_steps(target: Any) -> Any:
    from tilelang_cpu.passes.merge_gemm_k_steps import MergeGemmKSteps

    return MergeGemmKSteps(target)


def _lower_launch(target: Any) -> Any:
    from tilelang_cpu.passes.lower_launch import LowerLaunchToCPU

    return LowerLaunchToCPU(target)


def _vector_exp(target: Any) -> Any:
    from tilelang_cpu.passes.vector_exp import VectorizableExp

    return VectorizableExp(target)


def _lower_loop_exits(target: Any) -> Any:
    from tilelang_cpu.passes.lower_loop_exits import LowerLoopExits

    return LowerLoopExits(target)


def _tighten_guarded_loops(target: Any) -> Any:
    from tilelang_cpu.passes.tighten_guarded_loops import TightenGuardedLoops

    return TightenGuardedLoops(target)


def _float8_e4m3_as_fn(target: Any) -> Any:
    from tilelang_cpu.passes.float8_e4m3 import Float8E4M3AsFn

    return Float8E4M3AsFn(target)


def _fragment_extents(target: Any) -> Any:
    from tilelang_cpu.passes.fragment_extents import FragmentExtents

    return FragmentExtents(target)


def _warp_groups(target: Any) -> Any:
    from tilelang_cpu.passes.warp_groups import WarpGroups

    return WarpGroups(target)


def _is_llvm(target: Any) -> bool:
    """LLVM targets only: the C target keeps libm calls and its own compiler's loops."""
    from tilelang.backend.sdk import kind_of

    return kind_of(target) == "llvm"


PASSES = (
    PipelinePass("cpu.float8_e4m3_as_fn", "pre_layout", _float8_e4m3_as_fn),
    PipelinePass("cpu.fragment_extents", "pre_layout", _fragment_extents),
    PipelinePass("cpu.elide_tile_copies", "pre_layout", _elide_tile_copies),
    PipelinePass("cpu.merge_gemm_k_steps", "pre_layout", _merge_gemm_k_steps),
    PipelinePass("cpu.warp_groups", "post_storage", _warp_groups),
    PipelinePass("cpu.lower_launch", "post_storage", _lower_launch),
    PipelinePass("cpu.vector_exp", "post_storage", _vector_exp, supports_target=_is_llvm),
    PipelinePass("cpu.lower_loop_exits", "post_storage", _lower_loop_exits, supports_target=_is_llvm),
    PipelinePass("cpu.tighten_guarded_loops", "post_barriers", _tighten_guarded_loops, supports_target=_is_llvm),
)


def _cpu_target(target: Any) -> Any:
    from tvm.target import Target

    from tilelang.backend.sdk import split_targets

    if not isinstance(target, Target):
        target = split_targets(target).tvm_device
    if str(target.kind.name) not in ("llvm", "c"):
        raise ValueError(f"CPUPassPipelineBody lowers for CPU targets (llvm, c, cpu), not {target.kind.name!r}")
    return target


def CPUPassPipelineBody(mod: Any, target: Any) -> Any:
    """Lower tile program `mod` (an IRModule) for CPU `target` up to the packed API: the result holds the host
    entry functions, still to be split and built (`tilelang.lower` does both). The CPU kernel is host code, so
    the target is its own host."""
    from tilelang.backend.sdk import lower_tile_program

    target = _cpu_target(target)
    return lower_tile_program(mod, target, target)
