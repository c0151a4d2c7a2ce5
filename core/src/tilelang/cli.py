"""The ``tilelang`` command (also ``python -m tilelang``).

``tilelang backends`` reports installed backends and their toolchains; ``tilelang cache info|clear`` inspects
and empties the disk kernel cache (`tilelang.cache.commands`); ``tilelang env`` prints every setting of
`tilelang.env` with its value, where it came from and what it does, and ``tilelang env --report`` the versions,
platform, devices, toolchains and settings to paste into a bug report; ``tilelang --version`` lists tilelang-core
and every installed backend distribution (from entry-point metadata: no plugin is imported). The developer tools
(``trace``, ``pass-diff``, ``profile-passes``, ``visualize``, ``compile-only``, ``analyze``, ``autodd``) are
in `tilelang.tools._commands`. `COMMANDS` holds every subcommand's description and examples (``--help``)."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from typing import Any

from tilelang._version import __version__
from tilelang.errors import TileLangError


def _backend_report() -> list[dict[str, Any]]:
    """One record per installed plugin: distribution, kinds, load status, execution backends, toolchain."""
    from tilelang.backend import execution_backends_for, plugins

    plugins.load_all()
    report = []
    for state in plugins.states():
        ep = state.entry_points[0]
        record: dict[str, Any] = {
            "backend": state.backend.name if state.backend else ep.package.removeprefix("tilelang_"),
            "distribution": f"{ep.distribution} {ep.version}",
            "target_kinds": sorted(e.kind for e in state.entry_points),
            "status": "ok" if state.error is None else f"failed: {type(state.error).__name__}: {state.error}",
            "execution_backends": [],
            "toolchain": [],
        }
        if state.backend is not None:
            seen = set()
            for kind in state.backend.target_kinds:
                try:
                    backends = execution_backends_for(kind)
                except TileLangError as exc:
                    record["execution_backends"].append({"name": "?", "available": False, "detail": str(exc)})
                    continue
                for backend in backends:
                    if backend.name in seen:
                        continue
                    seen.add(backend.name)
                    reason = backend.unavailable_reason()
                    record["execution_backends"].append(
                        {"name": backend.name, "available": reason is None, "detail": reason or "ready"})
            record["toolchain"] = [
                {"name": t.name, "ok": t.ok, "detail": t.detail} for t in state.backend.toolchain_report()]
        report.append(record)
    report.sort(key=lambda r: (r["distribution"], r["backend"] != _dist_suffix(r["distribution"]), r["backend"]))
    _list_execution_backends_once(report)
    return report


def _dist_suffix(distribution: str) -> str:
    return distribution.split()[0].removeprefix("tilelang-")


def _list_execution_backends_once(report: list[dict[str, Any]]) -> None:
    """An execution backend serves a target kind, and two backends may share one (the CUDA and CuTeDSL manifests
    both serve ``cuda``): each is listed under the first backend that reaches it, and a later backend left with
    none of its own names the one whose list it shares (``shares_execution_backends_with``)."""
    owner: dict[str, str] = {}
    for rec in report:
        own, shared = [], []
        for eb in rec["execution_backends"]:
            if eb["name"] in owner and eb["name"] != "?":
                shared.append(owner[eb["name"]])
            else:
                owner.setdefault(eb["name"], rec["backend"])
                own.append(eb)
        rec["execution_backends"] = own
        if shared:
            rec["shares_execution_backends_with"] = sorted(set(shared))


def _print_report(report: list[dict[str, Any]]) -> None:
    if not report:
        print("No TileLang backends are installed. Install one, e.g. `pip install tilelang-cpu`.")
        return
    for rec in report:
        print(f"{rec['backend']}  ({rec['distribution']})  target kinds: {', '.join(rec['target_kinds'])}")
        print(f"  status: {rec['status']}")
        for eb in rec["execution_backends"]:
            mark = "yes" if eb["available"] else "no "
            print(f"  execution backend {eb['name']:<12} available: {mark}  {eb['detail']}")
        if rec.get("shares_execution_backends_with"):
            print(f"  execution backends: those of {', '.join(rec['shares_execution_backends_with'])} (listed above)")
        for tool in rec["toolchain"]:
            mark = "ok " if tool["ok"] else "MISSING"
            print(f"  toolchain {tool['name']:<28} {mark}  {tool['detail']}")


def version_report() -> list[dict[str, Any]]:
    """tilelang-core, then one record per installed backend distribution: its version and target kinds, read
    from the ``tilelang.backends`` entry points' metadata (nothing is imported); ``blocked`` marks backends
    that ``TILELANG_DISABLE_PLUGIN_AUTOLOAD`` / ``TILELANG_BLOCK_PLUGINS`` hide."""
    from tilelang.backend import plugins

    usable = set(plugins.entry_points())
    dists: dict[str, dict[str, Any]] = {}
    for ep in plugins.read_entry_points():
        rec = dists.setdefault(ep.distribution, {"distribution": ep.distribution, "version": ep.version,
                                                  "target_kinds": [], "blocked": True})
        rec["target_kinds"].append(ep.kind)
        rec["blocked"] = rec["blocked"] and ep not in usable
    report = [{"distribution": "tilelang-core", "version": __version__}]
    for name in sorted(dists):
        rec = dists[name]
        rec["target_kinds"] = sorted(set(rec["target_kinds"]))
        report.append(rec)
    return report


class _VersionAction(argparse.Action):
    """``--version``: core's version, then each backend's; read only when asked for."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option: Any = None) -> None:
        for rec in version_report():
            line = f"{rec['distribution']} {rec['version']}"
            if "target_kinds" in rec:
                line += f"  (target kinds: {', '.join(rec['target_kinds'])})"
                if rec["blocked"]:
                    line += "  [blocked by TILELANG_DISABLE_PLUGIN_AUTOLOAD / TILELANG_BLOCK_PLUGINS]"
            print(line)
        parser.exit()


