"""What a user sees of a mistake in a kernel or in a call: the message first (``file:line: what is wrong``, the
source line), TileLang's own frames trimmed from the traceback (``TILELANG_FULL_TRACEBACK=1`` keeps them), and
argument errors that name the parameter and what was passed, never an internal type."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import traceback

import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import KernelArgumentError, KernelSyntaxError, KernelTypeError

BAD_KERNEL = textwrap.dedent("""\
    import tilelang.language as T

    @T.prim_func
    def bad(A: T.Tensor((128,), T.float32), B: T.Tensor((128,), T.float32)):
        with T.Kernel(1, threads=128) as bx:
            for i in T.Parallel(128):
                B[i] = A[i] + undefined_name

    print(bad.script())  # a module-level kernel decorated before TVM is imported is parsed on first use
    """)


def _run(script: str, tmp_path, **env_vars: str) -> subprocess.CompletedProcess:
    path = tmp_path / "bad_kernel.py"
    path.write_text(script)
    env = {k: v for k, v in os.environ.items() if k != "TILELANG_FULL_TRACEBACK"}
    env.update(env_vars)
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=300)


def test_a_kernel_error_shows_the_users_line_first_and_no_front_end_frames(tmp_path):
    proc = _run(BAD_KERNEL, tmp_path)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    error = next(i for i, line in enumerate(lines) if line.startswith("tilelang.errors."))
    path = str(tmp_path / "bad_kernel.py")
    # the error's first line: the user's file:line and the message; then the offending line
    assert lines[error] == (f"tilelang.errors.KernelSyntaxError: {path}:7: name 'undefined_name' is not defined "
                            "(in `B[i] = A[i] + undefined_name`)")
    assert lines[error + 1].strip() == "B[i] = A[i] + undefined_name"
    frames = [line for line in lines[:error] if line.lstrip().startswith("File ")]
    # the user's line that first used the kernel, then the one TileLang frame the error leaves through
    assert frames[0].strip() == f'File "{path}", line 9, in <module>'
    assert len(frames) == 2 and "tilelang/errors.py" in frames[1]
    assert "interpreter.py" not in proc.stderr and "direct cause" not in proc.stderr


def test_full_traceback_switch_keeps_the_front_end_frames(tmp_path):
    proc = _run(BAD_KERNEL, tmp_path, TILELANG_FULL_TRACEBACK="1")
    assert proc.returncode == 1
    assert "frontend/interpreter.py" in proc.stderr  # the front end's own frames, for debugging TileLang
    assert "NameError: name 'undefined_name' is not defined" in proc.stderr  # and the chained cause


def _tilelang_frames(tb) -> list[str]:
    package = os.path.dirname(tilelang.__file__)
    return [f.filename for f in traceback.extract_tb(tb) if f.filename.startswith(package)]


@tilelang.jit
def matmul(A, B):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float32)
    B: T.Tensor((K, N), T.float32)
    C = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(N, 32), T.ceildiv(M, 32), threads=128) as (bx, by):
        A_s = T.alloc_shared((32, 32), T.float32)
        B_s = T.alloc_shared((32, 32), T.float32)
        C_f = T.alloc_fragment((32, 32), T.float32)
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, 32), num_stages=0):
            T.copy(A[by * 32, k * 32], A_s)
            T.copy(B[k * 32, bx * 32], B_s)
            T.gemm(A_s, B_s, C_f)
        T.copy(C_f, C[by * 32, bx * 32])
    return C


@tilelang.jit
def add(A, B):
    A: T.Tensor((128,), T.float32)
    B: T.Tensor((128,), T.float32)
    C = T.empty((128,), T.float32)
    with T.Kernel(1, threads=128):
        for i in T.Parallel(128):
            C[i] = A[i] + B[i]
    return C


@pytest.mark.backend("cpu")  # the JIT resolves target="auto" before it parses: it needs a backend with a device
def test_a_tensor_of_the_wrong_rank_is_named_with_what_was_passed():
    import torch

    with pytest.raises(KernelTypeError) as info:
        matmul(torch.randn(512), torch.randn(64, 64))
    message = str(info.value)
    assert message.startswith(f"{__file__}:")  # the user's file:line first: the annotation of A
    assert ("argument 'A' is a 1-D tensor of shape (512,), but the kernel declares A: T.Tensor((M, K), float32), "
            "a 2-D tensor") in message
    assert "A: T.Tensor((M, K), T.float32)" in message  # the source line
    assert "has no value" not in message
    assert len(_tilelang_frames(info.tb)) == 1  # only the entry point the error left through


@pytest.mark.backend("cpu")
def test_a_missing_tensor_argument_that_binds_a_size_is_named():
    import torch

    with pytest.raises(KernelTypeError, match=r"matmul\(\) missing argument 'B': its shape gives T.const 'N' its "
                                              r"value \(pass B, or give N=\.\.\. as a keyword\)"):
        matmul(torch.randn(64, 64))


@pytest.mark.backend("cpu")
def test_a_missing_tensor_argument_at_call_time_is_named_not_an_internal_type():
    import torch

    with pytest.raises(KernelArgumentError) as info:
        add(torch.randn(128))
    assert str(info.value) == "add() missing 1 tensor argument(s): 'B'"
    assert "_Unbound" not in str(info.value)
    a, b = torch.randn(128), torch.randn(128)
    torch.testing.assert_close(add(a, b), a + b)  # the full call still works


def test_lower_and_compile_report_kernel_errors_without_internal_frames():
    def factory():
        @T.prim_func
        def wrong(A: T.Tensor((16,), T.float32)):
            with T.Kernel(1, threads=16):
                T.copy(A, undefined_buffer)  # noqa: F821

        return wrong

    with pytest.raises(KernelSyntaxError) as info:
        factory()
    assert "undefined_buffer" in str(info.value) and str(info.value).startswith(f"{__file__}:")
    frames = traceback.extract_tb(info.tb)
    assert [f.name for f in frames if f.filename == __file__] == [
        "test_lower_and_compile_report_kernel_errors_without_internal_frames", "factory"]
    assert len(_tilelang_frames(info.tb)) == 1
