"""Execution backends for CUDA, in preference order.

`CudaDriverBackend` launches the artifact's ``kernel.cubin`` through the CUDA driver (ctypes on ``libcuda``,
`tilelang_cuda.driver`) on torch CUDA tensors, on torch's current stream. The device kernel's parameters are
the tensors' data pointers and the scalars, in the order TVM's host/device split gave them (recorded from the
device function's signature); every device function of core's launch plan (``artifact.launch_plan``) runs in
order, its grid, block and scalar parameters bound to the call by `tilelang.engine.launch_plan.bind`.
Everything up to the cubin works without a GPU.
"""

from __future__ import annotations

import ctypes
import re
from typing import Any

from tilelang.backend import ExecutionBackend
from tilelang.errors import ExecutionBackendUnavailable, TileLangError

_SCALAR_CTYPES = {"int32": ctypes.c_int32, "int64": ctypes.c_int64, "float32": ctypes.c_float,
                  "float64": ctypes.c_double, "uint32": ctypes.c_uint32, "bool": ctypes.c_bool}


def device_signature(source: str, name: str) -> list[tuple[str, str]]:
    """``[(param name, C type)]`` of the ``__global__`` function `name` (or the first one) in CUDA `source`."""
    pattern = re.compile(r'extern "C" __global__ void(?: __cluster_dims__\([\d, ]+\))?'
                         r'(?: __launch_bounds__\([\d, ]+\))? (\w+)\(([^)]*)\)\s*\{')
    found = pattern.findall(source)
    if not found:
        raise TileLangError("no __global__ function found in the CUDA source")
    fname, params = next(((f, p) for f, p in found if f.startswith(name)), found[0])
    out = []
    for p in filter(None, (s.strip() for s in params.split(","))):
        words = p.replace("__restrict__", "").split()
        out.append((words[-1].lstrip("*"), " ".join(words[:-1])))
    return [(fname, ""), *out]


def _dynamic_shared_bytes(artifact: Any) -> int:
    """The dynamic shared memory a launch asks for: the largest "shared.dyn" pool of the launch plan's kernels.

    ``metadata["shared_bytes"]`` also counts static ("shared") tiles such as the wgmma ``b_core`` scratch,
    which the kernel declares itself; it is the answer when there is no plan or a pool's size is symbolic.
    """
    fallback = int(artifact.metadata.get("shared_bytes", 0))
    plan = getattr(artifact, "launch_plan", None)
    if plan is None:
        return fallback
    sizes = [k.dynamic_shared_bytes for k in plan.kernels]
    if not all(isinstance(n, int) for n in sizes):
        return fallback
    best = max(sizes, default=0)
    return min(best, fallback) if fallback else best


class _Kernel:
    """One device function of the plan: the loaded ``CUfunction`` and what each source parameter takes (a
    tensor map by its metadata entry, else the plan's device parameter of that name)."""

    def __init__(self, artifact: Any, launch: Any, tma_maps: dict[str, Any], smem: int):
        from tilelang_cuda.compiler import CUBIN, PTX
        from tilelang_cuda.driver import CudaKernel
        from tilelang_cuda.launch_markers import uses_grid_sync

        sig = device_signature(artifact.kernel_source, launch.name)
        self.name, self.device_params = sig[0][0], sig[1:]
        by_name = {p.name: i for i, p in enumerate(launch.params)}
        self.slots: list[tuple[str, Any, str]] = []  # (kind, tensor-map spec / plan position, C type)
        for pname, ctype in self.device_params:
            if pname in tma_maps:
                self.slots.append(("tma", tma_maps[pname], ctype))
                continue
            pos = by_name.get(pname)
            if pos is None or (launch.params[pos].is_pointer and launch.params[pos].tensor is None):
                raise TileLangError(f"cannot bind CUDA kernel parameter {pname!r} ({ctype}) of {self.name!r}: the "
                                    f"launch plan binds {', '.join(by_name) or 'no parameters'}")
            self.slots.append(("pointer" if launch.params[pos].is_pointer else "scalar", pos, ctype))
        # the merged dynamic pool may pad each buffer for alignment: leave room beyond the plain sum
        self.kernel = CudaKernel(artifact.files[CUBIN], self.name, smem + 1024 if smem else 0,
                                 ptx=artifact.files.get(PTX), arch=artifact.target.get("arch"),
                                 cooperative=uses_grid_sync(artifact.kernel_source, self.name))

    def values(self, bound: Any, by_name: dict[str, Any]) -> list[Any]:
        out = []
        for kind, what, ctype in self.slots:
            if kind == "tma":
                out.append(_tensor_map(what, by_name))
            elif kind == "pointer":
                out.append(ctypes.c_void_p(bound.args[what].data_ptr()))
            else:
                out.append(_SCALAR_CTYPES.get(_c_to_dtype(ctype), ctypes.c_int32)(bound.args[what]))
        return out


