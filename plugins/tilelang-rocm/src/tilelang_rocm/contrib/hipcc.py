"""Invoking hipcc: HIP C++ to an AMDGPU code object (hsaco).

`compile_hip` also asks clang for its kernel-resource-usage remarks, strips them from the output and records
them (`tilelang_rocm.contrib.hip_resource_info`). ``TILELANG_CLEANUP_TEMP_FILES=0`` keeps the temporary files;
``TILELANG_COMPILE_TIMEOUT_SECONDS`` bounds each hipcc run. ``HIP_PLATFORM`` defaults to ``amd`` (some
distribution hipcc builds hand off to nvcc otherwise).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

from tilelang.env import env
from tilelang_rocm.contrib.hip_resource_info import filter_and_record, hipcc_remark_flag

__all__ = ["compile_hip", "get_hipcc"]


def _kernels_output_dir() -> str | None:
    transform = sys.modules.get("tvm.ir.transform")
    if transform is None:
        return None
    value = transform.PassContext.current().config.get("hip.kernels_output_dir", None)
    return None if value is None else str(value)


def _resolve_artifact_paths(workdir: str, file_name: str, target_format: str,
                            kernels_output_dir: str | None = None) -> tuple[str, str]:
    if kernels_output_dir is None:
        return os.path.join(workdir, f"{file_name}.cc"), os.path.join(workdir, f"{file_name}.{target_format}")
    os.makedirs(kernels_output_dir, exist_ok=True)
    fd, source = tempfile.mkstemp(prefix=f"{file_name}_", suffix=".cc", dir=kernels_output_dir)
    os.close(fd)
    stem = os.path.splitext(os.path.basename(source))[0]
    return source, os.path.join(kernels_output_dir, f"{stem}.{target_format}")


def get_hipcc() -> str:
    """The hipcc executable: on PATH, else under ``ROCM_PATH`` / ``/opt/rocm``."""
    found = shutil.which("hipcc")
    if found:
        return found
    for root in (os.environ.get("ROCM_PATH"), os.environ.get("ROCM_HOME"), "/opt/rocm"):
        if root and os.path.exists(os.path.join(root, "bin", "hipcc")):
            return os.path.join(root, "bin", "hipcc")
    raise RuntimeError("hipcc was not found: install ROCm and put its bin directory on PATH (or set ROCM_PATH)")


def compile_hip(code: str, target_format: str = "hsaco", arch: str | None = None,
                options: str | list[str] | None = None, path_target: str | None = None,
                verbose: bool = False) -> bytearray:
    """Compile HIP C++ `code` with hipcc into an hsaco for `arch` (``gfx942`` ...; the local GPU's when None)
    and return its bytes. RuntimeError with the code and hipcc's diagnostics when it fails."""
    if target_format != "hsaco":
        raise ValueError(f"target_format must be hsaco, got {target_format!r}")
    if arch is None:
        from tilelang_rocm.contrib.rocm import find_rocm_path, get_rocm_arch

        arch = get_rocm_arch(find_rocm_path())
    if options is None:
        extra: list[str] = []
    elif isinstance(options, str):
        extra = [options]
    elif isinstance(options, list):
        extra = list(options)
    else:
        raise ValueError("options must be str or list of str")
    workdir = tempfile.mkdtemp(prefix="tilelang-hipcc-")
    try:
        source_path, output_path = _resolve_artifact_paths(workdir, "my_kernel", target_format,
                                                           _kernels_output_dir())
        with open(source_path, "w") as f:
            f.write(code)
        file_target = path_target or output_path
        cmd = [get_hipcc(), "-O3", "-c", "-gline-tables-only"]  # line tables: profilers map ISA to source
        if isinstance(arch, str):
            cmd.append(f"--offload-arch={arch}")
        cmd += ["--genco", *extra, hipcc_remark_flag(), "-o", file_target, source_path]
        run_env = dict(os.environ)
        run_env.setdefault("HIP_PLATFORM", "amd")
        try:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=run_env, check=False,
                                  timeout=env.get_compile_timeout_seconds())
        except subprocess.TimeoutExpired as exc:
            raise RuntimeError(f"hipcc compilation timed out after {exc.timeout} seconds.\nCommand: "
                               f"{' '.join(cmd)}\nSource: {source_path}\n") from exc
        output = filter_and_record(proc.stdout.decode("utf-8", errors="replace"))
        if verbose:
            print(output)
        if proc.returncode != 0:
            raise RuntimeError(f"{code}\nCompilation error:\n{output}\nCommand: {' '.join(cmd)}\n")
        with open(file_target, "rb") as f:
            data = bytearray(f.read())
        if not data:
            raise RuntimeError("Compilation error: empty result is generated")
        return data
    finally:
        if env.should_cleanup_temp_files():
            shutil.rmtree(workdir, ignore_errors=True)
