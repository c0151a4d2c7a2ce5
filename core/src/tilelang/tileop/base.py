"""Shared pieces of the tile operators' class-level API (the reference's ``tilelang.tileop.base``).

`GemmWarpPolicy` is the one policy enum of the project (`tilelang.ir.ops`, also ``T.GemmWarpPolicy``);
`TileOpBase` is what `GemmBase` and `GemmSPBase` build on: a view of one ``tl.*`` call site being lowered.
"""

from __future__ import annotations

from typing import Any

from tilelang.ir.ops import GemmWarpPolicy

__all__ = ["GemmWarpPolicy", "TileOpBase"]


class TileOpBase:
    """A view of one tile-op call site: `gemm_node` is the `tilelang.tileop.TileOpContext` the lowering pass
    builds for it (its call, target, fragments and analyzer). Subclasses implement `infer_layout` and `lower`."""

    op_name = ""  # the tl.* op this view reads, e.g. "tl.gemm"

    def __init__(self, gemm_node: Any) -> None:
        if not (hasattr(gemm_node, "region") and hasattr(gemm_node, "int_arg")):
            raise TypeError(f"{type(self).__name__} wraps a tile-op lowering context (tilelang.tileop.TileOpContext)"
                            f", got {type(gemm_node).__name__}")
        op = getattr(gemm_node, "op", None)
        if self.op_name and op is not None and op != self.op_name:
            raise ValueError(f"{type(self).__name__} reads {self.op_name} calls, got a {op} call")
        self.gemm_node = gemm_node

    def infer_layout(self, target: Any, thread_nums: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not implement infer_layout")

    def lower(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not implement lower")

    # ------------------------------------------------------------------ helpers
    def _region(self, index: int) -> Any:
        return self.gemm_node.region(index)

    def _buffer(self, index: int) -> Any:
        return self._region(index).source

    @staticmethod
    def _dtype(buffer: Any) -> str:
        return str(buffer.ty.dtype)

    @staticmethod
    def _row_stride(buffer: Any) -> Any:
        return buffer.ty.shape[-1]

    @staticmethod
    def _flat_offset(region: Any) -> Any:
        """The element offset of `region`'s first element in its row-major buffer."""
        offset: Any = 0
        for r, extent in zip(region.region, region.source.ty.shape):
            offset = offset * extent + r.min
        return offset

    def get_region_base_offsets(self, region: Any) -> list[Any]:
        """The start index of `region` in every dimension (``A[k % 2, 0:128, 0:64]`` -> ``[k % 2, 0, 0]``)."""
        return [] if region is None else [r.min for r in region.region]

    def _matrix_extents(self, index: int, trans: bool) -> tuple[Any, Any]:
        rows, cols = (r.extent for r in self._region(index).region[-2:])
        return (cols, rows) if trans else (rows, cols)

    def _policy(self, index: int) -> GemmWarpPolicy:
        return GemmWarpPolicy(self.gemm_node.int_arg(index, int(GemmWarpPolicy.Square)))
