"""`do_bench` on a GPU flushes the L2 before every measured run; on the CPU it never does.

No GPU here: ``torch.cuda`` is replaced by a simulated device whose clock advances by 1 ms for a run that starts
with a cold L2 and by 0.25 ms for a run that finds its inputs still cached. A flush (the flush buffer's
``zero_()``) costs 0.5 ms and makes the cache cold. A benchmark that flushes before every run it times therefore
reports exactly 1 ms; one that forgets reports less.
"""

from __future__ import annotations

import contextlib
from types import SimpleNamespace

import pytest
import torch

from tilelang.artifact import ParamInfo
from tilelang.profiler import Profiler, bench, do_bench

COLD_MS, WARM_MS, FLUSH_MS = 1.0, 0.25, 0.5


class SimulatedGPU:
    """A device clock, an L2 that is cold or warm, and a log of what ran in which order."""

    def __init__(self) -> None:
        self.clock = 0.0
        self.cold = True
        self.log: list[str] = []
        self.buffers: list[dict] = []
        self.devices_entered: list[int] = []

    def kernel(self) -> None:
        self.clock += COLD_MS if self.cold else WARM_MS
        self.cold = False
        self.log.append("run")

    def buffer(self, device=None, cache_size=bench.L2_FLUSH_MB, fast_flush=True):
        gpu = self
        self.buffers.append({"device": device, "cache_size": cache_size, "fast_flush": fast_flush})

        class FlushBuffer:
            def zero_(self):
                gpu.clock += FLUSH_MS
                gpu.cold = True
                gpu.log.append("flush")
                return self

        return FlushBuffer()

    def event_class(self):
        gpu = self

        class Event:
            def __init__(self, enable_timing: bool = False):
                assert enable_timing
                self.t: float | None = None

            def record(self, stream=None):
                self.t = gpu.clock
                gpu.log.append("record")

            def synchronize(self):
                pass

            def elapsed_time(self, end):
                return end.t - self.t

        return Event


@pytest.fixture
def gpu(monkeypatch):
    sim = SimulatedGPU()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "Event", sim.event_class())
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: None)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)

    @contextlib.contextmanager
    def device(index):
        sim.devices_entered.append(index)
        yield

    monkeypatch.setattr(torch.cuda, "device", device)
    monkeypatch.setattr(bench, "l2_flush_buffer", sim.buffer)
    return sim


def _timed_runs(log: list[str]) -> list[tuple[str, ...]]:
    """What happened between each pair of event records (the measured intervals), in order."""
    out, inside, current = [], False, []
    for entry in log:
        if entry == "record":
            if inside:
                out.append(tuple(current))
            inside, current = not inside, []
        elif inside:
            current.append(entry)
    return out


def test_every_measured_run_starts_with_a_cold_l2(gpu):
    ms = do_bench(gpu.kernel, n_warmup=3, n_repeat=10, device_type="cuda")
    assert ms == pytest.approx(COLD_MS)
    assert gpu.buffers == [{"device": None, "cache_size": 256, "fast_flush": True}]
    intervals = _timed_runs(gpu.log)
    # the estimate (5 flushed runs in one interval), then one interval per timed run with just the kernel
    assert intervals[0] == ("flush", "run") * 5
    assert intervals[1:] == [("run",)] * 10
    # ... and the flush right before each of those (outside the interval)
    last_ten = [i for i, e in enumerate(gpu.log) if e == "run"][-10:]
    assert all(gpu.log[i - 2: i] == ["flush", "record"] for i in last_ten)


def test_without_the_flush_the_warm_cache_would_win(gpu):
    """The simulation can tell: the same runs back to back (no flush) measure the warm time."""
    Event = torch.cuda.Event
    start, end = Event(enable_timing=True), Event(enable_timing=True)
    gpu.kernel()
    start.record()
    gpu.kernel()
    end.record()
    assert start.elapsed_time(end) == WARM_MS < COLD_MS


def test_budget_counts_and_return_modes_use_flushed_times(gpu):
    # estimate: (0.5 flush + 1 run) per call = 1.5 ms -> rep=15 gives 10 timed runs
    assert do_bench(gpu.kernel, warmup=3, rep=15, device_type="cuda", quantiles=[0.5, 0.9]) == [COLD_MS] * 2
    assert len(_timed_runs(gpu.log)) == 1 + 10


def test_cache_size_and_fast_flush_reach_the_buffer(gpu):
    do_bench(gpu.kernel, n_warmup=1, n_repeat=2, device_type="cuda", cache_size=64, fast_flush=False)
    assert gpu.buffers[-1] == {"device": None, "cache_size": 64, "fast_flush": False}


def test_device_selects_the_gpu_and_its_buffer(gpu):
    do_bench(gpu.kernel, n_warmup=1, n_repeat=2, device=1)
    assert gpu.devices_entered == [1]
    assert gpu.buffers[-1]["device"] == 1
    do_bench(gpu.kernel, n_warmup=1, n_repeat=2, device="cuda")
    assert gpu.buffers[-1]["device"] == 0  # the current device
    with pytest.raises(ValueError, match="must be a CUDA device"):
        do_bench(gpu.kernel, device="cpu")


