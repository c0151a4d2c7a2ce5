"""Compile a kernel file for a target without a device: write the generated kernel source.

::

    python -m tilelang.tools.compile_only --output_file out.cu --target cuda kernel.py
    tilelang compile-only kernel.py --target '{"kind": "cuda", "arch": "sm_90a"}' -o out.cu

The file is imported as a module (not run as a script) and its first ``@tilelang.jit`` kernel or
``@T.prim_func`` is lowered with `tilelang.lower`. Any installed backend works (``c`` and ``llvm`` with
tilelang-cpu, ``cuda`` with tilelang-cuda, ``hip``/``rocm``, ``metal``, ``webgpu``); the target must be
explicit (``auto`` would depend on this machine), and a bare ``cuda`` is pinned to ``sm_80`` so no device is
probed. ``--stats`` prints the launch configuration and shared memory next to the source.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["DEFAULT_TARGET", "cli_main", "compile_kernel", "compile_kernel_source", "cuda_codegen_available",
           "discover_prim_func", "load_example", "resolve_target"]

DEFAULT_TARGET = "c"
_PINNED_CUDA = {"kind": "cuda", "arch": "sm_80"}
_ERROR = "tilelang compile-only error"


def cuda_codegen_available() -> bool:
    """Whether a backend serving target kind ``cuda`` (tilelang-cuda) is installed."""
    from tilelang.backend import plugins

    return "cuda" in plugins.installed_kinds()


def _kind(target: Any) -> str:
    if isinstance(target, dict):
        return str(target.get("kind", "")).strip().lower()
    if isinstance(target, str):
        text = target.strip()
        if text.startswith("{"):
            try:
                return _kind(json.loads(text))
            except json.JSONDecodeError:
                return ""
        return text.split(None, 1)[0].lower() if text else ""
    return str(getattr(getattr(target, "kind", None), "name", "") or "").lower()


def resolve_target(target: str) -> str | dict[str, Any]:
    """An explicit target for `tilelang.lower` from a command-line string (``auto`` is refused).

    ``cuda`` becomes ``{"kind": "cuda", "arch": "sm_80"}``; ``cuda -arch=sm_90a`` and JSON objects keep their
    options (a JSON CUDA target without ``arch`` gets sm_80).
    """
    text = str(target).strip()
    if not text or text.lower() == "auto":
        raise ValueError("the target must be explicit (e.g. c, llvm, cuda, cuda -arch=sm_90a); 'auto' is not allowed")
    if text.lower() == "cuda":
        return dict(_PINNED_CUDA)
    if text.startswith("{"):
        try:
            spec = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"the target JSON is invalid: {text}") from exc
        if not isinstance(spec, dict) or "kind" not in spec:
            raise ValueError("a JSON target must be an object with a 'kind'")
        if _kind(spec) == "auto":
            raise ValueError("the target must be explicit; 'auto' is not allowed")
        return {**_PINNED_CUDA, **spec} if _kind(spec) == "cuda" else spec
    if _kind(text) == "cuda":
        spec: dict[str, Any] = {"kind": "cuda"}
        for option in text.split()[1:]:
            key, sep, value = option.lstrip("-").partition("=")
            if not option.startswith("-") or not sep:
                raise ValueError('CUDA target options look like -arch=sm_90a (or use JSON {"kind": "cuda", "arch": '
                                 '"sm_90a"})')
            spec[key] = value
        return {**_PINNED_CUDA, **spec}
    return text


def load_example(path: str) -> ModuleType:
    """Import the file at `path` as a module (its kernels are defined, nothing is launched)."""
    spec = importlib.util.spec_from_file_location("tilelang_compile_only_input", path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load input file: {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def discover_prim_func(module: ModuleType, name: str | None = None, **kwargs: Any) -> Any:
    """The PrimFunc of the first ``@tilelang.jit`` kernel or ``@T.prim_func`` of `module` (or the one called
    `name`); a jit kernel is specialised with `kwargs`."""
    from tvm import tirx

    from tilelang.jit import JITImpl

    found = [(key, obj) for key, obj in vars(module).items() if isinstance(obj, (JITImpl, tirx.PrimFunc))]
    if name and name not in dict(found):
        listed = ", ".join(key for key, _ in found) or "none"
        raise RuntimeError(f"no @tilelang.jit kernel or PrimFunc named {name!r} in {module.__file__} (kernels there: "
                           f"{listed})")
    items = [(name, dict(found)[name])] if name else found
    for key, obj in items:
        if isinstance(obj, JITImpl):
            try:
                return obj.get_tir(**kwargs)
            except TypeError as exc:
                raise RuntimeError(f"kernel {key!r} needs arguments to be specialised ({exc}); pass them with "
                                   "--set NAME=VALUE") from exc
        if isinstance(obj, tirx.PrimFunc):
            return obj
    raise RuntimeError(f"no @tilelang.jit kernel or PrimFunc {'named ' + repr(name) if name else ''} found".strip())


def compile_kernel(func: Any, target: str | dict[str, Any] = DEFAULT_TARGET,
                   pass_configs: dict[str, Any] | None = None) -> Any:
    """`tilelang.lower` of `func` for an explicit `target` (strings go through `resolve_target`)."""
    from tilelang.engine import lower

    resolved = resolve_target(target) if isinstance(target, str) else target
    if _kind(resolved) == "cuda" and not cuda_codegen_available():
        raise RuntimeError("compiling for CUDA needs the tilelang-cuda backend: `pip install tilelang-cuda` (or use "
                           "--target c)")
    return lower(func, target=resolved, pass_configs=pass_configs)


def compile_kernel_source(func: Any, target: str | dict[str, Any] = DEFAULT_TARGET) -> str:
    """The kernel source `tilelang.lower` generates for `func` on `target` (non-empty, or RuntimeError)."""
    source = compile_kernel(func, target).kernel_source
    if not source or not str(source).strip():
        raise RuntimeError("lowering produced an empty kernel source")
    return str(source)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and a.samefile(b))
    except OSError:
        return False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command-line arguments (shared with ``tilelang compile-only``)."""
    parser.add_argument("input_file", help="Python file defining the kernel (imported, not run)")
    parser.add_argument("--output_file", "--output-file", "-o", required=True, help="where to write the source")
    parser.add_argument("--target", default=DEFAULT_TARGET, help="explicit target (default: c), e.g. cuda, "
                                                                  "'cuda -arch=sm_90a', llvm, metal, webgpu")
    parser.add_argument("--kernel", default=None, help="name of the kernel in the file (default: the first)")
    parser.add_argument("--set", dest="kwargs", action="append", default=[], metavar="K=V",
                        help="argument of a @tilelang.jit kernel factory (repeatable)")
    parser.add_argument("--stats", action="store_true", help="print the launch configuration and shared memory")


