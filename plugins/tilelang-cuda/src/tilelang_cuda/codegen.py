"""Device codegen for CUDA: CUDA C through TVM's CUDA codegen; `postprocess` puts the ``#include``s of the plugin's
helper headers (and its shape-generated helpers) in front of it and `finalize` builds ``kernel.cubin`` /
``kernel.ptx`` (nvcc or NVRTC) from the final source."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tilelang.backend import DeviceBuild, DeviceCodegen

# Where TVM's CUDA runtime loads (a machine with libcuda), ``target.build.cuda`` compiles the raw TVM source at
# once through the global ``tvm_callback_cuda_compile`` (`tvm.support.nvcc`: NVRTC without this plugin's helper
# header, which fails). While this plugin builds, the callback is its own (the thread's `_CALLBACK`); other
# threads' TVM builds still reach the callback that was registered before.
_TVM_COMPILE = "tvm_callback_cuda_compile"
_CALLBACK = threading.local()
_install_lock = threading.Lock()
_installed: list[Any] = []  # [previous callback or None] while our dispatcher is registered
_users = 0


def _dispatch(code: Any, target: Any = None) -> bytes:
    own = getattr(_CALLBACK, "fn", None)
    if own is not None:
        return own(str(code), target)
    previous = _installed[0] if _installed else None
    if previous is None:
        raise RuntimeError(f"{_TVM_COMPILE} is not registered (import tvm.support.nvcc)")
    return previous(code, target)


@contextmanager
def _compile_callback(fn: Callable[[str, Any], bytes]) -> Iterator[None]:
    """Route TVM's CUDA compile callback to `fn` for this thread while the block runs."""
    import tvm_ffi

    global _users
    with _install_lock:
        if _users == 0:
            _installed[:] = [tvm_ffi.get_global_func(_TVM_COMPILE, allow_missing=True)]
            tvm_ffi.register_global_func(_TVM_COMPILE, _dispatch, override=True)
        _users += 1
    _CALLBACK.fn = fn
    try:
        yield
    finally:
        _CALLBACK.fn = None
        with _install_lock:
            _users -= 1
            if _users == 0:
                previous = _installed[0]
                if previous is None:
                    tvm_ffi.remove_global_func(_TVM_COMPILE)
                else:
                    tvm_ffi.register_global_func(_TVM_COMPILE, previous, override=True)
                _installed.clear()


def _build_cuda(mod: Any, target: Any) -> Any:
    """TVM's CUDA module; where TVM compiles it on the spot, from this plugin's post-processed source (the same
    binary `finalize_cuda` then takes from the compile memo). A compile error is raised as this plugin's
    `CudaCompileError` with the compiler's log (TVM's callback boundary would lose its message)."""
    import tvm_ffi

    from tilelang_cuda.compiler import compile_source, compiler_available

    failure: list[BaseException] = []
    imported = _imported(mod)

    def compile_for_tvm(code: str, tgt: Any) -> bytes:
        if not compiler_available():
            return b""
        try:
            return bytes(compile_source(postprocess_cuda(imported + code, target), _arch_of(target)).cubin)
        except BaseException as exc:  # re-raised below with its message intact
            failure.append(exc)
            return b""

    with _compile_callback(compile_for_tvm):
        rt_mod = tvm_ffi.get_global_func("target.build.cuda")(mod, target)
    if failure:
        raise failure[0]
    return _with_imported(rt_mod, imported)


def _build_cuda_source_only(mod: Any, target: Any) -> Any:
    """TVM's CUDA module without a device binary (``enable_device_compile=False``)."""
    import tvm_ffi

    with _compile_callback(lambda code, tgt: b""):
        return _with_imported(tvm_ffi.get_global_func("target.build.cuda")(mod, target), _imported(mod))


def _imported(mod: Any) -> str:
    """The code of ``T.import_source`` (the module attribute core sets), or ""."""
    from tilelang.backend.sdk import IMPORT_SOURCE_ATTR

    attrs = getattr(mod, "attrs", None)
    text = attrs.get(IMPORT_SOURCE_ATTR) if attrs is not None else None
    return "" if text is None else str(text) + "\n"


def _with_imported(rt_mod: Any, imported: str) -> Any:
    """The build, its source the imported code then TVM's kernels (postprocess puts the helper headers in front of
    both, so the imported helpers may call them)."""
    if not imported:
        return rt_mod
    return DeviceBuild(rt_mod=rt_mod, source=imported + rt_mod.inspect_source())


def _arch_of(target: Any) -> str:
    return str(target.attrs["arch"]) if "arch" in target.attrs else "sm_80"


def postprocess_cuda(source: str, target: Any) -> str:
    """The helper prologue (`tilelang_cuda.intrinsics.with_header`: the headers the source calls), TVM's bare
    special-float constants repaired (`tilelang_cuda.source_fixes`), tensor-map parameters (`tilelang_cuda.tma`),
    launch attributes (`tilelang_cuda.launch_markers`) and the user's kernels of ``T.CUDASourceCodeKernel``
    (`tilelang_cuda.source_kernels`)."""
    from tilelang_cuda import launch_markers, source_kernels
    from tilelang_cuda.intrinsics import with_header
    from tilelang_cuda.source_fixes import fix_special_floats
    from tilelang_cuda.tma import rewrite_source

    return source_kernels.apply(launch_markers.apply(with_header(rewrite_source(fix_special_floats(source)))))


def finalize_cuda(source: str, target: Any) -> DeviceBuild:
    """``kernel.cubin``, ``kernel.ptx`` and the ptxas report of the final source for the target's ``arch`` (with
    the compiler flags the pass configs ask for, kept as metadata ``cuda_flags``), with the TMA descriptors the
    launch encodes; on a machine with neither nvcc nor NVRTC the artifact stays
    source-only (``metadata["cuda_compiler"] == "unavailable"``: launching it says why)."""
    from tilelang_cuda import compiler
    from tilelang_cuda.compiler import CUBIN, PTX, compile_source, resource_metadata
    from tilelang_cuda.tma import tensor_maps_of

    out = DeviceBuild()
    maps = tensor_maps_of(source)
    if maps:
        out.metadata["tma_maps"] = maps
    flags = compiler.requested_flags()
    if flags:
        out.metadata[compiler.FLAGS_KEY] = flags
    if not compiler.compiler_available():
        out.metadata["cuda_compiler"] = "unavailable"
        return out
    binary = compile_source(source, _arch_of(target), flags=flags)
    out.files.update({CUBIN: binary.cubin, PTX: binary.ptx.encode()})
    out.metadata.update(resource_metadata(binary))
    return out


CUDA_CODEGEN = DeviceCodegen("cuda", build=_build_cuda, build_without_compile=_build_cuda_source_only,
                             postprocess=postprocess_cuda, finalize=finalize_cuda, imports_source=True)
