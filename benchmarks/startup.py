"""Warm start: a new process, kernel cache warm, from process start to its first kernel result (CPU target).

    python benchmarks/startup.py [--runs 7] [--form factory|eager|prim_func] [--arrays torch|numpy]

Each run starts two fresh interpreters, alternately: the baseline ``python -c "import torch"`` and a probe that
imports torch and tilelang (``import tilelang.language as T`` at the top, as users write it), defines a kernel,
gets it from the warm cache and runs it once on torch tensors (``--arrays numpy``: on NumPy arrays, torch never
imported, asserted). Figures are medians over the runs:

- *spawn to first result*: from just before the process is spawned to the moment the probe holds the kernel's
  output (the baseline: to the end of ``import torch``); interpreter start-up included, shut-down not;
- *after import torch, in the process*: the part of that the warm start adds (the rest, interpreter start-up and
  ``import torch``, is the baseline's work); measured inside the probe, so it does not carry the run-to-run
  spread of ``import torch`` (seconds on a loaded host), with its CPU time and the garbage collector's share;
- *whole process*: spawn to exit, shut-down included (for the probe: spawn to first result plus its shut-down, the
  cache hits it times after the result left out);
- *cache hit itself*: in the same probe, once the first kernel ran, getting three other cached kernels (the
  middle one of three): source key, record, artifact (files checked against their manifest), ``dlopen``, caller.

The probe asserts that TVM (the compiler package ``tvm``) is not imported when it has its result and that every
kernel came from the cache and computed the right result; it reports whether the ``tvm_ffi`` package was imported
and which module's launcher ran the kernel (`tilelang_cpu.direct_call`: TVM-FFI's C ABI through ctypes with
``libtvm_ffi`` and ``libtvm_runtime`` loaded; ``tvm_ffi.core``: the ``tvm_ffi`` package).

Kernel forms (``--form``): ``factory`` (``@tilelang.jit`` on a function returning a ``@T.prim_func``, the
reference's usual style), ``eager`` (``T.const`` / ``T.empty``), ``prim_func`` (a module-level ``@T.prim_func``
given to ``tilelang.compile``). The cache lives in a temporary directory; ``PYTHONPATH`` is kept.
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
import time
from pathlib import Path
from typing import Any

KERNELS = {
    "factory": '''
        import tilelang
        import tilelang.language as T


        @tilelang.jit(out_idx=[-1], target="cpu")
        def add(M, N, block_M=32):
            @T.prim_func
            def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"),
                     C: T.Tensor((M, N), "float32")):
                with T.Kernel(M // block_M, is_cpu=True) as bx:
                    for i, j in T.Parallel(block_M, N):
                        C[bx * block_M + i, j] = A[bx * block_M + i, j] + B[bx * block_M + i, j]

            return main


        def get(M, N):
            return add(M, N)
        ''',
    "eager": '''
        import tilelang
        import tilelang.language as T


        @tilelang.jit(target="cpu")
        def add(A, B, block_M: int = 32):
            M, N = T.const("M, N")
            A: T.Tensor((M, N), T.float32)
            B: T.Tensor((M, N), T.float32)
            C = T.empty((M, N), T.float32)
            with T.Kernel(M // block_M, is_cpu=True) as bx:
                for i, j in T.Parallel(block_M, N):
                    C[bx * block_M + i, j] = A[bx * block_M + i, j] + B[bx * block_M + i, j]
            return C


        def get(M, N):
            return add.compile(M=M, N=N)
        ''',
    "prim_func": '''
        import tilelang
        import tilelang.language as T

        N, block_M = 64, 32


        @T.prim_func
        def add_256(A: T.Tensor((256, N), "float32"), B: T.Tensor((256, N), "float32"),
                    C: T.Tensor((256, N), "float32")):
            with T.Kernel(256 // block_M, is_cpu=True) as bx:
                for i, j in T.Parallel(block_M, N):
                    C[bx * block_M + i, j] = A[bx * block_M + i, j] + B[bx * block_M + i, j]


        @T.prim_func
        def add_64(A: T.Tensor((64, N), "float32"), B: T.Tensor((64, N), "float32"), C: T.Tensor((64, N), "float32")):
            with T.Kernel(64 // block_M, is_cpu=True) as bx:
                for i, j in T.Parallel(block_M, N):
                    C[bx * block_M + i, j] = A[bx * block_M + i, j] + B[bx * block_M + i, j]


        @T.prim_func
        def add_128(A: T.Tensor((128, N), "float32"), B: T.Tensor((128, N), "float32"),
                    C: T.Tensor((128, N), "float32")):
            with T.Kernel(128 // block_M, is_cpu=True) as bx:
                for i, j in T.Parallel(block_M, N):
                    C[bx * block_M + i, j] = A[bx * block_M + i, j] + B[bx * block_M + i, j]


        @T.prim_func
        def add_192(A: T.Tensor((192, N), "float32"), B: T.Tensor((192, N), "float32"),
                    C: T.Tensor((192, N), "float32")):
            with T.Kernel(192 // block_M, is_cpu=True) as bx:
                for i, j in T.Parallel(block_M, N):
                    C[bx * block_M + i, j] = A[bx * block_M + i, j] + B[bx * block_M + i, j]


        def get(M, N_):
            return tilelang.compile(globals()[f"add_{M}"], out_idx=[-1], target="cpu")
        ''',
}

# The probe: what a CLI or a server that uses one cached kernel does. Timestamps are wall-clock (time.time) so the
# parent can subtract its spawn time; the GC callback sums the collector's passes after import torch and before the
# first result.
PROBE = """
import time
import sys
IMPORT_ARRAYS
t_torch, cpu_torch = time.time(), time.process_time()
import gc
_gc = [0.0, 0]
def _track(phase, info, _start=[0.0]):
    if phase == "start":
        _start[0] = time.perf_counter()
    else:
        _gc[0] += time.perf_counter() - _start[0]
        _gc[1] += info["generation"] == 2
