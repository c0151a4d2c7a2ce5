"""Block rasterization plans: the order blocks visit output tiles, for L2 reuse (``T.use_swizzle`` in kernels)."""

from __future__ import annotations

__all__ = ["Rasterization", "NoRasterization", "Rasterization2DRow", "Rasterization2DColumn"]


class Rasterization:
    """A plan; `panel_width` is the number of block rows (or columns) one panel spans."""

    panel_width_: int | None = None

    def get_code(self) -> list[str]:
        raise NotImplementedError(f"{type(self).__name__} has no CUDA code")

    @property
    def panel_width(self) -> int:
        if self.panel_width_ is None:
            raise ValueError(f"{type(self).__name__} has no panel width")
        return self.panel_width_


class NoRasterization(Rasterization):
    """Blocks in launch order."""

    def __repr__(self) -> str:
        return "<NoRasterization>"

    def get_code(self) -> list[str]:
        return []


def _snake_function(name: str, across: str) -> str:
    """CUDA for a serpentine walk: panels of `panel_width` blocks times the grid's extent along `across`,
    visited one after another, alternating direction along `across`."""
    return f"""
__device__ __inline__ dim3 {name}(const int panel_width) {{
    const auto linear = blockIdx.x + gridDim.x * blockIdx.y;
    const auto per_panel = panel_width * gridDim.{across};
    const auto panels = (gridDim.x * gridDim.y + per_panel - 1) / per_panel;
    const auto panel = linear / per_panel;
    const auto width = panel + 1 < panels ? panel_width
                                          : (gridDim.x * gridDim.y - panel * per_panel) / gridDim.{across};
    const auto offset = linear - panel * per_panel;
    const auto a = (panel & 1) ? gridDim.{across} - offset / width - 1 : offset / width;
    const auto b = offset % width + panel * panel_width;
    return dim3({'a, b' if across == 'x' else 'b, a'}, blockIdx.z);
}}
"""


class Rasterization2DRow(Rasterization):
    """Panels of `panel_width` block columns, walked row by row, alternating direction."""

    def __init__(self, panel_width: int = 4) -> None:
        self.panel_width_ = panel_width

    def __repr__(self) -> str:
        return f"<Rasterization2DRow({self.panel_width_})>"

    def get_device_function(self) -> str:
        return _snake_function("rasterization2DRow", "y")

    def get_code(self, panel_width: int | None = None) -> list[str]:
        width = self.panel_width_ if panel_width is None else panel_width
        return [self.get_device_function(), f"const dim3 blockIdx = rasterization2DRow({width});\n"]


class Rasterization2DColumn(Rasterization):
    """Panels of `panel_width` block rows, walked column by column, alternating direction."""

    def __init__(self, panel_width: int = 4) -> None:
        self.panel_width_ = panel_width

    def __repr__(self) -> str:
        return f"<Rasterization2DColumn({self.panel_width_})>"

    def get_device_function(self) -> str:
        return _snake_function("rasterization2DColumn", "x")

    def get_code(self, panel_width: int | None = None) -> list[str]:
        width = self.panel_width_ if panel_width is None else panel_width
        return [self.get_device_function(), f"const dim3 blockIdx = rasterization2DColumn({width});\n"]
