"""Output indices of a kernel as the TVM-FFI calling convention sees them (the ``tilelang_out_idx`` attribute)."""

from __future__ import annotations

from typing import Any

__all__ = ["prepare_tvm_ffi_callee_allocated_outputs", "normalize_output_indices"]


def normalize_output_indices(indices: list[int], num_params: int) -> list[int]:
    """`indices` made non-negative; ValueError for one out of range or a duplicate."""
    out = []
    for raw in indices:
        index = int(raw) + (num_params if int(raw) < 0 else 0)
        if not 0 <= index < num_params:
            raise ValueError(f"out_idx index {raw} is out of range for a function with {num_params} parameters")
        out.append(index)
    if len(set(out)) != len(out):
        raise ValueError(f"out_idx contains duplicate tensor indices: {list(indices)}")
    return out


def prepare_tvm_ffi_callee_allocated_outputs(func: Any,
                                             out_idx: list[int] | int | None) -> tuple[Any, list[int] | None]:
    """``(func with tilelang_out_idx, output indices)``: a func that already carries the attribute keeps it (a
    different `out_idx` is a ValueError); otherwise `out_idx` is validated and attached to a copy of `func`."""
    requested = None if out_idx is None else ([out_idx] if isinstance(out_idx, int) else list(out_idx))
    attached = None
    if func.attrs is not None and "tilelang_out_idx" in func.attrs:
        attached = [int(i) for i in func.attrs["tilelang_out_idx"]]
    if attached is not None:
        if requested is not None:
            n = len(func.params)
            if normalize_output_indices(requested, n) != normalize_output_indices(attached, n):
                raise ValueError(f"out_idx {requested} does not match the PrimFunc's tilelang_out_idx attribute "
                                 f"{attached}")
        return func, attached
    if not requested:
        return func, None
    normalize_output_indices(requested, len(func.params))
    return func.with_attr("tilelang_out_idx", requested), requested
