"""`WorkerPool`: the local process pool autotuning compiles on.

``concurrent.futures.ProcessPoolExecutor`` does not fit: one worker that dies (the OOM killer, a crash inside a
compiler) breaks the whole pool, every pending future fails with ``BrokenProcessPool`` and nothing says whose task
killed it; and its shutdown waits for the queued work. Here each worker runs one task at a time over a pipe of its
own, so a death fails exactly the task that worker was running (`WorkerDied`, naming the signal) and a fresh
worker takes its place; `terminate` (what the tuner calls on Ctrl-C or any error) cancels what has not started and
kills the workers at once. Each worker leads a process group of its own: killing it kills what it started (gcc,
nvcc), and a terminal's Ctrl-C reaches only the parent, which decides.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import threading
import traceback
from collections import deque
from collections.abc import Callable
from concurrent.futures import CancelledError, Executor, Future
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

__all__ = ["WorkerPool", "WorkerDied"]

logger = logging.getLogger("tilelang.autotuner")
_JOIN_SECONDS = 1.0  # how long a killed or stopped worker may take to be reaped


class WorkerDied(RuntimeError):
    """The worker process running a task exited before returning its result (killed by a signal: out of memory,
    a crash in native code)."""


class _RemoteTraceback(Exception):
    """The worker-side traceback of a task's exception (its ``__cause__``)."""

    def __init__(self, text: str):
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return self.text


@dataclass
class _Task:
    future: Future
    fn: Callable[..., Any]
    args: tuple
    kwargs: dict


@dataclass
class _Worker:
    process: Any  # multiprocessing.process.BaseProcess
    conn: Connection
    task: _Task | None = None


def _worker_main(conn: Connection) -> None:
    """Worker side: run ``(fn, args, kwargs)`` jobs from `conn` one at a time, send back ``("ok", result)`` or
    ``("err", exception, traceback text)``; stop at None or when the parent's end closes."""
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the pool; Ctrl-C is not ours to act on
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        fn, args, kwargs = job
        try:
            reply: tuple = ("ok", fn(*args, **kwargs))
        except BaseException as exc:  # delivered through the future, as a process pool does
            reply = ("err", exc, traceback.format_exc())
        try:
            conn.send(reply)
        except Exception as exc:  # an unpicklable result or exception: its text instead
            text = reply[2] if reply[0] == "err" else ""
            conn.send(("err", RuntimeError(f"the task's {'error' if text else 'result'} could not be sent back: "
                                           f"{type(exc).__name__}: {exc}"), text))


def describe_exit(exitcode: int | None) -> str:
    """How a worker ended, in words: ``"was killed by SIGKILL (out of memory?)"``, ``"exited with status 3"``."""
    if exitcode is None:
        return "stopped responding"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        hint = " (out of memory? the OOM killer sends SIGKILL)" if -exitcode == signal.SIGKILL else ""
        return f"was killed by {name}{hint}"
    return f"exited with status {exitcode}"


