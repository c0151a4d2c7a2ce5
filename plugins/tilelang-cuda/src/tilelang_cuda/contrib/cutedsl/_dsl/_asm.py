"""Inline PTX through the CuTe DSL's LLVM dialect (shared by the helper modules)."""

from __future__ import annotations

from typing import Any

from cutlass._mlir.dialects import llvm


def asm(result_type: Any, operands: list[Any], text: str, constraints: str, *, side_effects: bool = True,
        loc: Any = None, ip: Any = None) -> Any:
    """One ``asm volatile``-like statement: `text` with ``$n`` operands bound by `constraints` (LLVM syntax)."""
    return llvm.inline_asm(result_type, operands, text, constraints, has_side_effects=side_effects,
                           is_align_stack=False, asm_dialect=llvm.AsmDialect.AD_ATT, loc=loc, ip=ip)


def ir(value: Any, dtype: Any, loc: Any = None, ip: Any = None) -> Any:
    """`value` (Python number, DSL numeric or MLIR value) as an MLIR value of the DSL type `dtype`."""
    if hasattr(value, "type") and not hasattr(value, "ir_value"):
        return value
    return dtype(value).ir_value(loc=loc, ip=ip)
