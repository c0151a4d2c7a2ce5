"""The CPU's scalar GEMM path (``tilelang.cpu.op.gemm.gemm_scalar``): ``T.gemm`` as loops over the tile.

`GemmScalar` is the reference's name for the CPU fallback GEMM; here it runs this backend's row form of that loop nest
(`tilelang_cpu.tileops.gemm_row_fma.lower_gemm_cpu`: ``for i, k, j`` with the ``j`` loop over a row of C and of B,
vectorised by LLVM), which serves every CPU gemm the register-blocked micro-kernel (`tilelang_cpu.tileops.gemm`) does
not.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = ["GEMM_INST_SCALAR", "GemmScalar"]

GEMM_INST_SCALAR = "cpu.scalar"
CPU_KINDS = ("c", "llvm", "cpu")


class GemmScalar:
    """The scalar CPU GEMM: no layouts to infer (a CPU block is one thread), lowered to loops over the tile."""

    inst: ClassVar[str] = GEMM_INST_SCALAR

    def __init__(self, gemm_node: Any = None):
        self.gemm_node = gemm_node

    @classmethod
    def matches(cls, target: Any) -> bool:
        """Whether `target` (a Target, a dict or a kind name) is a CPU target."""
        kind = getattr(getattr(target, "kind", None), "name", None)
        if kind is None:
            kind = target.get("kind") if isinstance(target, dict) else str(target).split()[0]
        return str(kind) in CPU_KINDS

    @classmethod
    def tile_op_impl(cls) -> Any:
        """The ``tl.gemm`` implementation this path lowers through."""
        from tilelang_cpu.tileops.gemm_row_fma import GEMM_ROW_FMA

        return GEMM_ROW_FMA

    def infer_layout(self, target: Any, thread_nums: int) -> dict[Any, Any]:
        """No layouts: a CPU block runs as one thread, so every tile is the whole buffer."""
        if not self.matches(target):
            raise ValueError(f"GemmScalar serves CPU targets, not {target}")
        return {}

    def lower(self, ctx: Any) -> Any:
        """Lower the ``tl.gemm`` call of tile-op context `ctx` to the CPU loop nest."""
        impl = self.tile_op_impl()
        if impl.applies is not None and not impl.applies(ctx):
            raise ValueError("GemmScalar: this gemm is not served by the CPU loop path (it needs a one-thread "
                             "block and a C tile of constant width)")
        return impl.lower(ctx)
