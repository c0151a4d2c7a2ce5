"""GEMMs on the CPU, written the usual TileLang way, against torch in the same process and the FMA ceiling, per ISA:
fp32 1024^3, and bf16 / fp16 / int8 inputs at 1024^3 and 4096x4096x1024.

    python benchmarks/cpu_gemm.py [--size 1024] [--lowp-sizes 1024x1024x1024,4096x4096x1024] [--rounds 9]
                                  [--threads N] [--isa both|avx512|avx2] [--clock wall|cpu] [--no-rewrites]
                                  [--json out.json]

One subprocess per vector ISA, so that torch can be capped before it is imported: AVX-512 (the host's CPU, when it
has AVX-512) and AVX2 (the host's CPU on an AVX2-only host, else ``mcpu=haswell``; torch with
``MKL_ENABLE_INSTRUCTIONS=AVX2 ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2``). In each, the rows are:

* fp32 at ``--size``: the quickstart form (``examples/quickstart.py``: ``@tilelang.jit``, 64x64 blocks, block_K
  32, shared copies, T.Pipelined, T.gemm into a fragment), the corpus GEMM at the usual block shapes (128x128x32 is
  the README's), GEMM + ReLU; torch.matmul in the same process;
* low precision at each ``--lowp-sizes`` shape (M x N x K; AVX2: the first only), 128x128 blocks with an fp32
  (int32) fragment: bf16 -> bf16 against torch's bf16 matmul, fp16 -> fp16 against torch's fp16 matmul, int8 ->
  int32 against ``torch._int_mm``; each labelled with the instruction its kernel runs (AMX ``tdpbf16ps`` / ``tdpbssd``,
  ``vdpbf16ps``, ``vpdpbusd``, or the fp32 micro-kernel's ``vfmadd231ps``); on a host with AMX also the bf16 /
  int8 rows compiled for the host without AMX (``mattr=-amx-tile``: AVX512-BF16 / AVX512-VNNI);
* the FMA ceiling of that ISA measured through TVM at the same ``mcpu`` (independent FMA chains on every vector
  register but four, one task per thread, no memory traffic; measured after the rows, each call after a short
  pause so that torch's spinning OpenMP workers do not share its cores).

Every call of every row is interleaved with the others, so machine noise hits all rows alike: compare the ratio
columns. Timings use the cores torch and TVM's pool both get (``torch.set_num_threads`` = TVM threads = usable
cores). ``--no-rewrites`` adds rows compiled with the CPU GEMM rewrites off (pass configs ``tl.cpu.elide_copies``,
``tl.cpu.gemm_k_block``, ``tl.cpu.gemm_prepack_limit``, ``tl.cpu.gemm_prefetch``). int8 rows count operations as
FLOPs (GOP/s). The first line names the host's matrix and vector ISA flags.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# torch capped to the ISA (MKL for fp32, ATen's kernels, oneDNN for bf16 / fp16 / int8); AVX-512 keeps AMX
TORCH_CAPS = {"avx512": {"MKL_ENABLE_INSTRUCTIONS": "AVX512", "ATEN_CPU_CAPABILITY": "avx512"},
              "avx2": {"MKL_ENABLE_INSTRUCTIONS": "AVX2", "ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"}}
NO_REWRITES = {"tl.cpu.elide_copies": False, "tl.cpu.gemm_k_block": 1, "tl.cpu.gemm_prepack_limit": 0,
               "tl.cpu.gemm_prefetch": False}


def interleaved(fns: dict[str, Callable[[], Any]], rounds: int = 9, inner: int = 3, clock: str = "wall",
                nthreads: int = 1) -> dict[str, list[float]]:
    """Seconds per call of every function, round-robin so that noise is shared; one warm-up call per round.

    ``clock="cpu"`` (one thread only): the calling thread's CPU time per call, which time slices taken by other
    processes on a busy machine do not inflate.
    """
    if clock == "cpu" and nthreads != 1:
        raise ValueError("--clock cpu measures the calling thread's CPU time: use it with --threads 1")
    times: dict[str, list[float]] = {name: [] for name in fns}
    now = time.perf_counter if clock == "wall" else time.thread_time
    for _ in range(rounds):
        for name, fn in fns.items():
            fn()
            for _ in range(inner):
                start = now()
                fn()
                times[name].append(now() - start)
    return times


def table(times: dict[str, list[float]], work: dict[str, float], baseline: dict[str, str], unit: str) -> str:
    """Rows of `work` / second (median and best, in G`unit`) and the ratio to each row's `baseline` row."""
    lines = [f"{'':40s} {'median ' + unit:>14s} {'best':>8s} {'x baseline':>11s}  baseline"]
    rate = {name: (work[name] / statistics.median(ts) / 1e9, work[name] / min(ts) / 1e9) for name, ts in times.items()}
    for name, (median, best) in rate.items():
        base = baseline.get(name)
        ratio = f"{median / rate[base][0]:11.2f}  {base}" if base and base != name and base in rate else ""
        lines.append(f"{name:40s} {median:14.1f} {best:8.1f} {ratio}")
    return "\n".join(lines)