def _shown(value: Any) -> str:
    return "(unset)" if value is None else repr(value) if value == "" else str(value)


def _env(ns: argparse.Namespace) -> int:
    from tilelang.env import env

    if ns.report:
        from tilelang.bug_report import bug_report, format_report

        report = bug_report()
        print(json.dumps(report, indent=2) if ns.json else format_report(report))
        return 0
    rows = env.describe()
    if ns.json:
        json.dump(rows, sys.stdout, indent=2)
        print()
        return 0
    width = max(len(r["name"]) for r in rows)
    values = {r["name"]: f"{_shown(r['value'])}  [{r['source']}]" for r in rows}
    value_width = min(max(len(v) for v in values.values()), 48)
    for r in rows:
        line = f"{r['name']:<{width}}  {values[r['name']]:<{value_width}}  {r['description']}"
        print(line + (f" ({r['note']})" if r.get("note") else ""))
    return 0


# every subcommand: what it does (its --help description) and examples (its --help epilog)
COMMANDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "backends": ("List the installed backends: the distribution, the target kinds each serves, its load status, "
                 "its execution backends (available here or not, and why) and the health of its toolchain "
                 "(compilers, devices).",
                 ("tilelang backends", "tilelang backends --json | python -m json.tool")),
    "env": ("Print every environment variable TileLang reads: its effective value, where that came from "
            "(environment, default, set in this process, detected) and what it does. --report prints what a bug "
            "report needs: Python, platform, torch, TVM and driver versions, devices, toolchains and the "
            "effective settings.",
            ("tilelang env", "tilelang env | grep CACHE", "tilelang env --report > report.txt",
             "tilelang env --json")),
    "backend": ("Tools for backend authors.", ("tilelang backend new mychip",)),
    "backend new": ("Write a new backend distribution, tilelang-NAME, serving target kind NAME: its entry point, a "
                    "manifest that compiles kernels to C with the system compiler and runs them on torch CPU tensors "
                    "(a working starting point to make your own), and tests that run every kernel of TileLang's "
                    "test corpus through tilelang.compile, @tilelang.jit and the autotuner against torch.",
                    ("tilelang backend new mychip",
                     "tilelang backend new mychip --dir /tmp/tilelang-mychip --description 'My chip'")),
    "cache": ("Inspect (info) or empty (clear) the on-disk kernel cache under TILELANG_CACHE_DIR.",
              ("tilelang cache info", "tilelang cache clear --target cuda --older-than 30d --dry-run",
               "tilelang cache clear --yes")),
    "cache info": ("Print the kernel cache's directory, entries and bytes, its size limit, the entries per target kind "
                   "and the temporaries of writers (this host's and other hosts').",
                   ("tilelang cache info", "TILELANG_CACHE_MAX_BYTES=10G tilelang cache info --json")),
    "cache clear": ("Delete kernel cache entries: all of them, or those built for one target kind and/or unused for "
                    "longer than an age. Asks for confirmation on a terminal; elsewhere pass --yes.",
                    ("tilelang cache clear --dry-run", "tilelang cache clear --target llvm --yes",
                     "tilelang cache clear --older-than 2w --yes")),
    "trace": ("Run a script with the lower trace on: a snapshot of the IR after every pass of every kernel it "
              "compiles, as a terminal diff and/or an HTML report. The kernel cache is bypassed, so every kernel "
              "goes through the pipeline.",
              ("tilelang trace my_kernel.py", "tilelang trace --mode terminal --dir /tmp/trace my_kernel.py --n 512")),
    "pass-diff": ("Run a script and show what each pass changed in every kernel it compiles (terminal or HTML). "
                  "The kernel cache is bypassed, so every kernel goes through the pipeline.",
                  ("tilelang pass-diff my_kernel.py",
                   "tilelang pass-diff --mode html --output /tmp/diff my_kernel.py")),
    "profile-passes": ("Run a script with pass timing on: a table of the time each pass took, per kernel, on "
                       "stderr. The kernel cache is bypassed, so every kernel goes through the pipeline.",
                       ("tilelang profile-passes my_kernel.py",
                        "tilelang profile-passes --threshold-ms 1 my_kernel.py")),
    "visualize": ("Write an HTML page to browse a kernel's structure (launches, buffers, loops, tile operators) after "
                  "every pass of the CUDA pipeline; no GPU needed.",
                  ("tilelang visualize gemm.py --set M=1024 --set N=1024 --set K=1024",
                   "tilelang visualize gemm.py --factory matmul --out gemm.html")),
    "compile-only": ("Write a kernel's generated source for a target this machine has no device for (CUDA C, "
                     "HIP, MSL, WGSL, C).",
                     ("tilelang compile-only gemm.py -o gemm.cu --target cuda --set M=1024 --stats",
                      "tilelang compile-only gemm.py -o gemm.metal --target metal")),
    "analyze": ("Estimate a kernel's FLOPs, global-memory bytes and run time on a named GPU architecture (a "
                "roofline: the larger of compute time and memory time). Kernel factories need their arguments "
                "given with --set.",
                ("tilelang analyze gemm.py --kernel matmul --set M=4096 --set N=4096 --set K=4096 --arch h100",
                 "tilelang analyze scale.py --arch a100")),
    "autodd": ("Delta-debug a Python program that fails: remove code while the given error message is still "
               "printed, and write the smallest program found.",
               ('tilelang autodd buggy.py --err-msg "T.gemm shape mismatch" -o min.py',)),
}


