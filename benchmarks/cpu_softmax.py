"""Row softmax (4096 x 1024 fp32 by default) on the CPU against torch.softmax in the same process.

    python benchmarks/cpu_softmax.py [--rows 4096] [--cols 1024] [--rounds 15] [--threads N] [--baseline]

The kernel is the corpus form (`tilelang.testing.corpus.softmax`: a fragment tile per block of rows, T.reduce_max,
exp2, T.reduce_sum, divide). Rates are GB/s of input + output. ``--baseline`` adds a row compiled without the CPU
vector math (pass configs ``tl.cpu.fast_exp`` and ``tl.cpu.vector_reduce`` off: libm exp, the generic reduce).
"""

from __future__ import annotations

import argparse
import os
from typing import Any

os.environ.setdefault("TILELANG_DISABLE_CACHE", "1")


def main() -> None:
    from cpu_gemm import interleaved, table, threads

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4096)
    parser.add_argument("--cols", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--baseline", action="store_true", help="add a row without the CPU vector math")
    args = parser.parse_args()
    n = threads(args.threads)

    import torch

    import tilelang
    from tilelang.testing.corpus import softmax

    m, k = args.rows, args.cols
    x = torch.randn(m, k)
    fns: dict[str, Any] = {}
    for block in (4, 16, 64):
        ck = softmax(M=m, N=k, block_M=block)
        kernel = tilelang.compile(ck.func, target="llvm")
        y = torch.empty(m, k)
        kernel(x, y)
        torch.testing.assert_close(y, torch.softmax(x, dim=1), atol=1e-5, rtol=1e-4)
        fns[f"tilelang softmax, block_M {block}"] = lambda kernel=kernel, y=y: kernel(x, y)
    if args.baseline:
        kernel = tilelang.compile(softmax(M=m, N=k, block_M=16).func, target="llvm",
                                  pass_configs={"tl.cpu.fast_exp": False, "tl.cpu.vector_reduce": False})
        yb = torch.empty(m, k)
        kernel(x, yb)
        torch.testing.assert_close(yb, torch.softmax(x, dim=1), atol=1e-5, rtol=1e-4)
        fns["block_M 16, no vector exp/reduce"] = lambda: kernel(x, yb)
    fns["torch.softmax"] = lambda: torch.softmax(x, dim=1)
    times = interleaved(fns, rounds=args.rounds, inner=5)
    print(f"softmax {m}x{k} fp32 over rows, {n} threads (torch and TVM)")
    print(table(times, {name: 2 * 4 * m * k for name in fns}, {name: "torch.softmax" for name in fns}, "GB/s"))


if __name__ == "__main__":
    main()
