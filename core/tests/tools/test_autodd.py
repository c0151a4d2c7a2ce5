"""AutoDD: reduction with an in-process predicate, frozen code, the command line, and a seeded failing TileLang
program reduced through real worker processes."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tilelang.autodd import AutoDD, _preprocess_freeze_comments, autodd

NOISY = textwrap.dedent("""\
    import math


    def scale(a, b):
        unused = [1, 2, 3]
        if a > 100:
            return a
        return a / b


    values = [5, 7, 9]
    total = 0
    for v in values:
        total += v
    print(math.sqrt(total))
    setup = dict(mode="fast")  # autodd: freeze
    scale(total, 0)
    """)


def _raises_zero_division(source: str) -> bool:
    try:
        exec(compile(source, "<candidate>", "exec"), {"__name__": "__main__", "print": lambda *a: None})
    except ZeroDivisionError:
        return True
    except Exception:
        return False
    return False


def test_reduces_to_a_small_program_that_still_fails():
    best = autodd(NOISY, "", interesting=_raises_zero_division)
    assert _raises_zero_division(best)
    assert len(best) < len(NOISY) * 0.6, best
    for gone in ("math", "unused", "values", "a > 100", "print"):
        assert gone not in best, best
    assert 'setup = dict(mode="fast")' in best.replace("'", '"')  # frozen: kept verbatim


def test_freeze_comments_become_blocks():
    src = "a = 1\n# autodd: freeze-start\nb = 2\nc = 3\n# autodd: end-freeze\nd = 4  # autodd: freeze\n"
    out = _preprocess_freeze_comments(src)
    assert out.startswith("from tilelang.autodd import __freeze__\n")
    assert "with __freeze__:\n    b = 2\n    c = 3\n" in out and "with __freeze__:\n    d = 4" in out
    with pytest.raises(ValueError, match="without a matching"):
        _preprocess_freeze_comments("# autodd: freeze-start\nx = 1\n")


def test_a_program_that_does_not_fail_is_refused():
    with pytest.raises(RuntimeError, match="does not print the expected message"):
        AutoDD("x = 1\n", "boom", backend="subproc", timeout=30).reduce()


def test_module_command_line_help():
    done = subprocess.run([sys.executable, "-m", "tilelang.autodd", "--help"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and "Delta-debug the provided Python source" in done.stdout


BUGGY_KERNEL = textwrap.dedent('''\
    import tilelang
    import tilelang.language as T


    def twice(x):
        return x * 2


    def make(M, N, K, block):
        factor = twice(3)

        @T.prim_func
        def kernel(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
                   C: T.Tensor((M, N), "float32")):
            with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
                A_s = T.alloc_shared((block, block), "float16")
                B_s = T.alloc_shared((block * 2, block), "float16")
                C_f = T.alloc_fragment((block, block), "float32")
                T.clear(C_f)
                for k in T.Pipelined(T.ceildiv(K, block), num_stages=2):
                    T.copy(A[by * block, k * block], A_s)
                    T.copy(B[k * block, bx * block], B_s[0:block, 0:block])
                    T.gemm(A_s, B_s, C_f)
                for i, j in T.Parallel(block, block):
                    C_f[i, j] = C_f[i, j] * factor
                T.copy(C_f, C[by * block, bx * block])

        return kernel


    if __name__ == "__main__":
        for size in [64, 128]:
            print("size", size)
        func = make(128, 128, 128, 32)
        print(func.script()[:40])
    ''')


def test_seeded_kernel_bug_is_reduced_by_worker_processes(tmp_path):
    src, out = tmp_path / "buggy.py", tmp_path / "min.py"
    src.write_text(BUGGY_KERNEL)
    done = subprocess.run([sys.executable, "-m", "tilelang.autodd", str(src), "--err-msg", "T.gemm shape mismatch",
                           "-o", str(out), "--timeout", "60", "-j", "2"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    best = out.read_text()
    assert len(best) < len(BUGGY_KERNEL) * 0.6, best
    assert "T.gemm" in best and "print(" not in best and "T.Parallel" not in best
    rerun = subprocess.run([sys.executable, str(out)], capture_output=True, text=True, timeout=120)
    assert "T.gemm shape mismatch" in rerun.stdout + rerun.stderr
