"""Kernels with IKET events (module-level file: the front end reads kernel source)."""

from __future__ import annotations

import tilelang.language as T
from tilelang_cuda.tools import iket


def marked_add(n: int = 256, payload: bool = False):
    @T.prim_func
    def marked_add(A: T.Tensor((n,), T.float32), B: T.Tensor((n,), T.float32)):
        with T.Kernel(T.ceildiv(n, 128), threads=128) as bx:
            with iket.range("body"):
                iket.mark("load", payload=iket.payload(A[bx], dtype="float32") if payload else None)
                for i in T.Parallel(128):
                    B[bx * 128 + i] = A[bx * 128 + i] + 1.0
                iket.mark("stored")

    return marked_add
