"""Tile schedulers: which output tile a persistent block works on next.

`PersistentTileScheduler` walks an ``M x N`` grid of tiles in a linear order shared by ``num_workers``
persistent blocks (worker ``w`` takes tiles ``w, w + num_workers, ...``): column-major (M fastest) or
row-major, in panels of ``swizzle_size`` tiles along the slow axis for L2 reuse, optionally at the
granularity of clusters of ``cluster_size`` rows. Stateful use::

    sched = T.PersistentTileScheduler(m_tiles, n_tiles, num_workers=n_blocks)
    sched.init(block_id)
    while sched.valid():
        ...  # tile (sched.m_idx, sched.n_idx); sched.current_iter counts the tiles done
        sched.next_tile()

``stateful=False`` allocates nothing and offers only ``coord(tile_id) -> (m, n)``.
"""

from __future__ import annotations

from typing import Any

from tilelang.language.meta import meta_class


@meta_class
class BaseTileScheduler:
    """State (``T.alloc_var`` scalars) and traversal skeleton: subclasses decode ``linear_idx`` in
    ``update_current_idx`` and set ``_total_tiles``."""

    def __init__(self, stateful: bool = True, name: str | None = None):
        from tilelang.language.allocate import alloc_var

        self._stateful = stateful
        if stateful:
            self._m_idx = alloc_var("int32")
            self._n_idx = alloc_var("int32")
            self._linear_idx = alloc_var("int32")
            self._current_iter = alloc_var("int32")
        self._total_tiles: Any = 0

    def _state(self, attr: str) -> Any:
        from tvm import tirx

        if not self._stateful:
            raise AttributeError(f"{type(self).__name__} was made with stateful=False: it has no {attr.lstrip('_')}; "
                                 "use coord(tile_id)")
        return tirx.BufferLoad(getattr(self, attr), [0])

    @property
    def m_idx(self) -> Any:
        """The current tile's row (M index)."""
        return self._state("_m_idx")

    @property
    def n_idx(self) -> Any:
        """The current tile's column (N index)."""
        return self._state("_n_idx")

    @property
    def linear_idx(self) -> Any:
        """This worker's linear tile cursor."""
        return self._state("_linear_idx")

    @property
    def current_iter(self) -> Any:
        """How many tiles this worker has moved past (0 for its first)."""
        return self._state("_current_iter")

    def update_current_idx(self, linear_idx: Any) -> None:
        raise NotImplementedError("subclasses decode linear_idx into (m_idx, n_idx)")

    def valid(self) -> Any:
        """Whether the cursor is still inside the grid."""
        return self._state("_linear_idx") < self._total_tiles


@meta_class
class PersistentTileScheduler(BaseTileScheduler):
    """A grid-strided persistent scheduler with L2 swizzle and M-clustering (see the module docstring)."""

    def __init__(self, num_m_tiles: Any, num_n_tiles: Any, num_workers: Any = None, swizzle_size: int = 1,
                 column_major: bool = True, cluster_size: int = 1, stateful: bool = True, name: str | None = None):
        from tilelang.language.exprs import ceildiv

        super().__init__(stateful=stateful, name=name)
        if num_workers is None:
            from tilelang.carver.arch.live import num_parallel_units

            num_workers = num_parallel_units() // cluster_size
        self.num_workers = num_workers
        self.swizzle_size = swizzle_size
        self.cluster_size = cluster_size
        self._column_major = column_major
        m_clusters = ceildiv(num_m_tiles, cluster_size)
        self._total_tiles = m_clusters * num_n_tiles
        self._primary, self._secondary = (m_clusters, num_n_tiles) if column_major else (num_n_tiles, m_clusters)

    def coord(self, tile_id: Any) -> tuple[Any, Any]:
        """``(m, n)`` of linear tile `tile_id` (expressions only; the cluster row when ``cluster_size > 1``)."""
        from tilelang.language.exprs import max as tmax
        from tilelang.language.exprs import min as tmin

        primary, secondary, swizzle = self._primary, self._secondary, self.swizzle_size
        group = tile_id // (primary * swizzle)
        base = group * swizzle
        width = tmax(1, tmin(swizzle, secondary - base))  # a narrower last panel; never 0
        in_group = tile_id - group * (primary * swizzle)
        fast, slow = in_group // width, base + in_group % width
        return (fast, slow) if self._column_major else (slow, fast)

    def update_current_idx(self, linear_idx: Any) -> None:
        m, n = self.coord(linear_idx)
        self._m_idx[0] = m
        self._n_idx[0] = n

    def init(self, worker_id: Any) -> None:
        self._current_iter[0] = 0
        self._linear_idx[0] = worker_id
        self.update_current_idx(self._linear_idx[0])

    def next_tile(self) -> None:
        self._current_iter[0] = self._current_iter[0] + 1
        self._linear_idx[0] = self._linear_idx[0] + self.num_workers
        self.update_current_idx(self._linear_idx[0])
