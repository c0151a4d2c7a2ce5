"""`RocmGemm`: the adapter the ``tilelang.rocm.op.gemm`` classes derive from.

A class names a matrix-instruction family (`inst`), the intrinsic emitter hand-written kernels use for it
(`intrin_emitter_cls`) and the target predicate of the reference's registry (`matches`); `lower` runs this backend's
``T.gemm`` lowering (`tilelang_rocm.tileops.gemm`, MFMA on CDNA and WMMA on RDNA) on a tile-op context, so there is one
implementation of the path.
"""

from __future__ import annotations

from typing import Any, ClassVar


class RocmGemm:
    """One ROCm GEMM path (see the module docstring)."""

    inst: ClassVar[str] = ""
    intrin_emitter_cls: ClassVar[Any] = None

    def __init__(self, gemm_node: Any = None):
        self.gemm_node = gemm_node

    @classmethod
    def matches(cls, target: Any) -> bool:
        from tilelang_rocm.target import target_is_hip

        return target_is_hip(target)

    def lower(self, ctx: Any) -> Any:
        """Lower the ``tl.gemm`` call of tile-op context `ctx` through this backend's implementation."""
        from tilelang_rocm.tileops.gemm import GEMM

        if GEMM.applies is not None and not GEMM.applies(ctx):
            raise ValueError(f"{type(self).__name__}: this gemm instance is not served by the {self.inst} path "
                             "(GPU, operand dtypes, scopes or tile shape)")
        return GEMM.lower(ctx)
