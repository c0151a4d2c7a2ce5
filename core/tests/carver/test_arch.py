"""Device models of the carver: the known-device table, target routing, live-device fallbacks and driver errors."""

from __future__ import annotations

import types

import pytest

import tilelang.carver.arch as arch_mod
from tilelang.carver.arch import (
    CDNA,
    CPU,
    CUDA,
    METAL,
    RDNA,
    TileDevice,
    get_arch,
    has_mma_support,
    is_ada_arch,
    is_ampere_arch,
    is_cdna_arch,
    is_cpu_arch,
    is_cuda_arch,
    is_hopper_arch,
    is_metal_arch,
    is_rdna_arch,
    is_tensorcore_supported_precision,
    is_volta_arch,
)
from tilelang.carver.arch._devices import KNOWN_DEVICES, default_device, lookup_device
from tilelang.carver.arch._host import host_cpu
from tilelang.carver.arch._target import normalize_mcpu, rdna_generation, target_is_cdna, target_is_rdna
from tilelang.carver.arch.cuda import check_sm_version
from tilelang.carver.arch.rdna import _get_rdna_tuning_config


@pytest.fixture(autouse=True)
def _no_live_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Model every device from the table, as on a machine without GPUs."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


def _cuda(arch: str, **kw) -> CUDA:
    return CUDA({"kind": "cuda", "arch": arch}, **kw)


# ------------------------------------------------------------------ the table
@pytest.mark.parametrize(("name", "expected", "sms"), [
    ("H100", "H100 SXM5", 132), ("h200", "H200", 132), ("NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB", 108),
    ("RTX 4090", "GeForce RTX 4090", 128), ("NVIDIA GeForce RTX 4090", "GeForce RTX 4090", 128),
    ("MI300X", "Instinct MI300X", 304), ("mi250", "Instinct MI250", 104), ("gfx1151", "Radeon 8060S", 40),
    ("Apple M2 Max", "Apple M2 Max", 38),
])
def test_lookup_device_accepts_common_spellings(name: str, expected: str, sms: int) -> None:
    spec = lookup_device(name)
    assert spec.name == expected and spec.compute_units == sms


def test_lookup_device_does_not_match_short_aliases_inside_other_names() -> None:
    with pytest.raises(ValueError, match="RTX 4080"):  # must not become a T4 through "t4" in "rtx4080"
        lookup_device("NVIDIA GeForce RTX 4080")


def test_lookup_device_rejects_unknown_or_wrong_platform_names() -> None:
    with pytest.raises(ValueError, match=r"unknown CUDA device 'MI300X'.*H100 SXM5"):
        lookup_device("MI300X", "CUDA")
    with pytest.raises(ValueError, match="device table knows"):
        lookup_device("Voodoo 2")


def test_table_entries_are_consistent() -> None:
    for spec in KNOWN_DEVICES:
        assert spec.smem_per_block <= spec.smem_per_block_optin <= spec.smem_per_cu, spec.name
        assert spec.warp_size == {"CUDA": 32, "CDNA": 64, "RDNA": 32, "METAL": 32}[spec.platform], spec.name
        assert lookup_device(spec.name) is spec
        if spec.platform == "CDNA":
            assert spec.arch.startswith("gfx9")
        if spec.platform == "RDNA":
            assert rdna_generation(spec.arch) in (11, 12)


def test_default_device_per_arch_and_nearest_older_part() -> None:
    assert default_device("CUDA", "sm_90").name == "H100 SXM5"
    assert default_device("CUDA", "sm_80").name == "A100-SXM4-80GB"
    assert default_device("CUDA", "sm_87").name == "GeForce RTX 3090"  # no sm_87 part: the nearest older
    assert default_device("CDNA", "gfx942").name == "Instinct MI300X"
    assert default_device("RDNA", "gfx1200").name == "Radeon RX 9060 XT"
    assert default_device("METAL", None).name == "Apple M1"


# ------------------------------------------------------------------ CUDA
def test_check_sm_version() -> None:
    assert [check_sm_version(a) for a in ("sm_70", "sm_90a", "sm_100a", "sm_120f", "90")] == [70, 90, 100, 120, 90]
    assert [check_sm_version(a) for a in ("gfx942", "sm_", "", "sm_sm_90", "xsm_90", "sm_90_sm_80")] == [-1] * 6


def test_cuda_model_from_the_table_without_a_gpu() -> None:
    h100 = _cuda("sm_90a")
    assert (h100.source, h100.name, h100.sm_version, h100.compute_capability) == ("table", "H100 SXM5", 90, "90")
    assert (h100.compute_max_core, h100.warp_size, h100.smem_cap) == (132, 32, 48 * 1024)
    assert h100.max_smem_usage == 2 * h100.smem_cap and h100.l2_cache_size_bytes == 50 * 1024 * 1024
    assert h100.get_avaliable_tensorintrin_shapes() == [[16, 16], [16, 16]]
    h200 = _cuda("sm_90", device="H200")
    assert h200.name == "H200" and h200.spec.bandwidth_gbs > h100.spec.bandwidth_gbs
    assert _cuda("sm_80").compute_max_core == 108
    with pytest.raises(ValueError, match="unknown CUDA device"):
        _cuda("sm_90", device="MI300X")


