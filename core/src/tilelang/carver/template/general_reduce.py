"""`GeneralReductionTemplate`: a sum over the axes marked "R" of a structure string such as "SSR"."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tvm import te

from tilelang.carver.arch import TileDevice
from tilelang.carver.roller.hint import Hint
from tilelang.carver.template.base import BaseTemplate, positive_ints
from tilelang.carver.utils import get_roller_hints_from_func

__all__ = ["GeneralReductionTemplate"]


@dataclass(repr=False)
class GeneralReductionTemplate(BaseTemplate):
    """``C[spatial axes] = sum over reduce axes of A``: `structure` has one "S" or "R" per axis of `shape`
    ("SSR" sums the last axis of a 3-d tensor; "SS" is a copy)."""

    structure: str | list[str] = None
    shape: list[int] = None
    dtype: str = "float16"

    def get_hardware_aware_configs(self, arch: TileDevice = None, topk: int = 10) -> list[Hint]:
        return get_roller_hints_from_func(self._func, arch=arch, topk=topk, allow_gemv=False)

    def initialize_function(self) -> None:
        if self.structure is None or self.shape is None:
            raise ValueError("Must provide both `structure` and `shape`.")
        kinds = [str(s).upper() for s in self.structure]
        if len(kinds) != len(self.shape):
            raise ValueError("`structure` length must match `shape` length.")
        if any(k not in ("S", "R") for k in kinds):
            bad = next(k for k in kinds if k not in ("S", "R"))
            raise ValueError(f"Unrecognized axis type '{bad}', only 'S'/'R' allowed.")
        positive_ints("GeneralReductionTemplate", **{f"shape[{i}]": s for i, s in enumerate(self.shape)})
        A = te.placeholder(tuple(self.shape), name="A", dtype=str(self.dtype))
        reduce_axes = [te.reduce_axis((0, n), name=f"r{i}") for i, (k, n) in enumerate(zip(kinds, self.shape))
                       if k == "R"]
        out_shape = tuple(n for k, n in zip(kinds, self.shape) if k == "S")

        def gather(*spatial: Any) -> Any:
            s_iter, r_iter = iter(spatial), iter(reduce_axes)
            index = tuple(next(s_iter) if k == "S" else next(r_iter) for k in kinds)
            return te.sum(A[index], axis=reduce_axes) if reduce_axes else A[index]

        C = te.compute(out_shape, gather, name="C")
        self.set_function(te.create_prim_func([A, C]))

    def params_as_dict(self) -> dict[str, Any]:
        return {"structure": self.structure, "shape": self.shape, "dtype": self.dtype}
