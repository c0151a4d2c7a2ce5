"""`WarpMatrixEmitter`: the warp-level matrix emitter that the backends' hand-written GEMM emitters subclass (CUDA
``mma.sync``, ROCm MFMA and WMMA).

A block computes a ``(block_row_warps * warp_row_tiles) x (block_col_warps * warp_col_tiles)`` tile; warp ``w`` of
the block (``lane = tid % WARP_SIZE``; by default ``warp_m = (tid // WARP_SIZE) % block_row_warps``, ``warp_n =
tid // (WARP_SIZE * block_row_warps)``, with ``is_m_first`` the other way round) owns ``warp_rows x warp_cols``
atoms of ``micro_size_x x micro_size_y``, and reads K in steps of ``k_pack * micro_size_k``. What every such
emitter does the same way lives here:

- the thread binding (`get_thread_binding`, `extract_thread_binding`);
- operand loads (`ldmatrix_a` / `ldmatrix_b`): per atom and register, one element of the shared (or global) tile
  into the lane's registers; a subclass gives the lane map (`_operand_lanes`: ``(lane, register) -> (row, col)``
  of an atom in storage order) or replaces a whole load (``ldmatrix``) in `_load_operand`;
- the accumulator store (`stmatrix`) to a 2-D or 4-D tile, by the accumulator map (`_accumulator_element`);
- the instruction loop over k-pack slices and atoms (`_each_atom`), the subclass issuing the instruction;
- the fragments of whole operand and accumulator tiles in these registers (`_make_load_layout`,
  `_make_store_layout`), from a subclass's lane maps.

The methods emit statements where they are called: into the enclosing ``T.prim_func`` body, or inside
`collecting` into a list (a tile-op lowering runs an emitter outside any body).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["OperandTiles", "WarpMatrixEmitter", "alloc_registers", "collecting", "emit", "is_fragment",
           "operand_region"]

_COLLECTORS: list[list[Any]] = []


@contextlib.contextmanager
def collecting() -> Iterator[list[Any]]:
    """Inside this context `emit` appends its statements to the yielded list instead of the IR builder's frame."""
    stmts: list[Any] = []
    _COLLECTORS.append(stmts)
    try:
        yield stmts
    finally:
        _COLLECTORS.pop()


def emit(stmt_or_call: Any) -> None:
    """Emit a statement (or evaluate an expression, e.g. an intrinsic call) where the emitter is called."""
    import tvm
    from tvm import tirx
    from tvm.script.ir_builder import tirx as B

    if _COLLECTORS:
        is_expr = isinstance(stmt_or_call, tvm.ir.Expr)
        _COLLECTORS[-1].append(tirx.Evaluate(stmt_or_call) if is_expr else stmt_or_call)
    elif isinstance(stmt_or_call, tvm.ir.Expr):
        B.evaluate(stmt_or_call)
    else:
        B.add_to_parent(stmt_or_call)


def alloc_registers(n: int, dtype: str, name: str) -> Any:
    """A local register array of `n` `dtype` elements in the current emission (builder frame or collector)."""
    if not _COLLECTORS:
        from tilelang.language import alloc_local

        return alloc_local((n,), dtype)
    from tvm import tirx

    buf = tirx.decl_buffer((n,), dtype, name=name, scope="local")
    _COLLECTORS[-1].append(tirx.AllocBuffer(buf))
    return buf


def operand_region(obj: Any) -> tuple[Any, list[Any]]:
    """``(buffer, mins)`` of a buffer, buffer region or element operand."""
    import tvm

    from tilelang.ir import region as R

    if R.is_region(obj):
        return obj.source, [r.min for r in obj.region]
    if R.is_load(obj):
        return obj.source, list(obj.indices)
    return obj, [tvm.tirx.IntImm("int32", 0) for _ in R.buffer_shape(obj)]


def is_fragment(buf: Any) -> bool:
    """Whether `buf` is a ``local.fragment`` buffer (a ``T.alloc_fragment``)."""
    from tilelang.ir import region as R

    return R.is_buffer(buf) and R.buffer_scope(buf) == "local.fragment"


@dataclass(frozen=True)
class OperandTiles:
    """One warp's view of an operand tile for one K step: where its atoms are and how a lane reads them.

    `leading`, `base0`, `base1`: the tile's origin in `buffer` (leading indices, then the two matrix dimensions in
    storage order); `mn_first`: storage is ``[MN, K]`` (A row-major, B as ``[N, K]``); atom ``t`` of the warp
    starts at MN ``warp * warp_tiles + t * micro`` and K `k0`; `element` maps ``(lane, register)`` to the
    element's ``(row, col)`` in the atom, in storage order.
    """

    is_a: bool
    buffer: Any
    leading: list[Any]
    base0: Any
    base1: Any
    lane: Any
    warp: Any
    mn_first: bool
    tiles: int
    per_tile: int
    micro: int
    warp_tiles: int
    k0: Any
    element: Callable[[Any, Any], tuple[Any, Any]]

    def index(self, t: int, row: Any, col: Any, k: Any = 0) -> list[Any]:
        """The buffer index of (`row`, `col`) of atom `t`, `k` further along K."""
        mn0 = self.warp * self.warp_tiles + t * self.micro
        lo, hi = (mn0, self.k0) if self.mn_first else (self.k0, mn0)
        first, second = self.base0 + lo + row, self.base1 + hi + col
        if k:
            if self.mn_first:
                second = second + k
            else:
                first = first + k
        return [*self.leading, first, second]


