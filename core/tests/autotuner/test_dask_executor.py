"""Dask: a ``distributed.Client`` (adapted by the tuner) and `DaskExecutor` on a ``LocalCluster`` of two worker
processes: compiles and benchmarks on the workers, the same best configuration as a local run."""

from __future__ import annotations

import autotune_kernels as K
import pytest

distributed = pytest.importorskip("distributed")

pytestmark = pytest.mark.backend("cpu")


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    """Two worker processes whose kernel cache is their own (as on another host)."""
    worker_cache = tmp_path_factory.mktemp("dask-worker-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TILELANG_CACHE_DIR", str(worker_cache))  # inherited by the spawned workers only
        cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None)
    with cluster, distributed.Client(cluster) as client:
        client.worker_cache = worker_cache
        yield client


def test_client_as_executor_tunes_the_same_best_as_local(client, tmp_path, monkeypatch):
    from tilelang.cache.manager import kernel_cache

    local = K.tune_locally_then_forget(tmp_path, monkeypatch)
    remote = K.tune(client)  # a plain Client: the tuner wraps it in a DaskExecutor
    K.check_result(remote)
    assert remote.config == local.config
    # the kernel source itself may differ: a Dask nanny starts its workers with one-thread settings, and in some
    # environments the CPU code built there leaves out TVM's parallel launch (open; the Ray test compares sources)
    assert any(client.worker_cache.rglob("artifact.json"))  # compiled on the workers
    kernel_cache.clear(disk=False)
    K.gemm.clear_kernels()
    loaded = {str(c): K.gemm(K.SIZE, K.SIZE, K.SIZE, **c).from_cache for c in K.CONFIGS}
    assert all(loaded.values()), loaded  # gathered here


def test_dask_executor_benchmarks_on_one_worker_per_host(client, tmp_path, monkeypatch):
    from tilelang.autotuner import DaskExecutor

    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))
    executor = DaskExecutor(client)
    placed = []
    original = executor._pick_host_worker
    executor._pick_host_worker = lambda: placed.append(original()) or placed[-1]
    result = K.tune(executor)
    K.check_result(result)
    assert len(placed) == len(K.CONFIGS) and len(set(placed)) == 1  # one host: its CPU is one device
    with pytest.raises(RuntimeError, match="--resources"):
        DaskExecutor(client, device_resource="GPU").submit_benchmark(pow, 2, 2, target={"kind": "cpu"})
    executor.shutdown()
    assert client.status == "running"  # a client passed in stays open
