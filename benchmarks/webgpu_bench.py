"""WebGPU backend vs torch CPU on the same run: elementwise add 1024², GEMM 512³ (fp32), row softmax 1024²,
flash attention (fp16, 4 heads x 256 tokens x 64).

Kernels are the DSL corpus kernels (plus ``gemm 512^3 naive16``, `naive_gemm`: a plain 16x16 tiled GEMM in the
DSL, one output element per thread, the in-run baseline the ``speedup`` line after the table compares our GEMM
with), compiled with ``tilelang.compile(..., target="webgpu")`` and run by the
``wgpu`` execution backend. Columns: the full call (upload, dispatch, read-back into torch tensors), the GPU
time of the dispatches alone (timestamp queries, ``launcher.time_ms``: the median, and the best of the
repetitions, which is the steadier figure on a loaded machine), torch on the CPU, and the ratios (>1: torch is
faster). The kernel cache is off unless ``--cache`` (so compile times are real compiles).
``--vector-lanes V`` / ``--vector-scope all|gemm`` override the target's ``fragment_vector_lanes`` /
``fragment_vector_scope`` pipeline options (lanes 1: the cyclic fragment layout; see
`tilelang.transform.layout_inference`), ``--only add,softmax`` runs the kernels whose label starts so.
Usage: ``python benchmarks/webgpu_bench.py [--rep N] [--cache] [--vector-lanes V] [--only A,B]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any


def _median_ms(fn: Callable[[], Any], rep: int, warmup: int = 2) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(rep):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def _cases() -> list[tuple[str, Any, Callable[..., Any]]]:
    import torch

    from tilelang.testing import corpus

    return [
        ("add 1024x1024", corpus.elementwise_add(M=1024, N=1024), torch.add),
        ("gemm 512^3 fp32", corpus.gemm(M=512, N=512, K=512, dtype="float32"), torch.matmul),
        ("gemm 512^3 naive16", naive_gemm(512, 512, 512), torch.matmul),
        ("softmax 1024x1024", corpus.softmax(M=1024, N=1024, block_M=4), lambda x: torch.softmax(x, dim=1)),
        ("flash attn fp16", corpus.flash_attention(batch=1, heads=4, seq_len=256, dim=64, is_causal=False),
         _sdpa),
    ]


def naive_gemm(M: int, N: int, K: int, tile: int = 16) -> Any:
    """The in-run baseline for our GEMM: a straightforward tiled GEMM in the DSL (fp32) -- `tile` x `tile`
    blocks of as many threads, one output element per thread, both operands staged through `tile` x `tile`
    workgroup tiles, a scalar multiply-add loop over each K tile."""
    import tilelang.language as T
    from tilelang.testing.corpus import Arg, CorpusKernel

    @T.prim_func
    def naive_gemm(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"),
                   C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, tile), T.ceildiv(M, tile), threads=tile * tile) as (bx, by):
            A_shared = T.alloc_shared((tile, tile), "float32")
            B_shared = T.alloc_shared((tile, tile), "float32")
            C_local = T.alloc_fragment((tile, tile), "float32")
            T.clear(C_local)
            for ko in T.serial(T.ceildiv(K, tile)):
                T.copy(A[by * tile, ko * tile], A_shared)
                T.copy(B[ko * tile, bx * tile], B_shared)
                for i, j in T.Parallel(tile, tile):
                    for kk in T.serial(tile):
                        C_local[i, j] += A_shared[i, kk] * B_shared[kk, j]
            T.copy(C_local, C[by * tile, bx * tile])

    return CorpusKernel("naive_gemm", naive_gemm, lambda a, b: a @ b,
                        [Arg("A", "in", (M, K)), Arg("B", "in", (K, N)), Arg("C", "out", (M, N))])


def _sdpa(q: Any, k: Any, v: Any) -> Any:
    """torch's attention on [batch, seq, heads, dim] tensors (in float32: CPU half attention is not the point)."""
    import torch

    q, k, v = (x.float().transpose(1, 2) for x in (q, k, v))
    return torch.nn.functional.scaled_dot_product_attention(q, k, v).transpose(1, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rep", type=int, default=10, help="timed repetitions per measurement")
    parser.add_argument("--cache", action="store_true", help="use the kernel cache (compile column = cache hit)")
    parser.add_argument("--vector-lanes", type=int, default=None,
                        help="override the fragment_vector_lanes pipeline option (1 = cyclic fragments)")
    parser.add_argument("--vector-scope", default=None, choices=["all", "gemm"],
                        help="override the fragment_vector_scope pipeline option")
    parser.add_argument("--subgroups", action="store_true",
                        help="compile with the supports_subgroups target attribute (subgroup reductions)")
    parser.add_argument("--only", default="", help="comma-separated label prefixes of the kernels to run")
    args = parser.parse_args()
    if not args.cache:
        os.environ["TILELANG_DISABLE_CACHE"] = "1"
    override = {k: v for k, v in (("fragment_vector_lanes", args.vector_lanes),
                                  ("fragment_vector_scope", args.vector_scope)) if v is not None}
    if override:
        from tilelang.transform import utils as transform_utils

        registered = transform_utils.pipeline_options
        transform_utils.pipeline_options = lambda target: {**registered(target), **override}

    import torch

    import tilelang
    from tilelang_webgpu.adapter import adapter_summary

    target = {"kind": "webgpu", "supports_subgroups": True} if args.subgroups else "webgpu"
    mode = "; subgroups on" if args.subgroups else ""
    print(f"adapter: {adapter_summary()}{mode}; torch {torch.__version__} with {torch.get_num_threads()} threads")
    header = f"{'kernel':<20}{'compile s':>10}{'call ms':>10}{'gpu ms':>10}{'gpu best':>10}{'torch ms':>10}" \
             f"{'call/torch':>12}{'gpu/torch':>11}  check"
    print(header)
    print("-" * len(header))
    only = [p for p in args.only.split(",") if p]
    gpu: dict[str, tuple[float, float]] = {}  # label -> (gpu ms median, gpu ms best)
    timers: dict[str, Callable[[], float]] = {}  # label -> one GPU-timed dispatch (ms)
    for label, case, reference in _cases():
        if only and not any(label.startswith(p) for p in only):
            continue
        inputs = case.make_inputs()
        start = time.perf_counter()
        try:
            kernel = tilelang.compile(case.func, out_idx=case.out_idx, target=target, execution_backend="wgpu")
        except Exception as exc:
            print(f"{label:<20} failed to compile: {str(exc).splitlines()[0][:90]}")
            continue
        compile_s = time.perf_counter() - start
        out = kernel(*inputs)
        ok = torch.allclose(out.float(), case.ref(*inputs).float(), atol=case.atol, rtol=case.rtol)
        call_ms = _median_ms(lambda k=kernel, x=inputs: k(*x), args.rep)
        launcher = kernel.backend.load(kernel.artifact)  # pipelines are cached: this only binds arguments
        ins, outs = iter(inputs), iter(case.make_outputs())
        full = [next(outs) if a.role == "out" else next(ins) for a in case.args]  # every parameter, in order
        gpu_ms = launcher.time_ms(*full, warmup=2, rep=args.rep)
        gpu_best = min(launcher.time_ms(*full, warmup=0, rep=1) for _ in range(args.rep))
        torch_ms = _median_ms(lambda f=reference, x=inputs: f(*x), args.rep)
        print(f"{label:<20}{compile_s:>10.2f}{call_ms:>10.2f}{gpu_ms:>10.2f}{gpu_best:>10.2f}{torch_ms:>10.3f}"
              f"{call_ms / torch_ms:>12.1f}{gpu_ms / torch_ms:>11.1f}  {'ok' if ok else 'MISMATCH'}")
        gpu[label] = (gpu_ms, gpu_best)
        timers[label] = lambda t=launcher, x=full: t.time_ms(*x, warmup=0, rep=1)
    _gemm_speedup(gpu, timers, args.rep)


def _gemm_speedup(gpu: dict[str, tuple[float, float]], timers: dict[str, Callable[[], float]], rep: int) -> None:
    """Our GEMM against the naive one: from the table's columns, and from `rep` interleaved timings of the two
    (best of each), which a load changing during the run affects alike."""
    ours, naive = "gemm 512^3 fp32", "gemm 512^3 naive16"
    if ours not in gpu or naive not in gpu:
        return
    pairs = [(timers[ours](), timers[naive]()) for _ in range(rep)]
    best_ours, best_naive = min(p[0] for p in pairs), min(p[1] for p in pairs)
    print(f"{ours} speedup over the naive 16x16 tiled GEMM (gpu ms, same run): table median "
          f"{gpu[naive][0] / gpu[ours][0]:.1f}x, table best {gpu[naive][1] / gpu[ours][1]:.1f}x; interleaved best "
          f"{best_ours:.2f} vs {best_naive:.2f} ms = {best_naive / best_ours:.1f}x")


if __name__ == "__main__":
    main()
