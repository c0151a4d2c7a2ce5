"""The ``tilelang`` command: ``tilelang backends`` reports installed backends and their toolchains; the developer
tools (``trace``, ``pass-diff``, ``profile-passes``, ``visualize``, ``compile-only``, ``analyze``, ``autodd``)
are described in `tilelang.tools._commands`."""

from __future__ import annotations

import argparse
import json
import sys
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
    return report


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
        for tool in rec["toolchain"]:
            mark = "ok " if tool["ok"] else "MISSING"
            print(f"  toolchain {tool['name']:<28} {mark}  {tool['detail']}")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tilelang`` console script."""
    parser = argparse.ArgumentParser(prog="tilelang", description="TileLang: tile kernels with pluggable backends.")
    parser.add_argument("--version", action="version", version=f"tilelang-core {__version__}")
    sub = parser.add_subparsers(dest="command")
    backends = sub.add_parser("backends", help="list installed backends, their target kinds and toolchain health")
    backends.add_argument("--json", action="store_true", help="print the report as JSON")
    from tilelang.tools._commands import add_tool_commands

    tools = add_tool_commands(sub)
    args = parser.parse_args(argv)
    if args.command in tools:
        return int(tools[args.command](args) or 0)
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
