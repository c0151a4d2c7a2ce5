"""``T.print`` and ``T.device_assert`` on WebGPU (`tilelang_webgpu.passes.debug_log`): the records a kernel writes to
its hidden log are printed after the call in the CPU backend's format, a failed assertion raises, a kernel loaded
from its stored launch plan keeps the record table, and kernels without them bind no log."""

from __future__ import annotations

import pytest
import torch

import tilelang
import tilelang.language as T
from tilelang_webgpu.passes.debug_log import LOG_WORDS, RECORD_WORDS, DeviceAssertError, report
from tilelang_webgpu.plan import DEBUG_LOG, LaunchPlan

N = 8


def _printing(limit: float):
    @T.prim_func
    def printing(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(2, threads=4) as bx:
            tx = T.get_thread_binding()
            S = T.alloc_shared((4,), "int32")
            S[tx] = tx * 10
            T.print(A[bx * 4 + tx], msg="a")
            T.print(S)
            T.device_assert(A[bx * 4 + tx] < limit, "A is too large")
            B[bx * 4 + tx] = A[bx * 4 + tx] * 2.0

    return printing


def _compile(func):
    return tilelang.compile(func, target="webgpu", execution_backend="wgpu")


def test_print_records_come_back_in_the_cpu_format(wgpu_backend, capfd):
    kernel = _compile(_printing(100.0))
    a = torch.arange(N, dtype=torch.float32)
    b = torch.zeros(N)
    kernel(a, b)
    torch.testing.assert_close(b, a * 2)
    lines = capfd.readouterr().out.splitlines()
    for i in range(N):
        bx, tx = divmod(i, 4)
        assert f"msg='a' BlockIdx=({bx}, 0, 0), ThreadIdx=({tx}, 0, 0): dtype=float32 value={float(i)!r}" in lines
    # the shared tile is printed by thread 0 of each block, element by element
    for bx in range(2):
        for k in range(4):
            assert (f"msg='buffer<S, int32>' BlockIdx=({bx}, 0, 0), ThreadIdx=(0, 0, 0): buffer=S, index={k}, "
                    f"dtype=int32 value={k * 10}") in lines
    # sorted by block then thread, each thread's records in program order
    first = [n for n, line in enumerate(lines) if "ThreadIdx=(0, 0, 0)" in line and "BlockIdx=(0, 0, 0)" in line]
    assert "msg='a'" in lines[first[0]]


def test_failed_device_assert_raises_with_its_message(wgpu_backend, capfd):
    kernel = _compile(_printing(100.0))
    a = torch.arange(N, dtype=torch.float32)
    a[5] = 1000.0
    with pytest.raises(DeviceAssertError, match=r"A is too large \(BlockIdx=\(1, 0, 0\), ThreadIdx=\(1, 0, 0\)\)"):
        kernel(a, torch.zeros(N))
    capfd.readouterr()


def test_the_stored_plan_keeps_the_record_table(wgpu_backend):
    kernel = _compile(_printing(100.0))
    from tilelang_webgpu.plan import plan_for

    plan = plan_for(kernel.artifact)
    assert plan.uses_debug_log and any(DEBUG_LOG in s.buffers for s in plan.steps)
    again = LaunchPlan.from_json(plan.to_json())
    assert again.debug == plan.debug
    assert [r["kind"] for r in again.debug] == ["print", "print", "assert"]


def test_kernels_without_debug_output_bind_no_log(wgpu_backend):
    @T.prim_func
    def plain(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=N):
            tx = T.get_thread_binding()
            B[tx] = A[tx] + 1.0

    kernel = _compile(plain)
    assert "tl_debug_log" not in kernel.artifact.kernel_source
    from tilelang_webgpu.plan import plan_for

    assert not plan_for(kernel.artifact).uses_debug_log


def test_report_counts_records_that_did_not_fit(capsys):
    words = [0] * LOG_WORDS
    kept = (LOG_WORDS - 1) // RECORD_WORDS
    words[0] = (kept + 3) * RECORD_WORDS
    for n in range(kept):
        base = 1 + n * RECORD_WORDS
        words[base:base + RECORD_WORDS] = [0, 0, 0, 0, n % 4, 0, 0, 0, 0xFFFFFFFF]
    report(words, [{"kind": "print", "msg": "v", "buffer": "", "dtype": "int32"}], "k")
    out = capsys.readouterr().out
    assert out.count("dtype=int32 value=-1") == kept
    assert "[k: 3 T.print / T.device_assert records did not fit the debug log]" in out
