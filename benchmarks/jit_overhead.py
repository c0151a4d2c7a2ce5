"""JIT overheads on this machine: ``import tilelang``, a new-process cache hit, and call overhead vs a torch op.

Run: ``python benchmarks/jit_overhead.py [--runs 5]``. Each figure is the median over fresh processes (imports)
or the best of several timed loops (calls); ratios come from the same run.

The cache-hit figure is the time from a process that has imported tilelang and loaded the runtime once (tvm_ffi,
libtvm_runtime, the front end: what any process that runs kernels pays once) to the kernel ready to call, cache
warm on disk; the end-to-end figure includes those one-time loads too. ``PYTHONPATH`` is kept (after the probes'
folder), so another checkout can be measured by putting its ``core/src`` there.

Two things that are no part of a cache hit are kept out of it: the probes run with bytecode caching on
(``PYTHONDONTWRITEBYTECODE`` is dropped: an installed package has its ``.pyc`` files, pip writes them), and the
hit probe runs a garbage collection after its imports (the first full collection after ``import torch`` walks
torch's ~1M objects, 70-150 ms, and lands in whatever allocates next). The end-to-end figure keeps both.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import timeit
from pathlib import Path

IMPORT_PROBE = """
import time, json
t = time.perf_counter(); import tilelang; t1 = time.perf_counter()
import sys
print(json.dumps({"import_ms": (t1 - t) * 1e3, "tvm": "tvm" in sys.modules, "torch": "torch" in sys.modules}))
"""

# The kernel module imports the DSL inside the factory, as a serving process would: a cache hit never runs it.
KERNEL_MODULE = '''
import tilelang

@tilelang.jit(out_idx=[-1], target="cpu")
def add(M, N, block_M=32):
    import tilelang.language as T

    @T.prim_func
    def add(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(M // block_M, is_cpu=True) as bx:
            for i, j in T.Parallel(block_M, N):
                C[bx * block_M + i, j] = A[bx * block_M + i, j] + B[bx * block_M + i, j]

    return add
'''

HIT_PROBE = """
import gc, json, sys, time
import torch
t0 = time.perf_counter()
import tilelang
from tilelang.jit.runtime_loader import load_runtime
load_runtime()                      # one-time: tvm_ffi + libtvm_runtime
import tilelang.frontend            # one-time: what @tilelang.jit consults on first call
import bench_kernels
gc.collect()                        # the collector's debt from the imports (see the module docstring)
t1 = time.perf_counter()
c1 = time.process_time()
kernel = bench_kernels.add(256, 64)
c2 = time.process_time()
t2 = time.perf_counter()
a, b = torch.randn(256, 64), torch.randn(256, 64)
ok = bool(torch.allclose(kernel(a, b), a + b))
print(json.dumps({"one_time_ms": (t1 - t0) * 1e3, "hit_ms": (t2 - t1) * 1e3, "hit_cpu_ms": (c2 - c1) * 1e3,
                  "from_cache": kernel.from_cache, "tvm": "tvm" in sys.modules, "ok": ok}))