def test_device_timer_samples_are_flushed_too(gpu):
    """A backend's device timer (one run per sample) gets a flush before each sample."""
    samples = []

    def timer():
        before = gpu.clock
        gpu.kernel()
        samples.append(gpu.clock - before)
        return samples[-1]

    assert do_bench(gpu.kernel, n_warmup=2, n_repeat=6, device_type="cuda", timer=timer) == COLD_MS
    assert samples == [COLD_MS] * 7  # the estimate and the six samples


def test_early_stop_returns_the_estimate_without_timing(gpu):
    assert do_bench(gpu.kernel, n_repeat=50, device_type="cuda", early_stop_baseline=1.0) == pytest.approx(1.5)
    assert len(_timed_runs(gpu.log)) == 1
    assert do_bench(gpu.kernel, device_type="cuda", quantiles=[0.2, 0.8], early_stop_baseline=0.1) == \
        [pytest.approx(1.5)] * 2


def test_cpu_timing_never_flushes(gpu, monkeypatch):
    def no_buffer(*args, **kwargs):
        raise AssertionError("CPU timing allocated an L2 flush buffer")

    monkeypatch.setattr(bench, "l2_flush_buffer", no_buffer)
    calls = []
    assert do_bench(lambda: calls.append(1), n_warmup=1, n_repeat=4, device_type="cpu") >= 0
    assert calls and "flush" not in gpu.log and "record" not in gpu.log


def test_no_gpu_means_host_timing_even_for_cuda_tensors(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(bench, "l2_flush_buffer", lambda *a, **k: pytest.fail("flushed without a GPU"))
    assert do_bench(lambda: None, n_warmup=1, n_repeat=3) >= 0  # device_type defaults to "cpu"
    # a CUDA timing backend on CPU work is timed with the wall clock (a CUDA example moved to the CPU); CUDA work
    # without a GPU still fails, naming what is missing
    assert do_bench(lambda: None, backend="cudagraph", device_type="cpu", n_warmup=1, n_repeat=2) >= 0
    with pytest.raises(RuntimeError, match="needs a CUDA or ROCm GPU"):
        do_bench(lambda: None, backend="cudagraph", device_type="cuda")


def test_bad_backend_is_named():
    with pytest.raises(ValueError, match="Unknown profiler backend: 'nvprof'"):
        do_bench(lambda: None, backend="nvprof")


def test_flush_buffer_sizes():
    assert bench.L2_FLUSH_BYTES == 256 * 1024 * 1024
    buf = bench.l2_flush_buffer("cpu", cache_size=1)
    assert buf.dtype == torch.int32 and buf.numel() * buf.element_size() == 1 << 20
    buf = bench.l2_flush_buffer("cpu", cache_size=2, fast_flush=False)
    assert buf.dtype == torch.int8 and buf.numel() == 2 << 20
    with pytest.raises(ValueError, match="cache_size"):
        bench.l2_flush_buffer("cpu", cache_size=0)


class _Kernel:
    def __init__(self, device_type, run, params=(), out_idx=()):
        self.backend = SimpleNamespace(torch_device_type=device_type)
        self.params, self.out_idx, self._run = list(params), list(out_idx), run
        self.calls: list[list[tuple[int, ...]]] = []

    def device_timer(self):
        return None

    def __call__(self, *args):
        self.calls.append([tuple(a.shape) for a in args])
        return self._run()


def test_profiler_do_bench_flushes_for_gpu_backends(gpu):
    """CUDA and ROCm backends both declare ``torch_device_type = "cuda"`` (ROCm builds of torch say "cuda")."""
    kernel = _Kernel("cuda", gpu.kernel)
    assert Profiler(kernel).do_bench(n_warmup=2, n_repeat=5) == pytest.approx(COLD_MS)
    assert len(gpu.buffers) == 1 and _timed_runs(gpu.log)[1:] == [("run",)] * 5


def test_profiler_do_bench_cpu_backend_does_not_flush(gpu):
    calls = []
    kernel = _Kernel("cpu", lambda: calls.append(1))
    assert Profiler(kernel).do_bench(n_warmup=1, n_repeat=3) >= 0
    assert calls and not gpu.buffers


def test_profiler_dynamic_symbolic_constraints():
    params = [ParamInfo("A", "float32", ("m", 4)), ParamInfo("B", "float32", ("m", 4))]
    kernel = _Kernel("cpu", lambda: None, params=params, out_idx=[1])
    profiler = Profiler(kernel)
    profiler.do_bench(n_warmup=1, n_repeat=1, dynamic_symbolic_constraints={"m": 8})
    assert kernel.calls and all(c == [(8, 4)] for c in kernel.calls)
    with pytest.raises(ValueError, match="'m'"):
        profiler.do_bench(dynamic_symbolic_constraints={"wrong_name": 256})
