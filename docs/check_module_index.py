#!/usr/bin/env python3
"""Compare the API reference's module index with TileLang's module map: every module path of the map must have
its page. Prints the missing ones; exit status 1 when more than --allow-missing are missing.

    python docs/check_module_index.py build/docs/html [--map ../shared/conformance/module_map.txt]
"""

from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("html")
    kit = os.environ.get("TILELANG_CONFORMANCE_DIR") or os.path.join(ROOT, "..", "shared", "conformance")
    ap.add_argument("--map", default=os.path.join(kit, "module_map.txt"))
    ap.add_argument("--allow-missing", type=int, default=0)
    args = ap.parse_args()
    if not os.path.isfile(args.map):
        print(f"no module map at {args.map}: nothing to compare (set TILELANG_CONFORMANCE_DIR)")
        return 0
    with open(args.map) as f:
        modules = [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]
    missing = [m for m in modules
               if not os.path.isfile(os.path.join(args.html, "api", *m.split("."), "index.html"))]
    for name in missing:
        print(f"no API page for {name}")
    print(f"{len(modules) - len(missing)} of {len(modules)} module-map paths have an API page")
    return 1 if len(missing) > args.allow_missing else 0


if __name__ == "__main__":
    sys.exit(main())
