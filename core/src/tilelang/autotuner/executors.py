"""Where autotuning compiles run: any ``concurrent.futures.Executor``-like object (``submit(fn, *args)`` returning
a future with ``result()``).

`local_process_executor` (the default) is a `tilelang.autotuner.process_pool.WorkerPool` bounded by the usable
cores, its workers forked on Linux unless the program chose another start method (``multiprocessing.
set_start_method``, or ``start_method=``); a worker that dies loses only its own configuration. `SerialExecutor`
runs in this process. A cluster adapter (e.g. Ray) plugs in by implementing ``submit``. Tasks are `CompileTask`
objects carrying everything a worker needs *by value*: the kernel factory (cloudpickled, so closures and functions
defined in ``__main__`` or a notebook travel too), the target already resolved in the caller (``"auto"`` is never
resolved again on a worker), the pass configs, compile flags, out_idx and execution backend. Forked workers use
the caller's object directly (a token), every other worker (spawn, threads, remote) unpickles the payload: all
compile exactly the same thing. A factory whose module is not part of an installed distribution (a test module, a
script's helper) is pickled by value with that module's globals, since a remote worker could not import it.
Executors that also benchmark (Ray, Dask) implement ``submit_benchmark``: see `tilelang.autotuner.benchmark`.
"""

from __future__ import annotations

import logging
import multiprocessing
import sys
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import Any

from tilelang import env
from tilelang.autotuner.process_pool import WorkerDied, WorkerPool

__all__ = ["SerialExecutor", "local_process_executor", "mp_context", "WorkerPool", "WorkerDied", "CompileTask",
           "compile_task", "pack_job", "unpack_job", "register_job", "dumps_by_value", "warm_worker"]

# Jobs registered before a fork: forked workers find functions that cannot be imported (closures, __main__).
_FORKED_JOBS: dict[int, Any] = {}


class SerialExecutor(Executor):
    """Runs each task immediately in this process."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future:
        """Call ``fn(*args, **kwargs)`` now; a finished ``concurrent.futures.Future`` of its result (or error)."""
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # delivered through the future, like a real executor
            future.set_exception(exc)
        return future


def local_process_executor(max_workers: int | None = None, start_method: str | Any = None) -> WorkerPool:
    """A `WorkerPool` of at most `max_workers` (default ``TILELANG_AUTOTUNE_WORKERS`` / usable cores) worker
    processes started the `start_method` way (see `mp_context`). A worker that dies loses only its own task."""
    return WorkerPool(max(1, max_workers or env.autotune_workers()), mp_context(start_method))


def mp_context(start_method: str | Any = None) -> Any:
    """The multiprocessing context of the local pool: `start_method` (``"fork"``, ``"spawn"``, ``"forkserver"``
    or a context object) when given; else the one the program chose with ``multiprocessing.set_start_method``;
    else fork on Linux (workers inherit the imported TVM and backends) and the platform's default elsewhere."""
    if start_method is not None and not isinstance(start_method, str):
        return start_method
    if start_method is None:
        start_method = multiprocessing.get_start_method(allow_none=True)
    if start_method is None and sys.platform.startswith("linux"):
        start_method = "fork"
    try:
        return multiprocessing.get_context(start_method)
    except ValueError:
        raise ValueError(f"start_method={start_method!r} is not a start method here; use one of "
                         f"{multiprocessing.get_all_start_methods()}") from None


@dataclass(frozen=True)
class CompileTask:
    """Compile one configuration of a jit function: a fork token plus the job by value (`payload`)."""

    token: int
    payload: bytes
    args: tuple
    kwargs: dict
    pass_configs: dict | None = None  # this configuration's own, over the job's

    def resolve(self) -> Any:
        job = _FORKED_JOBS.get(self.token)
        job = job if job is not None else unpack_job(self.payload)
        if not self.pass_configs:
            return job
        return with_options(job, pass_configs={**dict(job.options.pass_configs), **self.pass_configs})


def with_options(jit_impl: Any, **changes: Any) -> Any:
    """`jit_impl` (its function and mode) with some of its compile options replaced."""
    from dataclasses import replace

    from tilelang.jit.decorator import JITImpl

    job = JITImpl(jit_impl.fn, replace(jit_impl.options, **changes))
    job.mode = jit_impl.mode
    return job


def pack_job(jit_impl: Any, target: dict[str, Any]) -> bytes:
    """The job by value: the factory (cloudpickled), its source file's text (kernels are parsed from source, and
    a function pickled by value loses its file), and its compile options with `target` resolved."""
    from dataclasses import replace


    options = replace(jit_impl.options, target=target)
    code = getattr(jit_impl.fn, "__code__", None)
    source = None
    if code is not None:
        import linecache

        lines = linecache.getlines(code.co_filename)
        if lines:
            source = (code.co_filename, "".join(lines))
    return dumps_by_value((jit_impl.fn, options, jit_impl.mode, source), jit_impl.fn)


