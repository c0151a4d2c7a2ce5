"""Autotuning on a Dask cluster: `DaskExecutor` wraps a ``distributed.Client`` for compiles and benchmarks.

A ``distributed.Client`` is not itself a ``concurrent.futures.Executor``: its ``submit`` returns Dask futures,
which ``concurrent.futures.as_completed`` cannot wait on (``client.get_executor()`` is one, for compiles only).
The tuner therefore wraps a client passed as ``executor=`` in a `DaskExecutor` by itself; make one explicitly to
choose how benchmarks are placed:

- compiles run through ``client.get_executor(pure=False)`` on any worker;
- benchmarks run one kernel at a time per device: with `device_resource` (e.g. ``"GPU"``, workers started with
  ``dask worker ... --resources "GPU=1"``, one per device), as tasks holding one unit of it; without it, for host
  targets, on one worker per host (the host's CPU is the device), serialised by a lock in that worker.

Dask is optional: ``pip install "tilelang-core[dask]"``; it is imported when an executor is made.
"""

from __future__ import annotations

import threading
from concurrent.futures import Executor, Future
from typing import Any

from tilelang.autotuner.ray_executor import device_kind

__all__ = ["DaskExecutor", "require_distributed"]

_DEVICE_LOCK = threading.Lock()  # on a worker: one benchmark at a time in this worker process


def require_distributed() -> Any:
    """The ``distributed`` module, or an ImportError saying how to install it."""
    try:
        import distributed
    except ImportError as exc:
        raise ImportError('DaskExecutor needs Dask\'s distributed scheduler, which is not installed: '
                          'pip install "tilelang-core[dask]"') from exc
    return distributed


def _run_locked(fn: Any, *args: Any) -> Any:
    """Worker side: ``fn(*args)`` while holding this worker's device lock."""
    with _DEVICE_LOCK:
        return fn(*args)


class DaskExecutor(Executor):
    """A ``concurrent.futures.Executor`` over a ``distributed.Client`` that also benchmarks on the cluster.

    `client`: a ``distributed.Client`` (default: a new one for `address`, closed on `shutdown`).
    `device_resource`: the worker resource benchmarks of GPU targets hold one unit of (default ``"GPU"``); for
    host targets it is used only when given explicitly.
    """

    def __init__(self, client: Any = None, *, address: str | None = None, device_resource: str | None = None):
        distributed = require_distributed()
        if client is not None and address is not None:
            raise ValueError("pass a distributed.Client or an address, not both")
        self._owns_client = client is None
        self.client = client if client is not None else distributed.Client(address)
        self.device_resource = device_resource
        self._pool = self.client.get_executor(pure=False)
        self._host_workers: list[str] | None = None
        self._next = 0
        self._lock = threading.Lock()

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future:
        """Run ``fn(*args, **kwargs)`` on any worker; a ``concurrent.futures.Future`` of its result."""
        return self._pool.submit(fn, *args, **kwargs)

    def submit_benchmark(self, fn: Any, /, *args: Any, target: dict[str, Any]) -> Future:
        """Run ``fn(*args)`` on a worker owning a device of `target`'s kind, one call at a time per device."""
        resource = self.device_resource or ("GPU" if device_kind(target) == "GPU" else None)
        if resource is not None:
            declared = [w for w in self._workers().values()
                        if w.get("resources", {}).get(resource)]
            if not declared:
                raise RuntimeError(f"no Dask worker declares the resource {resource!r} to benchmark this target on; "
                                   f"start workers with `dask worker <scheduler> --resources \"{resource}=1\"` (one "
                                   "per device)")
            return self._pool.submit(fn, *args, resources={resource: 1})
        worker = self._pick_host_worker()
        return self._pool.submit(_run_locked, fn, *args, workers=[worker], allow_other_workers=False)

    def _workers(self) -> dict[str, Any]:
        """Every worker's scheduler info by address (all of them: some versions list a few by default)."""
        try:
            info = self.client.scheduler_info(n_workers=-1)
        except TypeError:  # versions without n_workers list them all
            info = self.client.scheduler_info()
        return info["workers"]

    def _pick_host_worker(self) -> str:
        """One worker per host, in turn (the host's CPU is the device; its lock serialises benchmarks)."""
        with self._lock:
            if self._host_workers is None:
                by_host: dict[str, str] = {}
                for address, info in sorted(self._workers().items()):
                    by_host.setdefault(info.get("host", address), address)
                if not by_host:
                    raise RuntimeError("the Dask cluster has no worker to benchmark on")
                self._host_workers = list(by_host.values())
            worker = self._host_workers[self._next % len(self._host_workers)]
            self._next += 1
            return worker

    def warm_up(self, target: Any = "cpu") -> list[int]:
        """Import TileLang and the backend of `target` on every worker before tuning; their process ids."""
        from tilelang.autotuner.executors import warm_worker

        return sorted(self.client.run(warm_worker, target).values())

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Close the client when this executor made it (a client passed in stays open)."""
        self._pool.shutdown(wait=wait)
        if self._owns_client:
            self.client.close()
