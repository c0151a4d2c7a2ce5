"""A minimal HIP runtime binding through ctypes on ``libamdhip64`` (no hip-python needed to launch).

Loads hsaco code objects (``hipModuleLoadData``), finds kernels (``hipModuleGetFunction``) and launches them on a
given stream with ``hipModuleLaunchKernel``, the explicit kernel arguments passed as one packed buffer
(``HIP_LAUNCH_PARAM_BUFFER_POINTER``, laid out at the offsets the code object's metadata gives). torch owns the
device and its streams, so the library torch already loaded is the one used: a second copy of the runtime would
not know torch's streams.

No ``hipFuncSetAttribute``: ROCm kernels use static LDS only (the pipeline's ``static_shared_memory``), sized in
the code object itself, so no dynamic shared memory limit ever needs raising.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
from typing import Any

from tilelang.errors import TileLangError

HIP_LAUNCH_PARAM_BUFFER_POINTER = 0x01
HIP_LAUNCH_PARAM_BUFFER_SIZE = 0x02
HIP_LAUNCH_PARAM_END = 0x03

_c_int_p = ctypes.POINTER(ctypes.c_int)
_c_void_pp = ctypes.POINTER(ctypes.c_void_p)

# name -> (restype, argtypes); hipError_t is a C enum (int)
SIGNATURES: dict[str, tuple[Any, list[Any]]] = {
    "hipInit": (ctypes.c_int, [ctypes.c_uint]),
    "hipGetErrorString": (ctypes.c_char_p, [ctypes.c_int]),
    "hipGetErrorName": (ctypes.c_char_p, [ctypes.c_int]),
    "hipGetDevice": (ctypes.c_int, [_c_int_p]),
    "hipModuleLoadData": (ctypes.c_int, [_c_void_pp, ctypes.c_void_p]),
    "hipModuleUnload": (ctypes.c_int, [ctypes.c_void_p]),
    "hipModuleGetFunction": (ctypes.c_int, [_c_void_pp, ctypes.c_void_p, ctypes.c_char_p]),
    "hipModuleLaunchKernel": (ctypes.c_int, [ctypes.c_void_p,  # hipFunction_t
                                             ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,  # grid
                                             ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,  # block
                                             ctypes.c_uint,  # dynamic shared memory bytes
                                             ctypes.c_void_p,  # hipStream_t
                                             _c_void_pp, _c_void_pp]),  # kernelParams, extra
}


class HipError(TileLangError):
    """A HIP runtime call failed."""


def declare(lib: Any) -> Any:
    """Set ``restype`` / ``argtypes`` of every function this module calls on `lib`; returns `lib`."""
    for name, (restype, argtypes) in SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


def _loaded_copy() -> str | None:
    """The path of a libamdhip64 already mapped into this process (torch's), if any."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.rsplit(None, 1)[-1]
                if "libamdhip64.so" in os.path.basename(path):
                    return path
    except OSError:
        pass
    return None


def candidates() -> list[str]:
    """Where to look for libamdhip64, most preferred first (torch's copy before any other)."""
    out = []
    loaded = _loaded_copy()
    if loaded:
        out.append(loaded)
    try:
        import torch

        torch_lib = os.path.join(os.path.dirname(torch.__file__), "lib", "libamdhip64.so")
        if os.path.exists(torch_lib):
            out.append(torch_lib)
    except ImportError:
        pass
    for root in filter(None, (os.environ.get("ROCM_PATH"), os.environ.get("HIP_PATH"), "/opt/rocm")):
        out.append(os.path.join(root, "lib", "libamdhip64.so"))
    found = ctypes.util.find_library("amdhip64")
    if found:
        out.append(found)
    out += ["libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"]
    return list(dict.fromkeys(out))


@functools.cache
def libhip() -> ctypes.CDLL:
    """The HIP runtime library with its signatures declared (raises OSError naming what was tried)."""
    errors = []
    for name in candidates():
        try:
            return declare(ctypes.CDLL(name))
        except (OSError, AttributeError) as exc:
            errors.append(f"{name}: {exc}")
    raise OSError("the HIP runtime library (libamdhip64.so) cannot be loaded; tried " + "; ".join(errors))


def error_text(lib: Any, result: int) -> str:
    def text(fn: str) -> str:
        try:
            value = getattr(lib, fn)(result)
        except Exception:
            return "?"
        return value.decode(errors="replace") if isinstance(value, bytes) else str(value or "?")

    return f"{text('hipGetErrorName')}: {text('hipGetErrorString')}"


def check(result: int, what: str, lib: Any = None) -> None:
    """Raise `HipError` naming the call `what` when `result` (a hipError_t) is not hipSuccess."""
    if result != 0:
        lib = lib if lib is not None else libhip()
        raise HipError(f"{what} failed: HIP error {result} ({error_text(lib, result)})")


def init() -> None:
    lib = libhip()
    check(lib.hipInit(0), "hipInit", lib)


class HipModule:
    """One loaded hsaco code object and its kernels, on the device current when it was loaded."""

    def __init__(self, hsaco: bytes, kernel_names: list[str]):
        lib = libhip()
        self._lib = lib
        self._image = ctypes.create_string_buffer(bytes(hsaco), len(hsaco))  # outlives the module load
        self.module = ctypes.c_void_p()
        check(lib.hipModuleLoadData(ctypes.byref(self.module), ctypes.cast(self._image, ctypes.c_void_p)),
              "hipModuleLoadData", lib)
        self.functions: dict[str, ctypes.c_void_p] = {}
        for name in kernel_names:
            func = ctypes.c_void_p()
            check(lib.hipModuleGetFunction(ctypes.byref(func), self.module, name.encode()),
                  f"hipModuleGetFunction({name})", lib)
            self.functions[name] = func

    def launch(self, name: str, grid: tuple[int, int, int], block: tuple[int, int, int], kernargs: bytes,
               stream: int) -> None:
        """Launch kernel `name` with the packed explicit kernel arguments `kernargs` on `stream` (a hipStream_t)."""
        lib = self._lib
        if kernargs:
            buf = ctypes.create_string_buffer(kernargs, len(kernargs))
            size = ctypes.c_size_t(len(kernargs))
            extra = (ctypes.c_void_p * 5)(HIP_LAUNCH_PARAM_BUFFER_POINTER, ctypes.addressof(buf),
                                          HIP_LAUNCH_PARAM_BUFFER_SIZE, ctypes.addressof(size),
                                          HIP_LAUNCH_PARAM_END)
            extra_p = ctypes.cast(extra, _c_void_pp)
        else:
            extra_p = None
        check(lib.hipModuleLaunchKernel(self.functions[name], *grid, *block, 0, ctypes.c_void_p(stream or None),
                                        None, extra_p), f"hipModuleLaunchKernel({name})", lib)

    def __del__(self) -> None:
        module = getattr(self, "module", None)
        if module is not None and module.value:
            try:
                self._lib.hipModuleUnload(module)
            except Exception:
                pass
