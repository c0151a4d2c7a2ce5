#!/usr/bin/env python3
"""Rewrite floor.txt from a conformance run: every reference-passing test that passed (not excluded, not failing).

    python conformance/update_floor.py <run.py --out directory> [--kit ../shared/conformance]

The floor only grows: a test that was in the floor and does not pass now is reported and the script exits 1
without writing (remove it by hand, with the reason in the commit message, if that is intended).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def read_ids(path: str) -> list[str]:
    with open(path) as f:
        return [line.split("#", 1)[0].strip().split("\t")[0] for line in f if line.split("#", 1)[0].strip()]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="the --out directory of a full run.py run (holds failing.txt)")
    ap.add_argument("--kit", default=os.environ.get("TILELANG_CONFORMANCE_DIR")
                    or os.path.join(HERE, "..", "..", "shared", "conformance"))
    args = ap.parse_args()
    reference = read_ids(os.path.join(args.kit, "reference_passes.txt"))
    excluded = read_ids(os.path.join(HERE, "exclusions.txt"))
    failing = set(read_ids(os.path.join(args.out, "failing.txt")))
    with open(os.path.join(args.out, "summary.json")) as f:
        ran = set(json.load(f)["folders"])
    folder_of = {n: n.split("/")[2] if n.count("/") >= 3 else "(top)" for n in reference}
    skipped = sorted(set(folder_of.values()) - ran)
    if skipped:
        print(f"that run left out folders {', '.join(skipped)}: the floor needs a run of every folder")
        return 1
    floor_path = os.path.join(HERE, "floor.txt")
    old = set(read_ids(floor_path)) if os.path.exists(floor_path) else set()

    def is_excluded(nid: str) -> bool:
        return any(nid == e or nid.startswith(e) for e in excluded)

    passing = sorted(n for n in reference if n not in failing and not is_excluded(n))
    lost = sorted(old - set(passing))
    if lost:
        print(f"{len(lost)} floor test(s) do not pass in this run, e.g. {lost[0]}; floor.txt left as it is")
        return 1
    with open(floor_path + ".tmp", "w") as f:
        f.write("# Reference tests that pass here; `nox -s conformance` fails when one stops passing.\n"
                "# Regenerate with conformance/update_floor.py after a full run; it only grows.\n")
        f.write("\n".join(passing) + "\n")
    os.replace(floor_path + ".tmp", floor_path)
    print(f"floor.txt: {len(passing)} tests ({len(passing) - len(old)} new)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
