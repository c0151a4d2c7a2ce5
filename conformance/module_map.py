#!/usr/bin/env python3
"""Import every module path of TileLang's module map and report which fail (the number the README shows).

    python conformance/module_map.py [--map ../shared/conformance/module_map.txt] [--python .venv/bin/python]

Each module is imported in a fresh interpreter (an import that pollutes the process cannot hide another's
failure); the exit status is 1 when fewer than --min modules import, 2 (with a message) when there is no module map.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_map = os.path.join(os.environ.get("TILELANG_CONFORMANCE_DIR")
                               or os.path.join(HERE, "..", "..", "shared", "conformance"), "module_map.txt")
    ap.add_argument("--map", default=default_map)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--min", type=int, default=0, help="fail when fewer modules import")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    if not os.path.isfile(args.map):
        print(f"module_map.py: no module map at {args.map}: the conformance kit is not there. Set "
              "TILELANG_CONFORMANCE_DIR to the kit's directory or pass --map PATH.", file=sys.stderr)
        return 2
    with open(args.map) as f:
        modules = [line.strip() for line in f if line.strip() and not line.startswith("#")]

    def probe(name: str) -> tuple[str, str | None]:
        proc = subprocess.run([args.python, "-c", f"import {name}"], capture_output=True, text=True, timeout=300)
        if proc.returncode == 0:
            return name, None
        lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
        return name, lines[-1] if lines else f"exit {proc.returncode}"

    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(probe, modules))
    failed = [(n, e) for n, e in results if e is not None]
    for name, error in failed:
        print(f"FAIL {name}: {error}")
    print(f"{len(modules) - len(failed)} of {len(modules)} module paths import")
    return 1 if len(modules) - len(failed) < args.min else 0


if __name__ == "__main__":
    sys.exit(main())
