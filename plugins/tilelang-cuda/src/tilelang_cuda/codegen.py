"""Device codegen for CUDA: CUDA C through TVM's CUDA codegen; `postprocess` puts the plugin's inline-PTX helpers
in front of it and `finalize` builds ``kernel.cubin`` / ``kernel.ptx`` (nvcc or NVRTC) from the final source."""

from __future__ import annotations

from typing import Any

from tilelang.backend import DeviceBuild, DeviceCodegen


def _build_cuda(mod: Any, target: Any) -> Any:
    import tvm_ffi

    return tvm_ffi.get_global_func("target.build.cuda")(mod, target)


def postprocess_cuda(source: str, target: Any) -> str:
    """The intrinsics header (`tilelang_cuda.intrinsics`), TVM's bare special-float constants repaired
    (`tilelang_cuda.source_fixes`), tensor-map parameters (`tilelang_cuda.tma`) and launch attributes
    (`tilelang_cuda.launch_markers`)."""
    from tilelang_cuda import launch_markers
    from tilelang_cuda.intrinsics import with_header
    from tilelang_cuda.source_fixes import fix_special_floats
    from tilelang_cuda.tma import rewrite_source

    return launch_markers.apply(with_header(rewrite_source(fix_special_floats(source))))


def finalize_cuda(source: str, target: Any) -> DeviceBuild:
    """``kernel.cubin``, ``kernel.ptx`` and the ptxas report of the final source for the target's ``arch``, with
    the TMA descriptors the launch encodes; on a machine with neither nvcc nor NVRTC the artifact stays
    source-only (``metadata["cuda_compiler"] == "unavailable"``: launching it says why)."""
    from tilelang_cuda.compiler import CUBIN, PTX, compile_source, compiler_available, resource_metadata
    from tilelang_cuda.tma import tensor_maps_of

    out = DeviceBuild()
    maps = tensor_maps_of(source)
    if maps:
        out.metadata["tma_maps"] = maps
    if not compiler_available():
        out.metadata["cuda_compiler"] = "unavailable"
        return out
    arch = str(target.attrs["arch"]) if "arch" in target.attrs else "sm_80"
    binary = compile_source(source, arch)
    out.files.update({CUBIN: binary.cubin, PTX: binary.ptx.encode()})
    out.metadata.update(resource_metadata(binary))
    return out


CUDA_CODEGEN = DeviceCodegen("cuda", build=_build_cuda, postprocess=postprocess_cuda, finalize=finalize_cuda)
