"""Element-wise add (1024^2 fp32 by default) on the CPU against torch in the same process.

    python benchmarks/cpu_elementwise.py [--size 1024] [--rounds 15] [--threads N] [--baseline]

The kernel is the corpus form (`tilelang.testing.corpus.elementwise_add`: tiles loaded with T.copy into shared and
fragment tiles, a T.Parallel add, T.copy out) at a few block sizes; torch rows are ``torch.add(a, b, out=c)``
(no allocation, like ours) and ``a + b``. Rates are GB/s of the 3 tensors moved. ``--baseline`` adds a row
compiled without row streaming (pass config ``tl.cpu.row_streaming=False``: one block at a time), for comparison.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

os.environ.setdefault("TILELANG_DISABLE_CACHE", "1")


def main() -> None:
    from cpu_gemm import interleaved, table, threads

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--baseline", action="store_true", help="add a row without row streaming")
    args = parser.parse_args()
    n = threads(args.threads)

    import torch

    import tilelang
    from tilelang.testing.corpus import elementwise_add

    s = args.size
    a, b = torch.randn(s, s), torch.randn(s, s)
    fns: dict[str, Any] = {}
    for block in (32, 64, 128):
        ck = elementwise_add(M=s, N=s, block_M=block, block_N=block)
        kernel = tilelang.compile(ck.func, target="llvm")
        c = torch.empty(s, s)
        kernel(a, b, c)
        torch.testing.assert_close(c, a + b)
        fns[f"tilelang add, blocks {block}x{block}"] = lambda kernel=kernel, c=c: kernel(a, b, c)
    if args.baseline:
        kernel = tilelang.compile(elementwise_add(M=s, N=s, block_M=64, block_N=64).func, target="llvm",
                                  pass_configs={"tl.cpu.row_streaming": False})
        cb = torch.empty(s, s)
        kernel(a, b, cb)
        torch.testing.assert_close(cb, a + b)
        fns["blocks 64x64, no row streaming"] = lambda: kernel(a, b, cb)
    out = torch.empty(s, s)
    fns["torch.add(out=)"] = lambda: torch.add(a, b, out=out)
    fns["a + b"] = lambda: a + b
    times = interleaved(fns, rounds=args.rounds, inner=10)
    print(f"add {s}x{s} fp32, {n} threads (torch and TVM)")
    print(table(times, {name: 3 * 4 * s * s for name in fns}, {name: "torch.add(out=)" for name in fns}, "GB/s"))


if __name__ == "__main__":
    main()
