"""Calling a cached CPU kernel library through TVM-FFI's C ABI with ctypes, without the ``tvm_ffi`` package.

A CPU kernel's ``kernel.so`` (TVM's ``export_library``) exports ``__tvm_ffi_<name>``, a function of the stable C
calling convention ``int f(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result)``, plus *context
symbols*: pointer variables such as ``__TVMBackendParallelLaunch`` that the loader sets to the runtime's functions.
Importing the ``tvm_ffi`` Python package to load and call it costs tens of milliseconds and thousands of objects
(enough to set off the garbage collector's first full pass over torch's objects); a process that only runs cached
kernels needs none of it. `load_direct` does what TVM-FFI's library loader does, with ctypes:

- dlopen ``libtvm_ffi`` and ``libtvm_runtime`` (`tilelang.jit.runtime_loader.runtime_libraries`, thread pool
  configured as for the ``tvm_ffi`` path) and then the kernel library;
- read the library's dynamic symbol table (`exported_symbols`, ELF) and set every context symbol it defines to the
  runtime function of that name; a library that defines a context symbol not known here, or imports other modules
  (``__tvm_ffi__library_ctx`` / ``__tvm_ffi__library_bin``), is not loaded this way (None: the caller takes the
  ``tvm_ffi`` path);
- call the kernel function with DLTensor arguments built from torch tensors (`make_launcher`).

The launcher sets only data pointers, symbolic extents and scalars: it reports ``checks_arguments = False``, so the
JIT's generated caller checks dtype, shape, device and contiguity before every call (`tilelang.jit.arguments`),
and the kernel's own checks see the tensors' true shapes. An error the kernel raises (TVM-FFI's error object) is
re-raised with its kind and message.
"""

from __future__ import annotations

import ctypes
import functools
import struct
import sys
import threading
from collections.abc import Sequence
from typing import Any

__all__ = ["exported_symbols", "load_direct", "make_launcher", "CONTEXT_SYMBOLS"]

# The context symbols TVM's runtime registers (``TVMFFIEnvModRegisterContextSymbol``): ``__<f>`` is set to ``<f>``.
CONTEXT_SYMBOLS = ("TVMBackendAllocWorkspace", "TVMBackendFreeWorkspace", "TVMBackendParallelBarrier",
                   "TVMBackendParallelLaunch", "TVMFFIErrorSetRaisedFromCStr", "TVMFFIFunctionCall",
                   "TVMFFIHandleInitOnce")
_MODULE_SYMBOLS = ("__tvm_ffi__library_ctx", "__tvm_ffi__library_bin")  # a library that needs a real Module object

# TVMFFIAny type indices (tvm/ffi/c_api.h)
_NONE, _INT, _BOOL, _FLOAT, _DLTENSOR_PTR, _STATIC_OBJECT_BEGIN = 0, 1, 2, 3, 7, 64
# DLPack type codes of the dtypes passed this way; any other dtype (bool, fp8, vectors) takes the tvm_ffi path
_DL_CODES = {"int": 0, "uint": 1, "float": 2, "bfloat": 4}
_ERRORS = {"ValueError": ValueError, "TypeError": TypeError, "IndexError": IndexError, "KeyError": KeyError,
           "AttributeError": AttributeError, "MemoryError": MemoryError, "NotImplementedError": NotImplementedError}


class _Any(ctypes.Structure):
    _fields_ = [("type_index", ctypes.c_int32), ("zero_padding", ctypes.c_uint32), ("value", ctypes.c_int64)]


