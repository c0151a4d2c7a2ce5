"""Profiler (supply types, hook, assert_allclose, do_bench), runtime threads, and the autotuner."""

from __future__ import annotations

import jit_kernels as kernels
import pytest
import torch

import tilelang
import tilelang.language as T
from tilelang.autotuner import AutoTuner, SerialExecutor
from tilelang.profiler import Profiler, TensorSupplyType, do_bench, supply_tensor

pytestmark = pytest.mark.backend("llvm")


@pytest.mark.parametrize("kind", list(TensorSupplyType))
def test_supply_types(kind):
    t = supply_tensor(kind, (64,), "float16", "cpu")
    assert t.shape == (64,) and t.dtype == torch.float16
    if kind is TensorSupplyType.Zero:
        assert not t.any()
    if kind is TensorSupplyType.One:
        assert (t == 1).all()
    if kind is TensorSupplyType.Integer:
        assert (t == t.round()).all()
    assert supply_tensor(kind, (8,), "int32", "cpu").dtype == torch.int32


def test_supply_hook_wins():
    from tilelang.backend import hookimpl
    from tilelang.backend.hooks import plugin_manager

    class Supplier:
        @hookimpl
        def tilelang_supply_tensor(self, supply_type, shape, dtype, device):
            return torch.full(shape, 7.0)

    supplier = Supplier()
    plugin_manager().register(supplier, name="test-supplier")
    try:
        assert (supply_tensor("normal", (3,), "float32", "cpu") == 7).all()
    finally:
        plugin_manager().unregister(supplier)


def test_profiler_checks_and_times():
    kernel = kernels.add(64, 16)
    profiler = kernel.get_profiler(tensor_supply_type="uniform")
    profiler.assert_allclose(lambda a, b: a + b)
    with pytest.raises(AssertionError, match="differ beyond"):
        profiler.assert_allclose(lambda a, b: a - b)
    latency = profiler.do_bench(warmup=1, rep=5)
    assert 0 < latency < 100
    assert profiler.do_bench(lambda a, b: a + b, n_warmup=2, n_repeat=10) > 0
    assert len(profiler.do_bench(quantiles=[0.5, 0.9], rep=5)) == 2


def test_profiler_func_is_the_kernel():
    """The reference's ``profiler.func(*inputs)`` / ``profiler(*inputs)`` call the kernel (examples time
    ``profiler.do_bench(profiler.func)``)."""
    kernel = kernels.add(64, 16)
    profiler = kernel.get_profiler()
    assert profiler.func is kernel
    a, b = torch.randn(64, 16), torch.randn(64, 16)
    torch.testing.assert_close(profiler.func(a, b), a + b)
    torch.testing.assert_close(profiler(a, b), a + b)
    assert profiler.do_bench(profiler.func, n_warmup=1, n_repeat=2) > 0


@pytest.mark.parametrize("backend", ["cupti", "cudagraph"])
def test_cuda_timing_backends_time_cpu_work_with_the_wall_clock(backend, caplog):
    """``do_bench(fn, backend="cupti")`` on CPU work (a CUDA example moved to the CPU) times it, with a warning,
    instead of failing; CUDA work with no GPU still fails, naming what is missing."""
    kernel = kernels.add(64, 16)
    a, b = torch.randn(64, 16), torch.randn(64, 16)
    with caplog.at_level("WARNING", logger="tilelang.profiler"):
        assert do_bench(lambda: kernel(a, b), n_warmup=1, n_repeat=3, backend=backend) > 0
        assert kernel.get_profiler().do_bench(backend=backend, n_warmup=1, n_repeat=2) > 0
    assert f'backend="{backend}"' in caplog.text and "wall clock" in caplog.text
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="needs a CUDA or ROCm GPU"):
            do_bench(lambda: None, backend=backend, device_type="cuda")


def test_jit_get_kernel_source_compiles_for_the_call():
    source = kernels.add.get_kernel_source(64, 16, block_M=16)
    assert source == kernels.add(64, 16, block_M=16).get_kernel_source() and source


def test_do_bench_return_modes():
    assert do_bench(lambda: None, warmup=1, rep=2, return_mode="min") >= 0
    with pytest.raises(ValueError, match="return_mode"):
        do_bench(lambda: None, warmup=1, rep=1, return_mode="best")


