"""The developer tools as ``tilelang`` subcommands (registered by `tilelang.cli`).

================  =========================================================================================
``trace``         run a script with the lower trace on (``TL_LOWER_TRACE``): per-pass IR diffs / HTML report
``pass-diff``     run a script with every pass diffed (``TILELANG_PASS_DIFF``)
``profile-passes``  run a script with pass timing on (``TILELANG_PASS_PROFILE``); reports on stderr
``visualize``     HTML browser of a kernel's structure tree after every pass (CUDA pipeline)
``compile-only``  write a kernel's generated source for a target, no device needed
``analyze``       roofline estimate of a kernel on an architecture (`tilelang.tools.Analyzer`)
``autodd``        shrink a failing program while it still prints a given error (`tilelang.autodd`)
================  =========================================================================================

Every command's heavy imports happen when it runs, so ``tilelang --help`` stays fast.
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys
from typing import Any

__all__ = ["add_tool_commands"]


def _script_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("script", help="the Python script to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script")


# the pass-level tools watch the pipeline run: kernels found in the kernel cache (memory or disk) would skip it
BYPASS_CACHE = {"TILELANG_DISABLE_CACHE": "1"}


def _run_script(script: str, args: list[str], env: dict[str, str]) -> int:
    """Run `script` in this process as ``__main__`` with `env` added to the environment (and the kernel cache
    bypassed: every kernel goes through the pipeline); its exit status."""
    if not os.path.isfile(script):
        print(f"tilelang: no such script: {script}", file=sys.stderr)
        return 2
    os.environ.update({**BYPASS_CACHE, **env})
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    return 0


def _trace(ns: argparse.Namespace) -> int:
    env = {"TL_LOWER_TRACE": ns.mode}
    if ns.dir:
        env["TL_LOWER_TRACE_DIR"] = ns.dir
    return _run_script(ns.script, ns.args, env)


def _pass_diff(ns: argparse.Namespace) -> int:
    env = {"TILELANG_PASS_DIFF": ns.mode}
    if ns.output:
        env["TILELANG_PASS_DIFF_OUTPUT"] = ns.output
    os.environ.update({**BYPASS_CACHE, **env})
    from tilelang.utils.pass_diff_hook import install_pass_diff_hook

    install_pass_diff_hook()  # before the script: its own passes are diffed too
    return _run_script(ns.script, ns.args, env)


def _profile(ns: argparse.Namespace) -> int:
    import logging

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger("tilelang.pass_timing")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    env = {"TILELANG_PASS_PROFILE": "1", "TILELANG_PASS_PROFILE_THRESHOLD_MS": str(ns.threshold_ms)}
    return _run_script(ns.script, ns.args, env)


def add_visualize_arguments(parser: argparse.ArgumentParser) -> None:
    """The pass visualizer's arguments (``tilelang visualize`` and ``python -m ...pass_visualizer.viewer``)."""
    parser.add_argument("path", help="Python file with a @tilelang.jit kernel")
    parser.add_argument("--factory", default=None, help="the kernel to show (default: the first one found)")
    parser.add_argument("--target", default="cuda", help='CUDA target, e.g. cuda or \'{"kind": "cuda", "arch": '
                                                         '"sm_90a"}\' (default: cuda)')
    parser.add_argument("--set", dest="kwargs", action="append", default=[], metavar="K=V",
                        help="argument of the kernel factory (repeatable)")
    parser.add_argument("--out", default=None, help="output HTML (default: <file>_passes.html next to the source)")


def _visualize(ns: argparse.Namespace) -> int:
    from tilelang.tools.pass_visualizer import viewer

    return viewer.run(ns)


def _compile_only(ns: argparse.Namespace) -> int:
    from tilelang.tools import compile_only

    return compile_only.run(ns)