def run(args: argparse.Namespace) -> int:
    """Compile for parsed `args`; prints an error and returns 1 on failure."""
    from tilelang.tools.pass_visualizer.core import _parse_kv

    output, source_path = Path(args.output_file), Path(args.input_file)
    if _same_file(output, source_path):
        print(f"{_ERROR}: --output_file must not be the input file", file=sys.stderr)
        return 1
    output.unlink(missing_ok=True)  # never leave an old result behind a failed compile
    try:
        module = load_example(args.input_file)
        func = discover_prim_func(module, getattr(args, "kernel", None), **_parse_kv(getattr(args, "kwargs", [])))
        artifact = compile_kernel(func, resolve_target(args.target))
        source = str(artifact.kernel_source or "")
        if not source.strip():
            raise RuntimeError("lowering produced an empty kernel source")
        output.write_text(source)
    except Exception as exc:
        print(f"{_ERROR}: {exc}", file=sys.stderr)
        return 1
    if getattr(args, "stats", False):
        meta = dict(artifact.metadata or {})
        print(f"{artifact.name}: target {artifact.target.get('kind')}, grid {meta.get('grid')}, threads "
              f"{meta.get('threads')}, shared memory {meta.get('shared_bytes', 0)} bytes, "
              f"{len(source.splitlines())} source lines -> {output}")
    return 0


def cli_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tilelang.tools.compile_only",
                                     description="Compile a TileLang kernel file to source without a device.")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(cli_main())
