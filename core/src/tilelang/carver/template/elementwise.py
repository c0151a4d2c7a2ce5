"""`ElementwiseTemplate`: ``B = A + 1`` over a tensor, the stand-in for any injective operator."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tvm import te

from tilelang.carver.arch import TileDevice
from tilelang.carver.roller.hint import Hint
from tilelang.carver.template.base import BaseTemplate, positive_ints
from tilelang.carver.utils import get_roller_hints_from_func

__all__ = ["ElementwiseTemplate"]


@dataclass(repr=False)
class ElementwiseTemplate(BaseTemplate):
    """``B[idx] = A[idx] + 1`` for every index of `shape`."""

    shape: list[int] = None
    dtype: str = "float16"

    def get_hardware_aware_configs(self, arch: TileDevice = None, topk: int = 10) -> list[Hint]:
        return get_roller_hints_from_func(self._func, arch=arch, topk=topk, allow_gemv=True)

    def initialize_function(self) -> None:
        if not self.shape:
            raise ValueError("ElementwiseTemplate needs a non-empty shape")
        positive_ints("ElementwiseTemplate", **{f"shape[{i}]": s for i, s in enumerate(self.shape)})
        shape = tuple(self.shape)
        A = te.placeholder(shape, name="A", dtype=str(self.dtype))
        B = te.compute(shape, lambda *idx: A[idx] + 1, name="B")
        self.set_function(te.create_prim_func([A, B]))

    def params_as_dict(self) -> dict[str, Any]:
        return {"shape": self.shape, "dtype": self.dtype}
