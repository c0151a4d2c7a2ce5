"""Input tensors for profiling and autotuning: `TensorSupplyType` and `supply_tensor`.

Plugins answer the ``tilelang_supply_tensor`` hook first (first non-None wins); core's default follows.
"""

from __future__ import annotations

import enum
from typing import Any

from tilelang.artifact import ParamInfo

__all__ = ["TensorSupplyType", "supply_tensor", "supply_inputs"]


class TensorSupplyType(str, enum.Enum):
    """How input tensors are filled."""

    Normal = "normal"    # standard normal (integers: -2..2)
    Randn = "randn"      # standard normal, like torch.randn (integers: -2..2)
    Uniform = "uniform"  # uniform in [-1, 1) (integers: -2..2)
    Integer = "integer"  # random small integers (-2..2; 0..3 for unsigned) in any dtype
    Zero = "zero"
    One = "one"
    Auto = "auto"        # normal for floats, integer for integers, random for bool

    @classmethod
    def of(cls, value: Any) -> TensorSupplyType:
        try:
            return value if isinstance(value, cls) else cls(str(value).lower())
        except ValueError:
            names = ", ".join(m.value for m in cls)
            raise ValueError(f"unknown tensor supply type {value!r}; use one of: {names}") from None


def _default(kind: TensorSupplyType, shape: tuple[int, ...], dtype: Any, device: Any) -> Any:
    import torch

    if kind is TensorSupplyType.Zero:
        return torch.zeros(shape, dtype=dtype, device=device)
    if kind is TensorSupplyType.One:
        return torch.ones(shape, dtype=dtype, device=device)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, device=device).bool()
    if not dtype.is_floating_point or kind is TensorSupplyType.Integer:
        low, high = (0, 4) if dtype in (torch.uint8,) or str(dtype).startswith("torch.uint") else (-2, 3)
        return torch.randint(low, high, shape, device=device).to(dtype)
    if kind is TensorSupplyType.Uniform:
        return (torch.rand(shape, device=device) * 2 - 1).to(dtype)
    return torch.randn(shape, device=device).to(dtype)


def supply_tensor(supply_type: Any, shape: tuple[int, ...], dtype: str, device: Any) -> Any:
    """One input tensor: a plugin's ``tilelang_supply_tensor`` answer, else core's default for the type."""
    from tilelang.backend.hooks import plugin_manager
    from tilelang.jit.arguments import torch_dtype

    kind = TensorSupplyType.of(supply_type)
    made = plugin_manager().hook.tilelang_supply_tensor(supply_type=kind.value, shape=tuple(shape), dtype=dtype,
                                                        device=device)
    if made is not None:
        return made
    return _default(kind, tuple(shape), torch_dtype(dtype), device)


def supply_inputs(params: list[ParamInfo], inputs: list[int], supply_type: Any, device: Any,
                  dims: dict[str, int] | None = None) -> list[Any]:
    """Tensors (and zero scalars) for the kernel inputs `inputs`; symbolic dims take values from `dims`."""
    dims = dims or {}
    values = []
    for i in inputs:
        p = params[i]
        if not p.is_tensor:
            values.append(dims.get(p.name, 0))
            continue
        missing = [d for d in p.shape if isinstance(d, str) and d not in dims]
        if missing:
            raise ValueError(f"parameter {p.name!r} has symbolic dims {missing}: pass dynamic_symbolic_constraints= "
                             "(or dims=) with a value for each")
        shape = tuple(d if isinstance(d, int) else int(dims[d]) for d in p.shape)
        values.append(supply_tensor(supply_type, shape, p.dtype, device))
    return values
