"""Invoking the system C/C++ compiler: shared libraries, static libraries, executables, cross compilers.

`create_shared` / `create_executable` drive gcc/clang on Linux and macOS and clang (or MSVC through
`tilelang.contrib.msvc`) on Windows; `cross_compiler` specialises a compile function with fixed options, as
``export_library(..., fcompile=...)`` expects. Nothing here imports TVM.
"""

from __future__ import annotations

import functools
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "get_cc", "get_cplus_compiler", "is_darwin", "create_shared", "create_staticlib", "create_executable",
    "get_global_symbol_section_map", "get_target_by_dump_machine", "cross_compiler",
]

CompileFunc = Callable[..., None]


def _text(out: bytes | str | None) -> str:
    """Subprocess output as text (undecodable bytes replaced)."""
    if out is None:
        return ""
    return out if isinstance(out, str) else out.decode("utf-8", errors="replace")


def _is_linux_like() -> bool:
    return sys.platform == "darwin" or sys.platform.startswith(("linux", "freebsd"))


def _is_windows_like() -> bool:
    return sys.platform == "win32"


def _first_on_path(names: Sequence[str]) -> str | None:
    for name in names:
        for directory in os.get_exec_path():
            candidate = os.path.join(directory, name)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
    return None


def _windows_compiler() -> str | None:
    from tilelang.contrib.msvc import get_windows_compiler

    return get_windows_compiler()[0]


def get_cc() -> str | None:
    """The default C/C++ compiler: ``$CXX`` or ``$CC``, else the first of g++, gcc, clang++, clang, c++, cc on
    PATH (clang-cl / cl.exe on Windows); None when there is none."""
    from_env = os.environ.get("CXX") or os.environ.get("CC")
    if from_env:
        return from_env
    if _is_windows_like():
        return _windows_compiler()
    return _first_on_path(("g++", "gcc", "clang++", "clang", "c++", "cc"))


@functools.cache
def get_cplus_compiler() -> str | None:
    """The default C++ compiler (``$CXX`` / ``$CC``, else g++, clang++ or c++ on PATH); None when there is none.

    Cached for the process: nvcc's ``-ccbin`` asks for it on every compile."""
    from_env = os.environ.get("CXX") or os.environ.get("CC")
    if from_env:
        return from_env
    if _is_windows_like():
        return _windows_compiler()
    return _first_on_path(("g++", "clang++", "c++"))


def is_darwin() -> bool:
    return platform.system() == "Darwin"


def _run(cmd: list[str], what: str, cwd: str | None = None, env: dict[str, str] | None = None) -> str:
    """Run `cmd`; RuntimeError with its output and command line when it fails (``what`` heads the message)."""
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=cwd, env=env)
    except FileNotFoundError as exc:
        raise RuntimeError(f"{what}: cannot run {cmd[0]!r} ({exc}). Install a C/C++ compiler or set CXX.") from None
    out, _ = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"{what}:\n{_text(out)}\nCommand line: {' '.join(cmd)}")
    return _text(out)


def _with_ccache(cmd: list[str], ccache_env: dict[str, str] | None) -> tuple[list[str], dict[str, str] | None]:
    if ccache_env is None:
        return cmd, None
    if not shutil.which("ccache"):
        raise ValueError("ccache not found: install it or pass ccache_env=None")
    env = dict(os.environ)
    env.update(ccache_env)
    return ["ccache", *cmd], env


def _linux_compile(output: str, objects: str | Sequence[str], options: Sequence[str] | None, compile_cmd: str,
                   cwd: str | None = None, ccache_env: dict[str, str] | None = None,
                   compile_shared: bool = False) -> None:
    cmd = [compile_cmd]
    shared = compile_shared or output.endswith((".so", ".dylib"))
    if compile_cmd == "nvcc":
        if shared:
            cmd.append("-shared")
    elif shared:
        cmd += ["-shared", "-fPIC"]
        if sys.platform == "darwin":
            cmd += ["-undefined", "dynamic_lookup"]
    elif output.endswith(".obj"):
        cmd.append("-c")
    cmd += ["-o", output]
    cmd += [objects] if isinstance(objects, str) else list(objects)
    cmd += list(options or [])
    cmd, env = _with_ccache(cmd, ccache_env)
    _run(cmd, "Compilation error", cwd=cwd, env=env)


def _windows_compile(output: str, objects: str | Sequence[str], options: Sequence[str] | None,
                     cwd: str | None = None, ccache_env: dict[str, str] | None = None) -> None:
    cmd = ["clang", "-O2"]
    if output.endswith((".so", ".dll")):
        cmd.append("-shared")
    elif output.endswith(".obj"):
        cmd.append("-c")
    cmd += ["-o", output]
    cmd += [objects] if isinstance(objects, str) else list(objects)
    cmd += list(options or [])
    cmd, env = _with_ccache(cmd, ccache_env)
    try:
        _run(cmd, "Compilation error", cwd=cwd, env=env)
    except RuntimeError as exc:
        if "cannot run" in str(exc):
            raise RuntimeError("Cannot find LLVM's clang for Windows (clang.exe): install LLVM (https://llvm.org/) "
                               "and put its bin directory on %PATH%.") from None
        raise


