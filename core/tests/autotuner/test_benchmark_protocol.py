"""The tuner's remote-benchmark protocol (``submit_benchmark``) with an in-process executor, and the clear errors
when Ray or Dask is not installed."""

from __future__ import annotations

import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import autotune_kernels as K
import pytest
import torch

pytestmark = pytest.mark.backend("cpu")


class ThreadBenchExecutor(ThreadPoolExecutor):
    """Compiles on threads; benchmarks one at a time under a lock, like a device worker."""

    def __init__(self):
        super().__init__(max_workers=2)
        self.device = threading.Lock()
        self.targets: list[dict] = []

    def submit_benchmark(self, fn, /, *args, target):
        self.targets.append(target)

        def locked():
            with self.device:
                return fn(*args)

        return self.submit(locked)


def test_executor_that_benchmarks_is_used_for_benchmarks(tmp_path, monkeypatch):
    from tilelang.autotuner.benchmark import BenchmarkExecutor, supports_benchmark

    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))
    with ThreadBenchExecutor() as executor:
        assert supports_benchmark(executor) and isinstance(executor, BenchmarkExecutor)
        result = K.tune(executor)
    assert len(executor.targets) == len(K.CONFIGS)
    K.check_result(result)
    assert not supports_benchmark(ThreadPoolExecutor(1)) and not supports_benchmark(None)


def test_benchmark_task_reports_a_wrong_kernel(tmp_path, monkeypatch):
    """A candidate that disagrees with ref_prog is disqualified on the worker, with the reason."""
    from tilelang.autotuner import executors
    from tilelang.autotuner.benchmark import BenchmarkTask, benchmark_task
    from tilelang.autotuner.param import ProfileArgs

    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))
    target = K.gemm.options.resolved_target()
    task = executors.CompileTask(0, executors.pack_job(K.gemm, target), (K.SIZE, K.SIZE, K.SIZE), {"block_M": 32})
    compiled = executors.compile_task(task)
    wrong = ProfileArgs(warmup=1, rep=2, ref_prog=lambda a, b: a @ b + 1)
    out = benchmark_task(BenchmarkTask(compiled, BenchmarkTask.pack_profile(wrong, None), time_ref=True))
    assert out["latency"] is None and "AssertionError" in out["error"] and out["ref_latency"] > 0
    right = ProfileArgs(warmup=1, rep=2, ref_prog=K.reference)
    out = benchmark_task(BenchmarkTask(compiled, BenchmarkTask.pack_profile(right, None)))
    assert out["error"] is None and out["latency"] > 0 and out["ref_latency"] is None


def test_missing_ray_and_dask_name_the_extra(monkeypatch):
    from tilelang.autotuner import dask_executor, ray_executor

    monkeypatch.setitem(sys.modules, "ray", None)
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ImportError, match=r'pip install "tilelang-core\[ray\]"'):
        ray_executor.RayExecutor()
    with pytest.raises(ImportError, match=r'pip install "tilelang-core\[dask\]"'):
        dask_executor.DaskExecutor()


def test_import_tilelang_does_not_import_ray_or_dask():
    import subprocess

    code = ("import sys, tilelang, tilelang.autotuner as a; a.RayExecutor; a.DaskExecutor; "
            "print(any(m in sys.modules for m in ('ray', 'distributed', 'dask')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_device_kind():
    from tilelang.autotuner.ray_executor import device_kind

    assert device_kind({"kind": "cuda", "arch": "sm_90a"}) == "GPU" and device_kind({"kind": "hip"}) == "GPU"
    assert device_kind({"kind": "llvm"}) == "CPU" and device_kind({"kind": "c"}) == "CPU"


def test_uninstalled_modules_are_pickled_by_value(tmp_path, monkeypatch):
    """A function of a module no installed distribution provides reaches a worker that cannot import it; one
    whose module globals cannot be pickled falls back to by-reference pickling."""
    import cloudpickle

    from tilelang.autotuner.executors import dumps_by_value

    (tmp_path / "scratch_factories.py").write_text(
        "import threading\nLOCK = threading.Lock()\nSCALE = 3\n"
        "def scaled(x):\n    return x * SCALE\n"
        "def locked():\n    return LOCK\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import scratch_factories

    by_value = dumps_by_value(scratch_factories.scaled, scratch_factories.scaled)
    by_reference = dumps_by_value(scratch_factories.locked, scratch_factories.locked)
    monkeypatch.delitem(sys.modules, "scratch_factories")
    monkeypatch.syspath_prepend(str(tmp_path / "elsewhere"))
    sys.path.remove(str(tmp_path))
    assert cloudpickle.loads(by_value)(2) == 6  # the module is gone: only a by-value payload loads
    with pytest.raises(ModuleNotFoundError):
        cloudpickle.loads(by_reference)


def test_tuned_configurations_are_recorded_for_the_factory(tmp_path, monkeypatch, caplog):
    """After tuning, calling the ``@tilelang.jit`` factory with a tuned configuration finds the kernel by its source
    key (the record the tuner wrote): nothing is compiled again."""
    from tilelang.autotuner import SerialExecutor
    from tilelang.cache.manager import kernel_cache

    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))
    kernel_cache.clear(disk=False)
    K.gemm.clear_kernels()
    with caplog.at_level("WARNING", logger="tilelang.autotuner"):
        check_result_config = K.tune(SerialExecutor()).config
    assert "not stored in this process's cache" not in caplog.text, caplog.text
    assert check_result_config == K.BEST
    K.gemm.clear_kernels()
    kernel_cache.clear(disk=False)  # what is left is on disk: the tuner's records and artifacts
    from tilelang.jit import decorator

    monkeypatch.setattr(decorator, "compile_with", lambda *a, **kw: pytest.fail("the factory's kernel was compiled"))
    kernel = K.gemm(K.SIZE, K.SIZE, K.SIZE, **K.BEST)
    a, b = torch.randn(K.SIZE, K.SIZE), torch.randn(K.SIZE, K.SIZE)
    torch.testing.assert_close(kernel(a, b), a @ b, rtol=1e-4, atol=1e-4)
