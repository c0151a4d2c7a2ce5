"""GPU benchmark for the CUDA backend (one NVIDIA GPU, <= 5 minutes): correctness, then speed against torch.

    python benchmarks/gpu_bench.py [--arch sm_90a] [--quick] [--compile-only]

fp16 GEMM 4096^3 vs torch.matmul (cuBLAS), flash-attention forward vs torch SDPA, row softmax vs torch.softmax.
Each kernel is first checked against torch, then timed with CUDA events (median of repeated runs); the table
prints ms, TFLOP/s (GEMM, attention) and the ratio torch_time / our_time (> 1: we are faster).
``--compile-only`` needs no GPU: it builds the same kernels to cubin for ``--arch`` (default sm_90a) and prints
ptxas' registers / shared memory and the key PTX instructions of each.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any


def bench(fn: Callable[[], Any], warmup: int = 5, reps: int = 30) -> float:
    """Median milliseconds of `fn` on the current stream."""
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def gemm_kernel(arch: str, n: int) -> Any:
    from tilelang.testing import corpus

    block = (128, 128, 32) if arch.startswith("sm_8") else (128, 256, 64)
    threads = 128 if arch.startswith("sm_8") else 256
    return corpus.gemm(M=n, N=n, K=n, block_M=block[0], block_N=block[1], block_K=block[2], threads=threads,
                       num_stages=3)


def attention_kernel(seq: int) -> Any:
    """The reference example_mha_fwd_bshd: K/V copies of iteration k + 1 overlap iteration k (num_stages=2)."""
    from tilelang.testing import corpus

    return corpus.flash_attention(batch=4, heads=16, seq_len=seq, dim=64, is_causal=False, block_M=64,
                                  block_N=64, num_stages=2, threads=128)


def softmax_kernel(rows: int, cols: int) -> Any:
    from tilelang.testing import corpus

    return corpus.softmax(M=rows, N=cols, block_M=16)


# sm_90a variants timed beside the default (warp-specialised: a TMA producer warpgroup, SS wgmma consumers): the
# cp.async pipeline without warp specialisation and the previous RS wgmma + B relayout path (fallbacks if the
# default ever misbehaves on a GPU)
WS_OFF = {"tl.disable_warp_specialized": True}
VARIANTS = {"cp.async, no warp specialisation": WS_OFF,
            "RS + B relayout": {**WS_OFF, "tl.cuda.enable_wgmma_ss": False}}


def gemm_case(arch: str, n: int, configs: dict | None = None
              ) -> tuple[Any, Callable[[], Any], Callable[[], Any], float]:
    import torch

    import tilelang

    k = gemm_kernel(arch, n)
    jit = tilelang.compile(k.func, target={"kind": "cuda", "arch": arch}, pass_configs=configs)
    a = torch.randn(n, n, device="cuda", dtype=torch.float16)
    b = torch.randn(n, n, device="cuda", dtype=torch.float16)
    c = torch.empty(n, n, device="cuda", dtype=torch.float16)
    jit(a, b, c)
    torch.testing.assert_close(c.float(), (a.float() @ b.float()), atol=0.5, rtol=2e-2)
    return jit, (lambda: jit(a, b, c)), (lambda: torch.matmul(a, b)), 2.0 * n ** 3


def attention_case(arch: str, seq: int) -> tuple[Any, Callable[[], Any], Callable[[], Any], float]:
    import torch
    import torch.nn.functional as F

    import tilelang

    batch, heads, dim = 4, 16, 64
    k = attention_kernel(seq)
    jit = tilelang.compile(k.func, target={"kind": "cuda", "arch": arch})
    q, kk, v = (torch.randn(batch, seq, heads, dim, device="cuda", dtype=torch.float16) for _ in range(3))
    out = torch.empty_like(q)
    jit(q, kk, v, out)
    qt, kt, vt = (x.transpose(1, 2) for x in (q, kk, v))
    ref = F.scaled_dot_product_attention(qt, kt, vt).transpose(1, 2)
    torch.testing.assert_close(out.float(), ref.float(), atol=2e-2, rtol=2e-2)
    return jit, (lambda: jit(q, kk, v, out)), (lambda: F.scaled_dot_product_attention(qt, kt, vt)), \
        4.0 * batch * heads * seq * seq * dim


def softmax_case(arch: str, rows: int, cols: int) -> tuple[Any, Callable[[], Any], Callable[[], Any], float]:
    import torch

    import tilelang

    k = softmax_kernel(rows, cols)
    jit = tilelang.compile(k.func, target={"kind": "cuda", "arch": arch})
    x = torch.randn(rows, cols, device="cuda")
    y = torch.empty_like(x)
    jit(x, y)
    torch.testing.assert_close(y, torch.softmax(x, dim=1), atol=1e-5, rtol=1e-4)
    return jit, (lambda: jit(x, y)), (lambda: torch.softmax(x, dim=1)), 0.0


def compile_only(arch: str, quick: bool) -> int:
    """Build every benchmark kernel to cubin for `arch` (no GPU needed) and summarise ptxas and the PTX."""
    import re
    import warnings

    import tilelang
    from tilelang_cuda.compiler import compile_artifact

    kernels = {
        "gemm fp16": gemm_kernel(arch, 1024 if quick else 4096),
        "attention fwd": attention_kernel(512 if quick else 2048),
        "softmax fp32": softmax_kernel(1024 if quick else 8192, 1024),
    }
    failed = False
    configs_of: dict[str, dict | None] = {}
    if arch.endswith("a") and arch >= "sm_90":
        for label, configs in VARIANTS.items():
            kernels[f"gemm fp16 {label.split(',')[0]}"] = kernels["gemm fp16"]
            configs_of[f"gemm fp16 {label.split(',')[0]}"] = configs
    for name, kernel in kernels.items():
        t0 = time.perf_counter()
        configs = configs_of.get(name)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                artifact = tilelang.lower(kernel.prim_func(), target={"kind": "cuda", "arch": arch},
                                          pass_configs=configs)
            binary = compile_artifact(artifact)
        except Exception as exc:
            failed = True
            print(f"{name:16} FAILED: {type(exc).__name__}: {str(exc).splitlines()[0][:150]}")
            continue
        ptx = binary.ptx
        waits = sorted(set(re.findall(r"cp\.async\.wait_group (\d+)", ptx)))
        counts = {ins: ptx.count(ins) for ins in ("mma.sync", "wgmma.mma_async", "ldmatrix", "cp.async.cg",
                                                  "cp.async.commit_group", "cp.async.bulk.tensor",
                                                  "mbarrier.try_wait.parity", "shfl.sync")}
        shared = artifact.metadata.get("shared_bytes", binary.resources.get("static_shared_bytes", "?"))
        res = binary.resources
        print(f"{name:16} regs={res.get('registers', '?')} spills={res.get('spill_stores', 0)}"
              f" shared={shared}B wait_group={waits} "
              + " ".join(f"{k}={v}" for k, v in counts.items() if v) + f"  {time.perf_counter() - t0:.1f}s")
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default=None, help="CUDA arch (default: the GPU's, e.g. sm_90a on an H200)")
    parser.add_argument("--quick", action="store_true", help="smaller shapes (a smoke run)")
    parser.add_argument("--compile-only", action="store_true", help="no GPU: build the kernels, report ptxas/PTX")
    args = parser.parse_args()
    if args.compile_only:
        return compile_only(args.arch or "sm_90a", args.quick)
    import torch

    if not torch.cuda.is_available():
        print("gpu_bench: no CUDA GPU visible to torch; nothing to run", file=sys.stderr)
        return 2
    from tilelang_cuda.target import detect

    arch = args.arch or detect()["arch"]
    print(f"GPU: {torch.cuda.get_device_name(0)}  arch: {arch}  torch {torch.__version__}")
    cases = {
        "gemm fp16 4096^3": lambda: gemm_case(arch, 1024 if args.quick else 4096),
        **({f"gemm fp16 4096^3 ({label})": (lambda c=configs: gemm_case(arch, 1024 if args.quick else 4096, c))
            for label, configs in VARIANTS.items()} if arch.endswith("a") and arch >= "sm_90" else {}),
        "attention fwd (b4 h16 s2048 d64)": lambda: attention_case(arch, 512 if args.quick else 2048),
        "softmax 8192x1024 fp32": lambda: softmax_case(arch, 1024 if args.quick else 8192, 1024),
    }
    print(f"{'case':36} {'ours ms':>9} {'torch ms':>9} {'ours TF/s':>10} {'torch/ours':>11}  notes")
    failed = False
    for name, make in cases.items():
        t0 = time.perf_counter()
        try:
            jit, ours, theirs, flops = make()
        except Exception as exc:  # report and keep going: one broken case must not hide the others
            failed = True
            print(f"{name:36} FAILED: {type(exc).__name__}: {str(exc).splitlines()[0][:150]}")
            continue
        ms, ref_ms = bench(ours), bench(theirs)
        tflops = f"{flops / ms / 1e9:10.1f}" if flops else f"{'-':>10}"
        regs = jit.artifact.metadata.get("registers", "?")
        print(f"{name:36} {ms:9.3f} {ref_ms:9.3f} {tflops} {ref_ms / ms:11.2f}  regs={regs} "
              f"compile+check {time.perf_counter() - t0:.1f}s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
