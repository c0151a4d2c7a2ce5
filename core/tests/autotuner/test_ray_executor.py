"""`RayExecutor` on a local Ray cluster started here: compiles on Ray tasks, benchmarks on the device actor, the
same best configuration as a local run, and every candidate gathered into the caller's kernel cache."""

from __future__ import annotations

import autotune_kernels as K
import pytest

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.backend("cpu")


@pytest.fixture(scope="module")
def worker_cache(tmp_path_factory):
    """A 2-CPU Ray cluster whose workers write to a kernel cache of their own (as on another host)."""
    cache = tmp_path_factory.mktemp("ray-worker-cache")
    from tilelang.autotuner.ray_executor import ray_temp_dir

    temp_dir = ray_temp_dir()  # nox points TMPDIR into the venv, where Ray's workers refuse to start
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"TILELANG_CACHE_DIR": str(cache)}},
             **({"_temp_dir": temp_dir} if temp_dir else {}))
    yield cache
    ray.shutdown()


def counting_ray_executor():
    """A `RayExecutor` that records the benchmarks it is handed (the tuner must not time them itself)."""
    from tilelang.autotuner import RayExecutor

    class Counting(RayExecutor):
        def submit_benchmark(self, fn, /, *args, target):
            self.benchmarks.append(target)
            return super().submit_benchmark(fn, *args, target=target)

    executor = Counting()
    executor.benchmarks = []
    return executor


def _tuned_keys(result) -> list[str]:
    """The program keys of every candidate the run compiled (the kernels it gathered)."""
    from tilelang.cache.manager import kernel_cache

    keys = [key for (key, _, _), _ in kernel_cache._memory.items()]
    assert result.kernel.cache_key in keys
    return keys


def test_ray_tunes_the_same_best_as_local(worker_cache, tmp_path, monkeypatch):
    from tilelang.cache.manager import kernel_cache

    local = K.tune_locally_then_forget(tmp_path, monkeypatch)
    executor = counting_ray_executor()
    try:
        remote = K.tune(executor)
        keys = _tuned_keys(remote)
        assert len(executor.benchmarks) == len(K.CONFIGS)  # every candidate timed on the cluster
        assert all(t["kind"] in ("llvm", "cpu") for t in executor.benchmarks), executor.benchmarks
        assert len(executor._actors["CPU"]) == 1  # one device actor: the node's CPU
    finally:
        executor.shutdown()
    assert ray.is_initialized()  # the caller's Ray is left running
    K.check_result(remote)
    assert remote.config == local.config
    assert remote.kernel.get_kernel_source() == local.kernel.get_kernel_source()

    # compiled on the workers (their own cache), gathered into the caller's: calling the factory with any tuned
    # configuration loads from disk instead of compiling
    assert any(worker_cache.rglob("artifact.json"))
    kernel_cache.clear(disk=False)
    assert all(kernel_cache.load_artifact(k) is not None for k in keys), keys
    K.gemm.clear_kernels()
    for config in K.CONFIGS:
        kernel = K.gemm(K.SIZE, K.SIZE, K.SIZE, **config)
        assert kernel.from_cache, config


def test_ray_executor_runs_plain_tasks(worker_cache):
    from tilelang.autotuner import RayExecutor

    executor = RayExecutor(num_cpus=1)
    try:
        assert [f.result(timeout=60) for f in [executor.submit(pow, 2, n) for n in range(4)]] == [1, 2, 4, 8]
        with pytest.raises(ValueError, match="already initialised"):
            RayExecutor(address="auto")
    finally:
        executor.shutdown()
    with pytest.raises(RuntimeError, match="after shutdown"):
        executor.submit(pow, 2, 2)
