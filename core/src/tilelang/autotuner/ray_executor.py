"""Autotuning on a Ray cluster: `RayExecutor` runs compiles as Ray tasks and benchmarks on device actors.

``AutoTuner(..., executor=RayExecutor())`` (or ``@tilelang.autotune(..., executor=RayExecutor())``):

- compiles are Ray tasks (`num_cpus` each) spread over the cluster; each returns the artifact and its files,
  which the tuner rebuilds and stores in the caller's kernel cache;
- benchmarks go to one actor per device, and an actor runs one kernel at a time: per GPU (an actor holding
  ``num_gpus=1``) for CUDA / HIP targets, per node (pinned to it) for host targets, whose "device" is the node's
  CPU. The tuner submits benchmarks once every compile has finished, so CPU timings do not share the cores with
  compiles of the same run.

Ray is optional: ``pip install "tilelang-core[ray]"``. It is imported when an executor is made, never by
``import tilelang``. An executor made while Ray is not initialised calls ``ray.init(address, **init_kwargs)`` and
shuts Ray down on `shutdown`; otherwise it uses (and leaves running) the caller's Ray.
"""

from __future__ import annotations

import threading
from concurrent.futures import Executor, Future
from typing import Any

__all__ = ["RayExecutor", "require_ray"]

GPU_KINDS = ("cuda", "hip", "rocm")


def require_ray() -> Any:
    """The ``ray`` module, or an ImportError saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise ImportError('RayExecutor needs Ray, which is not installed: pip install "tilelang-core[ray]"') from exc
    return ray


def device_kind(target: dict[str, Any] | str | None) -> str:
    """``"GPU"`` for targets that run on an accelerator Ray schedules as ``num_gpus``, else ``"CPU"``."""
    kind = target.get("kind") if isinstance(target, dict) else target
    return "GPU" if str(kind or "").split()[0] in GPU_KINDS else "CPU"


def _invoke(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Ray task body: ``fn(*args, **kwargs)``."""
    return fn(*args, **kwargs)


class _DeviceWorker:
    """Ray actor body: runs the tuner's benchmark function, one call at a time (a synchronous actor)."""

    def run(self, fn: Any, *args: Any) -> Any:
        return fn(*args)


def ray_temp_dir() -> str | None:
    """A Ray session directory outside the running virtualenv, or None when the default one already is.

    Ray puts its sessions under the temporary directory, and its workers refuse to start when that lies inside
    the virtualenv ("temp_dir must not be child directory of virtualenv root"; the driver then waits for them
    forever) -- as it does under nox, which points ``TMPDIR`` into the session's venv. Pass it as
    ``ray.init(_temp_dir=...)`` when starting a local cluster yourself; `RayExecutor` does when it starts one."""
    import os
    import sys
    import tempfile

    default = os.path.realpath(tempfile.gettempdir())
    venv = os.path.realpath(sys.prefix)
    if os.path.commonpath([default, venv]) != venv:
        return None
    base = "/tmp" if os.path.isdir("/tmp") and os.path.commonpath(["/tmp", venv]) != venv else os.path.expanduser("~")
    return os.path.join(base, f"tilelang-ray-{os.getuid() if hasattr(os, 'getuid') else 0}")