class _AnyFloat(ctypes.Structure):
    _fields_ = [("type_index", ctypes.c_int32), ("zero_padding", ctypes.c_uint32), ("value", ctypes.c_double)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _ByteArray(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("size", ctypes.c_size_t)]


class _ErrorCell(ctypes.Structure):  # follows the 24-byte TVMFFIObject header of an Error object
    _fields_ = [("kind", _ByteArray), ("message", _ByteArray), ("backtrace", _ByteArray)]


_OBJECT_HEADER = 24


def exported_symbols(image: bytes) -> set[str] | None:
    """The names a 64-bit little-endian ELF shared library defines in its dynamic symbol table (None for any other
    file: the library is then not loaded directly)."""
    if image[:4] != b"\x7fELF" or image[4] != 2 or image[5] != 1:
        return None
    try:
        shoff, = struct.unpack_from("<Q", image, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", image, 0x3A)
        sections = [struct.unpack_from("<IIQQQQIIQQ", image, shoff + i * shentsize) for i in range(shnum)]
        found: set[str] = set()
        for _name, kind, _flags, _addr, offset, size, link, _info, _align, entsize in sections:
            if kind != 11 or not entsize:  # SHT_DYNSYM
                continue
            strtab = sections[link][4]
            for pos in range(offset, offset + size, entsize):
                st_name, _st_info, _st_other, st_shndx = struct.unpack_from("<IBBH", image, pos)
                if st_shndx and st_name:
                    end = image.index(b"\0", strtab + st_name)
                    found.add(image[strtab + st_name:end].decode("ascii", "replace"))
        return found
    except (struct.error, IndexError, ValueError):
        return None


def _dl_dtype(name: str) -> tuple[int, int] | None:
    for prefix, code in sorted(_DL_CODES.items(), key=lambda kv: -len(kv[0])):
        if name.startswith(prefix) and name[len(prefix):].isdigit():
            return code, int(name[len(prefix):])
    return None


class _Buffers(threading.local):
    """One thread's argument structures for one kernel (built once per thread, so concurrent calls never share
    them): ``slots`` is ``(anys address, result address, result, anys, per parameter: DLTensor or None, per
    parameter: shape array or None)``."""

    def __init__(self, params: Sequence[Any]):
        n = len(params)
        anys = (_Any * n)()
        result = _Any()
        tensors: list[Any] = [None] * n
        shapes: list[Any] = [None] * n
        for i, p in enumerate(params):
            if not p.is_tensor:
                continue
            code, bits = _dl_dtype(p.dtype)  # type: ignore[misc]  # checked by `load_direct`
            shape = (ctypes.c_int64 * max(1, len(p.shape)))(*[d if isinstance(d, int) else 0 for d in p.shape])
            tensors[i] = _DLTensor(None, 1, 0, len(p.shape), code, bits, 1,
                                   ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64)), None, 0)
            shapes[i] = shape
            anys[i].type_index = _DLTENSOR_PTR
            anys[i].value = ctypes.addressof(tensors[i])
        # the addresses as ctypes objects: a call converts no Python ints (about 0.8 us less per call)
        self.slots = (ctypes.c_void_p(ctypes.addressof(anys)), ctypes.c_void_p(ctypes.addressof(result)), result, anys,
                      *tensors, *shapes)


@functools.lru_cache(maxsize=256)
def _compiled(source: str) -> Any:
    """The code of a launch function (kernels with the same parameter kinds share one)."""
    return compile(source, "<tilelang direct launch>", "exec")


def make_launcher(function: Any, ffi: Any, params: Sequence[Any], library: Any) -> Any:
    """Generate the ``launch(*args)`` of one kernel: it fills this thread's structures (data pointers, symbolic
    extents, scalars) and calls `function`. Specialised per kernel like the JIT's caller: a generic loop over
    the parameters costs about twice as much per call."""
    n = len(params)
    names = [f"a{i}" for i in range(n)]
    slots = ["anys_at", "result_at", "result", "anys", *(f"t{i}" for i in range(n)), *(f"s{i}" for i in range(n))]
    lines = [f"def launch({', '.join(names)}):", f"    {', '.join(slots)} = _buffers.slots"]
    for i, p in enumerate(params):
        if not p.is_tensor:
            lines.append(f"    _scalar(anys, {i}, a{i})")
            continue
        lines.append(f"    t{i}.data = a{i}.data_ptr()")
        symbolic = [axis for axis, d in enumerate(p.shape) if not isinstance(d, int)]
        if symbolic:
            lines.append(f"    d{i} = a{i}.shape")
            lines.extend(f"    s{i}[{axis}] = d{i}[{axis}]" for axis in symbolic)
    lines += ["    result.type_index = 0",
              "    if _function(None, anys_at, _n, result_at):",
              "        _raise_error(_ffi)",
              f"    if result.type_index >= {_STATIC_OBJECT_BEGIN}:  # a returned object is released",
              "        _ffi.TVMFFIObjectDecRef(result.value)"]
    ns = {"__name__": __name__, "_buffers": _Buffers(params), "_function": function, "_ffi": ffi,
          "_scalar": _set_scalar, "_raise_error": _raise_error, "_n": ctypes.c_int32(n)}
    exec(_compiled("\n".join(lines)), ns)
    launch = ns["launch"]
    launch.checks_arguments = False  # the JIT's caller checks dtype, shape, device and contiguity first
    launch.library = library  # keeps the kernel library loaded as long as the launcher lives
    return launch


