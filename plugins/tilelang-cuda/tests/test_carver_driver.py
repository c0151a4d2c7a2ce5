"""``tilelang.carver.arch.driver`` (the CUDA plugin's `tilelang_cuda.carver_driver`): live device queries, and
what they say without a GPU."""

from __future__ import annotations

import types

import pytest

from tilelang.carver.arch import live


def test_driver_queries_say_a_gpu_is_needed() -> None:
    from tilelang.carver.arch import driver

    assert driver.get_cuda_device_properties() is None
    for query in (driver.get_device_name, driver.get_shared_memory_per_block,
                  driver.get_max_dynamic_shared_size_bytes, driver.get_persisting_l2_cache_max_size,
                  driver.get_registers_per_block):
        with pytest.raises(RuntimeError, match="no CUDA device 0 is visible"):
            query()
    with pytest.raises(RuntimeError, match="no CUDA device"):
        driver.get_device_attribute(driver.cudaDeviceAttrNames.cudaDevAttrMultiProcessorCount)


def test_sm_count_without_a_gpu_is_the_cpu_cores(caplog: pytest.LogCaptureFixture,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference's examples size persistent grids with ``driver.get_num_sms()``; moved to the CPU they get
    the cores that run blocks in parallel (said once), not an error; another device index still raises."""
    import os

    from tilelang.carver.arch import driver

    monkeypatch.setattr(live, "_WARNED", [])
    with caplog.at_level("WARNING", logger="tilelang.carver"):
        assert driver.get_num_sms() == len(os.sched_getaffinity(0))
    assert "no CUDA device is visible" in caplog.text
    with pytest.raises(RuntimeError, match="no CUDA device 1 is visible"):
        driver.get_num_sms(1)


def test_driver_reads_torch_properties(monkeypatch: pytest.MonkeyPatch) -> None:
    from tilelang_cuda.carver_driver import cuda_driver

    prop = types.SimpleNamespace(name="NVIDIA H200", multi_processor_count=132, shared_memory_per_block=49152,
                                 shared_memory_per_multiprocessor=233472)
    monkeypatch.setattr(cuda_driver, "get_cuda_device_properties", lambda device_id=0: prop)
    assert cuda_driver.get_num_sms() == 132 and cuda_driver.get_device_name() == "NVIDIA H200"
    assert cuda_driver.get_shared_memory_per_block(format="kb") == 48
    assert cuda_driver.get_max_dynamic_shared_size_bytes() == 233472
    with pytest.raises(ValueError, match="format must be one of"):
        cuda_driver.get_shared_memory_per_block(format="gib")
