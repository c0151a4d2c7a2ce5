"""The local compile pool under faults: a worker killed mid-compile, Ctrl-C mid-tuning, the start method."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pool_faults
import pytest
import torch

from tilelang.autotuner import AutoTuner
from tilelang.autotuner.executors import mp_context
from tilelang.autotuner.process_pool import WorkerDied, WorkerPool

HERE = Path(__file__).parent


def _alive(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie, waiting to be reaped by whoever adopted it, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def _pids(directory: Path, prefix: str) -> list[int]:
    return [int(p.name.split("-", 1)[1]) for p in directory.glob(f"{prefix}-*")]


@pytest.mark.backend("cpu")
def test_a_killed_worker_loses_only_its_configuration(tmp_path, monkeypatch):
    """One configuration SIGKILLs its compile worker: it alone is reported failed (with the signal), the other
    three are compiled on fresh workers, checked and timed, and the winner is one of them."""
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TL_POOL_TEST_DIR", str(tmp_path))
    configs = [{"block": 16}, {"block": 32, "die": True}, {"block": 64}, {"block": 128}]
    tuner = AutoTuner(pool_faults.scale, configs, max_workers=2, progress=False, cache_results=False, warmup=1,
                      rep=3, ref_prog=lambda a: a * 2)
    result = tuner.run(n=pool_faults.N)
    killed = [t for t in result.trials if t["config"].get("die")]
    others = [t for t in result.trials if not t["config"].get("die")]
    assert len(killed) == 1 and killed[0]["latency"] is None
    assert "WorkerDied" in killed[0]["error"] and "SIGKILL" in killed[0]["error"], killed[0]["error"]
    assert all(t["error"] is None and t["latency"] > 0 for t in others), result.trials
    assert result.config in [t["config"] for t in others]
    a = torch.randn(pool_faults.N)
    torch.testing.assert_close(result.kernel(a), a * 2)
    assert len(_pids(tmp_path, "worker")) >= 3  # the dead worker was replaced
    assert not any(_alive(pid) for pid in _pids(tmp_path, "worker"))


def _sleep_then(seconds: float, value: int) -> int:
    time.sleep(seconds)
    return value


def _kill_self() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _start_child(path: str) -> None:
    proc = subprocess.Popen(["sleep", "120"])
    Path(path).write_text(str(proc.pid))
    time.sleep(120)


def test_worker_pool_replaces_a_dead_worker():
    pool = WorkerPool(2, mp_context("fork"))
    try:
        futures = [pool.submit(_sleep_then, 0.2, i) for i in range(3)]
        dead = pool.submit(_kill_self)
        futures += [pool.submit(_sleep_then, 0.0, i) for i in range(3, 6)]
        with pytest.raises(WorkerDied, match="SIGKILL"):
            dead.result(timeout=60)
        assert [f.result(timeout=60) for f in futures] == list(range(6))
    finally:
        pool.shutdown()


def test_worker_pool_delivers_task_errors_with_their_traceback():
    pool = WorkerPool(1, mp_context("fork"))
    try:
        future = pool.submit(int, "not a number")
        with pytest.raises(ValueError, match="not a number") as info:
            future.result(timeout=60)
        assert "Traceback" in str(info.value.__cause__)
        assert pool.submit(_sleep_then, 0, 7).result(timeout=60) == 7  # the worker survives its task's error
    finally:
        pool.shutdown()


def test_worker_pool_terminate_kills_workers_and_what_they_started(tmp_path):
    pool = WorkerPool(2, mp_context("fork"))
    marks = [tmp_path / f"child-{i}" for i in range(2)]
    running = [pool.submit(_start_child, str(m)) for m in marks]
    queued = pool.submit(_sleep_then, 0, 1)
    deadline = time.monotonic() + 60
    while not all(m.exists() and m.read_text() for m in marks) and time.monotonic() < deadline:
        time.sleep(0.05)
    children = [int(m.read_text()) for m in marks]
    workers = [w.process.pid for w in pool._workers]
    pool.terminate()
    assert queued.cancelled()
    assert all(f.done() for f in running)
    assert not any(_alive(pid) for pid in [*children, *workers])


def test_start_method_resolution(monkeypatch):
    assert mp_context("spawn").get_start_method() == "spawn"
    monkeypatch.setattr("multiprocessing.get_start_method", lambda allow_none=False: "forkserver")
    assert mp_context().get_start_method() == "forkserver"  # the program's choice
    monkeypatch.setattr("multiprocessing.get_start_method", lambda allow_none=False: None)
    assert mp_context().get_start_method() == ("fork" if sys.platform.startswith("linux") else
                                               mp_context(None).get_start_method())
    with pytest.raises(ValueError, match="start_method='thread'"):
        mp_context("thread")


def _script(tmp_path: Path, mode: str) -> subprocess.Popen:
    env = {**os.environ, "TL_POOL_TEST_DIR": str(tmp_path), "TILELANG_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.Popen([sys.executable, str(HERE / "pool_faults.py"), mode], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


@pytest.mark.backend("cpu")
def test_ctrl_c_stops_tuning_within_two_seconds_and_leaves_no_process(tmp_path):
    """SIGINT while both workers are compiling (each stalled, each with a child process running): the tuner
    stops within 2 s, and no worker or worker's child survives the script."""
    proc = _script(tmp_path, "interrupt")
    try:
        deadline = time.monotonic() + 120
        while len(_pids(tmp_path, "child")) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(_pids(tmp_path, "child")) == 2, proc.communicate(timeout=30)[0]
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, out
    stopped = float(out.split("stopped ", 1)[1].split()[0])
    assert stopped < 2.0, out
    workers, children = _pids(tmp_path, "worker"), _pids(tmp_path, "child")
    assert len(workers) == 2  # the four queued configurations never started
    assert not [pid for pid in workers + children if _alive(pid)]


@pytest.mark.backend("cpu")
def test_the_programs_start_method_is_honoured(tmp_path):
    """After ``multiprocessing.set_start_method("spawn")`` the compile workers are spawned, not forked."""
    proc = _script(tmp_path, "spawn")
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, out
    lines = [p.read_bytes().replace(b"\0", b" ").decode() for p in tmp_path.glob("worker-*")]
    assert lines and all("spawn_main" in line for line in lines), lines
