"""Tensor helpers: `TensorSupplyType`, `get_tensor_supply`, `torch_assert_close`, float8 helpers.

torch is imported inside the functions, so importing this module stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tilelang.profiler.supply import TensorSupplyType

__all__ = ["TensorSupplyType", "get_tensor_supply", "torch_assert_close", "is_float8_dtype",
           "fp8_remove_negative_zeros_", "map_torch_type"]

_FLOAT8_NAMES = ("float8_e5m2", "float8_e5m2fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e8m0fnu")


def is_float8_dtype(dtype: Any) -> bool:
    """Whether `dtype` is one of torch's float8 dtypes."""
    import torch

    return any(getattr(torch, name, None) == dtype for name in _FLOAT8_NAMES)


def fp8_remove_negative_zeros_(tensor: Any) -> None:
    """Replace -0.0 by +0.0 in a float8 tensor, in place (their bit patterns differ)."""
    if not is_float8_dtype(tensor.dtype):
        raise TypeError(f"fp8_remove_negative_zeros_ needs a float8 tensor, got {tensor.dtype}")
    import torch

    bits = tensor.view(torch.uint8)
    bits[tensor == 0] = 0


def map_torch_type(intype: str) -> Any:
    """The torch dtype for a TileLang/TVM dtype string (``"float16"`` -> ``torch.float16``)."""
    from tilelang.jit.arguments import torch_dtype

    return torch_dtype(str(intype))


def get_tensor_supply(supply_type: TensorSupplyType = TensorSupplyType.Integer) -> Callable[[Any], Any]:
    """A function ``param -> tensor`` filling one kernel parameter (a `tilelang.engine.param.KernelParam` or
    anything with ``shape`` and ``dtype``) as `supply_type` says, on the current device."""
    from tilelang.profiler.supply import supply_tensor
    from tilelang.utils.device import get_current_device

    def get_tensor(param: Any) -> Any:
        shape = list(getattr(param, "shape", ()) or ())
        if not shape:
            raise ValueError(f"TensorType must have a shape, but got {type(param).__name__}; a scalar or a tensor "
                             "with a dynamic symbolic shape cannot be supplied")
        dims = []
        for d in shape:
            try:
                dims.append(int(d))
            except (TypeError, ValueError):
                raise ValueError(f"TensorType must have a static shape, but got {shape}: a dynamic symbolic shape "
                                 "cannot be supplied") from None
        dtype = getattr(param, "dtype", "float32")
        return supply_tensor(supply_type, tuple(dims), str(dtype), get_current_device() or "cpu")

    return get_tensor


def _mismatch_attr(name: str, actual: Any, expected: Any) -> None:
    raise AssertionError(f"The values for attribute '{name}' do not match: {actual} != {expected}.")


def _check_attributes(actual: Any, expected: Any, *, check_device: bool, check_dtype: bool, check_layout: bool,
                      check_stride: bool) -> None:
    import torch

    if actual.shape != expected.shape:
        _mismatch_attr("shape", actual.shape, expected.shape)
    if actual.layout != expected.layout:
        if check_layout:
            _mismatch_attr("layout", actual.layout, expected.layout)
    elif actual.layout == torch.strided and check_stride and actual.stride() != expected.stride():
        _mismatch_attr("stride()", actual.stride(), expected.stride())
    if check_device and actual.device != expected.device:
        _mismatch_attr("device", actual.device, expected.device)
    if check_dtype and actual.dtype != expected.dtype:
        _mismatch_attr("dtype", actual.dtype, expected.dtype)


def _common_form(actual: Any, expected: Any) -> tuple[Any, Any]:
    """Both tensors on one device, in one dtype (unsigned wide ints as int64), strided."""
    import torch

    if actual.device != expected.device or actual.device.type == "mps":
        actual, expected = actual.cpu(), expected.cpu()
    if actual.dtype != expected.dtype:
        wide_unsigned = {getattr(torch, n) for n in ("uint16", "uint32", "uint64") if hasattr(torch, n)}
        a_dtype = torch.int64 if actual.dtype in wide_unsigned else actual.dtype
        b_dtype = torch.int64 if expected.dtype in wide_unsigned else expected.dtype
        common = torch.promote_types(a_dtype, b_dtype)
        actual, expected = actual.to(common), expected.to(common)
    if actual.layout != torch.strided:
        actual = actual.to_dense()
    if expected.layout != torch.strided:
        expected = expected.to_dense()
    return actual, expected


def torch_assert_close(tensor_a: Any, tensor_b: Any, rtol: float = 1e-2, atol: float = 1e-3,
                       max_mismatched_ratio: float = 0.001, verbose: bool = False, equal_nan: bool = True,
                       check_device: bool = True, check_dtype: bool = True, check_layout: bool = True,
                       check_stride: bool = False, base_name: str = "LHS", ref_name: str = "RHS") -> bool:
    """Assert that `tensor_a` and `tensor_b` are close, allowing up to ``max_mismatched_ratio`` of the elements
    outside ``|a - b| <= atol + rtol * |b|``. Returns True; raises AssertionError naming the first mismatch."""
    import torch

    _check_attributes(tensor_a, tensor_b, check_device=check_device, check_dtype=check_dtype,
                      check_layout=check_layout, check_stride=check_stride)
    a, b = _common_form(tensor_a, tensor_b)
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        a, b = a.to(torch.float64), b.to(torch.float64)
    mismatched = ~torch.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    n_bad = int(mismatched.sum().item())
    total = a.numel()
    allowed = int(total * max_mismatched_ratio)
    if verbose:
        print(f"Number of mismatched elements: {n_bad} / {total} (allowed: {allowed})")
    if n_bad <= allowed:
        return True
    flat = int(torch.argmax(mismatched.reshape(-1).int()).item())
    index = []
    rest = flat
    for dim in reversed(a.shape):
        index.append(rest % dim)
        rest //= dim
    index.reverse()
    a_val, b_val = a.reshape(-1)[flat].item(), b.reshape(-1)[flat].item()
    diff = (a - b).abs()
    rel = diff / (b.abs() + 1e-12)
    raise AssertionError(
        f"Too many mismatched elements: {n_bad} > {allowed} ({max_mismatched_ratio * 100:.2f}% allowed, but get "
        f"{n_bad / total * 100:.2f}%).\nFirst mismatch at index {index}: lhs={a_val:.6f}, rhs={b_val:.6f}, "
        f"abs_diff={abs(a_val - b_val):.6f}, rel_diff={abs(a_val - b_val) / (abs(b_val) + 1e-12):.6f}"
        f"\nGreatest absolute difference: {diff.max().item()}, Greatest relative difference: {rel.max().item()}"
        f"\n{base_name}: {tensor_a}\n{ref_name}: {tensor_b}"
    )
