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


def smem_addr(ptr: Any, loc: Any = None, ip: Any = None) -> Any:
    """The 32-bit shared-window address (an i32 for an ``r`` operand) of the shared-memory ``cute.Pointer`` `ptr`."""
    from cutlass.cutlass_dsl import T

    return llvm.ptrtoint(T.i32(), ptr.llvm_ptr, loc=loc, ip=ip)


def pointer_of(value: Any) -> Any:
    """The ``cute.Pointer`` of a pointer or a tensor (its iterator)."""
    import cutlass.cute as cute

    if isinstance(value, cute.Tensor):
        return value.iterator
    if isinstance(value, cute.Pointer):
        return value
    raise TypeError(f"expected a cute.Pointer or cute.Tensor, got {type(value).__name__}")
