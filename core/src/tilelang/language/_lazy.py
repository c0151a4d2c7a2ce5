"""How ``tilelang.language`` resolves a name it does not define eagerly (its ``__getattr__``).

In order: dtypes (``T.float16``, ``T.int``, ``T.float32x4``, made on first use so that importing the language
imports no TVM); TileLang names that live in modules imported on first use (`LAZY`); TVM's TIR-script surface
(`tilelang.language.tir.common`: ``T.evaluate``, ``T.call_extern``, ...); then the dialects of installed
backends (`tilelang.language.dialects`), which also phrase the error for a name nobody provides.
"""

from __future__ import annotations

import importlib
from typing import Any

# names that must not be cached in the module namespace (none at present; kept for dialect names that a later
# install could change)
UNCACHED: frozenset[str] = frozenset()

#: TileLang names defined in modules imported on first use: name -> "module:attribute"
LAZY: dict[str, str] = {
    "Ref": "tilelang.language.eager.builder:Ref",
    "PersistentTileScheduler": "tilelang.language.tile_schedule:PersistentTileScheduler",
    "BaseTileScheduler": "tilelang.language.tile_schedule:BaseTileScheduler",
    "inline": "tilelang.language.meta:inline",
    **{n: f"tilelang.language.ws_schedule:{n}" for n in (
        "WSID", "WSSyncKind", "WSRole", "WSPipeline", "WSInstr", "WSOpRef", "WSSync", "WSScope", "WSSchedule",
        "annotate_ws_schedule", "ws_op")},
    "meta_class": "tilelang.language.meta:meta_class",
    "PrimExpr": "tilelang.language.tir.ir:PrimExpr",
    "IntImm": "tilelang.language.tir.ir:IntImm",
    "StringImm": "tilelang.language.tir.ir:StringImm",
    "match_buffer": "tilelang.language.tir.ir:match_buffer",
    "alloc_buffer": "tilelang.language.tir.ir:alloc_buffer",
    "decl_buffer": "tilelang.language.tir.ir:decl_buffer",
    "align_up": "tilelang.language.tir.ir:align_up",
}


def _dtype_names() -> frozenset[str]:
    from tilelang.language import dtypes

    return frozenset(dtypes._all_dtypes) | {"dtype", "bool_", "AnyDType"}


def names() -> list[str]:
    """Every name this resolver knows without importing TVM (dtypes and `LAZY`)."""
    return sorted(_dtype_names() | set(LAZY))


def resolve(name: str) -> Any:
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(f"module 'tilelang.language' has no attribute {name!r}")
    if name in _dtype_names():
        from tilelang.language import dtypes

        return getattr(dtypes, name)
    if name in LAZY:
        module, attr = LAZY[name].split(":")
        return getattr(importlib.import_module(module), attr)
    from tilelang.language.tir import common

    if name in common.__all__:
        return getattr(common, name)
    from tilelang.language import dialects

    return dialects.lookup(name)
