"""Block-index rasterizations (``tl::rasterization2DRow`` ...) that walk the grid in panels for L2 reuse."""

from __future__ import annotations

import cutlass
import cutlass.cute as cute

from tilelang_cuda.contrib.cutedsl.threadblock_swizzle import dim3  # defined before this module is imported


def ThreadIdx() -> dim3:
    """``threadIdx`` as a `dim3`."""
    return dim3(*cute.arch.thread_idx())


def BlockIdx() -> dim3:
    """``blockIdx`` as a `dim3`."""
    return dim3(*cute.arch.block_idx())


def GridDim() -> dim3:
    """``gridDim`` as a `dim3`."""
    return dim3(*cute.arch.grid_dim())


def _snake(index, count, major, panel_width):
    """(position along `major`, position across) of tile `index` of `count` when the tiles are walked in panels
    `panel_width` tiles across, each panel along its `major` tiles, odd panels backwards; the last panel may be
    narrower."""
    if not isinstance(panel_width, int) or panel_width <= 0:
        raise ValueError(f"rasterization: panel_width must be a positive int, got {panel_width!r}")
    panel_size = panel_width * major
    panel_offset = index % panel_size
    panel_idx = index // panel_size
    total_panels = (count + panel_size - 1) // panel_size
    stride = cutlass.select_(panel_idx + 1 < total_panels, cutlass.Int32(panel_width),
                             (count - panel_idx * panel_size) // major)
    walked = panel_offset // stride
    along = cutlass.select_((panel_idx & 1) != 0, major - 1 - walked, walked)
    return along, panel_offset % stride + panel_idx * panel_width


def rasterization2DRow(panel_width: int) -> dim3:
    """The block this block computes when block rows are walked in panels of `panel_width` rows, snaking
    along x (``tl::rasterization2DRow``)."""
    b, g = BlockIdx(), GridDim()
    x, y = _snake(b.x + b.y * g.x, g.x * g.y, g.x, panel_width)
    return dim3(x, y, b.z)


def rasterization2DColumn(panel_width: int) -> dim3:
    """`rasterization2DRow` with x and y exchanged: panels of `panel_width` columns, snaking along y."""
    b, g = BlockIdx(), GridDim()
    y, x = _snake(b.x + b.y * g.x, g.x * g.y, g.y, panel_width)
    return dim3(x, y, b.z)


def _clusters(cluster_dim_x):
    if not isinstance(cluster_dim_x, int) or cluster_dim_x <= 0:
        raise ValueError(f"rasterization: cluster_dim_x must be a positive int, got {cluster_dim_x!r}")
    b, g = BlockIdx(), GridDim()
    clusters_x = g.x // cluster_dim_x
    return b, g, clusters_x, b.x // cluster_dim_x + b.y * clusters_x, b.x % cluster_dim_x


def rasterization2DRowWithCluster(panel_width: int, cluster_dim_x: int) -> dim3:
    """`rasterization2DRow` over clusters of `cluster_dim_x` blocks along x; a block keeps its rank in its
    cluster."""
    b, g, clusters_x, cluster, rank = _clusters(cluster_dim_x)
    x, y = _snake(cluster, clusters_x * g.y, clusters_x, panel_width)
    return dim3(x * cluster_dim_x + rank, y, b.z)


def rasterization2DColumnWithCluster(panel_width: int, cluster_dim_x: int) -> dim3:
    """`rasterization2DColumn` over clusters of `cluster_dim_x` blocks along x."""
    b, g, clusters_x, cluster, rank = _clusters(cluster_dim_x)
    y, x = _snake(cluster, clusters_x * g.y, g.y, panel_width)
    return dim3(x * cluster_dim_x + rank, y, b.z)
