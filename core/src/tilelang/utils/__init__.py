"""Utilities of the reference's `tilelang.utils`: tensor supply and comparison, buffer-scope predicates,
deprecation helpers, the current device. Submodules import lazily (torch and TVM only when used)."""

from __future__ import annotations

import importlib
from typing import Any

_LAZY: dict[str, str] = {
    "TensorSupplyType": "tilelang.utils.tensor",
    "torch_assert_close": "tilelang.utils.tensor",
    "get_tensor_supply": "tilelang.utils.tensor",
    "map_torch_type": "tilelang.utils.tensor",
    "deprecated": "tilelang.utils.deprecated",
    "deprecated_warning": "tilelang.utils.deprecated",
    "get_current_device": "tilelang.utils.device",
    "get_available_cpu_count": "tilelang.utils.device",
    "is_global": "tilelang.utils.language",
    "is_shared": "tilelang.utils.language",
    "is_shared_dynamic": "tilelang.utils.language",
    "is_tensor_memory": "tilelang.utils.language",
    "is_fragment": "tilelang.utils.language",
    "is_local": "tilelang.utils.language",
    "array_reduce": "tilelang.utils.language",
    "retrieve_stride": "tilelang.utils.language",
    "retrieve_shape": "tilelang.utils.language",
    "retrive_ptr_from_buffer_region": "tilelang.utils.language",
    "is_full_region": "tilelang.utils.language",
    "to_buffer_region": "tilelang.utils.language",
    "get_buffer_region_from_load": "tilelang.utils.language",
    "get_prim_func_name": "tilelang.utils.language",
    "side_effect": "tilelang.utils.language",
    "build_date": "tilelang.utils.version",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tilelang.utils' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = list(_LAZY)
