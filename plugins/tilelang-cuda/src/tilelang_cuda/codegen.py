"""Device codegen for CUDA: CUDA C through TVM's CUDA codegen."""

from __future__ import annotations

from typing import Any

from tilelang.backend import DeviceCodegen


def _build_cuda(mod: Any, target: Any) -> Any:
    import tvm_ffi

    return tvm_ffi.get_global_func("target.build.cuda")(mod, target)


CUDA_CODEGEN = DeviceCodegen("cuda", build=_build_cuda)
