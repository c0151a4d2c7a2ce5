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

__all__ = ["do_bench", "suppress_stdout_stderr", "l2_flush_buffer"]

L2_FLUSH_BYTES = 256 * 1024 * 1024  # larger than any GPU's L2: zeroing it evicts the kernel's inputs

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
        times = _cuda_event_times(fn, l2_flush_buffer(), repeats)
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


# ---------------------------------------------------------------------------------------------- GPU timing
def l2_flush_buffer(device: Any = None) -> Any:
    """A 256 MB int8 buffer on the CUDA device; ``buffer.zero_()`` before a timed run leaves the L2 cold."""
    import torch

    return torch.empty(L2_FLUSH_BYTES, dtype=torch.int8, device=device if device is not None else "cuda")


def _cuda_event_times(fn: Callable[[], Any], cache: Any, n_repeat: int) -> list[float]:
    import torch

    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    for start, end in zip(starts, ends):
        cache.zero_()  # flush L2 so every run reads its inputs from DRAM, as in a real workload
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends)]


def _require_cuda(what: str) -> None:
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError(f"{what} needs an NVIDIA GPU visible to torch (torch.cuda.is_available() is False)")


def _bench_with_cuda_events(fn: Callable[[], Any], cache: Any, n_repeat: int, quantiles: list[float] | None,
                            return_mode: str, device_idx: int | None = None) -> Any:
    """CUDA-event timing of `n_repeat` runs, each after an L2 flush (``cache.zero_()``)."""
    _require_cuda("_bench_with_cuda_events")
    return _summarise(_cuda_event_times(fn, cache, n_repeat), quantiles, return_mode)


def _bench_with_cupti(fn: Callable[[], Any], cache: Any, n_repeat: int) -> float:
    """Kernel time from the CUDA activity trace (torch.profiler / CUPTI), the L2 flushes left out; ms per run."""
    _require_cuda("_bench_with_cupti")
    import torch

    flush = "tilelang::l2_flush"
    with suppress_stdout_stderr(), torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(n_repeat):
            with torch.profiler.record_function(flush):
                cache.zero_()
            fn()
        torch.cuda.synchronize()
    total = excluded = 0.0
    for event in prof.events():
        if getattr(getattr(event, "device_type", None), "name", "") != "CUDA":
            continue
        if not event.is_user_annotation:
            total += event.self_device_time_total
        elif event.key == flush:
            excluded += event.self_device_time_total
    return (total - excluded) / n_repeat * 1e-3


def _bench_with_cudagraph(fn: Callable[[], Any], cache: Any, n_repeat: int, quantiles: list[float] | None,
                          return_mode: str, device_idx: int | None = None) -> Any:
    """Time `fn` replayed from a captured CUDA graph (launch overhead removed); ms per run."""
    _require_cuda("_bench_with_cudagraph")
    import torch

    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        fn()  # warm up outside the capture (allocations, lazy module loads)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(n_repeat):
                fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(5):
            cache.zero_()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            graph.replay()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / n_repeat)
    return _summarise(times, quantiles, return_mode)


class suppress_stdout_stderr:
    """Silence file descriptors 1 and 2 (C-level output too) inside the block."""

    def __enter__(self) -> suppress_stdout_stderr:
        import os
        import sys

        sys.stdout.flush()
        sys.stderr.flush()
        self._null = os.open(os.devnull, os.O_WRONLY)
        self._saved = (os.dup(1), os.dup(2))
        os.dup2(self._null, 1)
        os.dup2(self._null, 2)
        return self

    def __exit__(self, *exc: object) -> None:
        import os

        os.dup2(self._saved[0], 1)
        os.dup2(self._saved[1], 2)
        for fd in (*self._saved, self._null):
            os.close(fd)
