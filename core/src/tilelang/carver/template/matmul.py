"""`MatmulTemplate`: ``C = A @ B`` (optionally transposed operands, a bias and an output cast)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tvm import te

from tilelang.carver.arch import TileDevice
from tilelang.carver.roller.hint import Hint
from tilelang.carver.template.base import BaseTemplate, positive_ints
from tilelang.carver.utils import get_roller_hints_from_func

__all__ = ["MatmulTemplate", "epilogue"]


def epilogue(C: Any, shape: tuple[int, ...], bias: Any, bias_index: Any, out_dtype: str, accum_dtype: str) -> Any:
    """Add `bias` (indexed by `bias_index` of the output indices) and cast to `out_dtype`, as separate stages
    ("C_bias", then "D")."""
    if bias is not None:
        C = te.compute(shape, lambda *idx: C[idx] + bias[bias_index(idx)], name="C_bias")
    if str(out_dtype) != str(accum_dtype):
        C = te.compute(shape, lambda *idx: C[idx].astype(str(out_dtype)), name="D")
    return C


@dataclass(repr=False)
class MatmulTemplate(BaseTemplate):
    """``C[M, N] = sum_k A[M, K] * B[K, N]`` in `accum_dtype`; ``trans_A`` stores A as [K, M], ``trans_B`` (the
    default) stores B as [N, K]."""

    M: int = None
    N: int = None
    K: int = None
    trans_A: bool = False
    trans_B: bool = True
    in_dtype: str = "float16"
    out_dtype: str = "float16"
    accum_dtype: str = "float16"
    with_bias: bool = False

    def get_hardware_aware_configs(self, arch: TileDevice = None, topk: int = 10) -> list[Hint]:
        return get_roller_hints_from_func(self._func, arch=arch, topk=topk, allow_gemv=True)

    def initialize_function(self) -> None:
        M, N, K = self.M, self.N, self.K
        positive_ints("MatmulTemplate", M=M, N=N, K=K)
        accum = str(self.accum_dtype)
        A = te.placeholder((K, M) if self.trans_A else (M, K), name="A", dtype=str(self.in_dtype))
        B = te.placeholder((N, K) if self.trans_B else (K, N), name="B", dtype=str(self.in_dtype))
        k = te.reduce_axis((0, K), name="k")

        def product(i: Any, j: Any) -> Any:
            a = A[k, i] if self.trans_A else A[i, k]
            b = B[j, k] if self.trans_B else B[k, j]
            return te.sum(a.astype(accum) * b.astype(accum), axis=k)

        C = te.compute((M, N), product, name="C")
        bias = te.placeholder((N,), name="Bias", dtype=accum) if self.with_bias else None
        C = epilogue(C, (M, N), bias, lambda idx: idx[1], self.out_dtype, accum)
        self.set_function(te.create_prim_func([A, B, bias, C] if bias is not None else [A, B, C]))

    def params_as_dict(self) -> dict[str, Any]:
        return {"M": self.M, "N": self.N, "K": self.K, "trans_A": self.trans_A, "trans_B": self.trans_B,
                "in_dtype": self.in_dtype, "out_dtype": self.out_dtype, "accum_dtype": self.accum_dtype,
                "with_bias": self.with_bias}
