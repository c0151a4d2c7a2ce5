"""Where this machine's CUDA compiler pieces are: nvcc, NVRTC with the headers kernels include, cuobjdump/nvdisasm.

nvcc is taken only from where the user put it, looked up in trusted directories as cuda-pathfinder looks up
NVIDIA's tools: ``CUDA_PATH`` then ``CUDA_HOME`` (``bin/``), PATH, NVIDIA's ``nvidia-cuda-nvcc`` wheel, the
active conda environment; never a guessed install directory (a toolkit in /usr/local/cuda that is not on PATH is
not used). NVRTC's library and headers come through cuda-pathfinder, which looks at NVIDIA's pip wheels first
(``pip install "tilelang-cuda[nvrtc]"`` brings them all), then conda and ``CUDA_HOME``.

`default_compiler` prefers nvcc when there is one and it works: when it fails, `nvcc_problem` compiles a trivial
kernel with it (once per process); if that fails too, nvcc's environment is broken (a missing host compiler, a
broken install), it is not used again in this process, and `tilelang_cuda.compiler` falls back to NVRTC with a
warning. A missing piece raises `CudaToolkitError` naming the pip package that brings it.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

from tilelang.errors import TileLangError

NVRTC_EXTRA = 'pip install "tilelang-cuda[nvrtc]"'
NVCC_PLACES = "CUDA_PATH, CUDA_HOME, PATH, the nvidia-cuda-nvcc wheel, conda"
COMPILERS = ("nvcc", "nvrtc")

# the headers NVRTC needs for generated kernels: (cuda-pathfinder name, a file kernels reach, the wheel shipping it)
NVRTC_HEADERS = (
    ("cudart", "cuda_fp16.h", "nvidia-cuda-runtime"),
    ("cccl", "cuda/std/cstdint", "nvidia-cuda-cccl"),
)
# headers some kernels reach (<mma.h> includes crt/mma.h; CUDA 13 ships crt/ in a wheel of its own): a prefix of
# an include NVRTC could not open -> the wheel that brings it
INCLUDE_PACKAGES = (("crt/", "nvidia-cuda-crt"), ("cuda/", "nvidia-cuda-cccl"), ("cub/", "nvidia-cuda-cccl"),
                    ("thrust/", "nvidia-cuda-cccl"), ("nv/", "nvidia-cuda-cccl"), ("", "nvidia-cuda-runtime"))
CRT_PACKAGE = "nvidia-cuda-crt"
_CANNOT_OPEN = re.compile(r'cannot open source file "([^"]+)"')


class CudaToolkitError(TileLangError):
    """A piece of the CUDA toolchain is missing; the message names what to install."""


def pathfinder() -> ModuleType:
    """``cuda.pathfinder``, or a `CudaToolkitError` saying how to get it."""
    try:
        import cuda.pathfinder as found
    except ImportError:
        raise CudaToolkitError(f"finding NVRTC and the CUDA headers needs cuda-pathfinder: {NVRTC_EXTRA}") from None
    return found


def find_nvcc() -> str | None:
    """nvcc from ``CUDA_PATH`` / ``CUDA_HOME`` (``bin/``), PATH, the ``nvidia-cuda-nvcc`` wheel or
    ``$CONDA_PREFIX/bin``, in that order (an executable file); None when it is in none of them."""
    exe = "nvcc.exe" if os.name == "nt" else "nvcc"
    for var in ("CUDA_PATH", "CUDA_HOME"):
        root = os.environ.get(var, "").strip()
        if root and _executable(candidate := os.path.join(root, "bin", exe)):
            return candidate
    on_path = shutil.which(exe)
    if on_path:
        return on_path
    wheel = _wheel_binary(exe, _NVCC_WHEEL_DIRS)
    if wheel:
        return wheel
    conda = os.environ.get("CONDA_PREFIX", "").strip()
    if conda and _executable(candidate := os.path.join(conda, "bin", exe)):
        return candidate
    return None


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


# what a compile with a working nvcc always gets through: the host compiler's preprocessing, cicc and ptxas
_PROBE_SOURCE = 'extern "C" __global__ void tilelang_probe(float* x) { x[threadIdx.x] += 1.0f; }\n'
_PROBES: dict[str, str | None] = {}  # nvcc path -> why it cannot compile here (None: it can)


def nvcc_problem(path: str) -> str | None:
    """Why nvcc at `path` cannot compile here, from compiling a trivial kernel to a cubin (once per process and
    path): nvcc's own message, or None when it works."""
    if path not in _PROBES:
        from tilelang_cuda.contrib import nvcc

        try:
            nvcc.run_nvcc(_PROBE_SOURCE, "cubin", arch=["-arch=sm_80"], nvcc=path)
            _PROBES[path] = None
        except nvcc.NvccError as exc:
            _PROBES[path] = exc.output.strip() or f"nvcc exited with status {exc.returncode}"
        except OSError as exc:
            _PROBES[path] = str(exc)
    return _PROBES[path]


