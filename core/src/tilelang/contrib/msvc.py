"""The Windows host toolchain: finding clang-cl / cl.exe, the Visual Studio environment, and building DLLs.

Everything here answers for Windows only: elsewhere `get_msvc_subprocess_env` returns None,
`get_windows_compiler` returns ``(None, None)`` and `create_shared` raises a ValueError saying so.
``TILELANG_DISABLE_CLANG_CL=1`` prefers cl.exe over clang-cl; ``CLANG_CL`` and ``VSDEVCMD_BAT`` name the tools
explicitly when they are not found.
"""

from __future__ import annotations

import functools
import glob
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence

__all__ = ["get_env_path", "get_windows_compiler", "get_msvc_subprocess_env", "get_msvc_environment_error",
           "create_shared"]

_MSVC_ENV_ERROR: str | None = None
_ALIGNED_ATTR = re.compile(r"__attribute__\s*\(\(\s*aligned\s*\(\s*([0-9]+)\s*\)\s*\)\)")
_FFI_EXPORT = re.compile(r"\bint32_t\s+(__tvm_ffi_[A-Za-z0-9_]+)\s*\(")


def _is_windows() -> bool:
    return os.name == "nt"


def get_env_path(compiler_env: dict[str, str]) -> str | None:
    """The PATH of an environment dict, whatever its capitalisation."""
    return compiler_env.get("PATH") or compiler_env.get("Path") or compiler_env.get("path")


def _clang_cl_disabled() -> bool:
    return os.environ.get("TILELANG_DISABLE_CLANG_CL", "") not in ("", "0", "OFF", "off", "false", "False")


def _program_files() -> list[str]:
    return [p for p in (os.environ.get("PROGRAMFILES"), os.environ.get("PROGRAMFILES(X86)")) if p]


def _vs_roots() -> list[str]:
    roots = [os.path.join(base, "Microsoft Visual Studio") for base in _program_files()]
    vc_dir = os.environ.get("VCINSTALLDIR")
    if vc_dir:  # <install>/VC/ -> <install>
        roots.append(os.path.dirname(os.path.normpath(vc_dir)))
    return [r for r in roots if os.path.isdir(r)]


def _clang_cl_candidates(compiler_env: dict[str, str] | None) -> list[str]:
    found: list[str] = []

    def add(path: str | None) -> None:
        if path and os.path.exists(path) and path not in found:
            found.append(path)

    add(os.environ.get("CLANG_CL"))
    for root in _vs_roots():  # Visual Studio's bundled LLVM
        for pattern in ("*/*/VC/Tools/Llvm/x64/bin/clang-cl.exe", "*/*/VC/Tools/Llvm/bin/clang-cl.exe"):
            for hit in sorted(glob.glob(os.path.join(root, pattern)), reverse=True):
                add(hit)
    for base in _program_files():
        add(os.path.join(base, "LLVM", "bin", "clang-cl.exe"))
    for var in ("LLVM_HOME", "LLVM_DIR"):
        if os.environ.get(var):
            add(os.path.join(os.environ[var], "bin", "clang-cl.exe"))
    search = get_env_path(compiler_env) if compiler_env else None
    add(shutil.which("clang-cl.exe", path=search))
    add(shutil.which("clang-cl", path=search))
    return found


@functools.cache
def _resolve_windows_compiler(prefer_clang_cl: bool) -> tuple[str | None, str | None]:
    compiler_env = get_msvc_subprocess_env()
    if prefer_clang_cl:
        candidates = _clang_cl_candidates(compiler_env)
        if candidates:
            return candidates[0], "clang-cl"
    cl = shutil.which("cl.exe", path=get_env_path(compiler_env or {}))
    return (cl, "msvc") if cl else (None, None)


def get_windows_compiler() -> tuple[str | None, str | None]:
    """``(path, kind)`` of the Windows host compiler, kind ``"clang-cl"`` or ``"msvc"``; ``(None, None)`` when
    none is found or not on Windows."""
    if not _is_windows():
        return None, None
    return _resolve_windows_compiler(not _clang_cl_disabled())