"""


# The same, end to end: nothing preloaded but torch and tilelang, so tvm_ffi, libtvm_runtime, the front end (which
# @tilelang.jit consults when it decorates) and the plugin's modules are all paid here, as by a serving process.
E2E_PROBE = """
import json, sys, time
import torch
import tilelang
t0 = time.perf_counter()
import bench_kernels
kernel = bench_kernels.add(256, 64)
t1 = time.perf_counter()
a, b = torch.randn(256, 64), torch.randn(256, 64)
ok = bool(torch.allclose(kernel(a, b), a + b))
print(json.dumps({"e2e_ms": (t1 - t0) * 1e3, "from_cache": kernel.from_cache, "tvm": "tvm" in sys.modules, "ok": ok}))
"""


def _fresh(code: str, env: dict[str, str], cwd: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure_import(runs: int, env: dict[str, str], cwd: Path) -> dict:
    rows = [_fresh(IMPORT_PROBE, env, cwd) for _ in range(runs)]
    return {"ms": statistics.median(r["import_ms"] for r in rows), "tvm": rows[0]["tvm"], "torch": rows[0]["torch"]}


def measure_hit(runs: int, env: dict[str, str], cwd: Path) -> dict:
    (cwd / "bench_kernels.py").write_text(textwrap.dedent(KERNEL_MODULE))
    script = cwd / "hit_probe.py"
    script.write_text(HIT_PROBE)
    run = lambda: json.loads(subprocess.run([sys.executable, str(script)], env=env, cwd=cwd, capture_output=True,
                                            text=True, check=True).stdout.strip().splitlines()[-1])
    cold = run()
    rows = [run() for _ in range(runs)]
    e2e = [_fresh(E2E_PROBE, env, cwd) for _ in range(runs)]
    return {"cold_ms": cold["hit_ms"], "hit_ms": statistics.median(r["hit_ms"] for r in rows),
            "hit_min_ms": min(r["hit_ms"] for r in rows),
            "hit_cpu_ms": statistics.median(r["hit_cpu_ms"] for r in rows),
            "one_time_ms": statistics.median(r["one_time_ms"] for r in rows),
            "e2e_ms": statistics.median(r["e2e_ms"] for r in e2e),
            "from_cache": all(r["from_cache"] for r in rows + e2e), "tvm": any(r["tvm"] for r in rows + e2e),
            "ok": all(r["ok"] for r in rows + e2e)}


def measure_calls() -> dict:
    import torch
    import tvm
    from tvm.script import tirx as T

    from tilelang.artifact import CompiledArtifact, ParamInfo
    from tilelang.jit import JITKernel
    from tilelang_cpu.codegen import host_cpu

    n = 16

    @T.prim_func
    def vadd(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"), C: T.Buffer((n,), "float32")):
        T.func_attr({"global_symbol": "vadd"})
        for i in range(n):
            C[i] = A[i] + B[i]

    target = {"kind": "llvm", "mcpu": host_cpu()}
    rt_mod = tvm.tirx.build(vadd, target=target)
    artifact = CompiledArtifact("vadd", target, [ParamInfo(p, "float32", (n,)) for p in "ABC"], "", rt_mod=rt_mod)
    inplace, alloc = JITKernel(artifact), JITKernel(artifact, out_idx=[-1])
    raw = rt_mod["vadd"]
    a, b, c = torch.randn(n), torch.randn(n), torch.empty(n)
    cases = {
        "tvm_ffi function (no checks)": lambda: raw(a, b, c),
        "JITKernel(a, b, c)": lambda: inplace(a, b, c),
        "torch.add(a, b, out=c)": lambda: torch.add(a, b, out=c),
        "JITKernel(a, b) -> new c": lambda: alloc(a, b),
        "torch.add(a, b) -> new c": lambda: torch.add(a, b),
    }
    result = {}
    for name, fn in cases.items():
        fn()
        result[name] = min(timeit.repeat(fn, number=20000, repeat=7)) / 20000 * 1e6
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per figure")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tl-bench-") as tmp:
        cwd = Path(tmp)
        path = os.pathsep.join(filter(None, [str(cwd), os.environ.get("PYTHONPATH")]))
        env = {**os.environ, "TILELANG_CACHE_DIR": str(cwd / "cache"), "PYTHONPATH": path}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        imp = measure_import(args.runs, env, cwd)
        hit = measure_hit(args.runs, env, cwd)
    calls = measure_calls()
    print(f"{'measure':44s} {'value':>12s}  note")
    print("-" * 100)
    print(f"{'import tilelang (fresh process)':44s} {imp['ms']:9.1f} ms  imports tvm: {imp['tvm']}, torch: "
          f"{imp['torch']}")
    print(f"{'first call, empty cache (compile)':44s} {hit['cold_ms']:9.1f} ms  includes import tvm")
    print(f"{'new-process cache hit: get the kernel':44s} {hit['hit_ms']:9.2f} ms  median (best "
          f"{hit['hit_min_ms']:.2f}, CPU time {hit['hit_cpu_ms']:.2f}); from cache: {hit['from_cache']}, "
          f"imports tvm: {hit['tvm']}, correct: {hit['ok']}")
    print(f"{'  one-time imports before it':44s} {hit['one_time_ms']:9.1f} ms  tilelang + tvm_ffi + libtvm_runtime"
          " + tilelang.frontend")
    print(f"{'new-process hit, end to end':44s} {hit['e2e_ms']:9.1f} ms  import the kernel module + get the kernel,"
          " nothing preloaded but torch + tilelang")
    torch_out, torch_new = calls["torch.add(a, b, out=c)"], calls["torch.add(a, b) -> new c"]
    for name, us in calls.items():
        ref = torch_new if "new c" in name else torch_out
        print(f"{'call: ' + name:44s} {us:9.2f} us  {us / ref:.2f}x the torch op")


if __name__ == "__main__":
    main()
