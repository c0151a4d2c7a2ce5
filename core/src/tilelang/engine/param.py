"""`KernelParam`: one parameter of a compiled kernel as the reference describes it (dtype, shape, predicates).

It adapts this project's `tilelang.artifact.ParamInfo` (``from_param_info``) and can be built from a tirx buffer
or scalar var (``from_buffer`` / ``from_var``). Shape entries are ints, or tirx Vars / names for dynamic dims.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tilelang.artifact import CompiledArtifact

__all__ = ["KernelParam", "CompiledArtifact"]


@dataclass
class KernelParam:
    """A kernel parameter: a tensor (``shape`` non-empty) or a scalar (``shape == []``)."""

    dtype: Any
    shape: list[Any]
    name: str = ""

    @classmethod
    def from_buffer(cls, buffer: Any) -> KernelParam:
        from tilelang.transform.utils import as_int

        shape = []
        for dim in buffer.ty.shape if hasattr(buffer, "ty") else buffer.shape:
            value = as_int(dim)
            shape.append(value if value is not None else dim)
        dtype = str(buffer.ty.dtype) if hasattr(buffer, "ty") else str(buffer.dtype)
        return cls(_dtype(dtype), shape, str(getattr(buffer, "name", "")))

    @classmethod
    def from_var(cls, var: Any) -> KernelParam:
        dtype = str(var.ty.dtype) if hasattr(getattr(var, "ty", None), "dtype") else str(var.dtype)
        return cls(_dtype(dtype), [], str(getattr(var, "name", "")))

    @classmethod
    def from_param_info(cls, info: Any) -> KernelParam:
        return cls(_dtype(info.dtype), list(info.shape), info.name)

    def _name(self) -> str:
        return str(self.dtype)

    def is_scalar(self) -> bool:
        return len(self.shape) == 0

    def is_unsigned(self) -> bool:
        return self._name().startswith("uint")

    def is_float8(self) -> bool:
        return self._name().startswith("float8")

    def is_float4(self) -> bool:
        return self._name().startswith("float4")

    def is_boolean(self) -> bool:
        return self._name() in ("bool", "boolean")

    def torch_dtype(self) -> Any:
        """The torch dtype holding this parameter's elements (sub-byte types are stored as int8)."""
        from tilelang.jit.arguments import torch_dtype

        if self.is_float4() or self._name().startswith(("int4", "uint4")):
            import torch

            return torch.int8
        return torch_dtype(self._name())

    def tilelang_dtype(self) -> Any:
        return self.dtype


def _dtype(name: str) -> Any:
    try:
        import tvm

        return tvm.DataType(name)
    except Exception:
        return name