def _find_vsdevcmd() -> str | None:
    explicit = os.environ.get("VSDEVCMD_BAT")
    if explicit and os.path.exists(explicit):
        return explicit
    for base in _program_files():
        vswhere = os.path.join(base, "Microsoft Visual Studio", "Installer", "vswhere.exe")
        if not os.path.exists(vswhere):
            continue
        try:
            proc = subprocess.run([vswhere, "-latest", "-products", "*", "-requires",
                                   "Microsoft.VisualStudio.Component.VC.Tools.x86.x64", "-find",
                                   r"Common7\Tools\VsDevCmd.bat"],
                                  capture_output=True, text=True, errors="replace", check=False)
        except OSError:
            continue
        for line in proc.stdout.splitlines() if proc.returncode == 0 else []:
            if line.strip() and os.path.exists(line.strip()):
                return line.strip()
    for base in _program_files():
        for year in ("2022", "2019"):
            hits = sorted(glob.glob(os.path.join(base, "Microsoft Visual Studio", year, "*", "Common7", "Tools",
                                                 "VsDevCmd.bat")), reverse=True)
            if hits:
                return hits[0]
    return None


def _environment_after(vsdevcmd: str) -> dict[str, str] | None:
    """The environment `vsdevcmd` sets up (x64 host and target), or None when it fails."""
    shell = os.environ.get("COMSPEC") or os.path.join(os.environ.get("SYSTEMROOT", r"C:\Windows"), "System32",
                                                      "cmd.exe")
    line = f'"{shell}" /d /s /c "call "{vsdevcmd}" -no_logo -arch=x64 -host_arch=x64 >nul && set"'
    try:
        proc = subprocess.run(line, capture_output=True, text=True, errors="replace", check=False)
    except OSError:
        return None
    if proc.returncode != 0:
        return None
    env = dict(os.environ)
    for entry in proc.stdout.splitlines():
        name, sep, value = entry.partition("=")
        if sep and name:
            env[name] = value
            if name.upper() == "PATH":
                env["PATH"] = value
    return env


@functools.cache
def get_msvc_subprocess_env() -> dict[str, str] | None:
    """The environment for compiler subprocesses on Windows (Visual Studio's, when cl.exe is not on PATH yet);
    None elsewhere. A problem finding it is kept for `get_msvc_environment_error`."""
    global _MSVC_ENV_ERROR
    if not _is_windows():
        return None
    base = dict(os.environ)
    if shutil.which("cl.exe", path=get_env_path(base)):
        return base
    vsdevcmd = _find_vsdevcmd()
    if vsdevcmd is None:
        _MSVC_ENV_ERROR = "Could not find VsDevCmd.bat. Install Visual Studio Build Tools or set VSDEVCMD_BAT."
        return base
    env = _environment_after(vsdevcmd)
    if env is None:
        _MSVC_ENV_ERROR = f"VsDevCmd.bat failed: {vsdevcmd}"
        return base
    _MSVC_ENV_ERROR = None if shutil.which("cl.exe", path=get_env_path(env)) else (
        f"VsDevCmd.bat did not expose cl.exe: {vsdevcmd}")
    return env


def get_msvc_environment_error() -> str | None:
    """Why the Visual Studio environment could not be set up (None when it could, or was not needed)."""
    return _MSVC_ENV_ERROR


def _normalize_option(option: str) -> str | None:
    """A gcc-style option in cl.exe spelling (None for options cl.exe has no use for)."""
    if option.startswith("-I"):
        return "/I" + option[2:]
    if option.startswith("-D"):
        return "/D" + option[2:]
    if option in ("-g", "-fPIC") or option.startswith("-std="):
        return None
    return option