gc.callbacks.append(_track)
import bench_kernels
a, b = RANDN(256, 64), RANDN(256, 64)
kernel = bench_kernels.get(256, 64)
c = kernel(a, b)
t_result, cpu_result = time.time(), time.process_time()
gc_ms, gc_full = _gc[0] * 1e3, _gc[1]
tvm_loaded, ffi_loaded = "tvm" in sys.modules, "tvm_ffi" in sys.modules
launcher = getattr(kernel._launcher, "__module__", None) or type(kernel._launcher).__module__
hits, hit_cpus, ok = [], [], bool(EQUAL(c, a + b))
for m in (64, 128, 192):
    h0, c0 = time.perf_counter(), time.process_time()
    other = bench_kernels.get(m, 64)
    hits.append((time.perf_counter() - h0) * 1e3)
    hit_cpus.append((time.process_time() - c0) * 1e3)
    x = RANDN(m, 64)
    ok = ok and bool(EQUAL(other(x, x), x + x)) and other.from_cache
import json
t_done = time.time()
print(json.dumps({"t_done": t_done, "t_torch": t_torch, "t_result": t_result, "cpu_torch": cpu_torch,
                  "cpu_result": cpu_result,
                  "tvm": tvm_loaded, "tvm_ffi": ffi_loaded, "torch": "torch" in sys.modules, "launcher": launcher,
                  "from_cache": kernel.from_cache, "ok": ok, "hit_ms": sorted(hits)[1],
                  "hit_cpu_ms": sorted(hit_cpus)[1], "gc_ms": gc_ms, "gc_full": gc_full,
                  "modules": len(sys.modules)}))
"""

# What the probe computes on: torch tensors (as most users), or NumPy arrays (a tool that never imports torch).
ARRAYS = {
    "torch": {"IMPORT_ARRAYS": "import torch", "RANDN": "torch.randn", "EQUAL": "torch.equal"},
    "numpy": {"IMPORT_ARRAYS": "import numpy\nrng = numpy.random.default_rng(0)",
              "RANDN": "(lambda m, n: rng.standard_normal((m, n), dtype=numpy.float32))",
              "EQUAL": "numpy.array_equal"},
}

BASELINE = "import time; import torch; print(time.time(), time.process_time())"


def _spawn(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, str]:
    """(spawn time, exit time, stdout) of one fresh process."""
    start = time.time()
    out = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True)
    end = time.time()
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{out.stderr}")
    return start, end, out.stdout.strip().splitlines()[-1]


def probe_source(arrays: str) -> str:
    """The probe's code for torch tensors or NumPy arrays."""
    source = PROBE
    for name, value in ARRAYS[arrays].items():
        source = source.replace(name, value)
    return source


