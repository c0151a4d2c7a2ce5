"""The WebGPU lowering pipeline as one call (``tilelang.webgpu.pipeline.WebGPUPassPipelineBody``).

The passes are core's target-neutral pipeline (`tilelang.transform.pipeline`) with this backend's passes at its
extension points (`tilelang_webgpu.passes.PASSES`: 2-D grids, WGSL-sized vectors, register-resident GEMM
accumulators, workgroup-memory checks, ...); this module runs that sequence for a WebGPU target, the way the
engine does, with an LLVM host unless the target names its own.
"""

from __future__ import annotations

from typing import Any

__all__ = ["WebGPUPassPipelineBody"]


def WebGPUPassPipelineBody(mod: Any, target: Any) -> Any:
    """Lower tile program `mod` (an IRModule) for WebGPU `target` (a Target, ``"webgpu"`` or a config dict) up
    to the packed API: the result holds the host entry and the device kernels, still to be split and built
    (`tilelang.lower` does both)."""
    from tvm.target import Target

    from tilelang.backend.target import determine_target
    from tilelang.transform.pipeline import lower_tile_program

    if not isinstance(target, Target):
        config = determine_target(target)
        target = Target({k: v for k, v in config.items() if k != "host"})
    if str(target.kind.name) != "webgpu":
        raise ValueError(f"WebGPUPassPipelineBody lowers for the webgpu target, not {target.kind.name!r}")
    host = target.host if target.host is not None else Target({"kind": "llvm"})
    return lower_tile_program(mod, target, host)