def known_nvcc_problem(path: str) -> str | None:
    """What an earlier `nvcc_problem` found for `path` (None: not probed, or it works)."""
    return _PROBES.get(path)


def forced_compiler() -> str | None:
    """``TILELANG_CUDA_COMPILER`` (``nvcc`` or ``nvrtc``) when set; None when not."""
    chosen = os.environ.get("TILELANG_CUDA_COMPILER", "").strip().lower()
    if chosen and chosen not in COMPILERS:
        raise CudaToolkitError(f"TILELANG_CUDA_COMPILER={chosen!r} is not a CUDA compiler; use 'nvcc' or 'nvrtc'")
    return chosen or None


def default_compiler() -> str:
    """``TILELANG_CUDA_COMPILER`` when set (``nvcc`` or ``nvrtc``), else nvcc when there is one (`find_nvcc`) and
    it was not found broken in this process (`nvcc_problem`), else NVRTC."""
    forced = forced_compiler()
    if forced:
        return forced
    path = find_nvcc()
    return "nvcc" if path and known_nvcc_problem(path) is None else "nvrtc"


def load_nvrtc() -> ModuleType:
    """``cuda.bindings.nvrtc`` with ``libnvrtc`` loaded; a `CudaToolkitError` naming the package otherwise."""
    try:
        from cuda.bindings import nvrtc
    except ImportError:
        raise CudaToolkitError(f"NVRTC needs cuda-bindings: {NVRTC_EXTRA}") from None
    _nvrtc_library()
    return nvrtc


@functools.cache
def _nvrtc_library() -> Any:
    """cuda-pathfinder's ``LoadedDL`` of libnvrtc (cuda.bindings calls into the library it loaded)."""
    finder = pathfinder()
    try:
        return finder.load_nvidia_dynamic_lib("nvrtc")
    except finder.DynamicLibNotFoundError as exc:
        raise CudaToolkitError(f"NVRTC's library (libnvrtc) was not found: `pip install nvidia-cuda-nvrtc` (or "
                               f"{NVRTC_EXTRA}), or set CUDA_HOME to a CUDA toolkit. ({exc})") from None


def nvrtc_version() -> tuple[int, int]:
    """``(major, minor)`` of the libnvrtc in use."""
    nvrtc = load_nvrtc()
    status, major, minor = nvrtc.nvrtcVersion()
    if status != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise CudaToolkitError(f"nvrtcVersion failed: {status}")
    return int(major), int(minor)


@functools.cache
def nvrtc_headers() -> tuple[tuple[str, str, str], ...]:
    """``((pathfinder name, include dir, where found), ...)`` for the headers NVRTC compiles kernels with (the
    runtime's, with its crt/ part, CCCL's, NVRTC's own); a `CudaToolkitError` listing every missing wheel."""
    finder = pathfinder()
    found: list[tuple[str, str, str]] = []
    missing: list[str] = []
    for name, probe, package in NVRTC_HEADERS:
        located = _locate_headers(finder, name)
        if located is None or not os.path.isfile(os.path.join(located[0], probe)):
            missing.append(package)
        else:
            found.append((name, *located))
    if missing:
        raise CudaToolkitError(f"NVRTC cannot find the CUDA headers kernels include: `pip install {' '.join(missing)}`"
                               f" (or {NVRTC_EXTRA}), or set CUDA_HOME to a CUDA toolkit")
    nvrtc_dir = _locate_headers(finder, "nvrtc")
    if nvrtc_dir is not None:
        found.append(("nvrtc", *nvrtc_dir))
    return tuple(found)


def has_crt_headers() -> bool:
    """Whether the runtime headers' crt/ part is there (NVRTC needs it only for some includes, e.g. <mma.h>)."""
    return any(os.path.isfile(os.path.join(path, "crt", "host_defines.h")) for path in nvrtc_include_dirs())


def missing_include_hint(log: str) -> str:
    """For an NVRTC log that could not open a header: which wheel brings it (empty when the log says no such
    thing)."""
    match = _CANNOT_OPEN.search(log)
    if match is None:
        return ""
    header = match.group(1)
    package = next(pkg for prefix, pkg in INCLUDE_PACKAGES if header.startswith(prefix))
    return (f"NVRTC could not open {header!r}: `pip install {package}` (or {NVRTC_EXTRA}), or set CUDA_HOME to a "
            "CUDA toolkit")


def nvrtc_include_dirs() -> list[str]:
    """The ``-I`` directories NVRTC gets (runtime, crt, CCCL, NVRTC's own), each once."""
    return list(dict.fromkeys(path for _, path, _ in nvrtc_headers()))