def test_profiler_symbolic_dims_need_values():
    import jit_artifacts as artifacts

    kernel = tilelang.JITKernel(artifacts.rowsum_dyn(), out_idx=-1)
    with pytest.raises(ValueError, match="symbolic dims"):
        Profiler(kernel).run_once()
    assert Profiler(kernel, dims={"m": 4, "w": 1}).run_once().shape == (4,)


def test_tvm_thread_pool_uses_every_core():
    import tvm_ffi

    from tilelang import env

    kernels.add(8, 8)(torch.randn(8, 8), torch.randn(8, 8))
    assert tvm_ffi.get_global_func("runtime.NumThreads")() == env.num_threads()


def test_autotune_decorator_picks_a_correct_config(cache_dir):
    result = kernels.tuned_add.tune(64, 32)
    assert result.config in ({"block_M": 8}, {"block_M": 16}, {"block_M": 64})
    assert result.latency > 0 and result.ref_latency > 0 and len(result.trials) == 3
    kernel = kernels.tuned_add(64, 32)
    assert kernel.config == result.config and kernel.latency == result.latency
    a, b = torch.randn(64, 32), torch.randn(64, 32)
    torch.testing.assert_close(kernel(a, b), a + b)
    # a new tuner finds the result on disk
    again = AutoTuner(kernels.tuned_add.jit_impl, [{"block_M": 8}, {"block_M": 16}, {"block_M": 64}],
                      progress=False, warmup=1, rep=5, ref_prog=lambda A, B: A + B).run(64, 32)
    assert again.from_cache and again.config == result.config


