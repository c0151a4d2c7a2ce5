"""A minimal CUDA driver API binding through ctypes on ``libcuda`` (no cuda-python needed to launch).

Every driver function used has its C prototype declared (`PROTOTYPES`), so ctypes converts and checks arguments
instead of guessing. A `CudaKernel` loads its cubin (``cuModuleLoadData``) once per (device, context) it is
launched in: torch owns the contexts (each device's primary context), and the kernel looks up the one current at
launch. It raises the dynamic shared-memory limit when a kernel needs more than 48 KiB, launches on a given
stream with ``cuLaunchKernel``, and unloads its modules (``cuModuleUnload``) when closed or dropped.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import threading
from typing import Any

from tilelang.errors import TileLangError

CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
CUDA_ERROR_NO_BINARY_FOR_GPU = 209
_c_int, _c_uint, _c_void_p, _c_uint32, _c_uint64 = (ctypes.c_int, ctypes.c_uint, ctypes.c_void_p, ctypes.c_uint32,
                                                    ctypes.c_uint64)


class CudaDriverError(TileLangError):
    """A CUDA driver call failed."""


class CudaDriverMissing(CudaDriverError, OSError):
    """There is no CUDA driver library to load (an OSError too: callers probing for a driver catch that)."""


class TensorMap(ctypes.Structure):
    """The driver's opaque 128-byte ``CUtensorMap`` (64-byte aligned), passed by value as a kernel parameter."""

    _align_ = 64
    _fields_ = [("opaque", ctypes.c_uint64 * 16)]


# name: (restype, argtypes); CUresult is an int enum, handles (CUcontext, CUmodule, CUfunction, CUstream) pointers
PROTOTYPES: dict[str, tuple[Any, list[Any]]] = {
    "cuGetErrorString": (_c_int, [_c_int, ctypes.POINTER(ctypes.c_char_p)]),
    "cuInit": (_c_int, [_c_uint]),
    "cuDevicePrimaryCtxRetain": (_c_int, [ctypes.POINTER(_c_void_p), _c_int]),
    "cuCtxSetCurrent": (_c_int, [_c_void_p]),
    "cuCtxGetCurrent": (_c_int, [ctypes.POINTER(_c_void_p)]),
    "cuCtxGetDevice": (_c_int, [ctypes.POINTER(_c_int)]),
    "cuDeviceGetAttribute": (_c_int, [ctypes.POINTER(_c_int), _c_int, _c_int]),
    "cuCtxPushCurrent": (_c_int, [_c_void_p]),
    "cuCtxPopCurrent": (_c_int, [ctypes.POINTER(_c_void_p)]),
    "cuModuleLoadData": (_c_int, [ctypes.POINTER(_c_void_p), _c_void_p]),
    "cuModuleUnload": (_c_int, [_c_void_p]),
    "cuModuleGetFunction": (_c_int, [ctypes.POINTER(_c_void_p), _c_void_p, ctypes.c_char_p]),
    "cuFuncSetAttribute": (_c_int, [_c_void_p, _c_int, _c_int]),
    "cuLaunchKernel": (_c_int, [_c_void_p, _c_uint, _c_uint, _c_uint, _c_uint, _c_uint, _c_uint, _c_uint, _c_void_p,
                                ctypes.POINTER(_c_void_p), ctypes.POINTER(_c_void_p)]),
    "cuLaunchCooperativeKernel": (_c_int, [_c_void_p, _c_uint, _c_uint, _c_uint, _c_uint, _c_uint, _c_uint, _c_uint,
                                           _c_void_p, ctypes.POINTER(_c_void_p)]),
    "cuTensorMapEncodeTiled": (_c_int, [ctypes.POINTER(TensorMap), _c_int, _c_uint32, _c_void_p,
                                        ctypes.POINTER(_c_uint64), ctypes.POINTER(_c_uint64),
                                        ctypes.POINTER(_c_uint32), ctypes.POINTER(_c_uint32), _c_int, _c_int, _c_int,
                                        _c_int]),
}


def declare(lib: Any) -> Any:
    """Set restype/argtypes of every `PROTOTYPES` function `lib` has (a driver too old for one leaves it out)."""
    for name, (restype, argtypes) in PROTOTYPES.items():
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype, fn.argtypes = restype, argtypes
    return lib


