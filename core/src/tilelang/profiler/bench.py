"""`do_bench`: time a callable on the device its tensors live on.

CPU: wall clock (``time.perf_counter``) around batches of calls. A backend with a device timer
(`ExecutionBackend.device_timer`, e.g. WebGPU timestamp queries): its samples. CUDA/ROCm (torch ``cuda``
device): device events. Other devices: wall clock after the backend's (or torch's) synchronize. Returns ms.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

__all__ = ["do_bench"]

_MODES: dict[str, Callable[[list[float]], float]] = {"mean": statistics.fmean, "median": statistics.median,
                                                      "min": min, "max": max}
_MAX_TIMED = 1000  # device-timed samples per figure at most (each one synchronises)


def _sync(device_type: str) -> Callable[[], None]:
    import torch

    module = getattr(torch, device_type, None)
    sync = getattr(module, "synchronize", None)
    return sync if device_type != "cpu" and callable(sync) else (lambda: None)


def _estimate(fn: Callable[[], Any], sync: Callable[[], None], budget_ms: float) -> float:
    """Milliseconds per call, measured over at least one call and about `budget_ms`."""
    sync()
    start = time.perf_counter()
    calls = 0
    while True:
        fn()
        calls += 1
        elapsed = (time.perf_counter() - start) * 1e3
        if elapsed >= budget_ms or calls >= 1000:
            break
    sync()
    return max((time.perf_counter() - start) * 1e3 / calls, 1e-6)


def do_bench(fn: Callable[[], Any], warmup: float = 25, rep: float = 100, *, device_type: str = "cpu",
             n_warmup: int = 0, n_repeat: int = 0, quantiles: list[float] | None = None,
             return_mode: str = "mean", timer: Callable[[], float] | None = None) -> Any:
    """Benchmark `fn` (no arguments): `warmup` / `rep` are time budgets in ms (or fixed counts via `n_warmup` /
    `n_repeat`). Returns the mean (``return_mode`` "mean", "median", "min", "max") or the `quantiles`, in ms.

    `timer`, when given, is a device timer: each call runs `fn`'s work once and returns its device time in ms
    (an execution backend's `device_timer`); the samples are its results instead of wall-clock time."""
    import torch

    if return_mode not in _MODES:
        raise ValueError(f"return_mode must be one of {sorted(_MODES)}, got {return_mode!r}")
    sync = _sync(device_type)
    if timer is not None:
        fn()  # first through `fn` (the kernel's argument checks), then the timer on the same arguments
        per_call = max(float(timer()), 1e-6)
        warmups = n_warmup or max(1, min(int(warmup / per_call), _MAX_TIMED))
        repeats = n_repeat or max(1, min(int(rep / per_call), _MAX_TIMED))
        for _ in range(warmups):
            fn()
        return _summarise([float(timer()) for _ in range(repeats)], quantiles, return_mode)
    per_call = _estimate(fn, sync, 5.0)
    warmups = n_warmup or max(1, int(warmup / per_call))
    repeats = n_repeat or max(1, int(rep / per_call))
    for _ in range(warmups):
        fn()
    sync()
    times: list[float] = []
    if device_type == "cuda" and torch.cuda.is_available():
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
        for s, e in zip(starts, ends):
            s.record()
            fn()
            e.record()
        torch.cuda.synchronize()
        times = [s.elapsed_time(e) for s, e in zip(starts, ends)]
    else:
        # batches keep the timer's own cost out of sub-microsecond kernels
        batch = max(1, min(repeats, int(0.2 / per_call)))
        done = 0
        while done < repeats:
            n = min(batch, repeats - done)
            start = time.perf_counter()
            for _ in range(n):
                fn()
            sync()
            times.append((time.perf_counter() - start) * 1e3 / n)
            done += n
    return _summarise(times, quantiles, return_mode)


def _summarise(times: list[float], quantiles: list[float] | None, return_mode: str) -> Any:
    if quantiles is not None:
        ordered = sorted(times)
        picked = [ordered[min(len(ordered) - 1, int(q * len(ordered)))] for q in quantiles]
        return picked[0] if len(picked) == 1 else picked
    return _MODES[return_mode](times)
