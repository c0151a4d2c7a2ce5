"""A kernel factory whose configurations misbehave on the compile worker, and a script driving it.

The factory runs (at compile time) on the autotuner's worker processes. Each worker records itself in
``$TL_POOL_TEST_DIR`` (``worker-<pid>``: its command line, which tells a spawned worker from a forked one) and,
for ``child=True``, starts a long ``sleep`` as a compiler would (``child-<pid>``); ``sleep`` seconds stall the
compile; ``die=True`` SIGKILLs the worker, as the OOM killer would.

As a script: ``python pool_faults.py interrupt|spawn`` tunes over stalled configurations (``interrupt``: the test
sends SIGINT; the script prints how long the tuner took to stop) or, after
``multiprocessing.set_start_method("spawn")``, over quick ones (``spawn``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import tilelang
import tilelang.language as T

PARENT = os.getpid()
N = 256


@tilelang.jit(out_idx=-1, target="cpu")
def scale(n: int = N, block: int = 32, die: bool = False, sleep: float = 0.0, child: bool = False):
    """B = A * 2, in blocks of `block`; the other arguments misbehave on a worker process (see the module doc)."""
    if os.getpid() != PARENT:
        out = Path(os.environ["TL_POOL_TEST_DIR"])
        (out / f"worker-{os.getpid()}").write_bytes(Path("/proc/self/cmdline").read_bytes())
        if child:
            proc = subprocess.Popen(["sleep", "120"])
            (out / f"child-{proc.pid}").write_text(str(os.getpid()))
        if die:
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(sleep)

    @T.prim_func
    def main(A: T.Tensor((n,), T.float32), B: T.Tensor((n,), T.float32)):
        with T.Kernel(T.ceildiv(n, block), is_cpu=True) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i] * 2.0

    return main


def _interrupt() -> None:
    from tilelang.autotuner import AutoTuner

    got_signal: list[float] = []

    def on_sigint(signum, frame):
        got_signal.append(time.monotonic())
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)
    configs = [{"block": b, "sleep": 120.0, "child": True} for b in (8, 16, 32, 64, 128, 256)]
    tuner = AutoTuner(scale, configs, max_workers=2, progress=False, cache_results=False, warmup=1, rep=2)
    print("tuning", flush=True)
    try:
        tuner.run(n=N)
    except KeyboardInterrupt:
        print(f"stopped {time.monotonic() - got_signal[0]:.3f}", flush=True)
        raise SystemExit(130) from None
    raise SystemExit("the tuner finished although it was interrupted")


def _spawn() -> None:
    import multiprocessing

    import torch

    from tilelang.autotuner import AutoTuner

    multiprocessing.set_start_method("spawn")
    tuner = AutoTuner(scale, [{"block": 16}, {"block": 64}], max_workers=2, progress=False, cache_results=False,
                      warmup=1, rep=2, ref_prog=lambda a: a * 2)
    result = tuner.run(n=N)
    a = torch.randn(N)
    torch.testing.assert_close(result.kernel(a), a * 2)
    print("best", result.config, flush=True)


if __name__ == "__main__":
    {"interrupt": _interrupt, "spawn": _spawn}[sys.argv[1]]()