def threads(count: int | None = None) -> int:
    """Give torch and TVM's pool `count` threads (default: the usable cores); call before the first kernel runs."""
    if count:
        os.environ["TILELANG_NUM_THREADS"] = str(count)
    import torch

    from tilelang import env

    n = env.num_threads()
    os.environ.setdefault("TVM_NUM_THREADS", str(n))  # the FMA probe runs on TVM's pool before any kernel sets it
    torch.set_num_threads(n)
    return n


def isa_target(isa: str) -> dict[str, Any] | None:
    """The llvm target that compiles for `isa` on this host, or None when the host cannot run it."""
    from tilelang_cpu.codegen import host_cpu
    from tilelang_cpu.isa import vector_isa

    host = vector_isa({"kind": "llvm"})
    if isa == "avx512":
        return {"kind": "llvm", "mcpu": host_cpu()} if host.name == "avx512" else None
    if host.name == "avx2":
        return {"kind": "llvm", "mcpu": host_cpu()}
    return {"kind": "llvm", "mcpu": "haswell"} if host.name == "avx512" else None


def fma_ceiling(target: dict[str, Any], nthreads: int, flop: float = 2e9) -> tuple[Callable[[], Any], float]:
    """``(call, FLOP per call)`` of an FMA throughput probe at `target`: per thread, one independent chain
    ``acc = acc * x + x`` in each of all vector registers but four, operands in registers, repeated until a call
    does about `flop` floating-point operations (long enough that waking TVM's pool is noise)."""
    import torch
    import tvm
    from tvm.script import tirx as T

    from tilelang_cpu.isa import vector_isa

    isa = vector_isa(target)
    lanes, chains = isa.lanes(32), max(4, isa.registers - 4)
    iters = max(1, int(flop / (2 * lanes * chains * nthreads)))

    @T.prim_func
    def probe(x: T.Buffer((lanes,), "float32"), out: T.Buffer((nthreads, chains, lanes), "float32")):
        T.func_attr({"global_symbol": "main", "tirx.noalias": True})
        for t in T.parallel(nthreads):
            acc = T.alloc_buffer((chains, lanes), "float32", scope="global")
            for i in T.unroll(chains):
                for j in T.vectorized(lanes):
                    acc[i, j] = T.float32(i)
            for _ in range(iters):
                for i in T.unroll(chains):
                    for j in T.vectorized(lanes):
                        acc[i, j] = acc[i, j] * x[j] + x[j]
            for i in T.unroll(chains):
                for j in T.vectorized(lanes):
                    out[t, i, j] = acc[i, j]

    fn = tvm.tirx.build(probe, target=tvm.target.Target(target))["main"]
    x, out = torch.full((lanes,), 0.5), torch.zeros(nthreads, chains, lanes)
    return (lambda: fn(x, out)), 2.0 * lanes * chains * iters * nthreads


