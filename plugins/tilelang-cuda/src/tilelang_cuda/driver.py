"""A minimal CUDA driver API binding through ctypes on ``libcuda`` (no cuda-python needed to launch).

Loads cubins (``cuModuleLoadData``), finds kernels, raises the dynamic shared-memory limit when a kernel needs
more than 48 KiB, and launches on a given stream with ``cuLaunchKernel``. torch owns the context: kernels run
in the primary context torch made current.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Any

from tilelang.errors import TileLangError

CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8


class CudaDriverError(TileLangError):
    """A CUDA driver call failed."""


@functools.cache
def libcuda() -> ctypes.CDLL:
    """The driver library (raises OSError where there is none)."""
    name = ctypes.util.find_library("cuda") or "libcuda.so.1"
    return ctypes.CDLL(name)


def check(result: int, what: str) -> None:
    if result != 0:
        msg = ctypes.c_char_p()
        libcuda().cuGetErrorString(result, ctypes.byref(msg))
        raise CudaDriverError(f"{what} failed: CUDA error {result} ({(msg.value or b'?').decode()})")


class CudaKernel:
    """One ``__global__`` function of a loaded cubin."""

    def __init__(self, cubin: bytes, name: str, dynamic_smem: int):
        lib = libcuda()
        self._image = ctypes.create_string_buffer(cubin)  # must outlive the module load
        self.module = ctypes.c_void_p()
        check(lib.cuModuleLoadData(ctypes.byref(self.module), self._image), "cuModuleLoadData")
        self.func = ctypes.c_void_p()
        check(lib.cuModuleGetFunction(ctypes.byref(self.func), self.module, name.encode()),
              f"cuModuleGetFunction({name})")
        self.dynamic_smem = int(dynamic_smem)
        if self.dynamic_smem > 48 * 1024:
            check(lib.cuFuncSetAttribute(self.func, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         self.dynamic_smem), "cuFuncSetAttribute(max dynamic shared memory)")

    def launch(self, grid: tuple[int, int, int], block: tuple[int, int, int], args: list[Any], stream: int) -> None:
        """Launch with `args` (ctypes values, in kernel parameter order) on `stream` (a CUstream handle)."""
        holders = [ctypes.c_void_p(a) if isinstance(a, int) else a for a in args]
        params = (ctypes.c_void_p * max(1, len(holders)))(*[ctypes.cast(ctypes.byref(h), ctypes.c_void_p)
                                                             for h in holders])
        check(libcuda().cuLaunchKernel(self.func, *[ctypes.c_uint(g) for g in grid],
                                       *[ctypes.c_uint(b) for b in block], ctypes.c_uint(self.dynamic_smem),
                                       ctypes.c_void_p(stream), params, None), "cuLaunchKernel")


class TensorMap(ctypes.Structure):
    """The driver's opaque 128-byte ``CUtensorMap`` (64-byte aligned), passed by value as a kernel parameter."""

    _align_ = 64
    _fields_ = [("opaque", ctypes.c_uint64 * 16)]


def encode_tensor_map(args: dict[str, Any], address: int) -> TensorMap:
    """``cuTensorMapEncodeTiled`` with `args` (`tilelang_cuda.tma.encode_arguments`) for a tensor at `address`."""
    if address % 16:
        raise CudaDriverError(f"TMA needs a 16-byte aligned tensor; its data pointer is {address:#x}")
    rank = int(args["rank"])
    tmap = TensorMap()
    u64, u32 = ctypes.c_uint64, ctypes.c_uint32
    check(libcuda().cuTensorMapEncodeTiled(
        ctypes.byref(tmap), ctypes.c_int(args["data_type"]), u32(rank), ctypes.c_void_p(address),
        (u64 * rank)(*args["global_dim"]), (u64 * (rank - 1))(*args["global_strides"]),
        (u32 * rank)(*args["box_dim"]), (u32 * rank)(*args["element_strides"]), ctypes.c_int(args["interleave"]),
        ctypes.c_int(args["swizzle"]), ctypes.c_int(args["l2_promotion"]), ctypes.c_int(args["oob_fill"])),
        "cuTensorMapEncodeTiled")
    return tmap