def test_autotuner_disqualifies_wrong_and_failing_configs():
    seen = []

    class Executor(SerialExecutor):
        def submit(self, fn, /, *args, **kwargs):
            seen.append(args[0].kwargs)
            return super().submit(fn, *args, **kwargs)

    def ref(a, b):
        return a + b

    @tilelang.jit(out_idx=[-1], target="cpu")
    def maybe_wrong(M, N, block_M=8, wrong=False):
        import tilelang.language as T

        if block_M == 3:
            raise ValueError("no such block")

        @T.prim_func
        def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
            with T.Kernel(M // block_M, is_cpu=True) as bx:
                for i, j in T.Parallel(block_M, N):
                    C[bx * block_M + i, j] = A[bx * block_M + i, j] - B[bx * block_M + i, j] if wrong else \
                        A[bx * block_M + i, j] + B[bx * block_M + i, j]

        return main

    configs = [{"block_M": 3}, {"block_M": 8, "wrong": True}, {"block_M": 16}]
    result = AutoTuner(maybe_wrong, configs, executor=Executor(), progress=False, warmup=1, rep=3,
                       ref_prog=ref).run(32, 8)
    assert len(seen) == 3
    assert result.config == {"block_M": 16}
    errors = [t["error"] for t in result.trials]
    assert "compile failed" in errors[0] and "differ" in errors[1] and errors[2] is None


def test_autotune_eager_elementwise(cache_dir):
    a, b = torch.randn(32, 16), torch.randn(32, 16)
    fn = kernels.tuned_eager_scale_add
    result = fn.tune(a, b)
    assert result.config in ({"block_M": 4}, {"block_M": 16}) and len(result.trials) == 2
    assert all(t["error"] is None for t in result.trials) and result.latency > 0 and result.ref_latency > 0
    assert result.kernel.config == result.config
    torch.testing.assert_close(fn(a, b), 2 * a + b)  # calling it runs the best kernel
    assert fn.tune(torch.zeros(32, 16), torch.ones(32, 16)) is result  # same shapes: tuned once
    # a new tuner finds the result on disk (keyed by shapes and dtypes, not the data)
    again = AutoTuner(fn.jit_impl, [{"block_M": 4}, {"block_M": 16}], progress=False, warmup=1, rep=3,
                      ref_prog=lambda A, B: A * 2.0 + B).run(torch.randn(32, 16), torch.randn(32, 16))
    assert again.from_cache and again.config == result.config


def test_autotuned_compile_returns_the_best_kernel(cache_dir):
    """The reference's ``autotuned.compile(*args)``: tune, then the best kernel, not run (lazy and eager)."""
    kernel = kernels.tuned_add.compile(64, 32)
    assert kernel.config == kernels.tuned_add.tune(64, 32).config
    a, b = torch.randn(64, 32), torch.randn(64, 32)
    torch.testing.assert_close(kernel(a, b), a + b)
    eager = kernels.tuned_eager_scale_add.compile(a, b)
    assert isinstance(eager, tilelang.JITKernel)
    assert eager.config is None or eager.config == kernels.tuned_eager_scale_add.tune(a, b).config
    torch.testing.assert_close(eager(a, b), 2 * a + b)


def test_autotune_eager_rejects_a_wrong_config():
    @tilelang.jit(target="cpu")
    def scale(A, factor: float = 2.0, block_M: int = 8):
        M, N = T.const("M, N")
        A: T.Tensor((M, N), T.float32)
        C = T.empty((M, N), T.float32)
        with T.Kernel(T.ceildiv(M, block_M), is_cpu=True) as bx:
            for i, j in T.Parallel(block_M, N):
                C[bx * block_M + i, j] = A[bx * block_M + i, j] * factor
        return C

    a = torch.randn(16, 8)
    result = AutoTuner(scale, [{"factor": 3.0}, {"factor": 2.0, "block_M": 4}], executor=SerialExecutor(),
                       progress=False, warmup=1, rep=3, ref_prog=lambda A: A * 2.0).run(a)
    assert result.config == {"factor": 2.0, "block_M": 4}
    assert "differ" in result.trials[0]["error"]


def test_autotune_eager_gemm():
    a, b = torch.randn(64, 32), torch.randn(32, 64)
    result = kernels.tuned_eager_gemm.tune(a, b)
    assert result.config in ({"block_M": 16, "block_N": 16}, {"block_M": 32, "block_N": 32})
    assert all(t["error"] is None for t in result.trials)
    torch.testing.assert_close(kernels.tuned_eager_gemm(a, b), a @ b, atol=1e-3, rtol=1e-3)
class _TimedLauncher:
    """Runs the real CPU launcher and reports a made-up device time (what a GPU timer would measure)."""

    def __init__(self, inner, device_ms):
        self.inner, self.device_ms, self.timed = inner, device_ms, []

    def __call__(self, *args):
        return self.inner(*args)

    def time_ms(self, *args, warmup=1, rep=5):
        self.timed.append(args)
        for _ in range(warmup + rep):
            self.inner(*args)
        return self.device_ms


def _fake_timed_backend(device_ms):
    from tilelang.backend import ExecutionBackend

    class FakeTimedBackend(ExecutionBackend):
        name = "fake-timed"
        torch_device_type = "cpu"
        launcher_checks_arguments = True
        default_alignment = 64

        def unavailable_reason(self):
            return None

        def load(self, artifact):
            self.launcher = _TimedLauncher(artifact.rt_mod[artifact.name], device_ms)
            return self.launcher

    return FakeTimedBackend()


def test_do_bench_uses_the_backends_device_timer():
    import jit_artifacts as artifacts

    backend = _fake_timed_backend(0.125)
    kernel = tilelang.JITKernel(artifacts.vadd(16), out_idx=[-1], execution_backend=backend)
    assert kernel.device_timer() is not None
    profiler = kernel.get_profiler()
    assert profiler.do_bench(n_warmup=2, n_repeat=7) == 0.125
    assert profiler.do_bench(quantiles=[0.5], warmup=1, rep=1) == 0.125
    timed = backend.launcher.timed
    assert len(timed) == (1 + 7) + (1 + 8)  # per figure: one estimate, then one per sample (rep / device time)
    a, _b, c = timed[0]  # every parameter, the output included, in order
    assert c.shape == (16,) and a.data_ptr() != c.data_ptr()
    # a reference function (not the kernel) is still timed wall-clock
    wall = profiler.do_bench(lambda x, y: x + y, n_warmup=1, n_repeat=5)
    assert wall != 0.125 and len(timed) == 17


def test_cpu_backend_has_no_device_timer_and_times_wall_clock():
    kernel = kernels.add(64, 16)
    assert kernel.device_timer() is None
    assert kernel.backend.device_timer(object()) is None
    assert 0 < kernel.get_profiler().do_bench(n_warmup=1, n_repeat=5) < 100


def test_do_bench_timer_argument():
    samples = iter([2.0, 1.0, 3.0, 5.0])
    assert do_bench(lambda: None, n_warmup=1, n_repeat=3, timer=lambda: next(samples), return_mode="max") == 5.0
