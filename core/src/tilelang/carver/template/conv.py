"""`ConvTemplate`: a 2-D convolution in NHWC / HWCF layouts, with stride, dilation and zero padding."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tvm import te, tirx

from tilelang.carver.arch import TileDevice
from tilelang.carver.roller.hint import Hint
from tilelang.carver.template.base import BaseTemplate, positive_ints
from tilelang.carver.template.matmul import epilogue
from tilelang.carver.utils import get_roller_hints_from_func

__all__ = ["ConvTemplate"]


@dataclass(repr=False)
class ConvTemplate(BaseTemplate):
    """``out[n, h, w, f] = sum A[n, h*S - P + kh*D, w*S - P + kw*D, c] * B[kh, kw, c, f]`` for batch N, C input
    channels, H x W input, F filters of K x K, stride S, dilation D and padding P (outside reads are zero)."""

    N: int = None
    C: int = None
    H: int = None
    W: int = None
    F: int = None
    K: int = None
    S: int = None
    D: int = None
    P: int = None
    in_dtype: str = "float16"
    out_dtype: str = "float16"
    accum_dtype: str = "float16"
    with_bias: bool = False

    def get_hardware_aware_configs(self, arch: TileDevice = None, topk: int = 10) -> list[Hint]:
        return get_roller_hints_from_func(self._func, arch=arch, topk=topk, allow_gemv=True)

    @property
    def output_hw(self) -> tuple[int, int]:
        """(OH, OW) of the convolution."""
        span = self.D * (self.K - 1) + 1
        return (self.H + 2 * self.P - span) // self.S + 1, (self.W + 2 * self.P - span) // self.S + 1

    def initialize_function(self) -> None:
        positive_ints("ConvTemplate", N=self.N, C=self.C, H=self.H, W=self.W, F=self.F, K=self.K, S=self.S,
                      D=self.D)
        if isinstance(self.P, bool) or not isinstance(self.P, int) or self.P < 0:
            raise ValueError(f"ConvTemplate: P must be a non-negative int, got {self.P!r}")
        OH, OW = self.output_hw
        if OH <= 0 or OW <= 0:
            raise ValueError(f"ConvTemplate: a {self.K}x{self.K} filter (dilation {self.D}) does not fit a "
                             f"{self.H}x{self.W} input padded by {self.P}")
        accum, S, D, P = str(self.accum_dtype), self.S, self.D, self.P
        A = te.placeholder((self.N, self.H, self.W, self.C), name="A", dtype=str(self.in_dtype))
        B = te.placeholder((self.K, self.K, self.C, self.F), name="B", dtype=str(self.in_dtype))
        kh = te.reduce_axis((0, self.K), name="kh")
        kw = te.reduce_axis((0, self.K), name="kw")
        c = te.reduce_axis((0, self.C), name="c")

        def conv(n: Any, h: Any, w: Any, f: Any) -> Any:
            y, x = h * S - P + kh * D, w * S - P + kw * D
            inside = te.all(y >= 0, y < self.H, x >= 0, x < self.W)
            value = te.if_then_else(inside, A[n, y, x, c].astype(accum) * B[kh, kw, c, f].astype(accum),
                                    tirx.const(0, accum))
            return te.sum(value, axis=[kh, kw, c])

        shape = (self.N, OH, OW, self.F)
        out = te.compute(shape, conv, name="C")
        bias = te.placeholder((self.F,), name="Bias", dtype=accum) if self.with_bias else None
        out = epilogue(out, shape, bias, lambda idx: idx[3], self.out_dtype, accum)
        self.set_function(te.create_prim_func([A, B, bias, out] if bias is not None else [A, B, out]))

    def params_as_dict(self) -> dict[str, Any]:
        return {"N": self.N, "C": self.C, "H": self.H, "W": self.W, "F": self.F, "K": self.K, "S": self.S,
                "D": self.D, "P": self.P, "in_dtype": self.in_dtype, "out_dtype": self.out_dtype,
                "accum_dtype": self.accum_dtype, "with_bias": self.with_bias}
