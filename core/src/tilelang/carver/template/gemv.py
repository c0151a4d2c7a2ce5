"""`GEMVTemplate`: a matrix-vector product ``C[1, N] = A[1, K] @ B``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tvm import te

from tilelang.carver.arch import TileDevice
from tilelang.carver.roller.hint import Hint
from tilelang.carver.template.base import BaseTemplate, positive_ints
from tilelang.carver.template.matmul import epilogue
from tilelang.carver.utils import get_roller_hints_from_func

__all__ = ["GEMVTemplate"]


@dataclass(repr=False)
class GEMVTemplate(BaseTemplate):
    """``C[1, N] = sum_k A[1, K] * B[K, N]`` in `accum_dtype` (B stored as [N, K] with ``trans_B``, the default)."""

    N: int = None
    K: int = None
    trans_B: bool = True
    in_dtype: str = "float16"
    out_dtype: str = "float16"
    accum_dtype: str = "float16"
    with_bias: bool = False

    def get_hardware_aware_configs(self, arch: TileDevice = None, topk: int = 10) -> list[Hint]:
        return get_roller_hints_from_func(self._func, arch=arch, topk=topk)

    def initialize_function(self) -> None:
        M, N, K = 1, self.N, self.K
        positive_ints("GEMVTemplate", N=N, K=K)
        accum = str(self.accum_dtype)
        A = te.placeholder((M, K), name="A", dtype=str(self.in_dtype))
        B = te.placeholder((N, K) if self.trans_B else (K, N), name="B", dtype=str(self.in_dtype))
        k = te.reduce_axis((0, K), name="k")

        def product(i: Any, j: Any) -> Any:
            b = B[j, k] if self.trans_B else B[k, j]
            return te.sum(A[i, k].astype(accum) * b.astype(accum), axis=k)

        C = te.compute((M, N), product, name="C")
        bias = te.placeholder((N,), name="Bias", dtype=accum) if self.with_bias else None
        C = epilogue(C, (M, N), bias, lambda idx: idx[1], self.out_dtype, accum)
        self.set_function(te.create_prim_func([A, B, bias, C] if bias is not None else [A, B, C]))

    def params_as_dict(self) -> dict[str, Any]:
        return {"N": self.N, "K": self.K, "trans_B": self.trans_B, "in_dtype": self.in_dtype,
                "out_dtype": self.out_dtype, "accum_dtype": self.accum_dtype, "with_bias": self.with_bias}