def _patch_source_for_msvc(path: str, tmp_dir: str) -> str:
    """`path`, or a copy in `tmp_dir` with ``__attribute__((aligned(N)))`` spelled ``__declspec(align(N))``."""
    if os.path.splitext(path)[1].lower() not in (".c", ".cc", ".cpp"):
        return path
    with open(path, encoding="utf-8") as f:
        source = f.read()
    patched = _ALIGNED_ATTR.sub(r"__declspec(align(\1))", source)
    if patched == source:
        return path
    tag = hashlib.md5(os.path.dirname(os.path.abspath(path)).encode()).hexdigest()[:8]
    out = os.path.join(tmp_dir, f"{tag}_{os.path.basename(path)}")
    with open(out, "w", encoding="utf-8") as f:
        f.write(patched)
    return out


def _collect_tvm_ffi_exports(path: str) -> list[str]:
    """The ``__tvm_ffi_*`` functions (and the library context) a C source defines: the DLL must export them."""
    if os.path.splitext(path)[1].lower() not in (".c", ".cc", ".cpp"):
        return []
    with open(path, encoding="utf-8") as f:
        source = f.read()
    names = set(_FFI_EXPORT.findall(source))
    if "__tvm_ffi__library_ctx" in source:
        names.add("__tvm_ffi__library_ctx,DATA")
    return sorted(names)


def _import_libs() -> tuple[list[str], list[str]]:
    """Directories and import libraries of TVM FFI to link a DLL against."""
    libs: list[str] = []
    try:
        from tvm_ffi import libinfo

        lib = libinfo.find_windows_implib()
        if lib and os.path.exists(lib):
            libs.append(os.path.abspath(lib))
    except Exception:
        pass
    return sorted({os.path.dirname(lib) for lib in libs}), libs


def create_shared(output: str, objects: str | Sequence[str], options: Sequence[str] | None = None,
                  cc: str | None = None, cwd: str | None = None, ccache_env: dict[str, str] | None = None) -> None:
    """Build the DLL `output` from C/C++ sources with clang-cl or cl.exe (Windows only)."""
    if not _is_windows():
        raise ValueError("Windows shared-library compiler is only available on Windows; use "
                         "tilelang.contrib.cc.create_shared elsewhere")
    env = get_msvc_subprocess_env()
    if cc is not None:
        compiler, kind = cc, ("clang-cl" if "clang-cl" in os.path.basename(cc).lower() else "msvc")
    else:
        compiler, kind = get_windows_compiler()
    if compiler is None:
        detail = get_msvc_environment_error()
        raise RuntimeError("Could not find a Windows host compiler (clang-cl or cl.exe). Install LLVM (clang-cl) or "
                           "Visual Studio Build Tools, or set VSDEVCMD_BAT / CLANG_CL."
                           + (f" ({detail})" if detail else ""))
    sources = [objects] if isinstance(objects, str) else list(objects)
    with tempfile.TemporaryDirectory() as tmp_dir:
        patched = [_patch_source_for_msvc(p, tmp_dir) for p in sources]
        compile_options = [o for o in (_normalize_option(str(x)) for x in options or []) if o is not None]
        lib_dirs, libs = _import_libs()
        exports = sorted({name for p in patched for name in _collect_tvm_ffi_exports(p)})
        link = [f"/LIBPATH:{d}" for d in lib_dirs] + libs + [f"/EXPORT:{name}" for name in exports]
        # /Fo keeps each call's .obj files apart: parallel builds must not race on <source>.obj in the cwd
        cmd = [compiler, "/nologo", "/LD", "/O2", "/utf-8", "/W0", f"/Fe:{output}", "/Fo:" + os.path.join(tmp_dir, "")]
        if kind == "clang-cl":
            cmd.append("-Wno-unused-command-line-argument")
        cmd += [*compile_options, *patched, "/link", *link]
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              cwd=cwd, env=env, check=False)
        if proc.returncode != 0:
            out = proc.stdout.decode("utf-8", errors="replace")
            raise RuntimeError(f"Compilation error:\n{out}\nCommand line: {' '.join(cmd)}")


create_shared.output_format = "dll"  # type: ignore[attr-defined]
