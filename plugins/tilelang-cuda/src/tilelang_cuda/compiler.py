"""CUDA C -> cubin + PTX with nvcc (preferred when there is one) or NVRTC, and the ptxas report.

`compile_source` runs ONE nvcc call per kernel through `tilelang_cuda.contrib.nvcc` (``-cubin --keep`` keeps the
PTX; ``-Xptxas -v`` reports registers and shared memory) and memoises the result per process by (source, arch,
compiler, the helper headers' digest, flags). Both compilers get ``-I`` the plugin's helper headers
(`tilelang_cuda.intrinsics.include_dir`), which generated sources include. `compile_artifact` puts
``kernel.cubin`` / ``kernel.ptx`` into a `CompiledArtifact`'s files and the ptxas numbers into its metadata.
``TILELANG_CUDA_COMPILER=nvcc|nvrtc`` picks the compiler; where nvcc, NVRTC and the headers are comes from
`tilelang_cuda.toolkit` (NVIDIA's pip wheels through cuda-pathfinder). An nvcc chosen by default whose environment
is broken gives way to NVRTC with a warning. Compile errors start with the compiler's own message.

The flags follow the reference: a kernel's ``compile_flags=`` (which arrive as ``tl.device_compile_flags``) reach
nvcc and NVRTC alike, fast math only under ``tl.enable_fast_math`` (`flags_from_configs`).

The reference TileLang's TVM callbacks of this backend live here too (declared in the manifest, registered
when `tilelang.backend.get_backend` builds its module): `tilelang_callback_cuda_compile` (nvcc to a cubin or
fatbin, through `tilelang_cuda.cuda_binary_cache.CUDABinaryCache`) and `tilelang_callback_cuda_validate`.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tempfile
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tilelang.errors import TileLangError
from tilelang_cuda.intrinsics.device import headers_digest, include_dir

CUBIN = "kernel.cubin"
PTX = "kernel.ptx"
FLAGS_KEY = "cuda_flags"  # artifact metadata: the extra compiler flags its build asked for
_lock = threading.Lock()
_MEMO: dict[str, CudaBinary] = {}


class CudaCompileError(TileLangError):
    """nvcc / NVRTC rejected the generated CUDA source."""


@dataclass(frozen=True)
class CudaBinary:
    """What one compile produced: the cubin, its PTX and ptxas' resource report."""

    cubin: bytes
    ptx: str
    compiler: str
    log: str = ""
    resources: dict[str, Any] = field(default_factory=dict)


_PTXAS_REGS = re.compile(r"Used (\d+) registers")
_PTXAS_SMEM = re.compile(r"(\d+) bytes smem")
_PTXAS_SPILL = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")
_PTXAS_STACK = re.compile(r"(\d+) bytes stack frame")


def parse_ptxas(log: str) -> dict[str, Any]:
    """``{"registers", "static_shared_bytes", "spill_stores", "spill_loads", "stack_bytes"}`` from ``ptxas -v``."""
    out: dict[str, Any] = {}
    if m := _PTXAS_REGS.search(log):
        out["registers"] = int(m.group(1))
    if m := _PTXAS_SMEM.search(log):
        out["static_shared_bytes"] = int(m.group(1))
    if m := _PTXAS_SPILL.search(log):
        out["spill_stores"], out["spill_loads"] = int(m.group(1)), int(m.group(2))
    if m := _PTXAS_STACK.search(log):
        out["stack_bytes"] = int(m.group(1))
    return out


def default_compiler() -> str:
    """``TILELANG_CUDA_COMPILER`` (``nvcc`` / ``nvrtc``) when set, else nvcc when there is one (``CUDA_PATH``,
    ``CUDA_HOME``, PATH, its wheel, conda) not found broken, else NVRTC (`tilelang_cuda.toolkit`)."""
    from tilelang_cuda.toolkit import CudaToolkitError
    from tilelang_cuda.toolkit import default_compiler as choose

    try:
        return choose()
    except CudaToolkitError as exc:
        raise CudaCompileError(str(exc)) from None


def compiler_available() -> bool:
    """Whether `default_compiler()` can run here: nvcc found, or NVRTC with its library and headers."""
    from tilelang_cuda.toolkit import compiler_problem

    return compiler_problem() is None


class NvccUnusable(CudaCompileError):
    """nvcc failed on a trivial kernel too: its environment is broken (a missing host compiler, a broken
    install), not the kernel."""


def compiler_message(log: str, context: str, limit: int = 60) -> str:
    """A compile error as users read it: the compiler's own message first (its first `limit` lines), then
    `context` (which compiler, for which arch, the command)."""
    lines = log.strip().splitlines()
    if len(lines) > limit:
        lines = [*lines[:limit], f"... ({len(lines) - limit} more lines)"]
    return "\n".join([*lines, context])