def describe_commands(sub: Any, prefix: str = "") -> None:
    """Give each subcommand of `sub` (and theirs: ``cache info``) its description and examples from `COMMANDS` (a
    KeyError names a subcommand added without them)."""
    for name, parser in sub.choices.items():
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                describe_commands(action, f"{prefix}{name} ")
        description, examples = COMMANDS[f"{prefix}{name}"]
        parser.description = textwrap.fill(description, width=88)
        parser.epilog = "examples:\n" + "\n".join(f"  {e}" for e in examples)
        parser.formatter_class = argparse.RawDescriptionHelpFormatter


def _backend(args: argparse.Namespace) -> int:
    """``tilelang backend new NAME``."""
    if args.backend_command != "new":
        args.backend_parser.print_help()
        return 2
    from tilelang.backend.scaffold import ScaffoldError, new_backend

    try:
        files = new_backend(args.name, args.dir, description=args.description)
    except ScaffoldError as exc:
        print(f"tilelang backend new: {exc}", file=sys.stderr)
        return 2
    root = files[0].parent
    print(f"wrote tilelang-{args.name} in {root}:")
    for path in files:
        print(f"  {path.relative_to(root)}")
    print(f'next: pip install -e "{root}[test]" && pytest {root / "tests"}')
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tilelang`` console script."""
    parser = argparse.ArgumentParser(prog="tilelang", description="TileLang: tile kernels with pluggable backends.",
                                     epilog="`tilelang COMMAND --help` describes a command, with examples.")
    parser.add_argument("--version", action=_VersionAction,
                        help="print the versions of tilelang-core and every installed backend, then exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    backends = sub.add_parser("backends", help="list installed backends, their target kinds and toolchain health")
    backends.add_argument("--json", action="store_true", help="print the report as JSON")
    env_cmd = sub.add_parser("env", help="every TileLang setting: value, source, meaning; --report for bug reports")
    env_cmd.add_argument("--json", action="store_true", help="print the settings (or the report) as JSON")
    env_cmd.add_argument("--report", action="store_true",
                         help="versions, platform, devices, toolchains and effective settings, to paste into a bug "
                              "report")
    from tilelang.cache.commands import add_cache_command
    from tilelang.tools._commands import add_tool_commands

    backend_cmd = sub.add_parser("backend", help="tools for backend authors: `backend new NAME` scaffolds a backend")
    backend_actions = backend_cmd.add_subparsers(dest="backend_command")
    new = backend_actions.add_parser("new", help="write a new backend distribution that installs and passes its tests")
    new.add_argument("name", help="the target kind (a lowercase identifier); the distribution is tilelang-NAME")
    new.add_argument("--dir", default=None, metavar="PATH", help="where to write it (default ./tilelang-NAME)")
    new.add_argument("--description", default=None, help="one line for the package metadata and the README")
    backend_cmd.set_defaults(backend_parser=backend_cmd)
    tools = {**add_tool_commands(sub), **add_cache_command(sub), "env": _env, "backend": _backend}
    describe_commands(sub)
    args = parser.parse_args(argv)
    if args.command in tools:
        try:
            return int(tools[args.command](args) or 0)
        except BrokenPipeError:  # `tilelang env | head`: the reader has what it wanted
            sys.stderr.close()
            return 0
    if args.command == "backends":
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # failures are part of the report itself
            report = _backend_report()
        if args.json:
            json.dump(report, sys.stdout, indent=2)
            print()
        else:
            _print_report(report)
        return 0
    parser.print_help()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
