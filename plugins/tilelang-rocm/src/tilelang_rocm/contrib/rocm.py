"""The ROCm toolchain: finding ROCm and ld.lld, linking AMDGPU code objects, device bitcode, GPU arch.

Importing this module registers TVM's ROCm build callbacks (``tvm_callback_rocm_link``,
``tvm_callback_rocm_bitcode_path``, ``tvm_callback_rocm_get_arch``) with this module's implementations, as the
reference TileLang does; a backend may register its own for the builds it runs.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings

import tvm
import tvm_ffi

__all__ = ["find_lld", "rocm_link", "callback_rocm_link", "callback_rocm_bitcode_path", "parse_compute_version",
           "have_matrixcore", "get_rocm_arch", "find_rocm_path"]

_BITCODE_NAMES = (
    "oclc_daz_opt_on", "ocml", "irif", "oclc_correctly_rounded_sqrt_off", "oclc_correctly_rounded_sqrt_on",
    "oclc_daz_opt_off", "oclc_finite_only_off", "oclc_finite_only_on", "oclc_isa_version_803",
    "oclc_isa_version_900", "oclc_isa_version_906", "oclc_isa_version_1030", "oclc_unsafe_math_off",
    "oclc_unsafe_math_on", "oclc_wavefrontsize64_on", "oclc_abi_version_500",
)
_OPTIONAL_BITCODE = ("irif",)  # gone since ROCm 3.9; isa_version files exist only for some GPUs


def _llvm_major() -> int | None:
    """The LLVM major version TVM was built with (when TVM is loaded), to prefer the matching ld.lld."""
    codegen = sys.modules.get("tvm.target.codegen")
    if codegen is None:
        return None
    try:
        return codegen.llvm_version_major(allow_none=True)
    except Exception:
        return None


def _versioned_on_path() -> list[str]:
    """``ld.lld-<N>`` executables on PATH (distribution LLVM packages), newest first."""
    found: dict[int, str] = {}
    for directory in os.get_exec_path():
        try:
            entries = os.listdir(directory)
        except OSError:
            continue
        for entry in entries:
            match = re.fullmatch(r"ld\.lld-(\d+)(?:\.0)?", entry)
            path = os.path.join(directory, entry)
            if match and int(match.group(1)) not in found and os.access(path, os.X_OK):
                found[int(match.group(1))] = path
    return [found[v] for v in sorted(found, reverse=True)]


def find_lld(required: bool = True) -> list[str]:
    """Paths of ld.lld executables, best first: ``$ROCM_PATH/llvm/bin``, then ``/opt/rocm/llvm/bin``, then PATH;
    in each, the name matching TVM's LLVM major version (``ld.lld-22``) before plain ``ld.lld``; then any
    versioned ``ld.lld-<N>`` on PATH, newest first.

    RuntimeError listing what was searched when none exists and `required`.
    """
    major = _llvm_major()
    names = ([f"ld.lld-{major}.0", f"ld.lld-{major}"] if major else []) + ["ld.lld"]
    dirs = [os.path.join(os.environ["ROCM_PATH"], "llvm", "bin")] if os.environ.get("ROCM_PATH") else []
    dirs.append("/opt/rocm/llvm/bin")
    found: list[str] = []
    for directory in dirs:
        for name in names:
            path = os.path.join(directory, name)
            if os.path.isfile(path) and os.access(path, os.X_OK) and path not in found:
                found.append(path)
    for name in names:
        path = shutil.which(name)
        if path and path not in found:
            found.append(path)
    found += [p for p in _versioned_on_path() if p not in found]
    if not found and required:
        raise RuntimeError(f"cannot find ld.lld (searched {', '.join(names)} in {', '.join(dirs)} and on PATH); "
                           "install ROCm, or LLD (e.g. `apt-get install lld`)")
    return found


def rocm_link(in_file: str, out_file: str, lld: str | None = None) -> None:
    """Link the relocatable AMDGPU object `in_file` into the code object `out_file` with ld.lld.

    Undefined symbols are link errors here rather than an opaque failure when the GPU loads the module.
    """
    cmd = [lld or find_lld()[0], "--no-undefined", "-shared", in_file, "-o", out_file]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"Linking error using ld.lld:\n{proc.stdout.decode('utf-8', errors='replace')}")


@tvm_ffi.register_global_func("tvm_callback_rocm_link", override=True)
def callback_rocm_link(obj_bin: bytes | bytearray) -> bytearray:
    """TVM's ROCm callback: an AMDGPU object file's bytes -> the linked HSA code object's bytes."""
    with tempfile.TemporaryDirectory(prefix="tilelang-rocm-") as tmp:
        obj, cobj = os.path.join(tmp, "rocm_kernel.o"), os.path.join(tmp, "rocm_kernel.co")
        with open(obj, "wb") as f:
            f.write(bytes(obj_bin))
        rocm_link(obj, cobj)
        with open(cobj, "rb") as f:
            return bytearray(f.read())