def flags_from_configs(configs: Any) -> list[str]:
    """The compiler flags pass configs ask for, with the reference's meaning: ``tl.device_compile_flags`` (where a
    kernel's ``compile_flags=`` arrive), each shell-split; ``--use_fast_math`` only under ``tl.enable_fast_math``
    (fast math is off otherwise); ``tl.ptxas_register_usage_level``."""
    from tilelang.transform import PassConfigKey

    flags: list[str] = []
    extra = configs.get(PassConfigKey.TL_DEVICE_COMPILE_FLAGS.value)
    if extra:
        flags += _compile_flag_tokens(extra)
    if configs.get(PassConfigKey.TL_ENABLE_FAST_MATH.value, False):
        flags.append("--use_fast_math")
    level = configs.get(PassConfigKey.TL_PTXAS_REGISTER_USAGE_LEVEL.value)
    if level is not None:
        flags.append(f"--ptxas-options=--register-usage-level={int(level)}")
    return flags


def requested_flags() -> list[str]:
    """`flags_from_configs` of the pass configs of the compile in progress (none outside one)."""
    from tilelang.backend.sdk import current_tl_configs

    return flags_from_configs(current_tl_configs())


def _std(flags: list[str], spelling: str) -> list[str]:
    """``<spelling>c++17`` unless the user's `flags` choose the language standard themselves."""
    return [] if any(f.startswith(("-std", "--std")) for f in flags) else [f"{spelling}c++17"]


def _nvcc(source: str, arch: str, flags: list[str]) -> CudaBinary:
    """One nvcc run through `tilelang_cuda.contrib.nvcc` (``--keep`` leaves the PTX in a scratch directory); a failure
    that a trivial kernel shares (`toolkit.nvcc_problem`) is `NvccUnusable`."""
    from tilelang_cuda import toolkit
    from tilelang_cuda.contrib import nvcc

    path = toolkit.find_nvcc()
    if path is None:
        raise CudaCompileError(f"nvcc was not found ({toolkit.NVCC_PLACES}): install the CUDA toolkit (or `pip "
                               "install nvidia-cuda-nvcc`), or set TILELANG_CUDA_COMPILER=nvrtc with "
                               f"`{toolkit.NVRTC_EXTRA}`")
    with tempfile.TemporaryDirectory(prefix="tilelang-cuda-") as tmp:
        options = [*_std(flags, "-std="), "-Xptxas", "-v", "--keep", f"--keep-dir={tmp}", *flags]
        try:
            result = nvcc.run_nvcc(source, "cubin", arch=[f"-arch={arch}"], options=options, nvcc=path)
        except nvcc.NvccError as exc:
            if toolkit.nvcc_problem(path) is not None:
                raise NvccUnusable(compiler_message(
                    exc.output, f"nvcc ({path}) cannot compile even a trivial kernel here: its environment is "
                    "broken (the message above), not the kernel")) from None
            raise CudaCompileError(compiler_message(
                exc.output, f"nvcc failed for {arch}; command: {' '.join(exc.command)}")) from None
        ptx_files = sorted(Path(tmp).glob("*.ptx"))
        ptx = ptx_files[0].read_text() if ptx_files else ""
        return CudaBinary(bytes(result.data), ptx, "nvcc", result.output, parse_ptxas(result.output))