def test_cuda_target_l2_attribute_overrides_the_table() -> None:
    target = types.SimpleNamespace(kind="cuda", attrs={"arch": "sm_80", "l2_cache_size_bytes": 1234})
    assert CUDA(target).l2_cache_size_bytes == 1234


def test_cuda_reads_the_live_device_through_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    from tilelang.carver.arch import cuda as cuda_model

    prop = types.SimpleNamespace(name="NVIDIA H100 80GB HBM3", major=9, minor=0, multi_processor_count=114,
                                 shared_memory_per_block=49152, shared_memory_per_multiprocessor=233472,
                                 warp_size=32, L2_cache_size=50 * 2**20)
    monkeypatch.setattr(cuda_model, "cuda_device_properties", lambda device_id=0: prop)
    live = _cuda("sm_90")
    assert (live.source, live.name, live.compute_max_core, live.compute_capability) == (
        "device", "NVIDIA H100 80GB HBM3", 114, "90")
    assert live.spec is not None and live.spec.name == "H100 SXM5"
    assert _cuda("sm_90", device="H200").source == "table"  # a named part never reads the live device


def test_capability_predicates() -> None:
    models = {sm: _cuda(f"sm_{sm}") for sm in (70, 80, 86, 89, 90, 100)}
    assert [is_volta_arch(m) for m in models.values()] == [True, False, False, False, False, False]
    assert [is_ampere_arch(m) for m in models.values()] == [False, True, True, False, False, False]
    assert [is_ada_arch(m) for m in models.values()] == [False, False, False, True, False, False]
    assert [is_hopper_arch(m) for m in models.values()] == [False, False, False, False, True, False]
    assert [has_mma_support(m) for m in models.values()] == [False, True, True, True, True, True]
    assert is_tensorcore_supported_precision("float16", "float32", models[80])
    assert is_tensorcore_supported_precision("int8", "int32", models[90])
    assert not is_tensorcore_supported_precision("int8", "int32", models[70])
    with pytest.raises(ValueError, match="Unsupported architecture"):
        is_tensorcore_supported_precision("float16", "float32", models[100])
    assert not is_cuda_arch(get_arch("llvm")) and not has_mma_support(get_arch("llvm"))


# ------------------------------------------------------------------ AMD
def test_mcpu_parsing() -> None:
    assert normalize_mcpu("gfx1151:sramecc+:xnack-") == "gfx1151"
    assert normalize_mcpu("sm_90") is None and normalize_mcpu("") is None
    generations = [rdna_generation(m) for m in ("gfx1030", "gfx1100", "gfx1151", "gfx1201", "gfx942")]
    assert generations == [10, 11, 11, 12, None]
    assert target_is_rdna({"kind": "hip", "mcpu": "gfx1200"})
    assert not target_is_rdna({"kind": "hip", "mcpu": "gfx942"})
    assert target_is_cdna({"kind": "rocm", "mcpu": "gfx90a"})
    assert not target_is_cdna({"kind": "rocm", "mcpu": "gfx1100"})


def test_amd_models_from_the_table() -> None:
    mi300 = get_arch({"kind": "hip", "mcpu": "gfx942"})
    assert isinstance(mi300, CDNA) and is_cdna_arch(mi300)
    assert (mi300.name, mi300.compute_max_core, mi300.warp_size, mi300.compute_capability) == (
        "Instinct MI300X", 304, 64, "94")
    assert get_arch({"kind": "rocm", "mcpu": "gfx950"}).smem_cap == 160 * 1024
    strix = get_arch({"kind": "hip", "mcpu": "gfx1151:sramecc+:xnack-"})
    assert isinstance(strix, RDNA) and is_rdna_arch(strix)
    assert (strix.name, strix.warp_size, strix.rdna_generation, strix.tuning.pipeline_stage) == (
        "Radeon 8060S", 32, 11, 2)
    assert strix.get_avaliable_tensorintrin_shapes() == [[16, 16]]
    assert CDNA({"kind": "hip", "mcpu": "gfx942"}, device="MI325X").spec.bandwidth_gbs == 6000


def test_rdna_tuning_table() -> None:
    default, strix = _get_rdna_tuning_config("gfx1100"), _get_rdna_tuning_config("gfx1151:sramecc+:xnack-")
    assert (default.preferred_warps_per_block, default.pipeline_stage) == (4, 1)
    assert (strix.preferred_warps_per_block, strix.pipeline_stage) == (4, 2)
    assert default.reduction_step_for_dtype_bits(16) == 32 and default.reduction_step_for_dtype_bits(8) is None
    assert _get_rdna_tuning_config(None) is default


def test_get_arch_routes_rdna_before_touching_a_device(monkeypatch: pytest.MonkeyPatch) -> None:
    # a target object of a kind TVM may not define: routing reads only kind and mcpu
    target = types.SimpleNamespace(kind=types.SimpleNamespace(name="hip"), attrs={"mcpu": "gfx1151"})
    monkeypatch.setattr(arch_mod, "RDNA", lambda t: ("rdna", t))
    monkeypatch.setattr(arch_mod, "CDNA", lambda t: ("cdna", t))
    assert get_arch(target) == ("rdna", target)
    cdna_target = types.SimpleNamespace(kind=types.SimpleNamespace(name="hip"), attrs={"mcpu": "gfx90a"})
    assert get_arch(cdna_target) == ("cdna", cdna_target)


