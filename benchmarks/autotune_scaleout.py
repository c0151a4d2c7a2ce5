"""Autotuning throughput: configurations per second for a CPU GEMM, locally and on a cluster.

    python benchmarks/autotune_scaleout.py [--configs 8] [--size 256] [--workers 2] [--modes serial,pool,ray,dask]
                                           [--json out.json]

One autotuning run per mode over the same `--configs` block shapes (compile, check against torch, time):

- ``serial``: everything in this process (``SerialExecutor``);
- ``pool``: compiles on the local process pool (`local_process_executor`, `--workers` processes), benchmarks here;
- ``ray``: a local Ray cluster of `--workers` CPUs (``ray.init(num_cpus=...)``): compiles as Ray tasks, benchmarks
  on the node's device actor (`tilelang.autotuner.RayExecutor`); needs ``tilelang-core[ray]``;
- ``dask``: a ``distributed.LocalCluster`` of `--workers` single-threaded worker processes (`DaskExecutor`); needs
  ``tilelang-core[dask]``.

The kernel cache is off for the whole run (``TILELANG_DISABLE_CACHE=1``, inherited by every worker), so each mode
compiles every configuration. Cluster start-up (with ``warm_up``: TileLang imported on every worker) is timed
apart from tuning; the local pool forks this already warm process. Modes whose package is missing are
reported as skipped.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from typing import Any

os.environ["TILELANG_DISABLE_CACHE"] = "1"  # before tilelang is imported, and inherited by every worker


def gemm_factory() -> Any:
    """The tuned GEMM: ``C = A @ B`` in float32, blocked for the CPU."""
    import tilelang
    import tilelang.language as T

    @tilelang.jit(out_idx=[-1], target="cpu")
    def gemm(M, N, K, block_M=32, block_N=32, block_K=16):
        @T.prim_func
        def main(A: T.Tensor((M, K), T.float32), B: T.Tensor((K, N), T.float32), C: T.Tensor((M, N), T.float32)):
            with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), is_cpu=True) as (bx, by):
                A_shared = T.alloc_shared((block_M, block_K), T.float32)
                B_shared = T.alloc_shared((block_K, block_N), T.float32)
                C_local = T.alloc_fragment((block_M, block_N), T.float32)
                T.clear(C_local)
                for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=1):
                    T.copy(A[by * block_M, k * block_K], A_shared)
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                    T.gemm(A_shared, B_shared, C_local)
                T.copy(C_local, C[by * block_M, bx * block_N])

        return main

    return gemm


def configs(count: int) -> list[dict[str, int]]:
    shapes = itertools.product((16, 32, 64), (16, 32, 64), (16, 32))
    out = [{"block_M": m, "block_N": n, "block_K": k} for m, n, k in shapes][:count]
    if len(out) < count:
        raise SystemExit(f"--configs: at most {len(out)} block shapes are defined")
    return out


def tune(executor: Any, space: list[dict[str, int]], size: int, workers: int) -> tuple[float, Any]:
    """Seconds for one autotuning run through `executor`, and its result."""
    from tilelang.autotuner import AutoTuner

    tuner = AutoTuner(gemm_factory(), space, executor=executor, max_workers=workers, progress=False,
                      cache_results=False, warmup=5, rep=20, ref_prog=lambda a, b: a @ b)
    start = time.perf_counter()
    result = tuner.run(size, size, size)
    return time.perf_counter() - start, result


def run_mode(mode: str, space: list[dict[str, int]], size: int, workers: int) -> dict[str, Any]:
    from tilelang.autotuner import SerialExecutor, local_process_executor

    row: dict[str, Any] = {"mode": mode, "workers": 1 if mode == "serial" else workers, "configs": len(space)}
    start = time.perf_counter()
    teardown = None
    if mode == "serial":
        executor = SerialExecutor()
    elif mode == "pool":
        executor = local_process_executor(workers)
        teardown = executor.shutdown
    elif mode == "ray":
        try:
            import ray
        except ImportError:
            return {**row, "skipped": 'pip install "tilelang-core[ray]"'}
        from tilelang.autotuner import RayExecutor
        from tilelang.autotuner.ray_executor import ray_temp_dir

        temp_dir = ray_temp_dir()
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": {"TILELANG_DISABLE_CACHE": "1"}},
                 **({"_temp_dir": temp_dir} if temp_dir else {}))
        executor = RayExecutor()
        executor.warm_up("cpu")

        def teardown() -> None:
            executor.shutdown()
            ray.shutdown()
    elif mode == "dask":
        try:
            import distributed
        except ImportError:
            return {**row, "skipped": 'pip install "tilelang-core[dask]"'}
        from tilelang.autotuner import DaskExecutor

        cluster = distributed.LocalCluster(n_workers=workers, processes=True, threads_per_worker=1,
                                           dashboard_address=None)
        client = distributed.Client(cluster)
        executor = DaskExecutor(client)
        executor.warm_up("cpu")

        def teardown() -> None:
            client.close()
            cluster.close()
    else:
        raise SystemExit(f"unknown mode {mode!r}: serial, pool, ray or dask")
    row["startup_s"] = time.perf_counter() - start
    try:
        seconds, result = tune(executor, space, size, workers)
    finally:
        if teardown is not None:
            teardown()
    row.update(seconds=seconds, configs_per_s=len(space) / seconds, best=result.config,
               best_ms=result.latency, disqualified=sum(t["latency"] is None for t in result.trials))
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", type=int, default=8)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--modes", default="serial,pool,ray,dask")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    space = configs(args.configs)
    rows = []
    for mode in [m.strip() for m in args.modes.split(",") if m.strip()]:
        rows.append(run_mode(mode, space, args.size, args.workers))
        print(f"  {mode}: done", file=sys.stderr, flush=True)
    print(f"autotuning a {args.size}^3 fp32 CPU GEMM over {len(space)} block shapes (cache off; cores: "
          f"{os.cpu_count()})")
    print(f"{'mode':<8}{'workers':>8}{'startup s':>11}{'tune s':>9}{'configs/s':>11}  best (ms)")
    for r in rows:
        if "skipped" in r:
            print(f"{r['mode']:<8}{r['workers']:>8}  skipped: {r['skipped']}")
            continue
        best = ", ".join(f"{k}={v}" for k, v in r["best"].items())
        print(f"{r['mode']:<8}{r['workers']:>8}{r['startup_s']:>11.2f}{r['seconds']:>9.2f}"
              f"{r['configs_per_s']:>11.2f}  {best} ({r['best_ms']:.4f})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
