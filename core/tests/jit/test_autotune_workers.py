"""Autotuning workers get the job by value: spawn, fork and threads compile exactly the same kernels."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import pytest
import torch

import tilelang
import tilelang.language as T
from tilelang.autotuner import AutoTuner

pytestmark = pytest.mark.backend("c")


def _make_factory(scale: float):
    """A closure (not importable by name): only a by-value payload can reach a spawned worker."""

    @tilelang.jit(out_idx=-1, target="c", pass_configs={"tl.disable_vectorize": True})
    def scaled(n: int = 64, block: int = 16):
        @T.prim_func
        def main(A: T.Tensor((n,), T.float32), B: T.Tensor((n,), T.float32)):
            with T.Kernel(T.ceildiv(n, block), threads=block) as bx:
                for i in T.Parallel(block):
                    B[bx * block + i] = A[bx * block + i] * scale

        return main

    return scaled


def _tune(executor):
    factory = _make_factory(3.0)
    tuner = AutoTuner(factory, [{"block": 16}, {"block": 32}], executor=executor, progress=False, warmup=1, rep=2,
                      cache_results=False, ref_prog=lambda a: a * 3.0)
    return tuner, tuner.run(n=64)


def test_spawned_workers_compile_what_forked_ones_do(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))
    results = {}
    for name in ("fork", "spawn"):
        with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context(name)) as pool:
            results[name] = _tune(pool)[1]
    with ThreadPoolExecutor(max_workers=2) as pool:
        results["threads"] = _tune(pool)[1]
    for name, result in results.items():
        kernel = result.kernel
        assert kernel.target["kind"] == "c", name  # not re-resolved to "auto" -> cpu on the worker
        assert "tl.disable_vectorize" in kernel.pass_configs, name
        x = torch.randn(64)
        torch.testing.assert_close(kernel(x), x * 3.0)
        # the winner is whichever timed faster; whatever it is, it is exactly what this process compiles for it
        local = _make_factory(3.0)(n=64, **result.config)
        assert kernel.get_kernel_source() == local.get_kernel_source(), name


def test_payload_round_trip_resolves_target_once():
    from tilelang.autotuner import executors

    factory = _make_factory(2.0)
    payload = executors.pack_job(factory, {"kind": "c"})
    job = executors.unpack_job(payload)
    assert job.options.target == {"kind": "c"} and job.mode == "lazy"
    assert job.options.pass_configs == {"tl.disable_vectorize": True}


def test_the_compile_bar_moves_with_each_compile_on_one_worker(monkeypatch):
    """With one worker (compiles run when submitted) the bar advances after each compile, not after all of them."""
    import tqdm.auto

    from tilelang.autotuner import executors

    events: list[str] = []
    compile_task = executors.compile_task

    def recorded_compile(task):
        events.append("compile")
        return compile_task(task)

    class RecordingBar:
        def __init__(self, *args, **kwargs):
            self.desc = kwargs.get("desc", "")

        def update(self, n=1):
            if self.desc == "autotune: compiling":
                events.append("bar")

        def close(self):
            pass

        def __iter__(self):  # the benchmarking bar wraps an iterable
            return iter(self._items)

    def make_bar(iterable=None, *args, **kwargs):
        bar = RecordingBar(*args, **kwargs)
        bar._items = list(iterable) if iterable is not None else []
        return bar

    monkeypatch.setattr(executors, "compile_task", recorded_compile)
    monkeypatch.setattr(tqdm.auto, "tqdm", make_bar)
    factory = _make_factory(2.0)
    configs = [{"block": 8}, {"block": 16}, {"block": 32}]
    result = AutoTuner(factory, configs, max_workers=1, progress=True, warmup=1, rep=2, cache_results=False,
                       ref_prog=lambda a: a * 2.0).run(n=64)
    assert result.config in configs
    assert events == ["compile", "bar"] * 3  # before: compile, compile, compile, bar, bar, bar


def test_completed_lazily_keeps_the_window_in_flight():
    from tilelang.autotuner.executors import completed_lazily

    with ThreadPoolExecutor(2) as pool:
        seen = sorted(i for i, future in completed_lazily(pool, lambda x: x * x, list(range(7)), window=3)
                      if future.result() == i * i)
    assert seen == list(range(7))