class WarpMatrixEmitter:
    """Warp-level GEMM emission shared by the matrix-instruction emitters (see the module docstring).

    A subclass sets the tile geometry (``micro_size_x/y/k``, ``warp_rows`` / ``warp_cols``, ``local_size_a/b/out``)
    and supplies the lane maps (`_operand_lanes`, `_store_map` or `_accumulator_element`) and the instruction.
    """

    WARP_SIZE = 32
    k_pack = 1  # K slices of micro_size_k one lane's registers hold per step
    is_m_first = False  # thread binding (lane, warp_n, warp_m) with warp_n varying fastest

    def __init__(self, a_dtype: Any = "float16", b_dtype: Any = "float16", accum_dtype: Any = "float16",
                 a_transposed: bool = False, b_transposed: bool = False, block_row_warps: int = 2,
                 block_col_warps: int = 2, warp_row_tiles: int = 8, warp_col_tiles: int = 8, chunk: int = 16,
                 thread_var: Any = None):
        self.a_dtype, self.b_dtype, self.accum_dtype = str(a_dtype), str(b_dtype), str(accum_dtype)
        self.a_transposed, self.b_transposed = a_transposed, b_transposed
        self.block_row_warps, self.block_col_warps = block_row_warps, block_col_warps
        self.warp_row_tiles, self.warp_col_tiles = warp_row_tiles, warp_col_tiles
        self.chunk = chunk
        self.thread_var = thread_var

    _region = staticmethod(operand_region)

    def _initialize_local_size(self, m_dim: int = 16, n_dim: int = 16, k_dim: int = 16, warp_size: int = 32) -> None:
        """Registers per lane of one A, B and accumulator atom, the atom spread over `warp_size` lanes."""
        self.local_size_a = m_dim * k_dim // warp_size
        self.local_size_b = n_dim * k_dim // warp_size
        self.local_size_out = m_dim * n_dim // warp_size

    # ------------------------------------------------------------------------------------ threads
    def get_thread_binding(self) -> Any:
        """The thread index: `thread_var` when given, else the enclosing ``T.Kernel``'s."""
        if self.thread_var is not None:
            return self.thread_var
        from tilelang.language import get_thread_binding

        return get_thread_binding()

    def extract_thread_binding(self, thread_id: Any, is_m_first: bool | None = None) -> tuple[Any, Any, Any]:
        """``(lane, warp_n, warp_m)`` of `thread_id`."""
        w = self.WARP_SIZE
        if is_m_first is None:
            is_m_first = self.is_m_first
        if is_m_first:
            return (thread_id % w, (thread_id // w) % self.block_col_warps,
                    (thread_id // (w * self.block_col_warps)) % self.block_row_warps)
        return (thread_id % w, (thread_id // (w * self.block_row_warps)) % self.block_col_warps,
                (thread_id // w) % self.block_row_warps)

    # ------------------------------------------------------------------------------------ operands
    def _operand_lanes(self, is_a: bool) -> Callable[[Any, Any], tuple[Any, Any]]:
        """``(lane, register) -> (row, col)`` of an A (`is_a`) or B atom, in the operand's storage order."""
        raise NotImplementedError(f"{type(self).__name__} gives no operand lane map (_operand_lanes)")

    @staticmethod
    def _storage_order(mn_k: Callable[..., tuple[Any, Any]], mn_first: bool) -> Callable[..., tuple[Any, Any]]:
        """A lane map giving ``(mn, k)`` made to give storage order (``(k, mn)`` unless `mn_first`)."""
        if mn_first:
            return mn_k

        def swapped(*args: Any) -> tuple[Any, Any]:
            mn, k = mn_k(*args)
            return k, mn

        return swapped

    def _operand(self, is_a: bool, src: Any, ki: Any, rk: Any) -> OperandTiles:
        """This warp's `OperandTiles` of A (`is_a`) or B for K step `ki` of chunk `rk`."""
        buffer, mins = operand_region(src)
        lane, warp_n, warp_m = self.extract_thread_binding(self.get_thread_binding())
        transposed = self.a_transposed if is_a else self.b_transposed
        return OperandTiles(
            is_a=is_a, buffer=buffer, leading=mins[:-2], base0=mins[-2], base1=mins[-1], lane=lane,
            warp=warp_m if is_a else warp_n, mn_first=(not transposed) if is_a else transposed,
            tiles=self.warp_rows if is_a else self.warp_cols,
            per_tile=self.k_pack * (self.local_size_a if is_a else self.local_size_b),
            micro=self.micro_size_x if is_a else self.micro_size_y,
            warp_tiles=self.warp_row_tiles if is_a else self.warp_col_tiles,
            k0=rk * self.chunk + ki * (self.k_pack * self.micro_size_k), element=self._operand_lanes(is_a))

    def _operand_index(self, op: OperandTiles, t: int, v: int) -> list[Any]:
        """The buffer index register `v` of atom `t` reads."""
        return op.index(t, *op.element(op.lane, v))

    @staticmethod
    def _gather(local_buf: Any, buffer: Any, tiles: int, per_tile: int, at: Callable[[int, int], list[Any]]) -> None:
        """``local_buf[t * per_tile + v] = buffer[at(t, v)]`` for every atom `t` and register `v`."""
        from tvm import tirx

        for t in range(tiles):
            for v in range(per_tile):
                dst = [tirx.IntImm("int32", t * per_tile + v)]
                emit(tirx.BufferStore(local_buf, tirx.BufferLoad(buffer, at(t, v)), dst))

    def _load_operand(self, is_a: bool, local_buf: Any, src: Any, ki: Any, rk: Any) -> None:
        """Load this warp's A (`is_a`) or B registers of K step `ki` (of chunk `rk`), element by element."""
        op = self._operand(is_a, src, ki, rk)
        self._gather(local_buf, op.buffer, op.tiles, op.per_tile, lambda t, v: self._operand_index(op, t, v))

    def ldmatrix_a(self, A_local_buf: Any, A_shared_buf: Any, ki: Any, rk: Any = 0) -> None:
        """Load this warp's A registers of K step `ki` (of chunk `rk`) from the shared tile."""
        self._load_operand(True, A_local_buf, A_shared_buf, ki, rk)

    def ldmatrix_b(self, B_local_buf: Any, B_shared_buf: Any, ki: Any, rk: Any = 0) -> None:
        """Load this warp's B registers of K step `ki` (of chunk `rk`) from the shared tile."""
        self._load_operand(False, B_local_buf, B_shared_buf, ki, rk)

    # ------------------------------------------------------------------------------------ compute
    def _each_atom(self, A_local_buf: Any, B_local_buf: Any, k_inner: Any = 0) -> Iterator[tuple[Any, Any, Any]]:
        """``(a, b, c)`` register-vector indices (in units of one atom's registers) of every k-pack slice and atom of
        the warp, k-pack slice outermost; fragment operands hold all K steps, `k_inner` picks one."""
        la, lb, lc = self.local_size_a, self.local_size_b, self.local_size_out
        a_stride = k_inner * self.warp_rows * self.k_pack * la if is_fragment(A_local_buf) else 0
        b_stride = k_inner * self.warp_cols * self.k_pack * lb if is_fragment(B_local_buf) else 0
        for kp in range(self.k_pack):
            for i in range(self.warp_rows):
                for j in range(self.warp_cols):
                    yield ((a_stride + (i * self.k_pack + kp) * la) // la,
                           (b_stride + (j * self.k_pack + kp) * lb) // lb, (i * self.warp_cols + j) * lc // lc)

    # ------------------------------------------------------------------------------------ accumulators
    def _store_map(self) -> Callable[[Any, Any], Any]:
        """``(lane, register) -> (row, col)`` of an accumulator atom, as `get_store_index_map` builds it."""
        raise NotImplementedError(f"{type(self).__name__} gives no accumulator map (_store_map)")

    def _accumulator_element(self, lane: Any, v: int) -> tuple[Any, Any]:
        """``(row, col)`` in its atom of accumulator register `v` of `lane` (`stmatrix`)."""
        return self._store_map()(lane, v)

    def get_store_index_map(self, inverse: bool = False) -> Any:
        """The ``(lane, value) -> (row, col)`` map of an accumulator atom (IndexMap; `inverse`: the other way)."""
        from tvm.tirx import IndexMap

        index_map = IndexMap.from_func(self._store_map(), index_dtype="int32")
        return index_map.inverse([self.WARP_SIZE, self.local_size_out]) if inverse else index_map

    def stmatrix(self, C_local_buf: Any, C_buf: Any, pid_m: Any = None, pid_n: Any = None) -> None:
        """Write the accumulators to `C_buf`: a 2-D tile of the block (or, with `pid_m` / `pid_n`, of the global
        matrix at that block), or a 4-D ``[block_m atoms, block_n atoms, micro_x, micro_y]`` tile."""
        from tvm import tirx

        from tilelang.ir import region as R

        dims = len(R.buffer_shape(C_buf))
        if dims not in (2, 4):
            raise ValueError("C_buf should be 2D or 4D")
        lane, warp_n, warp_m = self.extract_thread_binding(self.get_thread_binding())
        block_m, block_n = self.block_row_warps * self.warp_rows, self.block_col_warps * self.warp_cols
        dt = R.buffer_dtype(C_buf)
        for i in range(self.warp_rows):
            for j in range(self.warp_cols):
                for v in range(self.local_size_out):
                    row, col = self._accumulator_element(lane, v)
                    am, an = warp_m * self.warp_rows + i, warp_n * self.warp_cols + j
                    if pid_m is not None and pid_n is not None:
                        am, an = pid_m * block_m + am, pid_n * block_n + an
                    if dims == 2:
                        idx = [am * self.micro_size_x + row, an * self.micro_size_y + col]
                    else:
                        idx = [am, an, row, col]
                    src = tirx.BufferLoad(C_local_buf, [tirx.IntImm("int32", (i * self.warp_cols + j)
                                                                   * self.local_size_out + v)])
                    emit(tirx.BufferStore(C_buf, src if str(src.ty.dtype) == dt else tirx.Cast(dt, src), idx))

    # ------------------------------------------------------------------------------------ layouts
    def _make_load_layout(self, local_buf: Any, matrix: str, lane_of: Callable[[Any, Any], tuple[Any, Any]],
                          micro_k: int, per_tile: int, require_fragment: bool = False) -> Any:
        """The Fragment of a block's whole A (M x K) or B tile in the operand registers: element ``(mn, k)`` of
        atom ``(mn // micro, k // micro_k)`` sits at ``lane_of(mn % micro, k % micro_k)`` (``(lane, register)``)
        of the warp owning the atom, register ``(k // micro_k) * tiles * per_tile + atom * per_tile + v``;
        replicated over the warps of the other block dimension."""
        from tilelang.ir import region as R
        from tilelang.layout import Fragment

        if matrix not in ("A", "B"):
            raise ValueError("matrix should be either A or B")
        if require_fragment and not is_fragment(local_buf):
            raise ValueError(f"local_buf must be a fragment, got scope {R.buffer_scope(local_buf)}")
        is_a = matrix == "A"
        transposed = self.a_transposed if is_a else self.b_transposed
        mn_first = (not transposed) if is_a else transposed
        micro = self.micro_size_x if is_a else self.micro_size_y
        tiles = self.warp_rows if is_a else self.warp_cols

        # warp w = warp_m + warp_n * block_row_warps: A's atoms along M sit on warp_m and every warp_n holds a
        # copy (replica `rep` = warp_n); B's along N on warp_n, a copy in every warp_m (replica `rep` = warp_m)
        def forward(i: Any, j: Any, rep: Any = 0) -> tuple[Any, Any]:
            s, r = (i, j) if mn_first else (j, i)
            lane, v = lane_of(s % micro, r % micro_k)
            atom = (s // micro) % tiles
            warp = (s // micro) // tiles
            if is_a:
                thread = (warp + rep * self.block_row_warps) * self.WARP_SIZE + lane
            else:
                thread = (rep + warp * self.block_row_warps) * self.WARP_SIZE + lane
            return thread, (r // micro_k) * tiles * per_tile + atom * per_tile + v

        replicate = self.block_col_warps if is_a else self.block_row_warps
        return Fragment(R.buffer_shape(local_buf), forward_fn=forward, replicate=replicate)

    def _make_store_layout(self, local_buf: Any, lane_of: Callable[[Any, Any], tuple[Any, Any]]) -> Any:
        """The Fragment of the block's accumulator tile in the registers: element ``(i, j)`` of an atom sits at
        ``lane_of(i, j)`` (``(lane, register)``) of the warp owning the atom."""
        from tilelang.ir import region as R
        from tilelang.layout import Fragment

        mx, my = self.micro_size_x, self.micro_size_y

        def forward(i: Any, j: Any) -> tuple[Any, Any]:
            bi, bj = (i // mx) // self.warp_rows, (j // my) // self.warp_cols
            wi, wj = (i // mx) % self.warp_rows, (j // my) % self.warp_cols
            lane, v = lane_of(i % mx, j % my)
            if self.is_m_first:
                thread = bi * (self.block_col_warps * self.WARP_SIZE) + bj * self.WARP_SIZE + lane
            else:
                thread = bj * (self.block_row_warps * self.WARP_SIZE) + bi * self.WARP_SIZE + lane
            return thread, (wi * self.warp_cols + wj) * self.local_size_out + v

        return Fragment(R.buffer_shape(local_buf), forward_fn=forward)
