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
- call the kernel function with DLTensor arguments built from torch tensors or NumPy arrays (`make_launcher`:
  it reads only ``data_ptr()`` and ``shape``, so `tilelang.jit.host_arrays` passes NumPy data without torch).

The launcher sets only data pointers, symbolic extents and scalars: it reports ``checks_arguments = False``, so the
JIT's generated caller checks dtype, shape, device and contiguity before every call (`tilelang.jit.arguments`),
and the kernel's own checks see the tensors' true shapes. An error the kernel raises (TVM-FFI's error object) is
re-raised with its kind and message.
"""

from __future__ import annotations

import ctypes
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
    them): ``slots`` is ``(anys address, result address, result, anys, DLTensor per parameter, shape array per
    parameter)`` (None for a scalar parameter)."""

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
                      tuple(tensors), tuple(shapes))


def make_launcher(function: Any, ffi: Any, params: Sequence[Any], library: Any) -> Any:
    """The ``launch(*args)`` of one kernel: it fills this thread's structures (data pointers, symbolic extents,
    scalars) and calls `function`, the library's ``__tvm_ffi_<name>``."""
    n = len(params)
    count = ctypes.c_int32(n)
    buffers = _Buffers(params)
    tensors = tuple(i for i, p in enumerate(params) if p.is_tensor)
    symbolic = tuple((i, axis) for i, p in enumerate(params) if p.is_tensor
                     for axis, d in enumerate(p.shape) if not isinstance(d, int))
    scalars = tuple(i for i, p in enumerate(params) if not p.is_tensor)

    plain = len(tensors) == n and not symbolic  # tensors of static shapes only (the common kernel)

    def launch(*args: Any) -> None:
        anys_at, result_at, result, anys, structs, shapes = buffers.slots
        if len(args) != n:
            raise TypeError(f"the kernel takes {n} arguments, got {len(args)}")
        if plain:
            for struct, arg in zip(structs, args):
                struct.data = arg.data_ptr()
        else:
            for i in tensors:
                structs[i].data = args[i].data_ptr()
            for i, axis in symbolic:
                shapes[i][axis] = args[i].shape[axis]
            for i in scalars:
                _set_scalar(anys, i, args[i])
        result.type_index = _NONE
        if function(None, anys_at, count, result_at):
            _raise_error(ffi)
        if result.type_index >= _STATIC_OBJECT_BEGIN:  # a returned object is released (kernels return nothing)
            ffi.TVMFFIObjectDecRef(result.value)

    launch.checks_arguments = False  # type: ignore[attr-defined]  # the JIT's caller checks dtype, shape, ...
    launch.accepts_array_views = True  # type: ignore[attr-defined]  # reads only data_ptr() and shape
    launch.library = library  # type: ignore[attr-defined]  # keeps the kernel library loaded while it lives
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
    from tilelang.backend.sdk import runtime_libraries

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
