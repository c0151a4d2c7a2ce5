"""Source post-processing callbacks: ``tilelang.register_cuda_postproc(func)`` and friends.

``func(code: str, target) -> str`` rewrites the generated device source of a target family just before it is
compiled (CUDA C before nvcc/NVRTC, HIP before the ROCm build, MSL, and the C source of the ``c`` target). The
function is also registered as the TVM global function of the reference's name (``tilelang_callback_cuda_postproc``
...), which is where `tilelang.lower` finds it, after the plugins' ``tilelang_postprocess_kernel_source`` hooks.
Each register function has a decorator form (``@register_cuda_postproc_callback`` with or without arguments).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = [
    "register_cuda_postproc", "register_hip_postproc", "register_c_postproc", "register_metal_postproc",
    "register_cuda_postproc_callback", "register_hip_postproc_callback", "register_c_postproc_callback",
    "register_metal_postproc_callback", "apply_postproc", "POSTPROC_GLOBALS",
]

PostProc = Callable[[str, Any], str]

# target kind -> the reference's global function name
POSTPROC_GLOBALS = {
    "cuda": "tilelang_callback_cuda_postproc",
    "rocm": "tilelang_callback_hip_postproc",
    "hip": "tilelang_callback_hip_postproc",
    "c": "tilelang_callback_c_host_postproc",
    "metal": "tilelang_callback_metal_postproc",
}


def _register(name: str, func: PostProc, override: bool) -> PostProc:
    import tvm_ffi

    if not callable(func):
        raise TypeError(f"a post-processing callback must be callable (code, target) -> str, got {func!r}")
    tvm_ffi.register_global_func(name, f=func, override=override)
    return func


def register_cuda_postproc(func: PostProc, override: bool = True) -> PostProc:
    """Rewrite generated CUDA C before it is compiled."""
    return _register(POSTPROC_GLOBALS["cuda"], func, override)


def register_hip_postproc(func: PostProc, override: bool = True) -> PostProc:
    """Rewrite generated HIP / AMDGPU source before it is built."""
    return _register(POSTPROC_GLOBALS["hip"], func, override)


def register_c_postproc(func: PostProc, override: bool = True) -> PostProc:
    """Rewrite the C source of the ``c`` target before it is compiled."""
    return _register(POSTPROC_GLOBALS["c"], func, override)


def register_metal_postproc(func: PostProc, override: bool = True) -> PostProc:
    """Rewrite generated Metal Shading Language source."""
    return _register(POSTPROC_GLOBALS["metal"], func, override)


def _decorator(register: Callable[[PostProc, bool], PostProc]) -> Callable[..., Any]:
    def decorator(func: PostProc | bool | None = None, override: bool = True) -> Any:
        if callable(func):
            return register(func, override)
        if isinstance(func, bool):  # @register_x_postproc_callback(False): override flag given positionally
            override = func

        def apply(fn: PostProc) -> PostProc:
            return register(fn, override)

        return apply

    decorator.__doc__ = f"Decorator form of `{register.__name__}` (``@f`` or ``@f(override=False)``)."
    return decorator


register_cuda_postproc_callback = _decorator(register_cuda_postproc)
register_hip_postproc_callback = _decorator(register_hip_postproc)
register_c_postproc_callback = _decorator(register_c_postproc)
register_metal_postproc_callback = _decorator(register_metal_postproc)


def apply_postproc(source: str, target: Any) -> str:
    """`source` after the registered callback of `target`'s kind (unchanged when none is registered)."""
    from tilelang.backend.target import kind_of

    name = POSTPROC_GLOBALS.get(kind_of(target))
    if name is None or not source:
        return source
    import tvm_ffi

    func = tvm_ffi.get_global_func(name, allow_missing=True)
    if func is None:
        return source
    result = func(source, target)
    if not isinstance(result, str):
        raise TypeError(f"the {name} callback must return the source as a string, got {type(result).__name__}")
    return result