def _nvrtc(source: str, arch: str, flags: list[str]) -> CudaBinary:
    """One NVRTC compile (library and headers from NVIDIA's pip wheels or a toolkit, `tilelang_cuda.toolkit`)."""
    from tilelang_cuda import toolkit

    try:
        nvrtc = toolkit.load_nvrtc()
        include_dirs = toolkit.nvrtc_include_dirs()
    except toolkit.CudaToolkitError as exc:
        raise CudaCompileError(str(exc)) from None

    def check(result: Any, what: str) -> Any:
        if result[0] != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise CudaCompileError(f"{what} failed: {result[0]}")
        return result[1] if len(result) > 1 else None

    prog = check(nvrtc.nvrtcCreateProgram(source.encode(), b"kernel.cu", 0, [], []), "nvrtcCreateProgram")
    try:
        opts = [f"--gpu-architecture={arch}", "-default-device", *_std(flags, "--std="), "--ptxas-options=-v",
                f"-I{include_dir()}", *[f"-I{d}" for d in include_dirs], *flags]
        rc = nvrtc.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])[0]
        log_buf = b" " * check(nvrtc.nvrtcGetProgramLogSize(prog), "nvrtcGetProgramLogSize")
        check(nvrtc.nvrtcGetProgramLog(prog, log_buf), "nvrtcGetProgramLog")
        log = log_buf.decode(errors="replace").rstrip("\x00 ")
        if rc != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            hint = toolkit.missing_include_hint(log)
            raise CudaCompileError(compiler_message(log, f"NVRTC failed for {arch} ({rc})") +
                                   (f"\n{hint}" if hint else ""))
        cubin = b" " * check(nvrtc.nvrtcGetCUBINSize(prog), "nvrtcGetCUBINSize")
        check(nvrtc.nvrtcGetCUBIN(prog, cubin), "nvrtcGetCUBIN")
        ptx_buf = b" " * check(nvrtc.nvrtcGetPTXSize(prog), "nvrtcGetPTXSize")
        check(nvrtc.nvrtcGetPTX(prog, ptx_buf), "nvrtcGetPTX")
        ptx = ptx_buf.decode(errors="replace").rstrip("\x00")
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return CudaBinary(bytes(cubin), ptx, "nvrtc", log, parse_ptxas(log))


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def compile_source(source: str, arch: str, compiler: str | None = None, flags: list[str] | None = None
                   ) -> CudaBinary:
    """Compile CUDA C `source` for `arch` (``sm_80`` ...) with `compiler` (default: `default_compiler`) and the
    extra compiler `flags` (default: those of the compile in progress, `requested_flags`); memoised per process.

    When nvcc was chosen by default and its environment turns out broken (`NvccUnusable`), NVRTC compiles
    instead, with a warning; asked for by name (`compiler`, ``TILELANG_CUDA_COMPILER``), nvcc's error is raised.
    """
    from tilelang_cuda import toolkit

    named = compiler is not None or toolkit.forced_compiler() is not None
    compiler = compiler or default_compiler()
    flags = requested_flags() if flags is None else list(flags)
    key = hashlib.sha256("\0".join([source, arch, compiler, headers_digest(), *flags]).encode()).hexdigest()
    with _lock:
        hit = _MEMO.get(key)
    if hit is not None:
        return hit
    if compiler == "nvcc":
        try:
            binary = _nvcc(source, arch, flags)
        except NvccUnusable as exc:
            problem = None if named else toolkit.compiler_problem("nvrtc")
            if named or problem is not None:
                raise CudaCompileError(f"{exc}" + (f"\nNVRTC cannot take over: {problem}" if problem else "")
                                       ) from None
            warnings.warn(f"{exc}; compiling with NVRTC instead", RuntimeWarning, stacklevel=2)
            binary = _nvrtc(source, arch, flags)
    elif compiler == "nvrtc":
        binary = _nvrtc(source, arch, flags)
    else:
        raise CudaCompileError(f"unknown CUDA compiler {compiler!r}; use 'nvcc' or 'nvrtc'")
    with _lock:
        _MEMO[key] = binary
    return binary


def compile_artifact(artifact: Any, compiler: str | None = None, flags: list[str] | None = None) -> CudaBinary:
    """Compile a CUDA `CompiledArtifact` (once) and record ``kernel.cubin``, ``kernel.ptx`` and ptxas numbers;
    `flags` default to those its build asked for (metadata ``cuda_flags``)."""
    if CUBIN in artifact.files and PTX in artifact.files and compiler is None and not flags:
        ptx = artifact.files[PTX]
        return CudaBinary(artifact.files[CUBIN], ptx.decode() if isinstance(ptx, bytes) else ptx,
                          artifact.metadata.get("cuda_compiler", "cache"),
                          resources=dict(artifact.metadata.get("ptxas", {})))
    arch = str(artifact.target.get("arch", "sm_80"))
    if flags is None:
        flags = list(artifact.metadata.get(FLAGS_KEY) or [])
    binary = compile_source(artifact.kernel_source, arch, compiler, flags)
    artifact.files[CUBIN] = binary.cubin
    artifact.files[PTX] = binary.ptx.encode()
    artifact.metadata.update(resource_metadata(binary))
    return binary


def resource_metadata(binary: CudaBinary) -> dict[str, Any]:
    """The artifact metadata of a build: the compiler used, the ptxas report, registers and static shared bytes."""
    meta: dict[str, Any] = {"cuda_compiler": binary.compiler, "ptxas": dict(binary.resources)}
    meta.update({key: binary.resources[key] for key in ("registers", "static_shared_bytes") if key in binary.resources})
    return meta