def _locate_headers(finder: ModuleType, name: str) -> tuple[str, str] | None:
    """``(directory, where found)`` for header set `name`; older cuda-pathfinders lack ``locate_...``."""
    locate = getattr(finder, "locate_nvidia_header_directory", None)
    if locate is not None:
        hit = locate(name)
        return (str(hit.abs_path), str(hit.found_via)) if hit is not None and hit.abs_path else None
    path = finder.find_nvidia_header_directory(name)
    return (str(path), "cuda-pathfinder") if path else None


def find_tool(name: str) -> str | None:
    """A CUDA binary tool (``cuobjdump``, ``nvdisasm``, ``nvcc`` ...) from NVIDIA's wheels or ``CUDA_HOME``
    through cuda-pathfinder, else from the wheels' ``nvidia/*/bin`` directories; None when absent."""
    try:
        finder = pathfinder()
        find = getattr(finder, "find_nvidia_binary_utility", None)
        if find is not None:
            hit = find(name)
            if hit:
                return str(hit)
    except CudaToolkitError:
        pass
    return _wheel_binary(name, ("*",))


_NVCC_WHEEL_DIRS = ("cu13", "cuda_nvcc")  # nvidia/<dir>/bin in NVIDIA's wheels (cuda-pathfinder's list for nvcc)


def _wheel_binary(name: str, dirs: tuple[str, ...]) -> str | None:
    """`name` from ``nvidia/<dir>/bin`` of NVIDIA's installed wheels (`dirs` are glob patterns), or None."""
    try:
        import nvidia
    except ImportError:
        return None
    for base in getattr(nvidia, "__path__", []):
        for pattern in dirs:
            for path in sorted(Path(base).glob(f"{pattern}/bin/{name}")):
                if os.access(path, os.X_OK):
                    return str(path)
    return None


def compiler_problem(compiler: str | None = None) -> str | None:
    """Why `compiler` (default: `default_compiler`) cannot run here, or None when it can."""
    try:
        compiler = compiler or default_compiler()
        if compiler == "nvcc":
            return None if find_nvcc() else (f"nvcc was not found ({NVCC_PLACES}): install the CUDA toolkit (or "
                                             f"`pip install nvidia-cuda-nvcc`), or use NVRTC: {NVRTC_EXTRA}")
        load_nvrtc()
        nvrtc_headers()
    except CudaToolkitError as exc:
        return str(exc)
    return None


# ---------------------------------------------------------------------------------------------- tilelang backends
def _nvcc_release(path: str) -> str:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "?"
    return next((ln.split("release")[-1].strip() for ln in out.splitlines() if "release" in ln), "?")


def nvcc_status() -> tuple[bool, str]:
    path = find_nvcc()
    if path is None:
        return False, f"not found ({NVCC_PLACES}): install the CUDA toolkit or `pip install nvidia-cuda-nvcc`"
    problem = nvcc_problem(path)
    if problem is not None:
        return False, f"{path} cannot compile here: {_first_lines(problem)}"
    return True, f"{path} (release {_nvcc_release(path)})"


def _first_lines(text: str, lines: int = 3) -> str:
    return " | ".join(text.strip().splitlines()[:lines])


def nvrtc_status() -> tuple[bool, str]:
    try:
        major, minor = nvrtc_version()
        headers = nvrtc_headers()
    except CudaToolkitError as exc:
        return False, str(exc)
    lib = _nvrtc_library()
    where = sorted({via for _, _, via in headers})
    crt = "" if has_crt_headers() else f" (no crt/ headers: <mma.h> needs `pip install {CRT_PACKAGE}`)"
    return True, f"{major}.{minor}, {lib.abs_path} ({lib.found_via}); headers from {', '.join(where)}{crt}"


def compiler_status() -> tuple[bool, str]:
    """Which compiler builds cubins here, and why."""
    try:
        compiler = default_compiler()
    except CudaToolkitError as exc:
        return False, str(exc)
    path = find_nvcc()
    if forced_compiler() is None and compiler == "nvcc" and nvcc_problem(path) is not None:  # type: ignore[arg-type]
        compiler = "nvrtc"
    if forced_compiler():
        how = "set by TILELANG_CUDA_COMPILER"
    elif compiler == "nvcc":
        how = "preferred when found"
    else:
        how = "no nvcc found" if path is None else "nvcc found but cannot compile here"
    problem = compiler_problem(compiler)
    return problem is None, f"{compiler} ({how})" + (f": {problem}" if problem else "")



def toolchain_status() -> list[Any]:
    """The CUDA lines of ``tilelang backends``: the compiler in use, nvcc, NVRTC, a visible GPU."""
    from tilelang.backend import ToolStatus
    from tilelang_cuda.target import detect

    lines = [ToolStatus("compiler", *compiler_status()), ToolStatus("nvcc", *nvcc_status()),
             ToolStatus("nvrtc", *nvrtc_status())]
    gpu = detect()
    lines.append(ToolStatus("GPU", gpu is not None, gpu["arch"] if gpu else "none visible (compile-only)"))
    return lines