class _Launcher:
    def __init__(self, artifact: Any):
        from tilelang_cuda.compiler import compile_artifact
        from tilelang_cuda.tma import tensor_maps_of

        plan = getattr(artifact, "launch_plan", None)
        if plan is None:
            raise ExecutionBackendUnavailable(f"cuda: kernel {artifact.name!r} carries no launch plan: recompile "
                                              "it (clear the kernel cache)")
        compile_artifact(artifact)
        self.plan = plan
        self.params = artifact.params
        tma_maps = dict(artifact.metadata.get("tma_maps") or tensor_maps_of(artifact.kernel_source))
        smem = _dynamic_shared_bytes(artifact)
        self.kernels = [_Kernel(artifact, launch, tma_maps, smem) for launch in plan.kernels]

    def __call__(self, *args: Any) -> None:
        import torch

        from tilelang.backend.sdk import bind_launch

        bound = bind_launch(self.plan, args)
        by_name = {p.name: a for p, a in zip(self.params, args)}
        stream = torch.cuda.current_stream().cuda_stream
        for kernel, launch in zip(self.kernels, bound):
            values = kernel.values(launch, by_name)
            kernel.kernel.launch(launch.grid, launch.block, values, stream)  # type: ignore[arg-type]


def _tensor_map(spec: dict[str, Any], by_name: dict[str, Any]) -> Any:
    """The ``CUtensorMap`` of `spec` (artifact metadata ``tma_maps``) for the call's tensor."""
    from tilelang_cuda.driver import encode_tensor_map
    from tilelang_cuda.tma import encode_arguments

    tensor = by_name.get(spec["buffer"])
    if tensor is None:
        raise TileLangError(f"the TMA tensor map needs the tensor {spec['buffer']!r}, which is not an argument")
    dtype = str(tensor.dtype).removeprefix("torch.")
    args = encode_arguments(tuple(tensor.shape), tuple(tensor.stride()), dtype, tensor.element_size(), spec["box"],
                            spec.get("swizzle", 0), spec.get("data_type"))
    return encode_tensor_map(args, tensor.data_ptr())


def _c_to_dtype(ctype: str) -> str:
    return {"int": "int32", "long": "int64", "float": "float32", "double": "float64", "bool": "bool",
            "unsigned int": "uint32", "int64_t": "int64"}.get(ctype.strip(), "int32")


class CudaDriverBackend(ExecutionBackend):
    """Launches cubins through the CUDA driver on torch CUDA tensors (current torch stream)."""

    name = "cuda_driver"
    reference_names = ("tvm_ffi", "nvrtc", "cython")
    aliases = ("ctypes",)

    def supports_target(self, target: Any) -> bool:
        return "cutedsl" not in [str(k) for k in getattr(target, "keys", ())]
    description = "CUDA driver launch of nvcc/NVRTC cubins on torch CUDA tensors"
    torch_device_type = "cuda"
    default_alignment = 16

    def unavailable_reason(self) -> str | None:
        try:
            import torch
        except ImportError:
            return "torch is not installed"
        if not torch.cuda.is_available() or getattr(torch.version, "hip", None):
            return "no CUDA GPU is visible to torch"
        try:
            from tilelang_cuda.driver import libcuda

            libcuda()
        except OSError as exc:
            return f"the CUDA driver library (libcuda) cannot be loaded: {exc}"
        return None

    def load(self, artifact: Any) -> Any:
        reason = self.unavailable_reason()
        if reason is not None:
            raise ExecutionBackendUnavailable(f"{self.name}: {reason}")
        import torch

        torch.cuda.init()  # a current primary context for the driver calls
        return _Launcher(artifact)

    def export_files(self, artifact: Any) -> dict[str, bytes]:
        """``kernel.cubin`` and ``kernel.ptx``: everything needed to launch again without compiling."""
        from tilelang_cuda.compiler import CUBIN, PTX, compile_artifact

        compile_artifact(artifact)
        return {CUBIN: artifact.files[CUBIN], PTX: artifact.files[PTX]}

    def export_ptx(self, artifact: Any) -> str:
        from tilelang_cuda.compiler import compile_artifact

        return compile_artifact(artifact).ptx

    def export_sass(self, artifact: Any) -> str:
        from tilelang_cuda.compiler import compile_artifact, sass_of

        return sass_of(compile_artifact(artifact).cubin)


EXECUTION_BACKENDS = [CudaDriverBackend()]
