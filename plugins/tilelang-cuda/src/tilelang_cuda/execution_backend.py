"""Execution backends for CUDA, in preference order.

`CudaDriverBackend` launches the artifact's ``kernel.cubin`` through the CUDA driver (ctypes on ``libcuda``,
`tilelang_cuda.driver`) on torch CUDA tensors, on torch's current stream. The device kernel's parameters are
the tensors' data pointers and the scalars, in the order TVM's host/device split gave them (recorded from the
device function's signature); grid and block sizes come from the launch metadata, symbolic extents evaluated
from the call's tensor shapes and scalars. Everything up to the cubin works without a GPU.
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


def _evaluate(extent: Any, env: dict[str, int]) -> int:
    if isinstance(extent, int):
        return extent
    return int(eval(str(extent), {"__builtins__": {}}, dict(env)))


def _dynamic_shared_bytes(artifact: Any) -> int:
    """The dynamic shared memory a launch asks for: the "shared.dyn" pool of the device module's kernels.

    ``metadata["shared_bytes"]`` also counts static ("shared") tiles such as the wgmma ``b_core`` scratch,
    which the kernel declares itself; it is the answer when the module is not at hand or a size is symbolic.
    """
    from tilelang.transform import _common as C
    from tilelang.transform.plan_shared_memory import dtype_bytes

    fallback = int(artifact.metadata.get("shared_bytes", 0))
    mod = getattr(artifact, "device_mod", None)
    if mod is None:
        return fallback
    best = 0
    for func in mod.functions.values():
        if not hasattr(func, "body"):
            continue
        total = 0
        for alloc in C.allocations(func.body):
            if C.scope_of(alloc.buffer) == "shared.dyn":
                n = C.num_elements(alloc.buffer.ty.shape)
                if n is None:
                    return fallback
                total += n * dtype_bytes(str(alloc.buffer.ty.dtype))
        best = max(best, total)
    return min(best, fallback) if fallback else best


class _Launcher:
    def __init__(self, artifact: Any):
        from tilelang_cuda.compiler import CUBIN, compile_artifact
        from tilelang_cuda.driver import CudaKernel

        compile_artifact(artifact)
        sig = device_signature(artifact.kernel_source, artifact.name)
        self.kernel_name, self.device_params = sig[0][0], sig[1:]
        meta = artifact.metadata
        self.grid = list(meta.get("grid", [1])) + [1] * (3 - len(meta.get("grid", [1])))
        self.block = list(meta.get("threads", [1])) + [1] * (3 - len(meta.get("threads", [1])))
        self.params = artifact.params
        from tilelang_cuda.tma import tensor_maps_of

        self.tma_maps = dict(meta.get("tma_maps") or tensor_maps_of(artifact.kernel_source))
        # the merged dynamic pool may pad each buffer for alignment: leave room beyond the plain sum
        smem = _dynamic_shared_bytes(artifact)
        self.kernel = CudaKernel(artifact.files[CUBIN], self.kernel_name, smem + 1024 if smem else 0)

    def __call__(self, *args: Any) -> None:
        import torch

        env: dict[str, int] = {}
        by_name: dict[str, Any] = {}
        for p, a in zip(self.params, args):
            by_name[p.name] = a
            if p.is_tensor:
                for dim, size in zip(p.shape, a.shape):
                    if isinstance(dim, str):
                        env[dim] = int(size)
            else:
                env[p.name] = int(a) if not isinstance(a, float) else a
        values = []
        for pname, ctype in self.device_params:
            base = pname[:-4] if pname.endswith("_ptr") else pname
            if pname in self.tma_maps:
                values.append(_tensor_map(self.tma_maps[pname], by_name))
            elif base in by_name and "*" in ctype:
                values.append(ctypes.c_void_p(by_name[base].data_ptr()))
            elif base in env:
                values.append(_SCALAR_CTYPES.get(_c_to_dtype(ctype), ctypes.c_int32)(env[base]))
            else:
                raise TileLangError(f"cannot bind CUDA kernel parameter {pname!r} ({ctype})")
        grid = tuple(_evaluate(g, env) for g in self.grid)
        block = tuple(_evaluate(b, env) for b in self.block)
        stream = torch.cuda.current_stream().cuda_stream
        self.kernel.launch(grid, block, values, stream)  # type: ignore[arg-type]


def _tensor_map(spec: dict[str, Any], by_name: dict[str, Any]) -> Any:
    """The ``CUtensorMap`` of `spec` (artifact metadata ``tma_maps``) for the call's tensor."""
    from tilelang_cuda.driver import encode_tensor_map
    from tilelang_cuda.tma import encode_arguments

    tensor = by_name.get(spec["buffer"])
    if tensor is None:
        raise TileLangError(f"the TMA tensor map needs the tensor {spec['buffer']!r}, which is not an argument")
    dtype = str(tensor.dtype).removeprefix("torch.")
    args = encode_arguments(tuple(tensor.shape), tuple(tensor.stride()), dtype, tensor.element_size(), spec["box"],
                            spec.get("swizzle", 0))
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