def sass_of(cubin: bytes) -> str:
    """Disassemble `cubin` with cuobjdump (or nvdisasm); a clear error naming the PyPI package when absent."""
    tool = shutil.which("cuobjdump") or _wheel_tool("cuobjdump")
    disasm = shutil.which("nvdisasm") or _wheel_tool("nvdisasm")
    if tool is None and disasm is None:
        raise TileLangError("export_sass() needs cuobjdump or nvdisasm: install the CUDA toolkit or "
                            "`pip install nvidia-cuda-cuobjdump` (or nvidia-cuda-nvdisasm)")
    with tempfile.TemporaryDirectory(prefix="tilelang-sass-") as tmp:
        path = Path(tmp) / CUBIN
        path.write_bytes(cubin)
        cmd = [tool, "-sass", str(path)] if tool else [disasm, str(path)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            raise TileLangError(f"{Path(cmd[0]).name} failed: {_tail(proc.stderr)}")
        return proc.stdout


def _wheel_tool(name: str) -> str | None:
    """`name` from NVIDIA's pip wheels or ``CUDA_HOME`` (`tilelang_cuda.toolkit.find_tool`)."""
    from tilelang_cuda.toolkit import find_tool

    return find_tool(name)


# ---------------------------------------------------------------------------------------------- TVM callbacks
_GLOBAL_KERNEL = re.compile(r'(?:extern\s+"C"\s+)?__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?(\w+)')


def _global_kernel_names(source: str) -> list[str]:
    """The ``__global__`` functions a CUDA source defines, in order, once each."""
    return list(dict.fromkeys(_GLOBAL_KERNEL.findall(source)))


def tilelang_callback_cuda_validate(device_mod: Any) -> None:
    """Check device functions carrying user CUDA source (``code_block_source``, from ``T.CUDASourceCodeKernel``):
    the source must define a ``__global__`` kernel named like the function's ``global_symbol`` (and its
    ``code_block_entry_name`` when given). ValueError naming the kernels found otherwise."""
    from tvm import tirx

    for func in device_mod.functions.values():
        if not isinstance(func, tirx.PrimFunc) or not func.attrs:
            continue
        source = func.attrs.get("code_block_source")
        if source is None:
            continue
        symbol = func.attrs.get("global_symbol")
        if symbol is None:
            raise ValueError("CodeGenTileLangCUDA expects source-kernel PrimFunc to have the global_symbol attribute")
        entry = func.attrs.get("code_block_entry_name")
        if entry is not None and str(entry) != str(symbol):
            raise ValueError("T.CUDASourceCodeKernel expects the lowered device global_symbol to match entry_name")
        names = _global_kernel_names(str(source))
        if not names:
            raise ValueError("T.CUDASourceCodeKernel expects external CUDA source to declare at least one "
                             "__global__ kernel")
        if str(symbol) not in names:
            raise ValueError(f"T.CUDASourceCodeKernel expected device global_symbol `{symbol}` to match a "
                             f"__global__ kernel in the provided CUDA source. Available entries: {', '.join(names)}")


def _compile_flag_tokens(flags: Any) -> list[str]:
    import shlex

    if isinstance(flags, str):
        return shlex.split(flags)
    tokens: list[str] = []
    for flag in flags:
        tokens += shlex.split(flag) if isinstance(flag, str) else [str(flag)]
    return tokens


def _kind(target: Any) -> str:
    if isinstance(target, dict):
        return str(target["kind"])
    return str(target.kind.name)


def tilelang_callback_cuda_compile(code: str, target: Any, pass_config: dict[str, Any] | None = None) -> bytearray:
    """Compile CUDA C `code` for `target` (a tvm Target or config dict) with nvcc: a cubin, or a fatbin when the
    target's ``code`` lists several SMs. Pass configs: ``tl.enable_fast_math``,
    ``tl.ptxas_register_usage_level``, ``tl.device_compile_flags``. Binaries are kept in `CUDABinaryCache`
    keyed by source, target and every compiler option, so a hit skips nvcc."""
    from tilelang.env import env
    from tilelang_cuda.contrib import nvcc
    from tilelang_cuda.cuda_binary_cache import CUDABinaryCache

    arch, codes = nvcc.get_target_arch_and_code(target)
    code_list = nvcc.get_target_code_list(codes)
    gencode = nvcc.format_target_code_for_gencode(codes)
    arch_flags = [f"-arch=sm_{arch}"] if gencode is None else ["-gencode", f"arch=compute_{arch},code={gencode}"]
    compile_format = "fatbin" if len(code_list) > 1 else "cubin"

    options = ["-std=c++20"]
    for directory in (env.TILELANG_TEMPLATE_PATH, env.CUTLASS_INCLUDE_DIR):
        if directory:
            options.append(f"-I{directory}")
    options += flags_from_configs({str(k): v for k, v in (pass_config or {}).items()})
    verbose = env.get_default_verbose()
    if verbose:
        options += ["--ptxas-options=--verbose", "-w"]

    key = CUDABinaryCache.make_key(code=code, target_kind=_kind(target), target_arch=arch, target_code=code_list,
                                   compile_format=compile_format, options=options)
    cached = CUDABinaryCache.load(key, compile_format)
    if cached is not None:
        return bytearray(cached)
    binary = nvcc.compile_cuda(code, compile_format, arch_flags, options=options, verbose=verbose)
    CUDABinaryCache.save(key, compile_format, bytes(binary))
    return binary
