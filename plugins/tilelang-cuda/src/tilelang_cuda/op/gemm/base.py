"""`CudaGemm`: the adapter every ``tilelang.cuda.op.gemm`` class derives from.

A class names a GEMM instruction family (`inst`), the intrinsic emitter hand-written kernels use for it
(`intrin_emitter_cls`) and the target predicate of the reference's registry (`matches`); `lower` runs this
backend's lowering of ``T.gemm`` (`tilelang_cuda.tileops.gemm`, or core's generic SIMT GEMM for the FMA path) on
a tile-op context, so there is one implementation of each path.
"""

from __future__ import annotations

from typing import Any, ClassVar


class CudaGemm:
    """One CUDA GEMM path (see the module docstring)."""

    inst: ClassVar[str] = ""
    intrin_emitter_cls: ClassVar[Any] = None
    min_arch: ClassVar[int] = 80

    def __init__(self, gemm_node: Any = None):
        self.gemm_node = gemm_node

    @classmethod
    def matches(cls, target: Any) -> bool:
        from tilelang_cuda.target import target_is_cuda

        return target_is_cuda(target)

    @classmethod
    def tile_op_impl(cls) -> Any:
        """The TileOpImpl of ``tl.gemm`` this path lowers through."""
        from tilelang_cuda.tileops.gemm import GEMM

        return GEMM

    def lower(self, ctx: Any) -> Any:
        """Lower the ``tl.gemm`` call of tile-op context `ctx` through this backend's implementation."""
        impl = self.tile_op_impl()
        if impl.applies is not None and not impl.applies(ctx):
            raise ValueError(f"{type(self).__name__}: this gemm instance is not served by the {self.inst} path "
                             "(operand scopes, dtypes or tile shape)")
        return impl.lower(ctx)