def ceiling_times(fn: Callable[[], Any], rounds: int) -> list[float]:
    """Seconds per call of the FMA probe, each call after a 50 ms pause: torch's OpenMP workers keep spinning on
    the cores for a while after a matmul, and a probe run in that window measures the contention, not the FMAs."""
    times = []
    for _ in range(rounds):
        time.sleep(0.05)
        fn()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def _quickstart() -> Any:
    spec = importlib.util.spec_from_file_location("tilelang_quickstart", ROOT / "examples" / "quickstart.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.matmul


LOWP = {  # label -> (input dtype, fragment dtype, output dtype, block_K, torch baseline)
    "bf16": ("bfloat16", "float32", "bfloat16", 32, "torch.matmul bf16"),
    "fp16": ("float16", "float32", "float16", 32, "torch.matmul fp16"),
    "int8": ("int8", "int32", "int32", 64, "torch._int_mm"),
}
INSTRUCTIONS = ("tdpbf16ps", "tdpfp16ps", "tdpbssd", "vdpbf16ps", "vpdpbusd", "vpdpbssd", "vfmadd231ps")


def instruction_of(kernel: Any) -> str:
    """The dot-product instruction the kernel's assembly uses most (which lowering ran)."""
    asm = str(kernel.artifact.rt_mod.inspect_source("asm"))
    counts = {name: asm.count(name) for name in INSTRUCTIONS}
    best = max(counts, key=counts.get)
    return best if counts[best] else "int32 loop"


def lowp_rows(shape: tuple[int, int, int], target: dict[str, Any], fns: dict[str, Callable[[], Any]],
              baseline: dict[str, str], compile_s: dict[str, float], work: dict[str, float],
              notes: list[str]) -> None:
    """Add the bf16 / fp16 / int8 rows of one M x N x K shape (and their torch baselines) to `fns`; int8 results
    are checked against an exact product (a note records a torch baseline that is not exact)."""
    import torch

    import tilelang
    from tilelang.testing.corpus import gemm
    from tilelang_cpu.isa import dot_units

    m, n, k = shape
    size = f"{m}x{n}x{k}"
    g = torch.Generator().manual_seed(0)
    targets = [("", target)]
    if dot_units(target).amx_bf16:
        targets.append((" no AMX", {**target, "mattr": ["-amx-tile"]}))
    for label, (dtype, accum, out, block_k, base) in LOWP.items():
        if dtype == "int8":
            a = torch.randint(-128, 128, (m, k), generator=g, dtype=torch.int8)
            b = torch.randint(-128, 128, (k, n), generator=g, dtype=torch.int8)
            ref = torch._int_mm
        else:
            a = torch.randn(m, k, generator=g).to(getattr(torch, dtype))
            b = torch.randn(k, n, generator=g).to(getattr(torch, dtype))
            ref = torch.matmul
        expect = ref(a, b)
        if dtype == "int8":  # float64 holds every int8 dot product of these sizes exactly
            exact = (a.double() @ b.double()).to(torch.int32)
            if not torch.equal(expect, exact):
                notes.append(f"{base} {size} is not exact here (max error "
                             f"{(expect.double() - exact.double()).abs().max().item():.0f}; int16 saturation?)")
            expect = exact
        fns[f"{base} {size}"] = lambda ref=ref, a=a, b=b: ref(a, b)
        work[f"{base} {size}"] = 2.0 * m * n * k
        for suffix, tgt in targets if dtype != "float16" else targets[:1]:
            ck = gemm(M=m, N=n, K=k, block_M=128, block_N=128, block_K=block_k, dtype=dtype, accum_dtype=accum,
                      out_dtype=out, num_stages=3)
            t0 = time.perf_counter()
            kernel = tilelang.compile(ck.func, target=tgt)
            c = torch.empty(m, n, dtype=getattr(torch, out))
            kernel(a, b, c)
            name = f"{label} {size} {instruction_of(kernel)}{suffix}"
            compile_s[name] = time.perf_counter() - t0
            if dtype == "int8":
                assert torch.equal(c, expect), name
            else:
                torch.testing.assert_close(c.float(), expect.float(), atol=0.5, rtol=2e-2)
            fns[name] = lambda kernel=kernel, a=a, b=b, c=c: kernel(a, b, c)
            baseline[name] = f"{base} {size}"
            work[name] = 2.0 * m * n * k


def host_flags() -> str:
    """The host's matrix / vector ISA flags (``/proc/cpuinfo``) and LLVM's name for its CPU."""
    keep = ("amx", "avx512", "vnni", "fma", "avx2", "f16c")
    try:
        flags = next(line.split(":", 1)[1].split() for line in Path("/proc/cpuinfo").read_text().splitlines()
                     if line.startswith("flags"))
    except (OSError, StopIteration):
        flags = []
    return f"{_host_cpu()}: " + " ".join(sorted(f for f in flags if f.startswith(keep)))


def worker(isa: str, args: argparse.Namespace) -> dict[str, Any]:
    """Measure every row for `isa` in this process (torch already capped by the parent's environment)."""
    os.environ.setdefault("TILELANG_DISABLE_CACHE", "1")  # compile times below must be real compiles
    start = time.perf_counter()
    import torch

    import tilelang
    from tilelang.testing.corpus import gemm

    imports = time.perf_counter() - start
    target = isa_target(isa)
    if target is None:
        return {"isa": isa, "skipped": f"this host ({_host_cpu()}) cannot run {isa}"}
    os.environ["TILELANG_DEFAULT_TARGET"] = json.dumps(target)  # the quickstart's @tilelang.jit uses "auto"
    n = threads(args.threads)
    s = args.size
    flop = 2.0 * s**3
    rows: dict[str, dict[str, Any]] = {
        "blocks 128x128x32 (README)": dict(block_M=128, block_N=128, block_K=32, dtype="float32"),
        "blocks 64x64x32": dict(block_M=64, block_N=64, block_K=32, dtype="float32"),
        "blocks 128x128x64": dict(block_M=128, block_N=128, block_K=64, dtype="float32"),
        "blocks 128x256x32": dict(block_M=128, block_N=256, block_K=32, dtype="float32"),
        "blocks 256x128x32": dict(block_M=256, block_N=128, block_K=32, dtype="float32"),
        "128x128x32 + relu": dict(block_M=128, block_N=128, block_K=32, dtype="float32", relu=True),
    }
    if args.no_rewrites:
        rows["128x128x32, no rewrites"] = dict(block_M=128, block_N=128, block_K=32, dtype="float32",
                                               configs=NO_REWRITES)
    a32, b32 = torch.randn(s, s), torch.randn(s, s)
    inputs = {"float32": (a32, b32)}
    fns: dict[str, Callable[[], Any]] = {}
    baseline: dict[str, str] = {}
    compile_s: dict[str, float] = {}

    t0 = time.perf_counter()
    quick = _quickstart()
    c = quick(a32, b32)
    compile_s["quickstart (examples/quickstart.py)"] = time.perf_counter() - t0
    torch.testing.assert_close(c, a32 @ b32, atol=1e-2, rtol=1e-2)
    fns["quickstart (examples/quickstart.py)"] = lambda: quick(a32, b32)
    for name, kw in rows.items():
        kw = dict(kw)
        configs = kw.pop("configs", None)
        ck = gemm(M=s, N=s, K=s, num_stages=3, **kw)
        t0 = time.perf_counter()
        kernel = tilelang.compile(ck.func, target=target, pass_configs=configs)
        compile_s[name] = time.perf_counter() - t0
        a, b = inputs[kw["dtype"]]
        c = torch.empty(s, s, dtype=a.dtype)
        kernel(a, b, c)
        ref = torch.relu(a.float() @ b.float()) if kw.get("relu") else a.float() @ b.float()
        torch.testing.assert_close(c.float(), ref, atol=1e-2, rtol=1e-2)
        fns[name] = lambda kernel=kernel, a=a, b=b, c=c: kernel(a, b, c)
        if kw.get("relu"):
            baseline[name] = "torch.relu(torch.matmul)"
    fns["torch.matmul"] = lambda: torch.matmul(a32, b32)
    fns["torch.relu(torch.matmul)"] = lambda: torch.relu(torch.matmul(a32, b32))
    work = {name: flop for name in fns}
    notes: list[str] = []
    # AVX2: the first shape only (no bf16 / int8 unit: the fp32 path and the int32 loop take minutes at the larger)
    for shape in args.lowp_sizes if isa == "avx512" else args.lowp_sizes[:1]:
        lowp_rows(shape, target, fns, baseline, compile_s, work, notes)
    ceiling, work["FMA ceiling"] = fma_ceiling(target, n)
    load = [os.getloadavg()[0]]
    times = interleaved(fns, rounds=args.rounds, clock=args.clock, nthreads=n)
    times["FMA ceiling"] = ceiling_times(ceiling, args.rounds)
    load.append(os.getloadavg()[0])
    result: dict[str, Any] = {"isa": isa, "target": target, "threads": n, "size": s, "imports_s": imports,
                              "clock": args.clock,
                              "torch_capability": torch.backends.cpu.get_cpu_capability(), "load": load,
                              "compile_s": compile_s, "notes": notes, "rows": {}}
    for name, ts in times.items():
        result["rows"][name] = {"median": work[name] / statistics.median(ts) / 1e9,
                                "best": work[name] / min(ts) / 1e9,
                                "baseline": baseline.get(name, None if name.startswith(("torch", "FMA"))
                                                         else "torch.matmul")}
    return result


def report(res: dict[str, Any]) -> str:
    """The table of one ISA: GFLOP/s, fraction of the FMA ceiling, ratio to torch (median and best)."""
    if "skipped" in res:
        return f"== {res['isa']}: skipped ({res['skipped']})"
    rows = res["rows"]
    ceil = rows["FMA ceiling"]
    lines = [f"== {res['isa']}: target {res['target']}, {res['threads']} threads, {res['clock']} clock, "
             f"torch capability {res['torch_capability']}, load average {res['load'][0]:.1f} -> {res['load'][1]:.1f}",
             f"FMA ceiling: median {ceil['median']:.1f} GFLOP/s, best {ceil['best']:.1f}",
             f"{'kernel':38s} {'median GFLOP/s':>14s} {'best':>7s} {'ceiling':>8s} {'x torch':>8s} "
             f"{'x torch (best)':>15s}"]
    for name, row in rows.items():
        if name == "FMA ceiling":
            continue
        base = rows.get(row["baseline"]) if row["baseline"] else None
        ratio = f"{row['median'] / base['median']:8.2f} {row['best'] / base['best']:15.2f}" if base else ""
        lines.append(f"{name:38s} {row['median']:14.1f} {row['best']:7.1f} "
                     f"{row['median'] / ceil['median']:7.0%} {ratio}")
    lines += [f"note: {note}" for note in res.get("notes", [])]
    lines.append("compile (cache off): " + ", ".join(f"{k.split(' (')[0]} {v:.2f} s" for k, v in
                                                     res["compile_s"].items()))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--lowp-sizes", type=_shapes, default=_shapes("1024x1024x1024,4096x4096x1024"),
                        help="M x N x K shapes of the bf16 / fp16 / int8 rows, comma-separated ('' for none)")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--threads", type=int, default=None, help="threads for torch and TVM (default: all cores)")
    parser.add_argument("--isa", choices=("both", "avx512", "avx2"), default="both")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall: elapsed time per call; cpu: the calling thread's CPU time per call, with "
                             "--threads 1 (on a busy machine: time slices of other processes are not counted)")
    parser.add_argument("--no-rewrites", action="store_true",
                        help="also compile the 128x128x32 GEMM with the CPU GEMM rewrites off, for comparison")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--worker", choices=("avx512", "avx2"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args)))
        return
    print(f"host {host_flags()}", flush=True)
    results = []
    for isa in (("avx512", "avx2") if args.isa == "both" else (args.isa,)):
        cmd = [sys.executable, __file__, "--worker", isa, "--size", str(args.size), "--rounds", str(args.rounds),
               "--lowp-sizes", ",".join("x".join(map(str, shape)) for shape in args.lowp_sizes)]
        cmd += ["--threads", str(args.threads)] if args.threads else []
        cmd += ["--clock", args.clock]
        cmd += ["--no-rewrites"] if args.no_rewrites else []
        env = {**os.environ, **TORCH_CAPS[isa]}
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"the {isa} run failed:\n{done.stderr[-4000:]}")
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(report(results[-1]), flush=True)
        print()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


def _shapes(text: str) -> list[tuple[int, int, int]]:
    """``"1024x1024x1024,4096x4096x1024"`` -> ``[(1024, 1024, 1024), (4096, 4096, 1024)]``."""
    shapes = []
    for part in filter(None, text.split(",")):
        dims = tuple(int(x) for x in part.lower().split("x"))
        if len(dims) != 3:
            raise argparse.ArgumentTypeError(f"shape {part!r} is not MxNxK")
        shapes.append(dims)
    return shapes


def _host_cpu() -> str:
    from tilelang_cpu.codegen import host_cpu

    return host_cpu()


if __name__ == "__main__":
    main()
