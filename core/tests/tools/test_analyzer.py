"""The roofline Analyzer on real tile programs (exact FLOP and byte counts) and named architectures."""

from __future__ import annotations

import pytest

from tilelang.tools import Analyzer
from tilelang.tools.Analyzer import ARCH_CONFIGS, named_device

from .kernels import eager_gemm, tiled_gemm


def test_counts_match_the_tiling():
    M = N = K = 128
    block = 32
    result = Analyzer.analysis(tiled_gemm(M, N, K, block, stages=2), "a100")
    assert result.total_flops == 2 * M * N * K
    tiles = (M // block) * (N // block)
    k_steps = K // block
    a_b_bytes = 2 * tiles * k_steps * block * block * 2  # A and B tiles, fp16
    c_bytes = tiles * block * block * 4  # the fp32 C tile, once per block
    assert result.total_global_bytes == a_b_bytes + c_bytes


def test_estimate_is_the_roofline_of_the_named_architecture():
    result = Analyzer.analysis(eager_gemm.get_tir(), "sm_80")
    cores, clock, fpc, sms = ARCH_CONFIGS["80"]
    peak = round(sms * cores * clock * fpc / 1e3, 1)
    assert result.expected_tflops == peak
    assert result.expected_bandwidth_GBps == named_device("a100").bandwidth[1] / 1000
    memory = result.total_global_bytes / (result.expected_bandwidth_GBps * 1e9)
    compute = result.total_flops / (peak * 1e12)
    assert result.estimated_time == pytest.approx(max(memory, compute))
    assert result.total_flops == 2 * 64 ** 3


def test_device_objects_unknown_arch_and_bad_input():
    class Hopper:
        compute_capability = "90"
        bandwidth = [0, 3_350_000]

    class Future:
        compute_capability = "120"
        bandwidth = [0, 1_000_000]

    assert Analyzer.analysis(tiled_gemm(), Hopper()).expected_tflops > 60
    unknown = Analyzer.analysis(tiled_gemm(), Future())
    assert unknown.expected_tflops is None
    assert unknown.estimated_time == pytest.approx(unknown.total_global_bytes / 1e12)
    with pytest.raises(ValueError, match="unknown architecture 'sm_7x'.*known names"):
        Analyzer.analysis(tiled_gemm(), "sm_7x")
    with pytest.raises(TypeError, match="get_tir"):
        Analyzer(eager_gemm, "a100")