def dumps_by_value(obj: Any, *functions: Any) -> bytes:
    """`obj` cloudpickled, the modules of `functions` that are not part of an installed distribution (a test
    module, a script's helper: a worker elsewhere cannot import them by name) pickled by value."""
    import cloudpickle

    modules = []
    for fn in functions:
        module = sys.modules.get(getattr(fn, "__module__", None) or "")
        if module is not None and module.__name__ != "__main__" and not _installed(module.__name__) \
                and module not in modules:
            modules.append(module)
    for module in modules:
        cloudpickle.register_pickle_by_value(module)
    try:
        return cloudpickle.dumps(obj)
    except Exception as exc:  # e.g. a global of that module that cannot be pickled: by reference, as before
        if not modules:
            raise
        logging.getLogger("tilelang.autotuner").debug("pickling %s by value failed (%r): by reference", modules, exc)
    finally:
        for module in modules:
            cloudpickle.unregister_pickle_by_value(module)
    return cloudpickle.dumps(obj)


def _installed(module_name: str) -> bool:
    """Whether `module_name`'s top-level package belongs to an installed distribution (so any worker with the
    same environment imports it by name); other modules' factories are pickled by value."""
    from importlib.metadata import packages_distributions

    global _DISTRIBUTED_PACKAGES
    if _DISTRIBUTED_PACKAGES is None:
        _DISTRIBUTED_PACKAGES = set(packages_distributions())
    top = module_name.partition(".")[0]
    return top in _DISTRIBUTED_PACKAGES or top in sys.stdlib_module_names


_DISTRIBUTED_PACKAGES: set[str] | None = None


def _with_filename(code: Any, filename: str) -> Any:
    """`code` and every code object nested in it, with `co_filename` set to `filename`."""
    consts = tuple(_with_filename(c, filename) if hasattr(c, "co_code") else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def unpack_job(payload: bytes) -> Any:
    """The `JITImpl` a worker compiles with (see `pack_job`)."""
    import cloudpickle

    from tilelang.jit.decorator import JITImpl

    fn, options, mode, source = cloudpickle.loads(payload)
    if source is not None and hasattr(fn, "__code__"):
        import linecache

        filename, text = source
        if fn.__code__.co_filename != filename:  # pickled by value: restore the file its source lives in
            fn.__code__ = _with_filename(fn.__code__, filename)
        if not linecache.getlines(filename):  # a worker on another host: the file is not there
            linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    job = JITImpl(fn, options)
    job.mode = mode
    return job


def register_job(jit_impl: Any, target: dict[str, Any] | None = None) -> int:
    """Make `jit_impl` (its target resolved to `target`) reachable by processes forked from now on; returns its
    token."""
    if target is not None:
        jit_impl = with_options(jit_impl, target=target)
    token = id(jit_impl)
    _FORKED_JOBS[token] = jit_impl
    return token


def warm_worker(target: Any = "cpu") -> int:
    """Worker side: import TileLang, TVM and the backend serving `target`, so that the first compile does not pay
    for them; returns the process id."""
    import os

    from tilelang.ir.ops import ensure_registered
    from tilelang.jit.compiler import CompileOptions, _backend_for

    ensure_registered()
    _backend_for(CompileOptions(target=target).resolved_target(), "auto")
    return os.getpid()


def compile_task(task: CompileTask) -> dict[str, Any]:
    """Worker side: compile and return what rebuilds the kernel elsewhere (artifact JSON + files)."""
    jit_impl = task.resolve()
    kernel = jit_impl.compile(*task.args, **task.kwargs)
    artifact = kernel.artifact
    files = dict(kernel._backend.export_files(artifact))
    return {"artifact": artifact.to_json(), "files": files, "cache_key": kernel.cache_key,
            "out_idx": list(kernel.out_idx), "target": artifact.target,
            "pass_configs": dict(jit_impl.options.pass_configs)}


def completed_lazily(pool: Any, fn: Any, items: list[Any], window: int) -> Any:
    """Submit ``fn(item)`` for each of `items` to `pool` with at most `window` in flight, submitting the next as
    one finishes; yields ``(index, future)`` in completion order. A progress bar over it advances with every
    compile, also on an executor that runs each task when it is submitted (`SerialExecutor`), where submitting
    everything first would finish every compile before the first result is seen."""
    from concurrent.futures import FIRST_COMPLETED, wait

    pending: dict[Any, int] = {}
    queue = iter(enumerate(items))
    for index, item in queue:
        pending[pool.submit(fn, item)] = index
        if len(pending) >= max(1, window):
            break
    try:
        while pending:
            done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for future in done:
                yield pending.pop(future), future
                for index, item in queue:  # one more in flight for each that finished
                    pending[pool.submit(fn, item)] = index
                    break
    finally:  # closed early (Ctrl-C, an error): what is still in flight is cancelled where it has not started
        for future in pending:
            future.cancel()
