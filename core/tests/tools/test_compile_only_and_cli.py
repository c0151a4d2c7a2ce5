"""compile_only and the ``tilelang`` tool subcommands, run as real processes on a kernel file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tilelang.tools.compile_only import resolve_target

KERNEL = textwrap.dedent('''\
    import tilelang
    import tilelang.language as T


    @tilelang.jit
    def scaled_copy(A, n: int = 256, factor: float = 2.0):
        A: T.Tensor((n,), T.float32)
        B = T.empty((n,), T.float32)
        with T.Kernel(T.ceildiv(n, 128), threads=128) as bx:
            for i in T.Parallel(128):
                B[bx * 128 + i] = A[bx * 128 + i] * factor
        return B


    if __name__ == "__main__":
        tilelang.lower(scaled_copy.get_tir(), target="c")
        print("script done")
    ''')


def tilelang_cli(*args, cwd=None, env=None):
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "tilelang.cli", *args], capture_output=True, text=True,
                          timeout=600, cwd=cwd, env=full_env)


@pytest.fixture
def kernel_file(tmp_path):
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL)
    return path


def test_resolve_target():
    assert resolve_target("cuda") == {"kind": "cuda", "arch": "sm_80"}
    assert resolve_target("cuda -arch=sm_90a") == {"kind": "cuda", "arch": "sm_90a"}
    assert resolve_target('{"kind": "cuda", "arch": "sm_90a"}') == {"kind": "cuda", "arch": "sm_90a"}
    assert resolve_target("llvm") == "llvm"
    with pytest.raises(ValueError, match="explicit"):
        resolve_target("auto")


@pytest.mark.backend("c")
def test_compile_only_writes_c_source(kernel_file, tmp_path):
    out = tmp_path / "k.c"
    done = subprocess.run([sys.executable, "-m", "tilelang.tools.compile_only", "--output_file", str(out),
                           str(kernel_file)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    source = out.read_text()
    assert "scaled_copy" in source and "2.000000e+00f" in source
    bad = subprocess.run([sys.executable, "-m", "tilelang.tools.compile_only", "--output_file", str(kernel_file),
                          str(kernel_file)], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and "must not be the input file" in bad.stderr


@pytest.mark.backend("cuda")
def test_compile_only_cuda_with_stats(kernel_file, tmp_path):
    out = tmp_path / "k.cu"
    done = tilelang_cli("compile-only", str(kernel_file), "-o", str(out), "--target", "cuda -arch=sm_90a",
                        "--set", "n=512", "--stats")
    assert done.returncode == 0, done.stderr
    assert "__global__" in out.read_text()
    assert "grid [4]" in done.stdout and "threads [128]" in done.stdout


@pytest.mark.backend("c")
def test_trace_pass_diff_and_profile_subcommands(kernel_file, tmp_path):
    env = {"TL_LOWER_TRACE": "", "TILELANG_PASS_DIFF": "", "TILELANG_PASS_PROFILE": ""}
    trace = tilelang_cli("trace", "--mode", "html", "--dir", str(tmp_path / "trace"), str(kernel_file), env=env)
    assert trace.returncode == 0, trace.stderr
    assert "script done" in trace.stdout and "pipeline_c/" in trace.stdout
    assert (tmp_path / "trace" / "kernel" / "report.html").exists()

    diff = tilelang_cli("pass-diff", "--mode", "html", "--output", str(tmp_path / "diff"), str(kernel_file), env=env)
    assert diff.returncode == 0, diff.stderr
    (report,) = os.listdir(tmp_path / "diff")
    assert "tl.LowerTileOps" in (tmp_path / "diff" / report).read_text()

    prof = tilelang_cli("profile-passes", str(kernel_file), env=env)
    assert prof.returncode == 0, prof.stderr
    assert "TileLang Pass Timing Report" in prof.stderr and "tl.LayoutInference(scaled_copy)" in prof.stderr


def test_analyze_subcommand(tmp_path):
    path = tmp_path / "gemm.py"
    path.write_text(open(os.path.join(os.path.dirname(__file__), "kernels.py")).read())
    done = tilelang_cli("analyze", str(path), "--kernel", "eager_gemm", "--arch", "h100")
    assert done.returncode == 0, done.stderr
    assert f"FLOPs               {2 * 64 ** 3:,}" in done.stdout and "-bound)" in done.stdout


def test_backends_still_works_and_help_lists_the_tools():
    assert json.loads(tilelang_cli("backends", "--json").stdout)
    out = tilelang_cli("--help").stdout
    for name in ("trace", "pass-diff", "profile-passes", "visualize", "compile-only", "analyze", "autodd"):
        assert name in out


ELEMENTWISE = textwrap.dedent('''\
    import tilelang
    import tilelang.language as T


    @tilelang.jit
    def scale(n: int, block: int = 128):
        @T.prim_func
        def main(A: T.Tensor((n,), T.float32), B: T.Tensor((n,), T.float32)):
            with T.Kernel(T.ceildiv(n, block), threads=block) as bx:
                for i in T.Parallel(block):
                    B[bx * block + i] = A[bx * block + i] * 2.0 + 1.0

        return main


    if __name__ == "__main__":
        kernel = tilelang.compile(scale.get_tir(256), target="c")  # through the kernel cache
        print("script done")
    ''')


def test_analyze_counts_an_elementwise_kernel(tmp_path):
    path = tmp_path / "scale.py"
    path.write_text(ELEMENTWISE)
    done = tilelang_cli("analyze", str(path), "--kernel", "scale", "--set", "n=4096", "--arch", "h100")
    assert done.returncode == 0, done.stderr
    # per element: one multiply and one add; a 4-byte load and a 4-byte store
    assert f"FLOPs               {2 * 4096:,}" in done.stdout
    assert f"global memory bytes {8 * 4096:,}" in done.stdout


def test_analyze_without_the_factory_arguments_is_a_clear_error(tmp_path):
    path = tmp_path / "scale.py"
    path.write_text(ELEMENTWISE)
    done = tilelang_cli("analyze", str(path), "--kernel", "scale", "--arch", "h100")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == ("tilelang analyze: error: kernel 'scale' needs arguments to be specialised "
                                   "(scale() missing 1 required positional argument: 'n'); pass them with --set "
                                   "NAME=VALUE")
    wrong = tilelang_cli("analyze", str(path), "--kernel", "nope")
    assert wrong.returncode == 2 and "Traceback" not in wrong.stderr
    assert "no @tilelang.jit kernel or PrimFunc named 'nope'" in wrong.stderr
    assert "(kernels there: scale)" in wrong.stderr


@pytest.mark.backend("c")
def test_pass_tools_run_the_pipeline_for_kernels_already_in_the_cache(tmp_path):
    """The script's kernel is in the disk cache (a first run put it there): trace, pass-diff and profile-passes
    still see every pass, because they bypass the cache."""
    path = tmp_path / "scale.py"
    path.write_text(ELEMENTWISE)
    env = {"TILELANG_CACHE_DIR": str(tmp_path / "cache"), "TL_LOWER_TRACE": "", "TILELANG_PASS_DIFF": "",
           "TILELANG_PASS_PROFILE": "", "TILELANG_DISABLE_CACHE": ""}
    first = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600,
                           env={**os.environ, **env})
    assert first.returncode == 0, first.stderr
    assert os.listdir(tmp_path / "cache" / "kernels")  # cached now
    trace = tilelang_cli("trace", "--mode", "terminal", "--dir", str(tmp_path / "trace"), str(path), env=env)
    assert trace.returncode == 0 and "pipeline_c/" in trace.stdout, trace.stdout + trace.stderr
    diff = tilelang_cli("pass-diff", str(path), env=env)
    assert diff.returncode == 0 and "tl.LowerTileOps" in diff.stdout + diff.stderr
    prof = tilelang_cli("profile-passes", str(path), env=env)
    assert prof.returncode == 0 and "TileLang Pass Timing Report" in prof.stderr
