"""The WebGPU backend's passes in the order they run, at core's pipeline extension points (`PASSES`), and the
whole WebGPU lowering as one call (``tilelang.webgpu.pipeline.WebGPUPassPipelineBody``, with an LLVM host unless
the target names its own).

Each pass lives in `tilelang_webgpu.passes.<name>` and is registered under ``webgpu.<name>``, the name its TVM
pass carries too; passes at one extension point run in the order of this list.
"""

from __future__ import annotations

from typing import Any

from tilelang.backend import PipelinePass

__all__ = ["PASSES", "WebGPUPassPipelineBody"]


def _pass(name: str, factory: str) -> Any:
    """The factory `factory` of module `tilelang_webgpu.passes.<name>`, imported when the pipeline runs."""

    def make(target: Any = None) -> Any:
        import importlib

        return getattr(importlib.import_module(f"tilelang_webgpu.passes.{name}"), factory)(target)

    return make


PASSES = [
    PipelinePass("webgpu.check_dtypes", "pre_layout", _pass("check_dtypes", "CheckDtypes")),
    PipelinePass("webgpu.debug_log", "post_layout", _pass("debug_log", "DebugLog")),
    PipelinePass("webgpu.fold_blockidx_z", "post_barriers", _pass("fold_blockidx_z", "FoldBlockIdxZ")),
    PipelinePass("webgpu.split_wide_vectors", "post_storage", _pass("split_wide_vectors", "SplitWideVectors")),
    PipelinePass("webgpu.hoist_gemm_accumulators", "post_storage",
                 _pass("hoist_gemm_accumulators", "HoistGemmAccumulators")),
    PipelinePass("webgpu.unroll_register_loops", "post_storage", _pass("unroll_register_loops", "UnrollRegisterLoops")),
    PipelinePass("webgpu.check_workgroup_memory", "device_module",
                 _pass("check_workgroup_memory", "CheckWorkgroupMemory")),
    PipelinePass("webgpu.legalize_float_literals", "device_module",
                 _pass("legalize_float_literals", "LegalizeFloatLiterals")),
    PipelinePass("webgpu.mark_vector_globals", "device_module", _pass("mark_vector_globals", "MarkVectorGlobals")),
]


def WebGPUPassPipelineBody(mod: Any, target: Any) -> Any:
    """Lower tile program `mod` (an IRModule) for WebGPU `target` (a Target, ``"webgpu"`` or a config dict) up
    to the packed API: the result holds the host entry and the device kernels, still to be split and built
    (`tilelang.lower` does both)."""
    from tvm.target import Target

    from tilelang.backend.sdk import lower_tile_program, split_targets

    if isinstance(target, Target):
        host = target.host if target.host is not None else Target({"kind": "llvm"})
    else:
        pair = split_targets(target)
        target, host = pair.tvm_device, pair.tvm_host
    if str(target.kind.name) != "webgpu":
        raise ValueError(f"WebGPUPassPipelineBody lowers for the webgpu target, not {target.kind.name!r}")
    return lower_tile_program(mod, target, host)