def measure(runs: int, form: str, env: dict[str, str], cwd: Path, arrays: str = "torch") -> dict[str, Any]:
    (cwd / "bench_kernels.py").write_text(textwrap.dedent(KERNELS[form]))
    probe = cwd / "probe.py"
    probe.write_text(probe_source(arrays))
    _spawn([sys.executable, str(probe)], env, cwd)  # compiles the probe's kernels: the cache is warm from here on
    rows: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        rows.setdefault(name, []).append(value)

    probes = []
    for _ in range(runs):  # alternately, so that both see the same drift of the host's load
        start, end, line = _spawn([sys.executable, "-c", BASELINE], env, cwd)
        t_torch, cpu_torch = map(float, line.split())
        add("torch_first", t_torch - start)
        add("torch_whole", end - start)
        add("torch_cpu", cpu_torch)
        start, end, line = _spawn([sys.executable, str(probe)], env, cwd)
        r = json.loads(line)
        probes.append(r)
        add("first", r["t_result"] - start)
        add("whole", (r["t_result"] - start) + (end - r["t_done"]))  # less the hits and checks after the result
        add("cpu", r["cpu_result"])
        add("after_torch", r["t_result"] - r["t_torch"])
        add("cpu_after_torch", r["cpu_result"] - r["cpu_torch"])
        for k in ("hit_ms", "hit_cpu_ms", "gc_ms", "gc_full", "modules"):
            add(k, r[k])
    result: dict[str, Any] = {k: statistics.median(v) for k, v in rows.items()}
    result["hit_min_ms"] = min(rows["hit_ms"])
    result.update(tvm=any(r["tvm"] for r in probes), tvm_ffi=any(r["tvm_ffi"] for r in probes),
                  torch=any(r["torch"] for r in probes),
                  launchers=sorted({r["launcher"] for r in probes}),
                  from_cache=all(r["from_cache"] for r in probes), ok=all(r["ok"] for r in probes))
    return result


def report(r: dict[str, Any], runs: int, form: str, arrays: str = "torch") -> None:
    over = r["first"] - r["torch_first"]
    print(f"warm start, form {form!r}, {arrays} arguments: medians of {runs} fresh processes of each kind (load "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    rows = [
        ("measure", "value", "note"),
        ('python -c "import torch": spawn to torch imported', f"{r['torch_first']:.3f} s", "the baseline"),
        ("warm start: spawn to first kernel result", f"{r['first']:.3f} s",
         f"{over:+.3f} s against the baseline's median"),
        (f"warm start: after import {arrays}, in the process", f"{r['after_torch']:.3f} s",
         "what the warm start adds: import tilelang, the kernel module, cache hit, first call"),
        ("  CPU time of it", f"{r['cpu_after_torch']:.3f} s",
         f"(spawn to result: {r['cpu']:.3f} s CPU, baseline {r['torch_cpu']:.3f} s)"),
        ("  garbage collection in it", f"{r['gc_ms'] / 1e3:.3f} s",
         f"{r['gc_full']:.0f} full pass(es) (a full pass after import torch walks torch's objects)"),
        ('whole process, spawn to exit: python -c "import torch"', f"{r['torch_whole']:.3f} s", ""),
        ("whole process, spawn to exit: warm start", f"{r['whole']:.3f} s",
         f"{r['whole'] - r['torch_whole']:+.3f} s"),
        ("cache hit itself (another cached kernel)", f"{r['hit_ms']:.2f} ms",
         f"best {r['hit_min_ms']:.2f} ms, CPU {r['hit_cpu_ms']:.2f} ms: source key, record, artifact, dlopen, caller"),
    ]
    for i, (label, value, note) in enumerate(rows):
        print(f"{label:56s} {value:>9s}  {note}")
        if i == 0:
            print("-" * 120)
    print(f"TVM imported on the hit: {r['tvm']} (asserted); torch imported: {r['torch']}"
          f"{' (asserted)' if arrays == 'numpy' else ''}; tvm_ffi package imported: {r['tvm_ffi']}; launcher: "
          f"{', '.join(r['launchers'])}; {r['modules']:.0f} modules; results correct: {r['ok']}")
    first_ok, added_ok, hit_ok = r["first"] <= 1.0, r["after_torch"] <= 0.3, r["hit_ms"] <= 2.0
    print(f"goals on this host: first result <= 1.0 s: {'met' if first_ok else 'not met'}; <= 0.3 s added to import "
          f"{arrays}: {'met' if added_ok else 'not met'}; cache hit <= 2 ms: {'met' if hit_ok else 'not met'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="fresh processes of each kind")
    parser.add_argument("--form", choices=sorted(KERNELS), default="factory")
    parser.add_argument("--arrays", choices=sorted(ARRAYS), default="torch",
                        help="what the probe computes on (numpy: the probe never imports torch)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tl-startup-") as tmp:
        cwd = Path(tmp)
        path = os.pathsep.join(filter(None, [str(cwd), os.environ.get("PYTHONPATH")]))
        env = {**os.environ, "TILELANG_CACHE_DIR": str(cwd / "cache"), "PYTHONPATH": path}
        env.pop("TILELANG_DISABLE_CACHE", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # installed packages have their .pyc files
        r = measure(args.runs, args.form, env, cwd, args.arrays)
    assert r["ok"], "a kernel loaded from the cache computed a wrong result, or was compiled again"
    assert r["from_cache"], "the probe's kernel did not come from the warm cache"
    assert not r["tvm"], "TVM (the compiler package) was imported on a cache hit"
    assert args.arrays == "torch" or not r["torch"], "torch was imported by a probe that computes on NumPy arrays"
    report(r, args.runs, args.form, args.arrays)


if __name__ == "__main__":
    main()
