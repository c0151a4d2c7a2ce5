"""Pass configuration: `PassConfigKey` (the keys of ``pass_configs=``) and IR printing between passes.

``TILELANG_PRINT_IR=<pass name>|all`` prints the module after that pass (or after every pass) to stderr; a
pass name matches with or without its ``tl.`` prefix, case-insensitively.
"""

from __future__ import annotations

import contextlib
import contextvars
import enum
import os
import sys
from collections.abc import Iterator
from typing import Any


class PassConfigKey(str, enum.Enum):
    """Keys accepted in ``tilelang.lower(..., pass_configs={...})`` (reference TileLang spellings)."""

    TL_DISABLE_VECTORIZE = "tl.disable_vectorize"
    TL_DISABLE_SAFE_MEMORY_ACCESS = "tl.disable_safe_memory_access"
    TL_DISABLE_WARP_SPECIALIZED = "tl.disable_warp_specialized"
    TL_DISABLE_TMA_LOWER = "tl.disable_tma_lower"
    TL_ENABLE_FAST_MATH = "tl.enable_fast_math"
    TL_DISABLE_SOFTWARE_PIPELINE = "tl.disable_software_pipeline"
    TL_CONFIG_INDEX_BITWIDTH = "tl.config_index_bitwidth"
    TL_DEBUG_MERGE_SHARED_MEMORY_ALLOCATIONS = "tl.debug_merge_shared_memory_allocations"
    TL_DISABLE_SHARED_LAYOUTS = "tl.disable_shared_layouts"  # T.annotate_layout on shared tiles: check, don't apply
    TIR_DISABLE_VECTORIZE = "tirx.disable_vectorize"
    TIR_DISABLE_CSE = "tirx.disable_cse_tir"
    TIR_ENABLE_DEBUG = "tirx.enable_debug"
    TIR_DISABLE_ASSERT = "tirx.disable_assert"

    def __str__(self) -> str:
        return self.value


def normalize_pass_configs(configs: dict[Any, Any] | None) -> dict[str, Any]:
    """String keys; ``tir.*`` spellings of the reference map to TVM 0.27's ``tirx.*``."""
    out: dict[str, Any] = {}
    for key, value in (configs or {}).items():
        name = key.value if isinstance(key, PassConfigKey) else str(key)
        if name.startswith("tir."):
            name = "tirx." + name[4:]
        out[name] = value
    if out.get("tl.disable_vectorize"):
        out.setdefault("tirx.disable_vectorize", True)
    return out


def tvm_pass_configs(configs: dict[str, Any]) -> dict[str, Any]:
    """The subset of `configs` that TVM's PassContext understands (it rejects unknown keys)."""
    return {k: v for k, v in configs.items() if k.startswith("tirx.")}


_TL_CONFIGS: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("tl_pass_configs", default=None)


@contextlib.contextmanager
def tl_configs(configs: dict[str, Any]) -> Iterator[None]:
    """Make the ``tl.*`` pass configs visible to the passes run inside (TVM's PassContext rejects them)."""
    token = _TL_CONFIGS.set({k: v for k, v in configs.items() if k.startswith("tl.")})
    try:
        yield
    finally:
        _TL_CONFIGS.reset(token)


def current_tl_config(key: str, default: Any = None) -> Any:
    """The value of the ``tl.*`` pass config `key` in the current `tl_configs` scope."""
    return (_TL_CONFIGS.get() or {}).get(str(key), default)


def print_ir_target() -> str | None:
    value = os.environ.get("TILELANG_PRINT_IR", "").strip()
    return value or None


def PrintIRInstrument(which: str) -> Any:
    """A pass instrument that prints the module after pass `which` (or ``all``)."""
    import tvm

    wanted = which.lower()

    @tvm.instrument.pass_instrument
    class _PrintIR:
        def run_after_pass(self, mod: Any, info: Any) -> None:
            name = str(info.name)
            short = name.split(".", 1)[-1].lower()
            if wanted in ("all", "1") or wanted in (name.lower(), short):
                print(f"# ---- IR after {name}", file=sys.stderr)
                print(mod.script() if hasattr(mod, "script") else mod, file=sys.stderr)

    return _PrintIR()
