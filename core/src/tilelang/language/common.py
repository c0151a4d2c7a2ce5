"""The backend-neutral language surface (the reference's ``tilelang.language.common``): everything of
``tilelang.language`` that no backend dialect contributes, plus TVM's backend-neutral TIR-script names."""

from __future__ import annotations

import importlib
from typing import Any

__tilelang_dialect__ = "common"


def _language() -> Any:
    return importlib.import_module("tilelang.language")


def __getattr__(name: str) -> Any:
    if name == "__all__":
        from tilelang.language.tir import common as tir_common

        value = tuple(dict.fromkeys([*_language().COMMON_NAMES, *tir_common.__all__]))
        globals()["__all__"] = value
        return value
    from tilelang.language import dialects

    if dialects.dialect_of(name) is not None:
        raise AttributeError(f"{name!r} belongs to the {dialects.dialect_of(name)} dialect, not the common surface")
    return getattr(_language(), name)
