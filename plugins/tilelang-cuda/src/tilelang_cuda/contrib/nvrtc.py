"""Compiling CUDA C in-process with NVRTC (``cuda-python``), to PTX or cubin.

NVRTC needs no CUDA toolkit on the machine, only the ``cuda-python`` and ``nvidia-cuda-nvrtc`` wheels
(``pip install cuda-python nvidia-cuda-nvrtc``, or ``pip install tilelang-cuda[nvrtc]``). This module imports
without them; calling it without them raises an ImportError that says so.
"""

from __future__ import annotations

from typing import Any, Literal

from tilelang_cuda.contrib.nvcc import _current_target, get_target_compute_version, parse_compute_version
from tilelang_cuda.intrinsics.device import include_dir

__all__ = ["get_nvrtc_version", "compile_cuda"]

NVRTC_MISSING = ("NVRTC needs cuda-python: `pip install cuda-python nvidia-cuda-nvrtc` (or `pip install "
                 "tilelang-cuda[nvrtc]`), or compile with nvcc (tilelang_cuda.contrib.nvcc)")


def _nvrtc() -> Any:
    try:
        from cuda.bindings import nvrtc
    except ImportError as exc:
        raise ImportError(NVRTC_MISSING) from exc
    return nvrtc


def _check(nvrtc: Any, result: Any, what: str) -> Any:
    """The values of an NVRTC call's result tuple; RuntimeError naming `what` when its status is an error."""
    status, *values = result
    if status != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(f"NVRTC: {what} failed: {status}")
    return values[0] if len(values) == 1 else values


def get_nvrtc_version() -> tuple[int, int]:
    """``(major, minor)`` of the NVRTC library."""
    nvrtc = _nvrtc()
    major, minor = _check(nvrtc, nvrtc.nvrtcVersion(), "nvrtcVersion")
    return int(major), int(minor)


def _program_log(nvrtc: Any, program: Any) -> str:
    size = _check(nvrtc, nvrtc.nvrtcGetProgramLogSize(program), "nvrtcGetProgramLogSize")
    buf = b" " * size
    _check(nvrtc, nvrtc.nvrtcGetProgramLog(program, buf), "nvrtcGetProgramLog")
    return buf.decode("utf-8", errors="replace").rstrip("\x00")


def compile_cuda(code: str, target_format: Literal["ptx", "cubin"] = "ptx", arch: int | None = None,
                 options: str | list[str] | None = None, verbose: bool = False) -> bytearray:
    """Compile CUDA C `code` with NVRTC and return the PTX or cubin bytes.

    :param arch: the SM number (``80``, ``90`` ...; 90 and on compile the arch-specific ``a`` variant); None
        reads the current Target's arch (or the local GPU).
    :param options: extra NVRTC flags (a string is one flag).
    :raises RuntimeError: with the source, NVRTC's log (``verbose=True``) and the options when compilation fails.
    """
    if target_format not in ("ptx", "cubin"):
        raise ValueError(f"target_format must be cubin or ptx, got {target_format!r}")
    if options is None:
        extra: list[str] = []
    elif isinstance(options, str):
        extra = [options]
    elif isinstance(options, list):
        extra = list(options)
    else:
        raise ValueError("options must be str or list of str")
    nvrtc = _nvrtc()
    if arch is None:
        major, minor = parse_compute_version(get_target_compute_version(_current_target()))
        arch = major * 10 + minor
    prefix = "compute" if target_format == "ptx" else "sm"
    flags = ["-default-device"]
    if get_nvrtc_version() >= (12, 8):
        flags.append("-pch")
    flags += [f"--gpu-architecture={prefix}_{arch}{'a' if arch >= 90 else ''}", f"-I{include_dir()}", *extra]
    if "cudaGridDependencySynchronize" in code or "cudaTriggerProgrammaticLaunchCompletion" in code:
        code = '#include "cuda_device_runtime_api.h"\n' + code

    program = _check(nvrtc, nvrtc.nvrtcCreateProgram(code.encode(), b"tvm_kernels.cu", 0, [], []),
                     "nvrtcCreateProgram")
    try:
        status = nvrtc.nvrtcCompileProgram(program, len(flags), [f.encode() for f in flags])[0]
        if status != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            log = _program_log(nvrtc, program) if verbose else "Turn on verbose to see the full compilation log."
            raise RuntimeError(f"{code}\nCompilation error:\n{log}\nOptions: {' '.join(flags)}\n")
        if target_format == "cubin":
            size = _check(nvrtc, nvrtc.nvrtcGetCUBINSize(program), "nvrtcGetCUBINSize")
            data = b" " * size
            _check(nvrtc, nvrtc.nvrtcGetCUBIN(program, data), "nvrtcGetCUBIN")
        else:
            size = _check(nvrtc, nvrtc.nvrtcGetPTXSize(program), "nvrtcGetPTXSize")
            data = b" " * size
            _check(nvrtc, nvrtc.nvrtcGetPTX(program, data), "nvrtcGetPTX")
        return bytearray(data)
    finally:
        nvrtc.nvrtcDestroyProgram(program)