@functools.cache
def libcuda() -> ctypes.CDLL:
    """The driver library with its prototypes declared; `CudaDriverMissing` where there is none."""
    name = ctypes.util.find_library("cuda") or "libcuda.so.1"
    try:
        lib = ctypes.CDLL(name)
    except OSError as exc:
        raise CudaDriverMissing(f"the CUDA driver library ({name}) cannot be loaded: launching CUDA kernels needs an "
                                f"NVIDIA GPU and its driver (compiling to cubin does not). {exc}") from None
    return declare(lib)


def _function(name: str) -> Any:
    fn = getattr(libcuda(), name, None)
    if fn is None:
        raise CudaDriverError(f"the CUDA driver has no {name}: update the NVIDIA driver")
    return fn


def check(result: int, what: str) -> None:
    """Raise `CudaDriverError` naming `what` and the driver's message when `result` is not CUDA_SUCCESS."""
    if result != 0:
        msg = ctypes.c_char_p()
        libcuda().cuGetErrorString(result, ctypes.byref(msg))
        raise CudaDriverError(f"{what} failed: CUDA error {result} ({(msg.value or b'?').decode()})")


def current_context() -> tuple[int, int]:
    """``(device ordinal, context handle)`` of the calling thread's current context; where none is current yet
    (a thread that has not touched CUDA), torch's current device's primary context, made current (the context
    torch and the CUDA runtime use; retained once and never released, like theirs)."""
    lib = libcuda()
    ctx = _c_void_p()
    check(lib.cuCtxGetCurrent(ctypes.byref(ctx)), "cuCtxGetCurrent")
    if not ctx.value:
        ctx = _primary_context(_torch_device())
        check(lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    device = _c_int()
    check(lib.cuCtxGetDevice(ctypes.byref(device)), "cuCtxGetDevice")
    return int(device.value), int(ctx.value or 0)


def _torch_device() -> int:
    """torch's current CUDA device (whose stream a launch gets), 0 without torch."""
    try:
        import torch

        return int(torch.cuda.current_device())
    except Exception:  # no torch, or one without CUDA
        return 0


def _local_arch() -> str:
    """``sm_XY`` of torch's current CUDA device (``?`` without torch)."""
    try:
        import torch

        major, minor = torch.cuda.get_device_capability()
        return f"sm_{major}{minor}"
    except Exception:
        return "?"


@functools.cache
def _primary_context(device: int) -> _c_void_p:
    lib = libcuda()
    check(lib.cuInit(0), "cuInit")
    ctx = _c_void_p()
    check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), device), f"cuDevicePrimaryCtxRetain(device {device})")
    return ctx


