"""``T.import_source``: the user's helper code is compiled with the kernels that call it (CUDA), and refused where
the device codegen compiles no imported source (it used to be dropped silently: nvcc then failed on an undefined
identifier, the reference's dequantising GEMMs among the programs). The refusal elsewhere:
tilelang-cpu's test_import_source_refused.py."""

from __future__ import annotations

from cuda_helpers import needs_nvcc

import tilelang
import tilelang.language as T

HELPER = """
__device__ __forceinline__ float tl_test_twice_plus(float x, float y) { return 2.0f * x + y; }
"""


def _kernel(source=HELPER):
    @T.prim_func
    def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            T.import_source(source)
            tx = T.get_thread_binding()
            B[tx] = T.call_extern("float32", "tl_test_twice_plus", A[tx], T.float32(1))

    return main


def test_imported_code_comes_before_the_kernels_once():
    art = tilelang.lower(_kernel(), target={"kind": "cuda", "arch": "sm_80"}, enable_device_compile=False)
    src = art.kernel_source
    assert src.count("float tl_test_twice_plus(float x, float y)") == 1
    assert src.index("tl_test_twice_plus(float x") < src.index("__global__")


@needs_nvcc
def test_imported_helper_is_compiled_into_the_cubin():
    kernel = tilelang.compile(_kernel(), target={"kind": "cuda", "arch": "sm_80"})
    ptx = kernel.export_ptx()
    # inlined: the kernel computes 2x + 1 (an FMA) and no call is left
    assert "fma.rn.f32" in ptx and "call" not in ptx.split(".entry", 1)[1]
