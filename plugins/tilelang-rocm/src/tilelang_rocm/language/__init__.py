"""The ROCm dialect of the TileLang language (``tilelang.rocm.language``): the common language plus the AMD
constructs of the reference (``T.tvm_mfma`` / ``T.mfma``, ``T.tvm_rdna_wmma``, gfx950's ``T.ds_read_tr16_b64`` /
``T.ds_read_tr8_b64``, the MFMA / WMMA intrinsic emitters).

Installed as the ``rocm`` entry point of group ``tilelang.language``: the names are reachable as
``tilelang.language.<name>`` once this backend is installed, without ``import tilelang.language`` importing it.
Each construct lowers on the AMD GPUs that have it and is refused elsewhere with a LoweringError naming the
construct, the target and the first GPU with it.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from tilelang_rocm.language import intrinsics as _intrinsics
from tilelang_rocm.language.intrinsics import *  # noqa: F403

__tilelang_dialect__ = "rocm"


def _common_names() -> tuple[str, ...]:
    if importlib.util.find_spec("tilelang.language.common") is not None:
        return tuple(importlib.import_module("tilelang.language.common").__all__)
    return tuple(importlib.import_module("tilelang.language").__all__)


ROCM_NAMES: tuple[str, ...] = tuple(_intrinsics.__all__)
__all__ = tuple(dict.fromkeys((*_common_names(), *ROCM_NAMES, *_intrinsics.SHARED_LEGACY)))


def __getattr__(name: str) -> Any:
    if name in _intrinsics.SHARED_LEGACY:
        value = getattr(importlib.import_module("tilelang_rocm.language.tir"), name)
        globals()[name] = value
        return value
    if name in __all__:  # a common-language name
        value = getattr(importlib.import_module("tilelang.language"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'tilelang.rocm.language' has no attribute {name!r}")


def _register_lowering_elsewhere() -> None:
    """Targets other than ROCm refuse the dialect's constructs with a message naming them."""
    from tilelang_rocm.tileops.dialect import register_elsewhere

    register_elsewhere()


_register_lowering_elsewhere()
