"""Device codegen for CUDA: CUDA C through TVM's CUDA codegen (the plugin's intrinsics header is added by the
``tilelang_postprocess_kernel_source`` hook in `tilelang_cuda.hooks`, then nvcc/NVRTC build the cubin)."""

from __future__ import annotations

from typing import Any

from tilelang.backend import DeviceCodegen


def _build_cuda(mod: Any, target: Any) -> Any:
    import tvm_ffi

    return tvm_ffi.get_global_func("target.build.cuda")(mod, target)


CUDA_CODEGEN = DeviceCodegen("cuda", build=_build_cuda)
