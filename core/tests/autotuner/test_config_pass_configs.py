"""The reference's autotuning extras: a configuration's own ``pass_configs`` (compiled with them, merged over the
tuner's), and `AutoTuner.run`'s keywords (``warmup``, ``rep``, ``early_stop``, ``enable_grouped_compile``...)
taken as run options, not as kernel arguments (examples/gemm/example_gemm_autotune_pass_configs.py)."""

from __future__ import annotations

import pytest
import torch

import tilelang.language as T
from tilelang.autotuner import AutoTuner
from tilelang.transform import PassConfigKey

N = 64


def scaled(scale=1):
    @T.prim_func
    def main(A: T.Tensor((N,), T.float32), B: T.Tensor((N,), T.float32)):
        with T.Kernel(1, is_cpu=True):
            for i in T.serial(N):
                B[i] = A[i] * T.float32(scale)

    return main


def _tuner(configs):
    return (AutoTuner.from_kernel(kernel=scaled, configs=configs)
            .set_compile_args(out_idx=[-1], target="cpu", pass_configs={"tl.disable_vectorize": True})
            .set_profile_args(ref_prog=lambda a: a * 2))


@pytest.mark.backend("cpu")
def test_each_configuration_compiles_with_its_own_pass_configs():
    tuner = _tuner([{"scale": 2, "pass_configs": {PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True}},
                    {"scale": 2},
                    {"scale": 2, "pass_configs": {"tl.no_such_option": 1}}])
    tuner.progress, tuner.cache_results = False, False
    result = tuner.run(warmup=1, rep=3, timeout=30, enable_grouped_compile=True, group_compile_size=2)
    first, plain, bad = result.trials
    assert first["error"] is None and plain["error"] is None, result.trials
    # the configuration's own key reached the compiler: an unknown one fails that configuration only
    assert "tl.no_such_option" in bad["error"], bad
    assert result.config in (first["config"], plain["config"])
    configs = result.kernel.pass_configs
    assert configs.get("tl.disable_vectorize") is True  # the tuner's own stay under a configuration's
    assert configs.get("tl.disable_warp_specialized") is (True if "pass_configs" in result.config else None)
    a = torch.randn(N)
    torch.testing.assert_close(result.kernel(a), a * 2)
    assert tuner.profile.warmup == 1 and tuner.profile.rep == 3 and tuner.profile.timeout == 30


@pytest.mark.backend("cpu")
def test_a_kernel_parameter_named_like_a_run_option_stays_a_kernel_argument():
    def kernel(warmup=1):
        return scaled(warmup)

    tuner = (AutoTuner.from_kernel(kernel=kernel, configs=[{}])
             .set_compile_args(out_idx=[-1], target="cpu").set_profile_args(ref_prog=lambda a: a * 3))
    tuner.progress, tuner.cache_results = False, False
    result = tuner.run(warmup=3)
    a = torch.randn(N)
    torch.testing.assert_close(result.kernel(a), a * 3)
    assert tuner.profile.warmup != 3
