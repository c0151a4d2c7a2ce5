"""Metal GEMM paths by matrix family (``tilelang.metal.op.gemm.gemm_metal``).

`GemmMetalSimdGroup` is ``T.gemm`` on 8x8 simdgroup matrices: this backend's lowering (`tilelang_metal.tileops.gemm`),
which serves fp16 / bf16 / fp32 operands with the C tile a fragment, on every Apple GPU. `GemmMetal` is the
Metal 4 cooperative-tensor path (MetalPerformancePrimitives ``matmul2d``, Apple M5 and newer, targets with the
``metal4`` key): `tilelang_metal.tileops.gemm_mpp`.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = ["GEMM_INST_METAL", "GEMM_INST_METAL_COOPERATIVE_TENSOR", "GemmMetal", "GemmMetalSimdGroup"]

GEMM_INST_METAL = "metal.simdgroup"
GEMM_INST_METAL_COOPERATIVE_TENSOR = "metal.cooperative_tensor"


class _MetalGemm:
    inst: ClassVar[str] = ""

    def __init__(self, gemm_node: Any = None):
        self.gemm_node = gemm_node

    @classmethod
    def matches(cls, target: Any) -> bool:
        from tilelang_metal.target import target_is_metal

        return target_is_metal(target)


class GemmMetalSimdGroup(_MetalGemm):
    """``T.gemm`` on 8x8 simdgroup matrices (`tilelang_metal.tileops.gemm`)."""

    inst = GEMM_INST_METAL

    @classmethod
    def tile_op_impl(cls) -> Any:
        from tilelang_metal.tileops.gemm import GEMM

        return GEMM

    def infer_layout(self, target: Any, thread_nums: int) -> dict[Any, Any]:
        """No layouts to impose: the accumulator keeps core's fragment layout and reaches the simdgroup matrices
        through threadgroup memory inside the lowering."""
        return {}

    def lower(self, ctx: Any) -> Any:
        """Lower the ``tl.gemm`` call of tile-op context `ctx` to simdgroup matrix operations."""
        impl = self.tile_op_impl()
        if not impl.applies(ctx):
            raise ValueError("GemmMetalSimdGroup: this gemm is not served by simdgroup matrices (operands must be "
                             "float16 / bfloat16 / float32 with a float32 or float16 accumulator, M, N and K "
                             "multiples of 8, C a fragment or a shared tile, whole simdgroups of 32 threads)")
        return impl.lower(ctx)


class GemmMetal(_MetalGemm):
    """``T.gemm`` on Metal 4 cooperative tensors (`tilelang_metal.tileops.gemm_mpp`)."""

    inst = GEMM_INST_METAL_COOPERATIVE_TENSOR

    @classmethod
    def matches(cls, target: Any) -> bool:
        from tilelang_metal.target import target_metal_supports_metal4

        return target_metal_supports_metal4(target)

    @classmethod
    def tile_op_impl(cls) -> Any:
        from tilelang_metal.tileops.gemm_mpp import GEMM_MPP

        return GEMM_MPP

    def infer_layout(self, target: Any, thread_nums: int) -> dict[Any, Any]:
        """No layouts to impose: A, B and C are read and written in place through pointers."""
        return {}

    def lower(self, ctx: Any) -> Any:
        """Lower the ``tl.gemm`` call of tile-op context `ctx` to MetalPerformancePrimitives ``matmul2d``."""
        impl = self.tile_op_impl()
        if ctx is None or not impl.applies(ctx):
            raise ValueError("GemmMetal: this gemm is not served by Metal 4 cooperative tensors (a metal4 target, "
                             "float16 A and B, a float32 or float16 C, no transposes, M / N / K multiples of "
                             "16 / 32 / 16, A / B / C global or shared)")
        return impl.lower(ctx)
