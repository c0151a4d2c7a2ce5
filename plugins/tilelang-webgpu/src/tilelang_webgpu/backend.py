"""The WebGPU backend's manifest: the single place that registers everything it provides."""

from __future__ import annotations

from tilelang.backend import (
    Backend,
    TargetKind,
    ToolStatus,
    register_lazy_device_codegen,
    register_lazy_execution_backends,
    register_lazy_passes,
    register_lazy_tile_op_impls,
    register_target_kind,
)


def _detect() -> dict | None:
    """A hardware WebGPU adapter (a software one such as llvmpipe is not chosen by ``target="auto"``), with
    ``supports_subgroups`` (subgroup reductions) when it offers the ``subgroup`` feature."""
    try:
        from tilelang_webgpu.adapter import adapter

        found = adapter()
        info = found.info
    except Exception:
        return None
    if str(info.get("adapter_type", "")).lower() == "cpu":
        return None
    return {"kind": "webgpu", "supports_subgroups": "subgroup" in found.features}


# Vector fragment layouts (core's LayoutInference) for the fragments a GEMM accumulator reaches: its thread grid becomes
# runs of 4 columns (flash attention ~3x faster on llvmpipe). Global memory is read and written through vec4 storage
# views wherever a kernel's 4-lane accesses of a tensor are all aligned (`tilelang_webgpu.passes.mark_vector_globals`:
# the tile copies and epilogues of GEMM and attention). Scope "all" (every fragment 4 lanes: elementwise kernels and
# softmax then use vec4 views too) measured on lavapipe: softmax 1024^2 ~1.5-1.9x faster, elementwise add even; it is
# not the default because a reduction's rows then span fewer threads, so the subgroup reductions
# (`tilelang_webgpu.tileops.reduce`, W = T) no longer apply on GPUs with subgroups, and a kernel whose global accesses
# are not provably aligned keeps scalar arrays with 4 accesses per thread (slower than the cyclic layout on llvmpipe).
# Offsets stay 32-bit (``index_bits``, `tilelang.transform.config_index_bitwidth`): WGSL has no 64-bit integers and
# a storage binding holds far fewer than 2**31 elements.
PIPELINE_OPTIONS = {"has_threads": True, "static_shared_memory": True, "fragment_vector_lanes": 4,
                    "fragment_vector_scope": "gemm", "webgpu_vector_globals": True, "index_bits": 32}


def register() -> None:
    """Register the ``webgpu`` target kind, its passes, codegen and execution backends (no heavy imports)."""
    register_target_kind(TargetKind("webgpu", detect=_detect, detect_priority=10,
                                    description="any GPU through WebGPU (wgpu); Mesa llvmpipe on CPU-only machines",
                                    pipeline_options=PIPELINE_OPTIONS))
    register_lazy_device_codegen("webgpu", "tilelang_webgpu.codegen:WEBGPU_CODEGEN")
    register_lazy_execution_backends("webgpu", "tilelang_webgpu.execution_backend:EXECUTION_BACKENDS")
    register_lazy_passes("webgpu", "tilelang_webgpu.pipeline:PASSES")
    register_lazy_tile_op_impls("webgpu", "tilelang_webgpu.tileops:IMPLS")


def toolchain() -> list[ToolStatus]:
    """The wgpu package and its adapter."""
    try:
        import wgpu
    except ImportError:
        return [ToolStatus("wgpu", False, "not installed: pip install wgpu")]
    lines = [ToolStatus("wgpu", True, getattr(wgpu, "__version__", "?"))]
    try:
        from tilelang_webgpu.adapter import adapter_summary, has_feature

        lines.append(ToolStatus("adapter", True, adapter_summary()))
        lines.append(ToolStatus("float16", True, "native (shader-f16)" if has_feature("shader-f16") else
                                "emulated: packed into u32 words, f32 arithmetic (no shader-f16)"))
    except Exception as exc:
        lines.append(ToolStatus("adapter", False, str(exc)))
    return lines


BACKEND = Backend(name="webgpu", target_kinds=("webgpu",), register=register, toolchain=toolchain,
                  sdk_version="1.0",
                  description="WGSL via TVM's WebGPU codegen, executed through wgpu.")