class RayExecutor(Executor):
    """A ``concurrent.futures.Executor`` over Ray that also benchmarks on the cluster's devices.

    `address` / `init_kwargs`: passed to ``ray.init`` when Ray is not initialised yet. `num_cpus`: CPUs a compile
    task holds. `remote_options`: extra ``.options(...)`` for compile tasks (e.g. ``runtime_env``).
    `devices`: how many device actors per kind (default: one per GPU of the cluster; one per alive node for host
    targets). `actor_options`: extra ``.options(...)`` for the device actors.
    """

    def __init__(self, address: str | None = None, *, num_cpus: float = 1, devices: int | None = None,
                 remote_options: dict[str, Any] | None = None, actor_options: dict[str, Any] | None = None,
                 **init_kwargs: Any):
        ray = require_ray()
        self._ray = ray
        self._owns_ray = not ray.is_initialized()
        if self._owns_ray:
            temp_dir = ray_temp_dir()
            if temp_dir is not None and address is None:
                init_kwargs.setdefault("_temp_dir", temp_dir)
            ray.init(address=address, **init_kwargs)
        elif address is not None or init_kwargs:
            raise ValueError("Ray is already initialised: RayExecutor(address=..., **init_kwargs) would be ignored; "
                             "pass neither, or make the executor before calling ray.init")
        if num_cpus <= 0:
            raise ValueError(f"num_cpus must be positive, got {num_cpus}")
        if devices is not None and devices < 1:
            raise ValueError(f"devices must be at least 1, got {devices}")
        self.num_cpus = num_cpus
        self.devices = devices
        self.remote_options = dict(remote_options or {})
        self.actor_options = dict(actor_options or {})
        self._invoke: Any = None
        self._actors: dict[str, list[Any]] = {}
        self._in_flight: dict[int, int] = {}
        self._lock = threading.Lock()
        self._shutdown = False

    # ------------------------------------------------------------------------------------------ compiles
    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future:
        """Run ``fn(*args, **kwargs)`` as a Ray task; a ``concurrent.futures.Future`` of its result."""
        if self._shutdown:
            raise RuntimeError("cannot submit to a RayExecutor after shutdown")
        if self._invoke is None:  # one remote function for any callable (builtins and bound methods included)
            self._invoke = self._ray.remote(_invoke).options(num_cpus=self.num_cpus, **self.remote_options)
        return self._invoke.remote(fn, *args, **kwargs).future()

    # ------------------------------------------------------------------------------------------ benchmarks
    def submit_benchmark(self, fn: Any, /, *args: Any, target: dict[str, Any]) -> Future:
        """Run ``fn(*args)`` on the least busy actor owning a device of `target`'s kind (one call at a time per
        actor)."""
        if self._shutdown:
            raise RuntimeError("cannot submit to a RayExecutor after shutdown")
        actors = self._device_actors(device_kind(target))
        with self._lock:
            index = min(range(len(actors)), key=lambda i: self._in_flight.get(id(actors[i]), 0))
            actor = actors[index]
            self._in_flight[id(actor)] = self._in_flight.get(id(actor), 0) + 1
        future = actor.run.remote(fn, *args).future()
        key = id(actor)
        future.add_done_callback(lambda _f: self._done(key))
        return future

    def _done(self, key: int) -> None:
        with self._lock:
            self._in_flight[key] -= 1

    def _device_actors(self, kind: str) -> list[Any]:
        with self._lock:
            actors = self._actors.get(kind)
            if actors is None:
                actors = self._actors[kind] = self._start_actors(kind)
            return actors

    def _start_actors(self, kind: str) -> list[Any]:
        ray = self._ray
        cls = ray.remote(_DeviceWorker)
        if kind == "GPU":
            count = self.devices or int(ray.cluster_resources().get("GPU", 0))
            if count < 1:
                raise RuntimeError("the Ray cluster has no GPU to benchmark this target on (ray.cluster_resources() "
                                   "lists none); start workers with GPUs or pass devices=")
            return [cls.options(num_gpus=1, num_cpus=0, **self.actor_options).remote() for _ in range(count)]
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        nodes = [n["NodeID"] for n in ray.nodes() if n.get("Alive")]
        if self.devices is not None:
            nodes = (nodes * self.devices)[:self.devices] if nodes else []
        if not nodes:
            raise RuntimeError("the Ray cluster has no alive node to benchmark on")
        # num_cpus=0: the actor does not keep a core from compile tasks; the tuner benchmarks after its compiles
        return [cls.options(num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False),
                            **self.actor_options).remote() for node in nodes]

    def warm_up(self, target: Any = "cpu", tasks: int | None = None) -> list[int]:
        """Import TileLang and the backend of `target` on the workers before tuning (a fresh Ray worker otherwise
        pays for it in its first compile): `tasks` compile-shaped tasks (default: the cluster's CPUs divided by
        `num_cpus`) and the device actors of `target`'s kind. Returns the warmed processes' ids."""
        from tilelang.autotuner.executors import warm_worker

        count = tasks or max(1, int(self._ray.cluster_resources().get("CPU", 1) // self.num_cpus))
        futures = [self.submit(warm_worker, target) for _ in range(count)]
        actors = self._device_actors(device_kind(target if isinstance(target, dict) else {"kind": target}))
        futures += [actor.run.remote(warm_worker, target).future() for actor in actors]
        return sorted({f.result() for f in futures})

    # ------------------------------------------------------------------------------------------ lifetime
    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop the device actors, and Ray itself when this executor started it."""
        if self._shutdown:
            return
        self._shutdown = True
        for actors in self._actors.values():
            for actor in actors:
                self._ray.kill(actor)
        self._actors.clear()
        if self._owns_ray:
            self._ray.shutdown()
