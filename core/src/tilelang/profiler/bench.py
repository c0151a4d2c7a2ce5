"""`do_bench`: time a callable on the device its tensors live on.

CPU: wall clock (``time.perf_counter``) around batches of calls. A backend with a device timer
(`ExecutionBackend.device_timer`, e.g. WebGPU timestamp queries): its samples. CUDA/ROCm (torch ``cuda``
device, when ``torch.cuda`` sees a GPU): device events, ``backend="cupti"`` the CUDA activity trace, or
``backend="cudagraph"`` graph replays. Other devices: wall clock after the backend's (or torch's) synchronize.
Returns milliseconds.

On a GPU every timed run starts with a cold L2: a ``cache_size`` MB buffer (256 MB, larger than any GPU's L2)
is zeroed before it, so a kernel cannot look faster because the previous run left its inputs in cache (an
autotuner would otherwise favour configurations whose working set happens to stay resident). The flush is
outside the timed interval. CPU timing does no flush.
"""

from __future__ import annotations

import logging
import statistics
import time
from collections.abc import Callable
from typing import Any

__all__ = ["do_bench", "suppress_stdout_stderr", "l2_flush_buffer", "gpu_available"]

logger = logging.getLogger("tilelang.profiler")

L2_FLUSH_MB = 256  # larger than any GPU's L2: zeroing it evicts the kernel's inputs
L2_FLUSH_BYTES = L2_FLUSH_MB * 1024 * 1024
BACKENDS = ("event", "cupti", "cudagraph")

_MODES: dict[str, Callable[[list[float]], float]] = {"mean": statistics.fmean, "median": statistics.median,
                                                      "min": min, "max": max}
_MAX_TIMED = 1000  # device-timed samples per figure at most (each one synchronises)
_ESTIMATE_RUNS = 5  # GPU runs (each after a flush) that estimate the time per call


def gpu_available() -> bool:
    """Whether torch sees a CUDA or ROCm GPU (ROCm builds of torch call it ``cuda`` too)."""
    import torch

    try:
        return bool(torch.cuda.is_available())
    except Exception:  # a torch without CUDA support, or a broken driver
        return False


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


def _cuda_device_index(device: Any) -> int | None:
    """`device` (None, an index, ``"cuda:1"``, a torch.device) as a CUDA device index; None keeps the current one."""
    if device is None:
        return None
    if isinstance(device, bool) or (not isinstance(device, (int, str)) and not hasattr(device, "type")):
        raise TypeError(f"do_bench device must be None, a CUDA device index or a CUDA torch.device, got {device!r}")
    if isinstance(device, int):
        return device
    import torch

    dev = torch.device(device)
    if dev.type != "cuda":
        raise ValueError(f"do_bench device must be a CUDA device, got {dev}")
    return dev.index if dev.index is not None else torch.cuda.current_device()


