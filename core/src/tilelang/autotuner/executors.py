"""Where autotuning compiles run: any ``concurrent.futures.Executor``-like object (``submit(fn, *args)`` returning
a future with ``result()``).

`local_process_executor` (the default) forks worker processes, bounded by the usable cores; `SerialExecutor`
runs in this process. A cluster adapter (e.g. Ray) plugs in by implementing ``submit``: tasks are
`CompileTask` objects, which pickle the jit function by reference (module + qualified name), so the workers
import the user's module.
"""

from __future__ import annotations

import importlib
import multiprocessing
import sys
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from tilelang import env

__all__ = ["SerialExecutor", "local_process_executor", "CompileTask", "compile_task"]

# Jobs registered before a fork: forked workers find functions that cannot be imported (closures, __main__).
_FORKED_JOBS: dict[int, Any] = {}


class SerialExecutor(Executor):
    """Runs each task immediately in this process."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # delivered through the future, like a real executor
            future.set_exception(exc)
        return future


def local_process_executor(max_workers: int | None = None) -> Executor:
    """A process pool of at most `max_workers` (default ``TILELANG_AUTOTUNE_WORKERS`` / usable cores) workers,
    forked where the platform allows it."""
    workers = max(1, max_workers or env.autotune_workers())
    method = "fork" if sys.platform.startswith("linux") else None
    context = multiprocessing.get_context(method) if method else None
    return ProcessPoolExecutor(max_workers=workers, mp_context=context)


def _resolve_by_name(module: str, qualname: str) -> Any:
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    while not hasattr(obj, "compile") or not hasattr(obj, "mode"):  # unwrap autotune wrappers to the JITImpl
        inner = getattr(obj, "jit_impl", None)
        if inner is None:
            raise TypeError(f"{module}.{qualname} is not a @tilelang.jit function")
        obj = inner
    return obj


@dataclass(frozen=True)
class CompileTask:
    """Compile one configuration of a jit function; the function travels as a fork token or by name."""

    token: int
    module: str
    qualname: str
    args: tuple
    kwargs: dict

    def resolve(self) -> Any:
        job = _FORKED_JOBS.get(self.token)
        return job if job is not None else _resolve_by_name(self.module, self.qualname)


def register_job(jit_impl: Any) -> int:
    """Make `jit_impl` reachable by processes forked from now on; returns its token."""
    token = id(jit_impl)
    _FORKED_JOBS[token] = jit_impl
    return token


def compile_task(task: CompileTask) -> dict[str, Any]:
    """Worker side: compile and return what rebuilds the kernel elsewhere (artifact JSON + files)."""
    jit_impl = task.resolve()
    kernel = jit_impl.compile(*task.args, **task.kwargs)
    artifact = kernel.artifact
    files = dict(artifact.files)
    exporter = getattr(kernel._backend, "export_files", None)
    if not files and exporter is not None:
        files = dict(exporter(artifact))
    return {"artifact": artifact.to_json(), "files": files, "cache_key": kernel.cache_key,
            "out_idx": list(kernel.out_idx)}