class CudaKernel:
    """One ``__global__`` function of a cubin, loaded once per (device, context) it runs in."""

    def __init__(self, cubin: bytes, name: str, dynamic_smem: int, ptx: str | bytes | None = None,
                 arch: str | None = None, cooperative: bool = False):
        self._image = ctypes.create_string_buffer(cubin)  # must outlive every module loaded from it
        self.cooperative = cooperative  # launched with cuLaunchCooperativeKernel (T.sync_grid)
        # a GPU of a later architecture than the cubin's loads the PTX instead (the driver JIT-compiles it)
        self._ptx = ctypes.create_string_buffer(ptx.encode() if isinstance(ptx, str) else ptx) if ptx else None
        self.arch = arch
        self.name = name
        self.dynamic_smem = int(dynamic_smem)
        self._modules: dict[tuple[int, int], tuple[_c_void_p, _c_void_p]] = {}
        self._lib: Any = None  # the driver the modules were loaded through (unloaded through it too)
        self._lock = threading.Lock()
        self.function()  # load in the current context now: a bad cubin fails here, not at the first launch

    def function(self) -> _c_void_p:
        """The ``CUfunction`` in the current context (its module loaded on first use there)."""
        key = current_context()
        with self._lock:
            hit = self._modules.get(key)
            if hit is None:
                hit = self._modules[key] = self._load()
            return hit[1]

    def _load(self) -> tuple[_c_void_p, _c_void_p]:
        lib = self._lib = libcuda()
        module, func = _c_void_p(), _c_void_p()
        result = lib.cuModuleLoadData(ctypes.byref(module), self._image)
        if result == CUDA_ERROR_NO_BINARY_FOR_GPU and self._ptx is not None:
            result = lib.cuModuleLoadData(ctypes.byref(module), self._ptx)
        if result == CUDA_ERROR_NO_BINARY_FOR_GPU:
            raise CudaDriverError(f"kernel {self.name!r} was built for {self.arch or 'another architecture'}, which "
                                  f"this GPU ({_local_arch()}) cannot run; compile for it with target={{'kind': "
                                  f"'cuda', 'arch': '{_local_arch()}'}} (or target='cuda', the local GPU's arch)")
        check(result, "cuModuleLoadData")
        try:
            check(lib.cuModuleGetFunction(ctypes.byref(func), module, self.name.encode()),
                  f"cuModuleGetFunction({self.name})")
            if self.dynamic_smem > 48 * 1024:
                result = lib.cuFuncSetAttribute(func, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                self.dynamic_smem)
                if result != 0:
                    raise CudaDriverError(self._shared_memory_refused(result))
        except CudaDriverError:
            lib.cuModuleUnload(module)
            raise
        return module, func

    def _shared_memory_refused(self, result: int) -> str:
        """Why the driver refused the kernel's dynamic shared memory: more than this GPU gives a block."""
        lib = libcuda()
        device, limit = _c_int(), _c_int()
        known = (lib.cuCtxGetDevice(ctypes.byref(device)) == 0 and lib.cuDeviceGetAttribute(
            ctypes.byref(limit), CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device.value) == 0)
        allows = f"allows {limit.value} bytes per block" if known else "allows less per block"
        return (f"kernel {self.name!r} needs {self.dynamic_smem} bytes of dynamic shared memory; this GPU "
                f"({_local_arch()}) {allows} (cuFuncSetAttribute: CUDA error {result}). Use smaller tiles or fewer "
                f"pipeline stages (num_stages)")

    def launch(self, grid: tuple[int, int, int], block: tuple[int, int, int], args: list[Any], stream: int) -> None:
        """Launch with `args` (ctypes values, in kernel parameter order) on `stream` (a CUstream handle of the
        current context)."""
        func = self.function()
        holders = [ctypes.c_void_p(a) if isinstance(a, int) else a for a in args]
        params = (ctypes.c_void_p * max(1, len(holders)))(*[ctypes.cast(ctypes.byref(h), ctypes.c_void_p)
                                                             for h in holders])
        dims = [*[ctypes.c_uint(g) for g in grid], *[ctypes.c_uint(b) for b in block], ctypes.c_uint(self.dynamic_smem),
                ctypes.c_void_p(stream), params]
        if self.cooperative:  # every block resident at once, as a grid barrier needs (or the launch fails)
            check(libcuda().cuLaunchCooperativeKernel(func, *dims), "cuLaunchCooperativeKernel")
            return
        check(libcuda().cuLaunchKernel(func, *dims, None), "cuLaunchKernel")

    @property
    def loaded_in(self) -> list[tuple[int, int]]:
        """The (device, context) pairs this kernel has a module in."""
        return list(self._modules)

    def close(self) -> None:
        """Unload every module (each in its own context); the kernel loads again if launched afterwards."""
        with self._lock:
            modules, self._modules = self._modules, {}
        if not modules:
            return
        lib = self._lib
        errors = []
        for (device, ctx), (module, _) in modules.items():
            pushed = lib.cuCtxPushCurrent(_c_void_p(ctx)) == 0
            try:
                result = lib.cuModuleUnload(module)
                if result != 0:
                    errors.append(f"device {device}: CUDA error {result}")
            finally:
                if pushed:
                    lib.cuCtxPopCurrent(ctypes.byref(_c_void_p()))
        if errors:
            raise CudaDriverError(f"cuModuleUnload({self.name}) failed: {'; '.join(errors)}")

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown or a context already destroyed: the driver frees it anyway
            pass


def encode_tensor_map(args: dict[str, Any], address: int) -> TensorMap:
    """``cuTensorMapEncodeTiled`` with `args` (`tilelang_cuda.tma.encode_arguments`) for a tensor at `address`."""
    if address % 16:
        raise CudaDriverError(f"TMA needs a 16-byte aligned tensor; its data pointer is {address:#x}")
    rank = int(args["rank"])
    tmap = TensorMap()
    u64, u32 = ctypes.c_uint64, ctypes.c_uint32
    check(_function("cuTensorMapEncodeTiled")(
        ctypes.byref(tmap), ctypes.c_int(args["data_type"]), u32(rank), ctypes.c_void_p(address),
        (u64 * rank)(*args["global_dim"]), (u64 * (rank - 1))(*args["global_strides"]),
        (u32 * rank)(*args["box_dim"]), (u32 * rank)(*args["element_strides"]), ctypes.c_int(args["interleave"]),
        ctypes.c_int(args["swizzle"]), ctypes.c_int(args["l2_promotion"]), ctypes.c_int(args["oob_fill"])),
        "cuTensorMapEncodeTiled")
    return tmap
