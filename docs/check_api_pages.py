#!/usr/bin/env python3
"""Hold the built API reference to the public set (`docs/public_modules.txt`) and that set to TileLang's module map.

    python docs/check_api_pages.py build/docs/html [--map ../shared/conformance/module_map.txt]

Fails (exit status 1), printing why, when a public module has no API page, when a page documents a module outside
the public set (private modules would swell the site again), or, where the module map is there, when the public
set is not exactly the map's ``tilelang`` and ``tilelang.<name>`` paths. Prints the page counts.
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def read_list(path: str) -> list[str]:
    """The module paths of a list file (one a line, ``#`` comments)."""
    with open(path, encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


def api_pages(html: str) -> list[str]:
    """The module paths that have a page under ``<html>/api`` (``api/tilelang/jit/index.html`` -> tilelang.jit)."""
    root = os.path.join(html, "api")
    found = []
    for dirpath, _dirs, files in os.walk(root):
        if "index.html" in files and dirpath != root:
            found.append(os.path.relpath(dirpath, root).replace(os.sep, "."))
    return sorted(found)


def problems(public: list[str], pages: list[str], module_map: list[str] | None) -> list[str]:
    """Every way the site, the public set and the module map disagree (empty: they agree)."""
    out = [f"no API page for public module {m}" for m in public if m not in pages]
    out += [f"API page for {m}, which is not in docs/public_modules.txt" for m in pages if m not in public]
    if module_map is not None:
        packages = [m for m in module_map if m.count(".") <= 1]
        out += [f"{m} is a package of the module map but not in docs/public_modules.txt" for m in packages
                if m not in public]
        out += [f"{m} is in docs/public_modules.txt but not a package of the module map" for m in public
                if m not in packages]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("html", help="the built site (sphinx-build's output directory)")
    kit = os.environ.get("TILELANG_CONFORMANCE_DIR") or os.path.join(ROOT, "..", "shared", "conformance")
    ap.add_argument("--map", default=os.path.join(kit, "module_map.txt"), help="TileLang's module map")
    ap.add_argument("--public", default=os.path.join(HERE, "public_modules.txt"))
    args = ap.parse_args(argv)
    public = read_list(args.public)
    module_map = read_list(args.map) if os.path.isfile(args.map) else None
    pages = api_pages(args.html)
    found = problems(public, pages, module_map)
    for line in found:
        print(line)
    total = sum(1 for _d, _s, files in os.walk(args.html) for f in files if f.endswith(".html")
                and f not in ("genindex.html", "search.html", "py-modindex.html"))
    print(f"{total} pages: {total - len(pages)} guides and tutorials, {len(pages)} API pages "
          f"({len(public)} public modules)")
    if module_map is None:
        print(f"no module map at {args.map}: the public set was not compared with it (set TILELANG_CONFORMANCE_DIR)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
