"""``T.device_assert`` on CUDA (`tilelang_cuda.tileops.debug`): printf of the message and the failing thread,
then ``__trap()``."""

from __future__ import annotations

import warnings

from cuda_helpers import needs_nvcc

import tilelang
import tilelang.language as T


@T.prim_func
def checked_copy(x: T.Tensor((256,), T.int32), y: T.Tensor((256,), T.int32)):
    with T.Kernel(2, threads=128) as bx:
        for i in T.Parallel(128):
            T.device_assert(x[bx * 128 + i] >= 0, 'x must be "non-negative" (100% of it)\nsee the docs')
            y[bx * 128 + i] = x[bx * 128 + i]


@needs_nvcc
def test_device_assert_builds_to_cubin_with_printf_and_trap():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        art = tilelang.lower(checked_copy, target={"kind": "cuda", "arch": "sm_90a"})
    # "T.device_assert on target 'cuda': not supported by this backend" before
    assert "kernel.cubin" in art.files
    src = art.kernel_source
    assert ('printf("x must be \\"non-negative\\" (100%% of it)\\nsee the docs (block (%d, %d, %d), '
            'thread (%d, %d, %d))\\n", ((int)blockIdx.x), 0, 0, ((int)threadIdx.x), 0, 0);') in src, src[-1500:]
    assert src.index("if (x_ptr[") < src.index("printf(") < src.index("__trap();") < src.index("y_ptr[")
    ptx = art.files["kernel.ptx"]
    ptx = ptx.decode() if isinstance(ptx, bytes) else str(ptx)
    assert "vprintf" in ptx and "trap;" in ptx
