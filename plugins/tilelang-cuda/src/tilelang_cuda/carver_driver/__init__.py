"""Live device queries (CUDA through torch and the CUDA runtime)."""

from tilelang_cuda.carver_driver.cuda_driver import (
    cudaDeviceAttrNames,
    get_cuda_device_properties,
    get_device_attribute,
    get_device_name,
    get_max_dynamic_shared_size_bytes,
    get_num_sms,
    get_persisting_l2_cache_max_size,
    get_registers_per_block,
    get_shared_memory_per_block,
)

__all__ = [
    "cudaDeviceAttrNames", "get_cuda_device_properties", "get_device_name", "get_shared_memory_per_block",
    "get_device_attribute", "get_max_dynamic_shared_size_bytes", "get_persisting_l2_cache_max_size",
    "get_num_sms", "get_registers_per_block",
]