def do_bench(fn: Callable[[], Any], warmup: float = 25, rep: float = 100, _n_warmup: int = 0, _n_repeat: int = 0,
             quantiles: list[float] | None = None, fast_flush: bool = True, backend: str = "event",
             return_mode: str = "mean", device: Any = None, cache_size: int = L2_FLUSH_MB,
             early_stop_baseline: float | None = None, *, device_type: str | None = None, n_warmup: int = 0,
             n_repeat: int = 0, timer: Callable[[], float] | None = None) -> Any:
    """Benchmark `fn` (no arguments); milliseconds per call.

    :param warmup: time budget of the warm-up runs, in ms.
    :param rep: time budget of the timed runs, in ms.
    :param _n_warmup: the reference's spelling of `n_warmup`.
    :param _n_repeat: the reference's spelling of `n_repeat`.
    :param quantiles: return these quantiles of the samples instead of one figure.
    :param fast_flush: zero the L2 flush buffer as int32 (else int8).
    :param backend: GPU timing: ``"event"`` (device events), ``"cupti"`` (activity trace) or ``"cudagraph"``;
        work on another device (the CPU) is timed as with ``"event"`` there, with a warning.
    :param return_mode: ``"mean"``, ``"median"``, ``"min"`` or ``"max"`` of the samples.
    :param device: the CUDA device to time on (an index or ``"cuda:N"``); the current one when None.
    :param cache_size: size of the L2 flush buffer in MB.
    :param early_stop_baseline: on a GPU, when the first estimate is already slower than this many ms, return
        the estimate without the full measurement (an autotuner's best so far).
    :param device_type: the torch device type `fn`'s tensors live on (``"cpu"``, ``"cuda"``, ...); default
        ``"cuda"`` when a GPU is visible (or `device` is given), else ``"cpu"``.
    :param n_warmup: a fixed number of warm-up runs instead of the `warmup` budget.
    :param n_repeat: a fixed number of timed runs instead of the `rep` budget.
    :param timer: a device timer: each call runs `fn`'s work once and returns its device time in ms (an
        execution backend's `device_timer`); the samples are its results instead of wall-clock time.
    """
    if return_mode not in _MODES:
        raise ValueError(f"return_mode must be one of {sorted(_MODES)}, got {return_mode!r}")
    if backend not in BACKENDS:
        raise ValueError(f"Unknown profiler backend: {backend!r}; use one of {', '.join(BACKENDS)}")
    n_warmup = n_warmup or _n_warmup
    n_repeat = n_repeat or _n_repeat
    if device_type is None:
        device_type = "cuda" if device is not None or gpu_available() else "cpu"
    on_gpu = device_type == "cuda" and gpu_available()
    if backend != "event" and not on_gpu:
        if device_type == "cuda":
            _require_cuda(f'do_bench(backend="{backend}")')
        _warn_host_timing(backend, device_type)
    if not on_gpu:
        return _bench_host(fn, warmup, rep, device_type, n_warmup, n_repeat, quantiles, return_mode, timer)
    device_idx = _cuda_device_index(device)
    args = (fn, warmup, rep, n_warmup, n_repeat, quantiles, fast_flush, backend, return_mode, device_idx,
            cache_size, early_stop_baseline, timer)
    if device_idx is None:
        return _bench_gpu(*args)
    import torch

    with torch.cuda.device(device_idx):
        return _bench_gpu(*args)


def _bench_host(fn: Callable[[], Any], warmup: float, rep: float, device_type: str, n_warmup: int, n_repeat: int,
                quantiles: list[float] | None, return_mode: str, timer: Callable[[], float] | None) -> Any:
    """Wall-clock (or device-timer) samples; no cache flush."""
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


def _bench_gpu(fn: Callable[[], Any], warmup: float, rep: float, n_warmup: int, n_repeat: int,
               quantiles: list[float] | None, fast_flush: bool, backend: str, return_mode: str,
               device_idx: int | None, cache_size: int, early_stop_baseline: float | None,
               timer: Callable[[], float] | None) -> Any:
    """CUDA/ROCm timing: every measured run (the estimate's too) after an L2 flush."""
    import torch

    fn()
    _cuda_sync(device_idx)
    cache = l2_flush_buffer(device_idx, cache_size=cache_size, fast_flush=fast_flush)
    if timer is not None:
        estimate = max(_flushed_timer_sample(timer, cache), 1e-6)
    else:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(_ESTIMATE_RUNS):
            cache.zero_()
            fn()
        end.record()
        end.synchronize()
        estimate = max(start.elapsed_time(end) / _ESTIMATE_RUNS, 1e-6)
    if early_stop_baseline is not None and estimate > early_stop_baseline:
        logger.debug("do_bench: estimate %.3f ms is above the baseline %.3f ms; skipping the full measurement",
                     estimate, early_stop_baseline)
        return [estimate] * len(quantiles) if quantiles is not None else estimate
    cap = _MAX_TIMED if timer is not None else None
    warmups = n_warmup or _count(warmup, estimate, cap)
    repeats = n_repeat or _count(rep, estimate, cap)
    for _ in range(warmups):
        fn()
    if timer is not None:
        samples = [_flushed_timer_sample(timer, cache) for _ in range(repeats)]
        return _summarise(samples, quantiles, return_mode)
    if backend == "cupti":
        return _bench_with_cupti(fn, cache, repeats)
    if backend == "cudagraph":
        return _bench_with_cudagraph(fn, cache, repeats, quantiles, return_mode, device_idx)
    return _summarise(_cuda_event_times(fn, cache, repeats, device_idx), quantiles, return_mode)


