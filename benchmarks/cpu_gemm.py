"""fp32 GEMM 1024^3 on the CPU, written the usual TileLang way, against torch.matmul in the same process.

    python benchmarks/cpu_gemm.py [--size 1024] [--rounds 9] [--threads N]

Rows: the README quickstart form (128x128 blocks, block_K 32, T.Pipelined, shared copies, T.gemm into a fragment)
and other usual block shapes; GEMM + ReLU against torch.relu(torch.matmul); fp16 / bf16 inputs with fp32
accumulation. The CPU rewrites (``tilelang_cpu.elide_copies``: A read in place; ``tilelang_cpu.merge_k``: K
steps merged to ~256) apply to every row; ``--no-rewrites`` adds rows compiled without them. Every call of every
row is interleaved with the others and with torch, so machine noise hits all rows alike: compare the ratio
columns. Timings use the cores torch and TVM's pool both get (``torch.set_num_threads`` = TVM threads = usable
cores). Also prints the cold compile time.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("TILELANG_DISABLE_CACHE", "1")  # compile times below must be real compiles


def interleaved(fns: dict[str, Callable[[], Any]], rounds: int = 9, inner: int = 3) -> dict[str, list[float]]:
    """Seconds per call of every function, round-robin so that noise is shared; one warm-up call per round."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            fn()
            for _ in range(inner):
                start = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - start)
    return times


def table(times: dict[str, list[float]], work: dict[str, float], baseline: dict[str, str], unit: str = "GFLOP/s"
          ) -> str:
    """Median and best rate of every row and its ratio to its baseline row (median/median and best/best)."""
    lines = [f"{'kernel':44s} {'median ' + unit:>16s} {'best':>8s} {'x base (med)':>13s} {'x base (best)':>14s}"]
    for name, ts in times.items():
        med, best = statistics.median(ts), min(ts)
        base = times[baseline[name]]
        lines.append(f"{name:44s} {work[name] / med / 1e9:16.1f} {work[name] / best / 1e9:8.1f} "
                     f"{statistics.median(base) / med:13.2f} {min(base) / best:14.2f}")
    return "\n".join(lines)


def threads(count: int | None = None) -> int:
    """Give torch and TVM's pool `count` threads (default: the usable cores); call before the first kernel runs."""
    if count:
        os.environ["TILELANG_NUM_THREADS"] = str(count)
    import torch

    from tilelang import env

    n = env.num_threads()
    torch.set_num_threads(n)
    return n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--threads", type=int, default=None, help="threads for torch and TVM (default: all cores)")
    parser.add_argument("--no-rewrites", action="store_true",
                        help="also compile the quickstart without the CPU pre_layout rewrites, for comparison")
    args = parser.parse_args()

    start = time.perf_counter()
    import torch

    import tilelang
    from tilelang.testing.corpus import gemm

    imports = time.perf_counter() - start
    n = threads(args.threads)
    s = args.size
    flop = 2.0 * s**3

    def build(name: str, **kw: Any) -> tuple[Any, float]:
        ck = gemm(M=s, N=s, K=s, num_stages=3, **kw)
        t0 = time.perf_counter()
        if "no rewrites" in name:
            with without_rewrites():
                kernel = tilelang.compile(ck.func, target="llvm")
        else:
            kernel = tilelang.compile(ck.func, target="llvm")
        return kernel, time.perf_counter() - t0

    quick = dict(block_M=128, block_N=128, block_K=32, dtype="float32")
    rows: dict[str, dict[str, Any]] = {
        "quickstart 128x128x32": quick,
        "blocks 64x64x32": dict(block_M=64, block_N=64, block_K=32, dtype="float32"),
        "blocks 128x128x64": dict(block_M=128, block_N=128, block_K=64, dtype="float32"),
        "blocks 128x256x32": dict(block_M=128, block_N=256, block_K=32, dtype="float32"),
        "quickstart + relu": dict(quick, relu=True),
        "quickstart fp16 in, fp32 acc": dict(quick, dtype="float16"),
        "quickstart bf16 in, fp32 acc": dict(quick, dtype="bfloat16"),
    }
    if args.no_rewrites:
        rows |= {"quickstart, no rewrites": quick, "quickstart + relu, no rewrites": dict(quick, relu=True)}
    a32, b32 = torch.randn(s, s), torch.randn(s, s)
    inputs = {"float32": (a32, b32), "float16": (a32.half(), b32.half()), "bfloat16": (a32.bfloat16(), b32.bfloat16())}
    fns: dict[str, Callable[[], Any]] = {}
    baseline: dict[str, str] = {}
    compile_s: dict[str, float] = {}
    for name, kw in rows.items():
        kernel, compile_s[name] = build(name, **kw)
        dtype = kw["dtype"]
        a, b = inputs[dtype]
        c = torch.empty(s, s, dtype=a.dtype)
        kernel(a, b, c)
        ref = torch.relu(a.float() @ b.float()) if kw.get("relu") else a.float() @ b.float()
        tol = 1e-2 if dtype == "float32" else 0.5
        torch.testing.assert_close(c.float(), ref, atol=tol, rtol=tol)
        fns[name] = lambda kernel=kernel, a=a, b=b, c=c: kernel(a, b, c)
        baseline[name] = "torch.matmul"
        if kw.get("relu"):
            baseline[name] = "torch.relu(torch.matmul)"
        elif dtype != "float32":
            baseline[name] = f"torch.matmul {dtype}"
    fns["torch.matmul"] = lambda: torch.matmul(a32, b32)
    fns["torch.relu(torch.matmul)"] = lambda: torch.relu(torch.matmul(a32, b32))
    for dtype in ("float16", "bfloat16"):
        a, b = inputs[dtype]
        fns[f"torch.matmul {dtype}"] = lambda a=a, b=b: torch.matmul(a, b)
    for name in fns:
        baseline.setdefault(name, name if name.startswith("torch.matmul ") else "torch.matmul")

    times = interleaved(fns, rounds=args.rounds)
    print(f"GEMM {s}^3, {n} threads (torch and TVM), host cpu {_host_cpu()}")
    print(table(times, {name: flop for name in fns}, baseline))
    print(f"\nimports {imports:.2f} s; compile (cache off) per row:")
    first = next(iter(compile_s))
    for name, sec in compile_s.items():
        print(f"  {name:44s} {sec:6.3f} s" + ("   <- cold: first compile in the process" if name == first else ""))


@contextlib.contextmanager
def without_rewrites() -> Any:
    """Compile without the CPU ``pre_layout`` rewrites (they do nothing while their switch is off)."""
    from tilelang_cpu import elide_copies, merge_k

    saved = merge_k.TARGET_K
    elide_copies.ENABLED, merge_k.TARGET_K = False, 1
    try:
        yield
    finally:
        elide_copies.ENABLED, merge_k.TARGET_K = True, saved


def _host_cpu() -> str:
    from tilelang_cpu.codegen import host_cpu

    return host_cpu()


if __name__ == "__main__":
    main()
