#!/usr/bin/env python3
"""Stage the module tree of a full install for the API reference: core's ``tilelang`` package with each
first-party backend package ``tilelang_<x>`` placed at ``tilelang/<x>`` (where the import hook aliases it).

    python docs/stage_source_tree.py build/docs-src
"""

from __future__ import annotations

import os
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BACKENDS = ("cpu", "cuda", "rocm", "metal", "webgpu")


def stage(dest: str) -> str:
    tree = os.path.join(dest, "tilelang")
    shutil.rmtree(dest, ignore_errors=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(os.path.join(ROOT, "core", "src", "tilelang"), tree, ignore=ignore)
    for name in BACKENDS:
        shutil.copytree(os.path.join(ROOT, "plugins", f"tilelang-{name}", "src", f"tilelang_{name}"),
                        os.path.join(tree, name), ignore=ignore)
    return tree


if __name__ == "__main__":
    print(stage(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "docs-src")))