@tvm_ffi.register_global_func("tvm_callback_rocm_bitcode_path", override=True)
def callback_rocm_bitcode_path(rocdl_dir: str | None = None) -> list[str]:
    """The ROCm device-library bitcode files to link into a kernel (in link order) from `rocdl_dir` (default:
    ``/opt/rocm/amdgcn/bitcode``, or ``/opt/rocm/lib`` before ROCm 3.9). RuntimeError naming a missing one."""
    if rocdl_dir is None:
        rocdl_dir = "/opt/rocm/amdgcn/bitcode/" if os.path.exists("/opt/rocm/amdgcn/bitcode/") else "/opt/rocm/lib/"
    files = []
    for name in _BITCODE_NAMES:
        path = os.path.join(rocdl_dir, f"{name}.bc")
        if not os.path.exists(path):
            path = os.path.join(rocdl_dir, f"{name}.amdgcn.bc")
        if os.path.exists(path):
            files.append(path)
        elif "isa_version" not in name and name not in _OPTIONAL_BITCODE:
            raise RuntimeError(f"could not find bitcode {name} in {rocdl_dir}: install ROCm's device libraries or "
                               "set ROCM_PATH")
    return files


def parse_compute_version(compute_version: str) -> tuple[int, int]:
    """``"9.0"`` -> ``(9, 0)``; RuntimeError for anything else."""
    parts = str(compute_version).split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError) as err:
        raise RuntimeError(f"Compute version parsing error: {err}") from err


def have_matrixcore(compute_version: str | None = None) -> bool:
    """Whether the GPU (given, or the local one) has matrix cores (compute version 8.0 and on)."""
    if compute_version is None:
        device = tvm.rocm(0)
        if not device.exist:
            raise RuntimeError("No ROCm runtime found: pass compute_version")
        compute_version = device.compute_version
    return parse_compute_version(compute_version)[0] >= 8


@tvm_ffi.register_global_func("tvm_callback_rocm_get_arch", override=True)
def get_rocm_arch(rocm_path: str = "/opt/rocm") -> str:
    """The local AMD GPU's architecture (``gfx942`` ...) from ``rocminfo``; ``gfx900`` with a warning when it
    cannot tell."""
    default = "gfx900"
    if not os.path.exists(rocm_path):
        warnings.warn(f"ROCm not detected at {rocm_path}, using default {default}", stacklevel=2)
        return default
    try:
        out = subprocess.check_output([os.path.join(rocm_path, "bin", "rocminfo")]).decode("utf-8", "replace")
    except (subprocess.CalledProcessError, OSError):
        warnings.warn(f"Unable to run rocminfo: ensure ROCm is installed and an AMD GPU is visible; using default "
                      f"{default}", stacklevel=2)
        return default
    match = re.search(r"Name:\s+(gfx\d+[a-zA-Z]*)", out)
    return match.group(1) if match else default


def find_rocm_path() -> str:
    """The ROCm root: ``ROCM_PATH``, else two levels above hipcc on PATH, else ``/opt/rocm`` when it has hipcc."""
    if "ROCM_PATH" in os.environ:
        return os.environ["ROCM_PATH"]
    hipcc = shutil.which("hipcc")
    if hipcc:
        return os.path.realpath(os.path.join(hipcc, "../.."))
    if os.path.exists("/opt/rocm/bin/hipcc"):
        return "/opt/rocm"
    raise RuntimeError("Cannot find ROCm path: install ROCm or set ROCM_PATH")