def _count(budget_ms: float, per_call_ms: float, cap: int | None) -> int:
    n = max(1, int(budget_ms / per_call_ms))
    return min(n, cap) if cap is not None else n


def _flushed_timer_sample(timer: Callable[[], float], cache: Any) -> float:
    cache.zero_()
    return float(timer())


def _cuda_sync(device_idx: int | None = None) -> None:
    import torch

    if device_idx is None:
        torch.cuda.synchronize()
    else:
        torch.cuda.synchronize(device_idx)


def _summarise(times: list[float], quantiles: list[float] | None, return_mode: str) -> Any:
    if quantiles is not None:
        ordered = sorted(times)
        picked = [ordered[min(len(ordered) - 1, int(q * len(ordered)))] for q in quantiles]
        return picked[0] if len(picked) == 1 else picked
    return _MODES[return_mode](times)


# ---------------------------------------------------------------------------------------------- GPU timing
def l2_flush_buffer(device: Any = None, cache_size: int = L2_FLUSH_MB, fast_flush: bool = True) -> Any:
    """A `cache_size` MB buffer on the CUDA/ROCm device (`device`: an index, a torch device, or None for the
    current one); ``buffer.zero_()`` before a timed run leaves the L2 cold. int32 elements with `fast_flush`
    (fewer, wider stores), else int8."""
    import torch

    if cache_size <= 0:
        raise ValueError(f"cache_size must be a positive number of MB, got {cache_size!r}")
    nbytes = int(cache_size) * 1024 * 1024
    if device is None:
        device = "cuda"
    elif isinstance(device, int):
        device = torch.device("cuda", device)
    if fast_flush:
        return torch.empty(nbytes // 4, dtype=torch.int32, device=device)
    return torch.empty(nbytes, dtype=torch.int8, device=device)


def _cuda_event_times(fn: Callable[[], Any], cache: Any, n_repeat: int, device_idx: int | None = None) -> list[float]:
    import torch

    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    for start, end in zip(starts, ends):
        cache.zero_()  # flush L2 so every run reads its inputs from DRAM, as in a real workload
        start.record()
        fn()
        end.record()
    _cuda_sync(device_idx)
    return [s.elapsed_time(e) for s, e in zip(starts, ends)]


_WARNED: set[tuple[str, str]] = set()


def _warn_host_timing(backend: str, device_type: str) -> None:
    """``backend="cupti"`` / ``"cudagraph"`` name CUDA timing mechanisms; work on another device (a CPU kernel, a
    program written for CUDA moved to the CPU) is timed as ``"event"`` times it there, said once per process."""
    if (backend, device_type) not in _WARNED:
        _WARNED.add((backend, device_type))
        logger.warning('do_bench(backend="%s") times CUDA work; the work here runs on %s and is timed with the '
                       "wall clock instead", backend, device_type)


def _require_cuda(what: str) -> None:
    if not gpu_available():
        raise RuntimeError(f"{what} needs a CUDA or ROCm GPU visible to torch (torch.cuda.is_available() is False)")


def _bench_with_cuda_events(fn: Callable[[], Any], cache: Any, n_repeat: int, quantiles: list[float] | None,
                            return_mode: str, device_idx: int | None = None) -> Any:
    """CUDA-event timing of `n_repeat` runs, each after an L2 flush (``cache.zero_()``)."""
    _require_cuda("_bench_with_cuda_events")
    return _summarise(_cuda_event_times(fn, cache, n_repeat, device_idx), quantiles, return_mode)


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

    stream = torch.cuda.Stream(device=device_idx) if device_idx is not None else torch.cuda.Stream()
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
            _cuda_sync(device_idx)
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
