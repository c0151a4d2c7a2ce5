"""The ``tilelang`` command (also ``python -m tilelang``).

``tilelang backends`` reports installed backends and their toolchains; ``tilelang cache info|clear`` inspects
and empties the disk kernel cache (`tilelang.cache.commands`); ``tilelang env`` prints every setting of
`tilelang.env` with its value and where it came from; ``tilelang --version`` lists tilelang-core and every
installed backend distribution (from entry-point metadata: no plugin is imported). The developer tools
(``trace``, ``pass-diff``, ``profile-passes``, ``visualize``, ``compile-only``, ``analyze``, ``autodd``) are
described in `tilelang.tools._commands`."""

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


def _env(ns: argparse.Namespace) -> int:
    from tilelang.env import env

    rows = env.describe()
    if ns.json:
        json.dump(rows, sys.stdout, indent=2)
        print()
        return 0
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        value = "(unset)" if r["value"] is None else repr(r["value"]) if r["value"] == "" else str(r["value"])
        print(f"{r['name']:<{width}}  {value}  [{r['source']}]")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tilelang`` console script."""
    parser = argparse.ArgumentParser(prog="tilelang", description="TileLang: tile kernels with pluggable backends.")
    parser.add_argument("--version", action=_VersionAction,
                        help="print the versions of tilelang-core and every installed backend, then exit")
    sub = parser.add_subparsers(dest="command")
    backends = sub.add_parser("backends", help="list installed backends, their target kinds and toolchain health")
    backends.add_argument("--json", action="store_true", help="print the report as JSON")
    env_cmd = sub.add_parser("env", help="every TileLang setting, its value and where it came from")
    env_cmd.add_argument("--json", action="store_true", help="print the settings as JSON")
    from tilelang.cache.commands import add_cache_command
    from tilelang.tools._commands import add_tool_commands

    tools = {**add_tool_commands(sub), **add_cache_command(sub), "env": _env}
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