def test_unsupported_rdna_generations_are_rejected() -> None:
    with pytest.raises(ValueError, match="gfx11/gfx12 targets only"):
        get_arch({"kind": "hip", "mcpu": "gfx1030"})
    with pytest.raises(ValueError, match="gfx11/gfx12 targets only"):
        RDNA({"kind": "hip", "mcpu": "gfx942"})


# ------------------------------------------------------------------ Metal, CPU, routing
def test_metal_model() -> None:
    m2 = METAL("metal", device="M2 Max")
    assert is_metal_arch(m2) and (m2.compute_max_core, m2.warp_size, m2.smem_cap) == (38, 32, 32 * 1024)
    assert m2.get_avaliable_tensorintrin_shapes() == [[8, 8]]
    with pytest.raises(ValueError, match="unknown METAL device"):
        METAL("metal", device="H100")


def test_cpu_model_is_this_machine() -> None:
    from tilelang.env import usable_cores

    cpu = get_arch("llvm")
    host = host_cpu()
    assert isinstance(cpu, CPU) and is_cpu_arch(cpu) and isinstance(cpu, TileDevice)
    assert cpu.compute_max_core == usable_cores() and cpu.sm_partition == 1
    assert cpu.warp_size == host.vector_bytes // 4 and cpu.warp_size in (2, 4, 8, 16)
    assert cpu.smem_cap == host.l2_bytes // 2 and cpu.reg_cap == host.l2_bytes // 32
    assert host.l1d_bytes > 0 and host.l2_bytes >= host.l1d_bytes
    assert cpu.summary()["platform"] == "CPU" and cpu.source == "host"
    assert isinstance(get_arch({"kind": "llvm"}), CPU) and isinstance(get_arch("c"), CPU)


def test_get_arch_routes_each_kind_and_rejects_others() -> None:
    assert isinstance(get_arch({"kind": "cuda", "arch": "sm_89"}), CUDA)
    assert isinstance(get_arch("metal"), METAL)
    with pytest.raises(ValueError, match="Unsupported target: webgpu"):
        get_arch(types.SimpleNamespace(kind="webgpu", attrs={}))


def test_auto_infer_current_arch(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.setattr(torch.version, "hip", None, raising=False)
    if hasattr(torch, "mps"):
        monkeypatch.setattr(torch.mps, "is_available", lambda: False, raising=False)
    assert isinstance(arch_mod.auto_infer_current_arch(), CPU)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=0: (9, 0))
    monkeypatch.setattr(arch_mod, "CUDA", lambda target: ("cuda", target))
    kind, target = arch_mod.auto_infer_current_arch()
    assert kind == "cuda" and str(target.attrs["arch"]).startswith("sm_90")


def test_device_models_work_without_the_targets_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    import tilelang.backend.target as target_registry
    from tilelang.errors import BackendNotInstalled

    def missing(target, *, return_object=False):
        raise BackendNotInstalled(str(target["kind"] if isinstance(target, dict) else target))

    monkeypatch.setattr(target_registry, "determine_target", missing)
    h100 = CUDA({"kind": "cuda", "arch": "sm_90a"})
    assert h100.name == "H100 SXM5" and h100.target.kind.name == "cuda"
    assert get_arch({"kind": "hip", "mcpu": "gfx942"}).target.kind.name == "rocm"  # TVM's name for hip
    assert get_arch("cpu").target.kind.name == "llvm"


def test_persistent_scheduler_sizes_itself_without_the_cuda_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    """``T.PersistentTileScheduler`` without ``num_workers`` takes the blocks that run at once from core (the SMs
    torch sees, else the CPU cores): a slim install without tilelang-cuda, whose CUDA driver queries are gone, can
    still build one (the scheduler used to ask ``tilelang.carver.arch.driver``)."""
    import os
    import sys

    import tilelang.language as T
    from tilelang.backend import plugins
    from tilelang.carver.arch import live

    monkeypatch.setattr(plugins, "module_aliases", lambda: {})  # as if no plugin provided the driver
    monkeypatch.delitem(sys.modules, "tilelang.carver.arch.driver", raising=False)
    monkeypatch.setattr(live, "_WARNED", [True])
    cores = len(os.sched_getaffinity(0))
    assert live.num_parallel_units() == cores

    try:
        @T.prim_func
        def main(A: T.Tensor((4, 3), "int32")):
            with T.Kernel(2, threads=1) as worker:
                sched = T.PersistentTileScheduler(4, 3, name="sched")
                sched.init(worker)
                A[0, 0] = sched.num_workers
    except ImportError as exc:  # (core's test hooks would turn a missing backend into a skip)
        pytest.fail(f"the scheduler needed a backend plugin: {exc}")
    assert f"A[0, 0] = {cores}" in main.script()
