"""Kernel launches with CUDA launch attributes: ``T.ClusterKernel`` (thread-block clusters, sm_90+) and
``T.CUDASourceCodeKernel`` (a launch of hand-written CUDA source)."""

from __future__ import annotations

from typing import Any

from tilelang.errors import KernelTypeError
from tilelang.language import Kernel
from tilelang_cuda.language._emit import call, const_int, public

__all__ = ["ClusterKernel", "load_cuda_source", "normalize_cluster_dims"]

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


class _SourceKernel(_ClusterKernel):
    """A launch whose whole body is one ``tl.source_kernel`` call: the CUDA backend emits the user's source for
    it (`tilelang_cuda.source_kernels`)."""

    def __init__(self, *grid: Any, threads: Any, cluster_dims: Any):
        Kernel.__init__(self, *grid, threads=threads)
        self.cluster_dims = normalize_cluster_dims(cluster_dims) if cluster_dims is not None else None

    def __enter__(self) -> Any:
        from tvm.script.ir_builder import tirx as B

        bound = Kernel.__enter__(self)
        if self.cluster_dims is not None:
            B.evaluate(call("cluster_dims", "handle", list(self.cluster_dims)))
        return bound


def _kernel_arguments(params: list[Any]) -> list[Any]:
    """What the generated kernel passes to the user's: each tensor parameter's data pointer (in parameter order),
    then the symbolic extents and strides of those tensors (the device function orders them as it orders every
    kernel's scalar parameters)."""
    from tvm import tirx

    from tilelang.ir import region as R

    pointers, sizes, seen = [], [], set()
    for p in params:
        if not R.is_buffer(p):
            continue
        pointers.append(p.data)
        for e in [*p.shape, *(p.strides or ())]:
            if isinstance(e, tirx.Var) and e.name not in seen:
                seen.add(e.name)
                sizes.append(e)
    return pointers + sizes


@public
def CUDASourceCodeKernel(*blocks: Any, threads: Any = None, source_code_or_path: Any = None,
                         entry_name: str = "main_kernel", cluster_dims: Any = None, prelude: str | None = None) -> None:
    """Launch a hand-written CUDA kernel from a TileLang program (the reference's construct):
    ``T.CUDASourceCodeKernel(T.ceildiv(N, 128), threads=128, source_code_or_path=src, entry_name="copy")``.

    `source_code_or_path`: CUDA source text, or the path of a file holding it. `entry_name`: the ``__global__``
    kernel of that source to launch; it receives the data pointers of the program's tensor parameters (in
    parameter order) followed by the symbolic sizes of those tensors, as a generated kernel would. `prelude` is
    put in front of the source; `cluster_dims` launches clusters (sm_90+). The source is compiled with this
    backend's helper prologue in front of it (the ``tilelang_cuda/*.cuh`` headers it calls into); an `entry_name`
    the source does not declare is reported (with the kernels it does declare) when the program is lowered. Only
    the CUDA backend compiles it.
    """
    import tvm

    from tilelang.backend.sdk import require_build_state

    st = require_build_state("T.CUDASourceCodeKernel")
    if not isinstance(entry_name, str) or not entry_name.strip():
        raise KernelTypeError(f"T.CUDASourceCodeKernel: entry_name must be a non-empty string, got {entry_name!r}")
    source = load_cuda_source(source_code_or_path)
    if prelude is not None:
        source = f"{prelude}\n{source}"
    from tvm.script.ir_builder import tirx as B

    with _SourceKernel(*blocks, threads=threads, cluster_dims=cluster_dims):
        args = _kernel_arguments(st.params)
        B.evaluate(call("source_kernel", "handle", [tvm.ir.StringImm(source.encode().hex()),
                                                    tvm.ir.StringImm(entry_name.strip()), *args]))


_SOURCE_SUFFIXES = (".cu", ".cuh", ".cuda", ".cpp", ".cc", ".c", ".h", ".hpp")


def load_cuda_source(source_code_or_path: Any) -> str:
    """The CUDA source text `source_code_or_path` names: a path (str or PathLike) of an existing file is read;
    text that looks like code (a newline, ``__global__``, ``#include``, ``extern "C"``) is the source itself; a
    string that looks like a path to a missing file is a FileNotFoundError."""
    import os

    if source_code_or_path is None:
        raise KernelTypeError("T.CUDASourceCodeKernel needs source_code_or_path: CUDA source text or a .cu path")
    is_path = isinstance(source_code_or_path, os.PathLike)
    text = os.fspath(source_code_or_path) if is_path else source_code_or_path
    if not isinstance(text, str) or not text.strip():
        raise KernelTypeError("T.CUDASourceCodeKernel: source_code_or_path must be CUDA source text or a path, "
                              f"got {source_code_or_path!r}")
    path = os.path.expanduser(text)
    if (is_path or "\n" not in text) and os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            return f.read()
    if not is_path and any(m in text for m in ("\n", "__global__", "#include", 'extern "C"')):
        return text
    raise FileNotFoundError(f"T.CUDASourceCodeKernel: CUDA source file not found: {text}")
