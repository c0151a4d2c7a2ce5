"""NVIDIA GPUs: the `CUDA` device model, SM-version parsing and the capability predicates."""

from __future__ import annotations

import re
from typing import Any

from tilelang.carver.arch._devices import DeviceSpec, default_device, lookup_device
from tilelang.carver.arch._target import resolve_target, target_attr
from tilelang.carver.arch.arch_base import TileDevice
from tilelang.carver.arch.live import cuda_device_properties

__all__ = [
    "is_cuda_arch", "is_volta_arch", "is_ampere_arch", "is_ada_arch", "is_hopper_arch",
    "is_tensorcore_supported_precision", "has_mma_support", "check_sm_version", "TensorInstruction", "CUDA",
]

# exactly one optional "sm_" prefix, the compute capability, then nvcc's feature-set letters (sm_90a, sm_120f)
_SM_ARCH = re.compile(r"(?:sm_)?([0-9]+)[A-Za-z]*")


def check_sm_version(arch: str) -> int:
    """The compute capability of an SM arch string as an int (``"sm_90a"`` -> 90); -1 when it is not one."""
    match = _SM_ARCH.fullmatch(str(arch))
    return int(match.group(1)) if match else -1


def is_cuda_arch(arch: TileDevice) -> bool:
    return isinstance(arch, CUDA)


def _sm(arch: TileDevice) -> int:
    return int(getattr(arch, "sm_version", -1))


def is_volta_arch(arch: TileDevice) -> bool:
    return is_cuda_arch(arch) and 70 <= _sm(arch) < 80


def is_ampere_arch(arch: TileDevice) -> bool:
    return is_cuda_arch(arch) and 80 <= _sm(arch) < 89


def is_ada_arch(arch: TileDevice) -> bool:
    return is_cuda_arch(arch) and _sm(arch) == 89


def is_hopper_arch(arch: TileDevice) -> bool:
    return is_cuda_arch(arch) and _sm(arch) == 90


def has_mma_support(arch: TileDevice) -> bool:
    return is_cuda_arch(arch) and _sm(arch) >= 80


_VOLTA_TC = {("float16", "float32"), ("float16", "float16")}
_AMPERE_TC = {("bfloat16", "float32"), ("float16", "float32"), ("float16", "float16"), ("int8", "int32"),
              ("int4", "int32"), ("int2", "int32"), ("int1", "int32")}
_ADA_TC = {("bfloat16", "float32"), ("float16", "float32"), ("float16", "float16"), ("int8", "int32"),
           ("float8_e5m2", "float32"), ("float8_e4m3", "float32"), ("float8_e4m3fn", "float32")}
# the reference's spellings of these tables
volta_tensorcore_supported = sorted(_VOLTA_TC)
ampere_tensorcore_supported = sorted(_AMPERE_TC)
ada_tensorcore_supported = sorted(_ADA_TC)
hopper_tensorcore_supported = ada_tensorcore_supported


def is_tensorcore_supported_precision(in_dtype: str, accum_dtype: str, arch: TileDevice) -> bool:
    """Whether tensor cores of `arch` multiply `in_dtype` into an `accum_dtype` accumulator."""
    pair = (str(in_dtype), str(accum_dtype))
    if is_volta_arch(arch):
        return pair in _VOLTA_TC
    if is_ampere_arch(arch):
        return pair in _AMPERE_TC
    if is_ada_arch(arch) or is_hopper_arch(arch):
        return pair in _ADA_TC
    raise ValueError(f"Unsupported architecture: {arch} (tensor-core precisions are known for sm_70 to sm_90)")


class TensorInstruction:
    """A matrix instruction: its name and the [M, N] shape it computes."""

    def __init__(self, name: str, shape: list[int]):
        self.name: str = name
        self.shape: list[int] = list(shape)

    def __repr__(self) -> str:
        return f"TensorInstruction({self.name!r}, {self.shape})"


class CUDA(TileDevice):
    """An NVIDIA GPU: read from the live device when torch sees one, else from the known-device table.

    `device` names a table entry ("H100", "H200", "A100", "RTX 4090", ...) and skips the live device; without
    it and without a GPU, the target's arch picks the part (sm_90 -> H100 SXM5, sm_80 -> A100, ...).
    """

    def __init__(self, target: Any = "cuda", device: str | None = None):
        super().__init__()
        self.target = resolve_target(target)
        self.sm_version = check_sm_version(str(target_attr(self.target, "arch", "")))
        self.platform = "CUDA"
        self.device: Any = None
        self.spec: DeviceSpec | None = None
        prop = None if device is not None else cuda_device_properties()
        if prop is not None and _is_hip_torch():
            prop = None  # a ROCm build of torch answers torch.cuda for an AMD GPU
        if prop is not None:
            self._from_live(prop)
        else:
            if device is not None:
                spec = lookup_device(device, "CUDA")
            else:
                sm = f"sm_{self.sm_version}" if self.sm_version > 0 else None
                spec = default_device("CUDA", sm)
            self._from_spec(spec)
            if self.sm_version < 0:
                self.sm_version = check_sm_version(spec.arch)
        self.reg_cap = 65536
        self.max_smem_usage = 2 * self.smem_cap
        self.sm_partition = 4
        target_l2 = target_attr(self.target, "l2_cache_size_bytes")
        if target_l2 is not None:
            self.l2_cache_size_bytes = int(target_l2)
        self.transaction_size = [32, 128]
        # relative global / shared bandwidth weights of the reference's tile scoring
        self.bandwidth = [750, 12080]
        self.available_tensor_instructions: list[TensorInstruction] | None = None

    def _from_live(self, prop: Any) -> None:
        self.source = "device"
        self.name = str(prop.name)
        self.smem_cap = int(prop.shared_memory_per_block)
        self.smem_per_sm = int(getattr(prop, "shared_memory_per_multiprocessor", 2 * self.smem_cap))
        self.compute_max_core = int(prop.multi_processor_count)
        self.warp_size = int(getattr(prop, "warp_size", 32))
        self.compute_capability = f"{prop.major}{prop.minor}"
        try:
            self.spec = lookup_device(self.name, "CUDA")
        except ValueError:
            self.spec = None
        self.l2_cache_size_bytes = int(getattr(prop, "L2_cache_size", 0)) or (self.spec.l2_bytes if self.spec else 0)
        try:
            import tvm

            self.device = tvm.runtime.device("cuda", 0)
        except Exception:  # a TVM build without the CUDA runtime still models the device
            self.device = None

    def _from_spec(self, spec: DeviceSpec) -> None:
        self.source = "table"
        self.spec = spec
        self.name = spec.name
        self.smem_cap = spec.smem_per_block
        self.smem_per_sm = spec.smem_per_cu
        self.compute_max_core = spec.compute_units
        self.warp_size = spec.warp_size
        self.compute_capability = str(check_sm_version(spec.arch))
        self.l2_cache_size_bytes = spec.l2_bytes

    def get_avaliable_tensorintrin_shapes(self) -> list[list[int]]:
        self.available_tensor_instructions = [TensorInstruction("mma", [16, 16]), TensorInstruction("wmma", [16, 16])]
        return [t.shape for t in self.available_tensor_instructions]

    def __repr__(self) -> str:
        return f"CUDA({self.target})"


def _is_hip_torch() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return getattr(torch.version, "hip", None) is not None