class WorkerPool(Executor):
    """At most `max_workers` worker processes made with `mp_context` (default: multiprocessing's), started on
    demand and replaced when one dies. ``submit`` / ``map`` / ``shutdown`` as any ``concurrent.futures``
    executor; `terminate` stops everything now."""

    def __init__(self, max_workers: int, mp_context: Any = None):
        if max_workers < 1:
            raise ValueError(f"max_workers must be at least 1, got {max_workers}")
        self.max_workers = max_workers
        self.context = mp_context if mp_context is not None else multiprocessing.get_context()
        self._lock = threading.Lock()
        self._pending: deque[_Task] = deque()
        self._workers: list[_Worker] = []
        self._closing = False  # shutdown asked: no new tasks; run what is queued, then stop
        self._terminated = False
        self._wake_r, self._wake_w = multiprocessing.Pipe(duplex=False)
        self._manager: threading.Thread | None = None

    # ------------------------------------------------------------------------------------------ Executor API
    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        """Queue ``fn(*args, **kwargs)`` for a worker; its future."""
        future: Future = Future()
        with self._lock:
            if self._closing or self._terminated:
                raise RuntimeError("cannot submit to a WorkerPool after shutdown")
            self._pending.append(_Task(future, fn, args, kwargs))
            if self._manager is None:
                self._manager = threading.Thread(target=self._manage, name="tilelang-worker-pool", daemon=True)
                self._manager.start()
        self._wake()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """No more tasks; with `cancel_futures`, drop those not started. The workers stop once the rest ran (or
        at once, see `terminate`); `wait` waits for that."""
        with self._lock:
            self._closing = True
            if cancel_futures:
                self._cancel_pending()
            manager = self._manager
        self._wake()
        if manager is None:
            self._close_wakeup()
        elif wait:
            manager.join()

    def terminate(self) -> None:
        """Stop now: tasks not started are cancelled, workers (and the processes they started) are killed, their
        tasks' futures fail with ``CancelledError``; returns once every worker is reaped."""
        with self._lock:
            self._closing = self._terminated = True
            self._cancel_pending()
            manager = self._manager
            for worker in self._workers:
                _kill_group(worker.process)
        self._wake()
        if manager is None:
            self._close_wakeup()
        else:
            manager.join(timeout=2 * _JOIN_SECONDS + 1)

    # ------------------------------------------------------------------------------------------ manager thread
    def _cancel_pending(self) -> None:
        while self._pending:
            self._pending.popleft().future.cancel()

    def _wake(self) -> None:
        try:
            self._wake_w.send_bytes(b"")
        except OSError:  # closed: the manager has gone
            pass

    def _close_wakeup(self) -> None:
        self._wake_r.close()
        self._wake_w.close()

    def _manage(self) -> None:
        try:
            while self._step():
                pass
        except BaseException as exc:  # never leave futures hanging or workers running
            logger.error("the autotuning worker pool failed: %r", exc)
            self._terminated = True
            for worker in self._workers:
                _kill_group(worker.process)
        finally:
            self._reap_all()
            self._close_wakeup()

    def _step(self) -> bool:
        """Hand queued tasks to idle workers (starting workers as needed), then wait for a result, a death or a
        wake-up and handle it; False when the pool is done."""
        with self._lock:
            if self._terminated:
                return False
            self._dispatch()
            if self._closing and not self._pending and all(w.task is None for w in self._workers):
                return False
            waitables: list[Any] = [self._wake_r]
            for worker in self._workers:
                waitables += [worker.conn, worker.process.sentinel]
        ready = set(wait(waitables))
        if self._wake_r in ready:
            while self._wake_r.poll():
                self._wake_r.recv_bytes()
        with self._lock:
            if self._terminated:
                return False
            for worker in list(self._workers):
                if worker.conn in ready or worker.process.sentinel in ready:
                    self._collect(worker, dead=worker.process.sentinel in ready)
        return True

    def _dispatch(self) -> None:
        idle = [w for w in self._workers if w.task is None]
        while self._pending:
            if not idle:
                if len(self._workers) >= self.max_workers:
                    return
                idle.append(self._start_worker())
            task = self._pending.popleft()
            if not task.future.set_running_or_notify_cancel():
                continue
            worker = idle.pop()
            try:
                worker.conn.send((task.fn, task.args, task.kwargs))
            except Exception as exc:  # the task could not be pickled: its own failure, the worker stays
                task.future.set_exception(exc)
                idle.append(worker)
                continue
            worker.task = task

    def _start_worker(self) -> _Worker:
        parent, child = self.context.Pipe()
        process = self.context.Process(target=_worker_main, args=(child,), name="tilelang-autotune-worker",
                                       daemon=True)
        process.start()
        child.close()
        try:
            os.setpgid(process.pid, process.pid)  # also here: no window where killing its group misses it
        except OSError:
            pass
        worker = _Worker(process, parent)
        self._workers.append(worker)
        return worker

    def _collect(self, worker: _Worker, dead: bool) -> None:
        """Take `worker`'s reply (when there is one) and, when it died, fail its task and drop it."""
        reply = None
        try:
            if worker.conn.poll():
                reply = worker.conn.recv()
        except (EOFError, OSError):
            dead = True
        except Exception as exc:  # the reply could not be unpickled here
            reply = ("err", RuntimeError(f"the worker's reply could not be read: {type(exc).__name__}: {exc}"), "")
        task, worker.task = worker.task, None
        if reply is not None and task is not None:
            if reply[0] == "ok":
                task.future.set_result(reply[1])
            else:
                exc = reply[1]
                if reply[2]:
                    exc.__cause__ = _RemoteTraceback(reply[2])
                task.future.set_exception(exc)
            task = None
        if not dead:
            return
        worker.process.join(_JOIN_SECONDS)
        _kill_group(worker.process)  # what it had started (a compiler) must not outlive it
        self._workers.remove(worker)
        worker.conn.close()
        if task is not None:
            how = describe_exit(worker.process.exitcode)
            logger.warning("autotune: worker process %s %s while running a task; that task is lost, a new worker "
                           "takes its place", worker.process.pid, how)
            task.future.set_exception(WorkerDied(f"the worker process (pid {worker.process.pid}) {how} while "
                                                 "running this task"))

    def _reap_all(self) -> None:
        """Stop every worker (politely unless terminated), reap it, and fail whatever task it still held."""
        with self._lock:
            workers, self._workers = list(self._workers), []
            self._cancel_pending()
        for worker in workers:
            if not self._terminated:
                try:
                    worker.conn.send(None)
                except OSError:
                    pass
        for worker in workers:
            worker.process.join(_JOIN_SECONDS)
            if self._terminated or worker.process.exitcode is None:
                _kill_group(worker.process)
                worker.process.join(_JOIN_SECONDS)
            worker.conn.close()
            if worker.task is not None and not worker.task.future.done():
                worker.task.future.set_exception(CancelledError("the worker pool was terminated"))


def _kill_group(process: Any) -> None:
    """SIGKILL `process` and its process group (what it started); nothing when both are gone."""
    pid = process.pid
    if pid is None:
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass
    if process.exitcode is None:
        try:
            process.kill()
        except (ProcessLookupError, OSError, ValueError):
            pass
