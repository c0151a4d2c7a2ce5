"""Kernel launches with CUDA launch attributes: ``T.ClusterKernel`` (thread-block clusters, sm_90+)."""

from __future__ import annotations

from typing import Any

from tilelang.errors import KernelTypeError
from tilelang.language import Kernel
from tilelang_cuda.language._emit import call, const_int, public

__all__ = ["ClusterKernel", "normalize_cluster_dims"]

MAX_PORTABLE_CLUSTER = 8


def normalize_cluster_dims(cluster_dims: Any) -> list[int]:
    """``2`` / ``(2, 1)`` / ``[2, 1, 1]`` -> ``[x, y, z]`` (KernelTypeError for a non-positive or too large one)."""
    dims = [cluster_dims] if isinstance(cluster_dims, int) else list(cluster_dims)
    if not 1 <= len(dims) <= 3:
        raise KernelTypeError(f"cluster_dims takes 1 to 3 extents, got {cluster_dims!r}")
    out = [const_int(d, "cluster_dims") for d in dims] + [1] * (3 - len(dims))
    if any(d < 1 for d in out):
        raise KernelTypeError(f"cluster_dims must be positive, got {out}")
    if out[0] * out[1] * out[2] > MAX_PORTABLE_CLUSTER:
        raise KernelTypeError(f"a cluster of {out} has {out[0] * out[1] * out[2]} CTAs; the portable limit is "
                              f"{MAX_PORTABLE_CLUSTER}")
    return out


class _ClusterKernel(Kernel):
    """`tilelang.language.Kernel` whose launch groups blocks into clusters of `cluster_dims` CTAs."""

    def __init__(self, *grid: Any, cluster_dims: Any, threads: Any = None, prelude: Any = None):
        super().__init__(*grid, threads=threads, prelude=prelude)
        self.cluster_dims = normalize_cluster_dims(cluster_dims)
        for g, c, axis in zip(self.grid, self.cluster_dims, "xyz"):
            if isinstance(g, int) and g % c:
                raise KernelTypeError(f"T.ClusterKernel: grid extent {g} along {axis} is not a multiple of the "
                                      f"cluster extent {c}")

    def __enter__(self) -> Any:
        from tvm.script.ir_builder import tirx as B

        bound = super().__enter__()
        # first statement of the kernel: the lowering checks the target and marks the kernel __cluster_dims__
        B.evaluate(call("cluster_dims", "handle", list(self.cluster_dims)))
        return bound


@public
def ClusterKernel(*blocks: Any, cluster_dims: Any, threads: Any = None, prelude: str | None = None) -> Any:
    """``with T.ClusterKernel(gx, gy, cluster_dims=2, threads=128) as (bx, by):`` -- `T.Kernel` whose blocks are
    launched in clusters of `cluster_dims` CTAs (sm_90+; the kernel is compiled with ``__cluster_dims__``)."""
    return _ClusterKernel(*blocks, cluster_dims=cluster_dims, threads=threads, prelude=prelude)


@public
def CUDASourceCodeKernel(*blocks: Any, threads: Any = None, source_code_or_path: Any = None,
                         entry_name: str = "main_kernel", cluster_dims: Any = None, prelude: str | None = None) -> Any:
    """The reference's launch of a hand-written CUDA kernel (inline source or a ``.cu`` path) from a TileLang
    program. Not offered by the tilelang-cuda backend, whose device code is always generated from the program:
    calling it raises NotImplementedError (write the kernel in TileLang, or load the ``.cu`` with
    ``tilelang_cuda.contrib.nvcc`` and launch it yourself)."""
    raise NotImplementedError("T.CUDASourceCodeKernel (launching user CUDA source) is not implemented by the "
                              "tilelang-cuda backend; write the kernel in TileLang or build the .cu with "
                              "tilelang_cuda.contrib.nvcc")