def _set_scalar(anys: Any, i: int, value: Any) -> None:
    if isinstance(value, bool):
        anys[i].type_index, anys[i].value = _BOOL, int(value)
    elif isinstance(value, int) or (hasattr(value, "__index__") and not isinstance(value, float)):
        anys[i].type_index, anys[i].value = _INT, value.__index__()
    elif isinstance(value, float) or hasattr(value, "__float__"):
        cell = _AnyFloat.from_address(ctypes.addressof(anys) + i * ctypes.sizeof(_Any))
        cell.type_index, cell.value = _FLOAT, float(value)
    else:
        raise TypeError(f"cannot pass a {type(value).__name__} as a scalar kernel argument")
    anys[i].zero_padding = 0


def _raise_error(ffi: Any) -> None:
    """Raise the error the kernel left (TVM-FFI's raised error object), by its kind."""
    handle = ctypes.c_void_p()
    ffi.TVMFFIErrorMoveFromRaised(ctypes.byref(handle))
    if not handle.value:
        raise RuntimeError("the kernel failed without an error message")
    try:
        cell = _ErrorCell.from_address(handle.value + _OBJECT_HEADER)
        kind = ctypes.string_at(cell.kind.data, cell.kind.size).decode("utf-8", "replace")
        message = ctypes.string_at(cell.message.data, cell.message.size).decode("utf-8", "replace")
    finally:
        ffi.TVMFFIObjectDecRef(handle)
    raise _ERRORS.get(kind, RuntimeError)(message)


def load_direct(artifact: Any, path: Any) -> Any:
    """The launcher (`make_launcher`) of `artifact`'s kernel in the library file `path` (its bytes are
    ``artifact.files``), or None when the library cannot be called this way (see the module docstring)."""
    from tilelang.jit.runtime_loader import runtime_libraries

    image = artifact.files.get("kernel.so")
    symbol = f"__tvm_ffi_{artifact.name}"
    symbols = exported_symbols(image) if isinstance(image, bytes) and sys.platform.startswith("linux") else None
    if symbols is None or symbol not in symbols or any(s in symbols for s in _MODULE_SYMBOLS):
        return None
    context = {s for s in symbols if s.startswith("__TVM")}
    if not context <= {f"__{name}" for name in CONTEXT_SYMBOLS}:
        return None
    if any((p.is_tensor and _dl_dtype(p.dtype) is None) or (not p.is_tensor and p.dtype == "handle")
           for p in artifact.params):
        return None
    try:
        ffi, runtime = runtime_libraries()
        library = ctypes.CDLL(str(path))
    except OSError:
        return None
    for name in sorted(context):
        provider = runtime if hasattr(runtime, name[2:]) else ffi
        ctypes.c_void_p.in_dll(library, name).value = ctypes.cast(getattr(provider, name[2:]), ctypes.c_void_p).value
    function = getattr(library, symbol)
    function.restype = ctypes.c_int  # arguments: (NULL, TVMFFIAny*, int32, TVMFFIAny*) as ctypes objects
    ffi.TVMFFIErrorMoveFromRaised.argtypes = [ctypes.c_void_p]
    ffi.TVMFFIObjectDecRef.argtypes = [ctypes.c_void_p]
    return make_launcher(function, ffi, artifact.params, library)