def _analyze(ns: argparse.Namespace) -> int:
    from tilelang.errors import TileLangError
    from tilelang.tools.Analyzer import Analyzer
    from tilelang.tools.compile_only import discover_prim_func, load_example
    from tilelang.tools.pass_visualizer.core import _parse_kv

    try:
        func = discover_prim_func(load_example(ns.file), ns.kernel, **_parse_kv(ns.kwargs))
        result = Analyzer.analysis(func, ns.arch)
    except (OSError, RuntimeError, ValueError, TypeError, TileLangError) as exc:  # the user's file or arguments
        print(f"tilelang analyze: error: {exc}", file=sys.stderr)
        return 2
    peak = f"{result.expected_tflops} TFLOPS" if result.expected_tflops else "unknown peak compute"
    bound = "memory" if result.expected_tflops is None or (
        result.total_global_bytes / (result.expected_bandwidth_GBps * 1e9)
        >= result.total_flops / (result.expected_tflops * 1e12)) else "compute"
    print(f"{ns.arch}: {peak}, {result.expected_bandwidth_GBps:g} GB/s")
    print(f"  FLOPs               {result.total_flops:,}")
    print(f"  global memory bytes {result.total_global_bytes:,}")
    print(f"  estimated time      {result.estimated_time * 1e6:.3f} us ({bound}-bound)")
    return 0


def _autodd(ns: argparse.Namespace) -> int:
    from tilelang import autodd

    try:
        autodd.main(autodd._args(ns))
    except (OSError, RuntimeError, ValueError, SyntaxError) as exc:
        print(f"tilelang autodd: error: {exc}", file=sys.stderr)
        return 1
    return 0


def add_tool_commands(sub: Any) -> dict[str, Any]:
    """Add the tool subcommands to argparse subparsers `sub`; returns ``{name: handler(namespace) -> int}``."""
    from tilelang import autodd
    from tilelang.tools import compile_only

    handlers: dict[str, Any] = {}

    p = sub.add_parser("trace", help="run a script with per-pass IR tracing (lower trace)")
    p.add_argument("--mode", default="html", choices=["html", "terminal", "both"])
    p.add_argument("--dir", default=None, help="trace directory (default: TL_LOWER_TRACE_DIR or ./tmp/lower_trace_dir)")
    _script_arguments(p)
    handlers["trace"] = _trace

    p = sub.add_parser("pass-diff", help="run a script with every pass's IR diffed")
    p.add_argument("--mode", default="terminal", choices=["terminal", "html", "both"])
    p.add_argument("--output", default=None, help="HTML directory (default: TILELANG_PASS_DIFF_OUTPUT)")
    _script_arguments(p)
    handlers["pass-diff"] = _pass_diff

    p = sub.add_parser("profile-passes", help="run a script with pass timing; reports on stderr")
    p.add_argument("--threshold-ms", type=float, default=0.0, help="hide passes faster than this")
    _script_arguments(p)
    handlers["profile-passes"] = _profile

    p = sub.add_parser("visualize", help="HTML browser of a kernel's passes (CUDA pipeline)")
    add_visualize_arguments(p)
    handlers["visualize"] = _visualize

    p = sub.add_parser("compile-only", help="write a kernel's generated source for a target (no device needed)")
    compile_only.add_arguments(p)
    handlers["compile-only"] = _compile_only

    p = sub.add_parser("analyze", help="roofline estimate of a kernel on an architecture")
    p.add_argument("file", help="Python file defining the kernel")
    p.add_argument("--arch", default="a100", help="architecture (sm_80, sm_90, a100, h100, h200, ...)")
    p.add_argument("--kernel", default=None, help="the kernel's name (default: the first)")
    p.add_argument("--set", dest="kwargs", action="append", default=[], metavar="K=V",
                   help="argument of a @tilelang.jit kernel factory (repeatable)")
    handlers["analyze"] = _analyze

    p = sub.add_parser("autodd", help="delta-debug a failing program down to a minimal one",
                       description=autodd._DESCRIPTION)
    autodd.add_arguments(p)
    handlers["autodd"] = _autodd
    return handlers