def create_shared(output: str, objects: str | Sequence[str], options: Sequence[str] | None = None,
                  cc: str | None = None, cwd: str | None = None, ccache_env: dict[str, str] | None = None) -> None:
    """Link `objects` (object or source files) into the shared library `output`.

    ``cc`` defaults to `get_cc()`; ``ccache_env`` (a dict of variables) runs the compiler through ccache.
    """
    if _is_linux_like():
        compiler = cc or get_cc()
        if compiler is None:
            raise RuntimeError("No C/C++ compiler found: install gcc or clang, or set CXX")
        _linux_compile(output, objects, options, compiler, cwd, ccache_env, compile_shared=True)
    elif _is_windows_like():
        _windows_compile(output, objects, options, cwd, ccache_env)
    else:
        raise ValueError(f"Unsupported platform {sys.platform!r}")


def create_executable(output: str, objects: str | Sequence[str], options: Sequence[str] | None = None,
                      cc: str | None = None, cwd: str | None = None,
                      ccache_env: dict[str, str] | None = None) -> None:
    """Link `objects` into the executable `output` (same arguments as `create_shared`)."""
    if _is_linux_like():
        compiler = cc or get_cc()
        if compiler is None:
            raise RuntimeError("No C/C++ compiler found: install gcc or clang, or set CXX")
        _linux_compile(output, objects, options, compiler, cwd, ccache_env)
    elif _is_windows_like():
        _windows_compile(output, objects, options, cwd, ccache_env)
    else:
        raise ValueError(f"Unsupported platform {sys.platform!r}")


def _unpack_inputs(workdir: str, inputs: Sequence[str]) -> list[str]:
    """`inputs` with each ``.tar`` of objects replaced by the files it holds (extracted into `workdir`)."""
    import tarfile

    files: list[str] = []
    for i, path in enumerate(inputs):
        if not path.endswith(".tar"):
            files.append(path)
            continue
        target = os.path.join(workdir, f"tar{i}")
        os.makedirs(target)
        with tarfile.open(path) as archive:
            if hasattr(tarfile, "data_filter"):  # Python >= 3.10.12 / 3.11.4: refuse unsafe members
                archive.extractall(target, filter="data")
            else:
                archive.extractall(target)
        files += sorted(os.path.join(target, name) for name in os.listdir(target))
    return files


def create_staticlib(output: str, inputs: Sequence[str], ar: str | None = None) -> None:
    """Archive `inputs` (object files, or ``.tar`` files of objects) into the static library `output`."""
    if not _is_linux_like():
        raise ValueError(f"Unsupported platform {sys.platform!r}: static libraries need ar")
    name = os.path.basename(output)
    if not name.startswith("lib"):
        name = "lib" + name
    with tempfile.TemporaryDirectory(prefix="tilelang-ar-") as workdir:
        temp_output = os.path.join(workdir, name)
        _run([ar or "ar", "-crs", temp_output, *_unpack_inputs(workdir, inputs)], "AR error")
        shutil.move(temp_output, output)


def get_global_symbol_section_map(path: str, *, nm: str | None = None) -> dict[str, str]:
    """``{symbol: section letter}`` of the defined global symbols of the library at `path` (``nm``)."""
    if nm is None:
        if not _is_linux_like():
            raise ValueError(f"Unsupported platform {sys.platform!r}: pass nm=")
        nm = "nm"
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path} does not exist")
    # defined globals only: -U on macOS; GNU nm (2.38+) reads -U as --unicode, so spell it out there
    flags = ["-gU"] if sys.platform == "darwin" else ["-g", "--defined-only"]
    out = _run([nm, *flags, path], "Runtime error")
    symbols = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 3:
            symbols[fields[2]] = fields[1]
    return symbols


def get_target_by_dump_machine(compiler: str | None) -> Callable[[], str | None]:
    """A function returning `compiler`'s target triple (``-dumpmachine``), or None when it cannot tell."""

    def get_target_triple() -> str | None:
        if not compiler:
            return None
        try:
            proc = subprocess.run([compiler, "-dumpmachine"], capture_output=True, check=False)
        except OSError:
            return None
        return _text(proc.stdout) if proc.returncode == 0 else None

    return get_target_triple


create_shared.output_format = "so" if sys.platform != "win32" else "dll"  # type: ignore[attr-defined]
create_shared.get_target_triple = get_target_by_dump_machine(os.environ.get("CXX", get_cc()))  # type: ignore[attr-defined]


def cross_compiler(compile_func: str | CompileFunc, options: Sequence[str] | None = None,
                   output_format: str | None = None, get_target_triple: Callable[[], str | None] | None = None,
                   add_files: Sequence[str] | None = None) -> CompileFunc:
    """`compile_func` (a compiler command, or a function like `create_shared`) with `options` fixed in front.

    The result is called as ``fcompile(output, objects, options=None)``; each call's `options` follow the fixed
    ones for that call only (they never accumulate across calls), and `add_files` are linked every time. It
    carries ``output_format`` and ``get_target_triple`` (taken from `compile_func` when not given).
    """
    base_options = list(options or [])
    extra_files = list(add_files or [])
    kwargs: dict[str, Any] = {}
    if isinstance(compile_func, str):
        kwargs["cc"] = compile_func
        compile_func = create_shared

    def _fcompile(outputs: str, objects: Sequence[str], options: Sequence[str] | None = None) -> None:
        call_options = [*base_options, *(options or [])]
        compile_func(outputs, [*objects, *extra_files], options=call_options, **kwargs)

    _fcompile.output_format = output_format or getattr(compile_func, "output_format", None) or "so"  # type: ignore[attr-defined]
    _fcompile.get_target_triple = get_target_triple or getattr(compile_func, "get_target_triple", None)  # type: ignore[attr-defined]
    return _fcompile
