"""Invoking NVIDIA's nvcc, and what the CUDA toolchain and a CUDA target say about the hardware.

`compile_cuda` writes CUDA C to a temporary directory and runs nvcc to PTX, cubin or fatbin. The architecture
comes from the ``arch`` argument or the current ``tvm.target.Target`` (``arch`` such as ``sm_90a`` or
``sm_100f``; a ``code`` list such as ``["sm_100a", "sm_103a"]`` compiles one ``-gencode`` for several SMs, which
nvcc only allows into a fatbin). ``TILELANG_COMPILE_TIMEOUT_SECONDS`` bounds each nvcc run;
``TILELANG_CLEANUP_TEMP_FILES=0`` keeps the temporary files for inspection.

`run_nvcc` is the same compile returning nvcc's output too (the ptxas ``-v`` report), for backends that keep it.
TVM is imported only when a target has to be read from an enclosing ``with Target(...)``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass
from typing import Any

from tilelang.backend.sdk import get_cplus_compiler
from tilelang.env import env
from tilelang_cuda.intrinsics.device import include_dir

__all__ = [
    "compile_cuda", "run_nvcc", "NvccResult", "NvccError", "get_target_code_list", "format_target_code_for_gencode",
    "get_target_arch_and_code", "get_nvcc_compiler", "get_nvcc_subprocess_env", "get_target_compute_version",
    "parse_compute_version", "get_target_arch", "default_compile_options", "get_ptx_from_source",
    "get_sass_from_source", "find_cuda_path", "get_cuda_library_dirs", "get_cuda_version", "have_fp16",
    "have_int8", "have_tensorcore", "have_cudagraph", "have_bf16", "have_fp8", "have_tma", "is_hopper", "have_pdl",
    "have_mbarrier",
]

logger = logging.getLogger("tilelang_cuda.contrib.nvcc")

_CODE_TOKEN = re.compile(r"^sm_[A-Za-z0-9]+$")
_CODE_LIST_HINT = 'CUDA target code must be a list of exact SM code tokens, for example ["sm_100a", "sm_103a"].'
_FORMATS = ("cubin", "ptx", "fatbin")


def _text(out: bytes | str | None) -> str:
    if out is None:
        return ""
    return out if isinstance(out, str) else out.decode("utf-8", errors="replace")


# ---------------------------------------------------------------------------------------------- environment
def get_nvcc_subprocess_env() -> dict[str, str] | None:
    """The environment of nvcc subprocesses: Visual Studio's on Windows (nvcc needs MSVC as host compiler),
    None (inherit) elsewhere."""
    if os.name != "nt":
        return None
    from tilelang.backend.sdk import get_msvc_subprocess_env

    return get_msvc_subprocess_env()


def _get_compile_timeout_seconds() -> float | None:
    """``TILELANG_COMPILE_TIMEOUT_SECONDS`` as seconds; None (no limit) when unset, empty or 0."""
    return env.get_compile_timeout_seconds()


def find_cuda_path() -> str:
    """The CUDA toolkit root (``CUDA_HOME`` / ``CUDA_PATH``, nvcc on PATH, the nvidia-cuda-nvcc wheel, ...)."""
    if env.CUDA_HOME:
        return env.CUDA_HOME
    raise RuntimeError("Failed to automatically detect CUDA installation. Please set the CUDA_HOME environment "
                       "variable manually (e.g., export CUDA_HOME=/usr/local/cuda), or `pip install "
                       "nvidia-cuda-nvcc`.")


def get_nvcc_compiler() -> str:
    """The nvcc executable: ``<CUDA root>/bin/nvcc``, else nvcc on PATH."""
    exe = "nvcc.exe" if os.name == "nt" else "nvcc"
    if env.CUDA_HOME:
        candidate = os.path.join(env.CUDA_HOME, "bin", exe)
        if os.path.exists(candidate):
            return candidate
    on_path = shutil.which(exe)
    if on_path:
        return on_path
    raise RuntimeError("nvcc was not found: install the CUDA toolkit (or `pip install nvidia-cuda-nvcc`) and set "
                       "CUDA_HOME, or put nvcc on PATH")


def get_cuda_library_dirs(cuda_path: str | None = None) -> list[str]:
    """Existing CUDA library directories (``targets/*/lib``, ``lib64``, ``lib`` and their ``stubs``)."""
    root = cuda_path or find_cuda_path()
    bases = []
    targets = os.path.join(root, "targets")
    if os.path.isdir(targets):
        bases += [os.path.join(targets, name, "lib") for name in sorted(os.listdir(targets))]
    bases += [os.path.join(root, "lib64"), os.path.join(root, "lib")]
    found: list[str] = []
    for base in bases:
        for directory in (base, os.path.join(base, "stubs")):
            if directory not in found and os.path.isdir(directory):
                found.append(directory)
    return found


def get_cuda_version(cuda_path: str | None = None) -> tuple[int, ...]:
    """The toolkit version as a tuple, e.g. ``(13, 0, 88)`` (``version.txt``, else ``nvcc --version``)."""
    root = cuda_path or find_cuda_path()
    for version_file in (os.path.join(root, "version.txt"), os.path.join(root, "lib", "cuda", "version.txt")):
        if os.path.exists(version_file):
            with open(version_file) as f:
                return tuple(int(part) for part in f.read().strip().split()[-1].split("."))
    nvcc = os.path.join(root, "bin", "nvcc")
    try:
        proc = subprocess.run([nvcc, "--version"], capture_output=True, check=False)
    except OSError as exc:
        raise RuntimeError(f"Cannot read the CUDA version under {root}: {exc}") from None
    match = re.search(r"release [\d.]+, V([\d.]+)", _text(proc.stdout))
    if proc.returncode != 0 or match is None:
        raise RuntimeError(f"Cannot read the CUDA version under {root}")
    return tuple(int(part) for part in match.group(1).split("."))


# ---------------------------------------------------------------------------------------------- targets
def _current_target() -> Any:
    """The target of an enclosing ``with tvm.target.Target(...)`` (None without one, or before TVM is loaded)."""
    target_mod = sys.modules.get("tvm.target")
    return None if target_mod is None else target_mod.Target.current(allow_none=True)


def _target_attr(target: Any, key: str) -> Any:
    """Option `key` of a tvm Target or a target config dict (None when absent)."""
    if target is None:
        return None
    if isinstance(target, dict):
        return target.get(key)
    attrs = getattr(target, "attrs", None)
    return attrs[key] if attrs is not None and key in attrs else None


def _target_kind(target: Any) -> str:
    if isinstance(target, dict):
        return str(target.get("kind"))
    kind = getattr(target, "kind", None)
    return str(getattr(kind, "name", kind))


def get_target_code_list(target_code: object | None) -> list[str]:
    """A target's ``code`` option as a list of SM tokens (``[]`` for None); ValueError for anything else."""
    if target_code is None:
        return []
    if isinstance(target_code, str):
        raise ValueError(_CODE_LIST_HINT)
    try:
        codes = list(target_code)  # type: ignore[call-overload]
    except TypeError as err:
        raise ValueError(_CODE_LIST_HINT) from err
    if not codes:
        raise ValueError("CUDA target code must be a non-empty list of SM code tokens")
    for code in codes:
        if not isinstance(code, str) or not _CODE_TOKEN.fullmatch(code):
            raise ValueError(f"CUDA target code entries must be exact SM code tokens such as 'sm_100a' or "
                             f"'sm_103a', got {code!r}.")
    return codes


def format_target_code_for_gencode(target_code: object | None) -> str | None:
    """The ``code=`` part of ``-gencode``: one token, or ``[a,b]`` for several; None without a code list."""
    codes = get_target_code_list(target_code)
    if not codes:
        return None
    return codes[0] if len(codes) == 1 else f"[{','.join(codes)}]"


def get_target_arch_and_code(target: Any = None) -> tuple[str, list[str] | None]:
    """``(arch suffix, code list or None)`` of `target` (or the current Target): ``("100f", ["sm_100a"])``."""
    target = target if target is not None else _current_target()
    raw_code = _target_attr(target, "code")
    codes = get_target_code_list(raw_code) if raw_code is not None else None
    arch = _target_attr(target, "arch")
    if arch is not None:
        arch = str(arch)
        if arch.startswith("sm_"):
            return arch.removeprefix("sm_"), codes
        raise ValueError(f"CUDA target arch must be an exact SM token such as 'sm_90' or 'sm_100f', got {arch!r}.")
    return get_target_arch(get_target_compute_version(target)), codes


def _gpu_compute_version() -> str | None:
    """``"major.minor"`` of the first visible NVIDIA GPU (through torch), None without one."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available() or getattr(torch.version, "hip", None):
        return None
    major, minor = torch.cuda.get_device_capability(torch.cuda.current_device())
    return f"{major}.{minor}"


def get_target_compute_version(target: Any = None) -> str:
    """The compute capability ``"major.minor"`` of `target` (its ``arch``), else of the current Target, else of
    the local GPU: ``sm_90a`` -> ``"9.0"``, ``sm_100f`` -> ``"10.0"``, ``sm_89`` -> ``"8.9"``."""
    target = target or _current_target()
    arch = _target_attr(target, "arch")
    if arch is not None:
        digits = str(arch).split("_", 1)[-1].rstrip("af")
        if len(digits) in (2, 3) and digits.isdigit():
            return f"{digits[:-1]}.{digits[-1]}"
        raise ValueError(f"Unsupported arch: {arch}")
    version = _gpu_compute_version()
    if version is not None:
        return version
    raise ValueError("No CUDA architecture was specified or GPU detected. Specify it with a target config such as "
                     "{'kind': 'cuda', 'arch': 'sm_90'}.")


def parse_compute_version(compute_version: str) -> tuple[int, int]:
    """``"8.6"`` -> ``(8, 6)``; RuntimeError for anything else."""
    parts = str(compute_version).split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError) as err:
        raise RuntimeError(f"Compute version parsing error: {compute_version!r}") from err


def get_target_arch(compute_version: str | tuple[int, int]) -> str:
    """The nvcc arch suffix of a compute capability: ``"8.0"`` -> ``"80"``, ``(9, 0)`` -> ``"90a"`` (the
    arch-specific variant from Hopper on, which wgmma / tcgen05 need)."""
    major, minor = parse_compute_version(compute_version) if isinstance(compute_version, str) else compute_version
    return f"{major * 10 + minor}{'a' if major >= 9 else ''}"


def _version_of(compute_version: str | None, target: Any = None) -> tuple[int, int]:
    return parse_compute_version(compute_version or get_target_compute_version(target))


def have_fp16(compute_version: str) -> bool:
    """Whether the compute capability has fp16 arithmetic (5.3 and 6.0 on)."""
    major, minor = parse_compute_version(compute_version)
    return (major == 5 and minor >= 3) or major >= 6


def have_int8(compute_version: str) -> bool:
    """Whether the compute capability has int8 dot products (6.1 and on)."""
    return parse_compute_version(compute_version)[0] >= 6


def have_tensorcore(compute_version: str | None = None, target: Any = None) -> bool:
    """Whether tensor cores exist (7.0 and on): from `compute_version`, else the local GPU, else `target`'s arch
    (False with a warning when none of them tells)."""
    if compute_version is None:
        compute_version = _gpu_compute_version()
        if compute_version is None:
            if _target_attr(target, "arch") is None:
                warnings.warn("Tensorcore will be disabled due to no CUDA architecture specified. Specify it with a "
                              "target config such as {'kind': 'cuda', 'arch': 'sm_90'}.", stacklevel=2)
                return False
            compute_version = get_target_compute_version(target)
    return parse_compute_version(compute_version)[0] >= 7


def have_cudagraph() -> bool:
    """Whether the toolkit supports CUDA graphs (10.0 and on)."""
    try:
        return get_cuda_version() >= (10, 0)
    except RuntimeError:
        return False


def have_bf16(compute_version: str) -> bool:
    """Whether the compute capability has bf16 arithmetic (8.0 and on)."""
    return parse_compute_version(compute_version)[0] >= 8


def have_fp8(compute_version: str) -> bool:
    """Whether the compute capability has fp8 (Ada 8.9, and 9.0 on)."""
    major, minor = parse_compute_version(compute_version)
    return (major == 8 and minor >= 9) or major >= 9


def have_tma(target: Any) -> bool:
    """Whether a CUDA `target` has the Tensor Memory Accelerator (9.0 and on)."""
    return _target_kind(target) == "cuda" and _version_of(None, target)[0] >= 9


def is_hopper(target: Any) -> bool:
    """Whether a CUDA `target` is sm_90 / sm_90a."""
    return _target_kind(target) == "cuda" and _version_of(None, target) == (9, 0)


def have_pdl(target: Any) -> bool:
    """Whether a CUDA `target` has programmatic dependent launch (9.0 and on)."""
    return _target_kind(target) == "cuda" and _version_of(None, target)[0] >= 9


def have_mbarrier(target: Any) -> bool:
    """Whether a CUDA `target` has hardware mbarriers (9.0 and on)."""
    return _target_kind(target) == "cuda" and _version_of(None, target)[0] >= 9


# ---------------------------------------------------------------------------------------------- compiling
@dataclass(frozen=True)
class NvccResult:
    """One nvcc run: the output file's bytes, nvcc's combined stdout/stderr, and the command line."""

    data: bytearray
    output: str
    command: list[str]


def _kernels_output_dir() -> str | None:
    """``cuda.kernels_output_dir`` of the current PassContext (when TVM is loaded and one sets it)."""
    transform = sys.modules.get("tvm.ir.transform")
    if transform is None:
        return None
    value = transform.PassContext.current().config.get("cuda.kernels_output_dir", None)
    return None if value is None else str(value)


def _resolve_artifact_paths(workdir: str, file_name: str, target_format: str,
                            kernels_output_dir: str | None = None) -> tuple[str, str]:
    """``(source path, output path)``: in `workdir`, or uniquely named in `kernels_output_dir` when given."""
    if kernels_output_dir is None:
        return os.path.join(workdir, f"{file_name}.cu"), os.path.join(workdir, f"{file_name}.{target_format}")
    os.makedirs(kernels_output_dir, exist_ok=True)
    fd, source = tempfile.mkstemp(prefix=f"{file_name}_", suffix=".cu", dir=kernels_output_dir)
    os.close(fd)
    stem = os.path.splitext(os.path.basename(source))[0]
    return source, os.path.join(kernels_output_dir, f"{stem}.{target_format}")


def _arch_flags(target_format: str) -> tuple[list[str], str]:
    """nvcc's arch flags for the current target, and the output format (a code list of several SMs needs a
    fatbin: asked for a cubin, warn and switch)."""
    arch, codes = get_target_arch_and_code(_current_target())
    gencode = format_target_code_for_gencode(codes)
    flags = [f"-arch=sm_{arch}"] if gencode is None else ["-gencode", f"arch=compute_{arch},code={gencode}"]
    if target_format == "cubin" and len(codes or []) > 1:
        warnings.warn("NVCC does not allow '--cubin' with multiple code targets; using '--fatbin' instead.",
                      RuntimeWarning, stacklevel=4)
        target_format = "fatbin"
    return flags, target_format


def _option_list(options: str | list[str] | None) -> list[str]:
    if not options:
        return []
    if isinstance(options, str):
        return [options]
    if isinstance(options, list):
        return list(options)
    raise ValueError("options must be str or list of str")


class NvccError(RuntimeError):
    """nvcc failed, could not be started or ran out of time. The message is the reference's (source, then nvcc's
    output and the command); `output` is nvcc's own message alone, `command` the command line, `returncode`
    nvcc's status (None when it did not start or was stopped)."""

    def __init__(self, message: str, output: str, command: list[str], returncode: int | None = None):
        super().__init__(message)
        self.output, self.command, self.returncode = output, command, returncode


def run_nvcc(code: str, target_format: str = "ptx", arch: str | list[str] | None = None,
             options: str | list[str] | None = None, path_target: str | None = None,
             verbose: bool = False, nvcc: str | None = None) -> NvccResult:
    """Compile CUDA C `code` with nvcc (see `compile_cuda`) and return the output bytes with nvcc's log.

    :param nvcc: the nvcc executable to run (default: `get_nvcc_compiler`).
    :raises NvccError: with nvcc's own output apart (``.output``).
    """
    if arch is None:
        arch, target_format = _arch_flags(target_format)
    if target_format not in _FORMATS:
        raise ValueError(f"target_format must be in cubin, ptx, fatbin, got {target_format!r}")
    extra = _option_list(options)
    keep = not env.should_cleanup_temp_files()
    workdir = tempfile.mkdtemp(prefix="tilelang-nvcc-")
    try:
        source_path, output_path = _resolve_artifact_paths(workdir, "tvm_kernels", target_format,
                                                           _kernels_output_dir())
        with open(source_path, "w") as f:
            f.write(code)
        file_target = path_target or output_path
        cmd = [nvcc or get_nvcc_compiler()]
        host_compiler = get_cplus_compiler()
        if host_compiler:
            cmd.append(f"-ccbin={host_compiler}")
        cmd += [f"--{target_format}", "-O3", "-lineinfo"]  # line info: profilers map SASS back to the source
        cmd += arch if isinstance(arch, list) else ["-arch", arch]
        if os.name == "nt":  # a conforming preprocessor, and __cplusplus telling the truth (alignas on CUtensorMap)
            cmd += ["-Xcompiler", "/Zc:preprocessor /Zc:__cplusplus"]
        cmd += [*extra, f"-I{include_dir()}", "-o", file_target, source_path]  # the helper headers

        compiler_env = get_nvcc_subprocess_env()
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=compiler_env)
        except OSError as exc:  # not there, not executable
            raise NvccError(f"nvcc could not be started: {exc}\nCommand: {' '.join(cmd)}\n", str(exc), cmd) from None
        timeout = _get_compile_timeout_seconds()
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            proc.kill()
            try:
                out, _ = proc.communicate()
            except Exception:
                out = exc.output or b""
            message = (f"NVCC compilation timed out after {timeout} seconds.\nCommand: {' '.join(cmd)}\n"
                       f"Source: {source_path}\nTarget: {file_target}\n")
            if _text(out):
                message += f"Output:\n{_text(out)}\n"
            raise NvccError(message, _text(out) or f"nvcc timed out after {timeout} seconds", cmd) from exc
        output = _text(out)
        if verbose:
            logger.info("NVCC compilation command: %s", " ".join(cmd))
            logger.info("PTXAS verbose output:\n%s", output)
        if proc.returncode != 0:
            message = f"{code}\nCompilation error:\n{output}\nCommand: {' '.join(cmd)}\n"
            if os.name == "nt":
                from tilelang.backend.sdk import get_msvc_environment_error

                if get_msvc_environment_error():
                    message += f"MSVC environment: {get_msvc_environment_error()}\n"
            raise NvccError(message, output, cmd, proc.returncode)
        with open(file_target, "rb") as f:
            data = bytearray(f.read())
        if not data:
            raise RuntimeError("Compilation error: empty result is generated")
        return NvccResult(data, output, cmd)
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)


def compile_cuda(code: str, target_format: str = "ptx", arch: str | list[str] | None = None,
                 options: str | list[str] | None = None, path_target: str | None = None,
                 verbose: bool = False) -> bytearray:
    """Compile CUDA C `code` with nvcc and return the PTX / cubin / fatbin bytes.

    :param arch: a list of nvcc flags (``["-arch=sm_90a"]``, ``["-gencode", "arch=...,code=..."]``), a string
        passed as ``-arch <arch>``, or None for the current Target's ``arch`` / ``code`` (the local GPU without
        one).
    :param options: extra nvcc flags (a string is one flag).
    :param path_target: write the output there instead.
    :raises RuntimeError: with nvcc's output and the command line when it fails or runs out of time.
    """
    return run_nvcc(code, target_format, arch, options, path_target, verbose).data


def default_compile_options(compile_flags: list[str] | None = None) -> list[str]:
    """Default nvcc flags for TileLang sources (C++20, template / CUTLASS / CUDA include directories) followed by
    `compile_flags`, each split like a shell would (repeated flags such as ``-gencode`` are kept)."""
    options = ["-std=c++20"]
    for directory in (env.TILELANG_TEMPLATE_PATH, env.CUTLASS_INCLUDE_DIR):
        if directory:
            options.append(f"-I{directory}")
    if env.CUDA_HOME:
        options.append(f"-I{os.path.join(env.CUDA_HOME, 'include')}")
    for flag in compile_flags or []:
        options += shlex.split(flag) if isinstance(flag, str) else [str(flag)]
    return options


def get_ptx_from_source(code: str, compile_flags: list[str] | None = None, verbose: bool = False) -> str:
    """Compile CUDA C `code` (for the current Target) and return its PTX text."""
    return bytes(compile_cuda(code, target_format="ptx", options=default_compile_options(compile_flags),
                              verbose=verbose)).decode("utf-8", errors="replace")


def _find_tool(name: str) -> str | None:
    """A CUDA binary on PATH or in ``<CUDA root>/bin``."""
    found = shutil.which(name)
    if found:
        return found
    if env.CUDA_HOME:
        candidate = os.path.join(env.CUDA_HOME, "bin", name)
        if os.path.exists(candidate):
            return candidate
    return None


def get_sass_from_source(code: str, compile_flags: list[str] | None = None, verbose: bool = False) -> str:
    """Compile CUDA C `code` to a cubin and disassemble it (nvdisasm, else ``cuobjdump --dump-sass``)."""
    cubin = compile_cuda(code, target_format="cubin", options=default_compile_options(compile_flags),
                         verbose=verbose)
    tools = []
    if nvdisasm := _find_tool("nvdisasm"):
        tools.append(("nvdisasm", [nvdisasm]))
    if cuobjdump := _find_tool("cuobjdump"):
        tools.append(("cuobjdump", [cuobjdump, "--dump-sass"]))
    if not tools:
        raise RuntimeError("Cannot find 'nvdisasm' or 'cuobjdump'. Please ensure CUDA toolkit is installed and in "
                           "PATH (or `pip install nvidia-cuda-nvdisasm`).")
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
        path = f.name
    last_error = ""
    try:
        for name, cmd in tools:
            proc = subprocess.run([*cmd, path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
            text = _text(proc.stdout)
            if verbose:
                logger.info("[%s] output:\n%s", name, text)
            if proc.returncode == 0 and text.strip():
                return text
            last_error = f"{name} rc={proc.returncode}, output:\n{text}"
        raise RuntimeError(f"SASS disassembly failed. Tried tools: {', '.join(n for n, _ in tools)}\n{last_error}")
    finally:
        with contextlib.suppress(OSError):
            os.remove(path)
