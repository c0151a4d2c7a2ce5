"""The register layout of tensor-core accumulators, shared by the accumulator pass and the GEMM lowering.

A block tile ``M x N`` is split over a ``wm x wn`` grid of warps (warp ``w``: ``w_m = w % wm``,
``w_n = w // wm``) and into ``16 x 8`` MMA atoms. Thread ``lane`` of a warp holds 4 values per atom
(``c0 c1`` at row ``lane/4``, ``c2 c3`` eight rows below; columns ``2*(lane%4) + {0, 1}``), which is the
accumulator layout of both ``mma.sync.m16n8k*`` and (four warps per warpgroup, ``wm`` a multiple of 4)
``wgmma.m64nNk16`` with ``N = n / wn``. Rows interleave warps (``mi * 16 * wm + w_m * 16``) so a warpgroup's
atoms form the contiguous 64-row block wgmma writes; columns are contiguous per warp.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MMA = 0    # mma.sync (sm_80+)
WGMMA = 1  # wgmma.mma_async (sm_90a)
# Volta mma.sync.m8n8k4 (sm_70): 16 x 16 warp atoms, quad-pair q = (lane // 4) % 4 computes the 8 x 8 block at
# rows 8 * (q % 2), columns 8 * (q // 2); inside it the m8n8k4 accumulator fragment of the PTX ISA ("Matrix
# Fragments for mma.m8n8k4"), which differs for fp32 and fp16 accumulators
VOLTA_F32 = 2
VOLTA_F16 = 3
VOLTA = (VOLTA_F32, VOLTA_F16)


@dataclass(frozen=True)
class AccumulatorLayout:
    """``M x N`` accumulator over ``wm x wn`` warps; `instr` is `MMA`, `WGMMA` or `VOLTA_F32` / `VOLTA_F16`
    (whose 16 x 16 atoms hold the same 8 registers per lane as two 16 x 8 MMA atoms)."""

    m: int
    n: int
    wm: int
    wn: int
    instr: int = MMA

    @property
    def mi(self) -> int:
        """16-row atoms per warp."""
        return self.m // (16 * self.wm)

    @property
    def ni(self) -> int:
        """8-column atoms per warp."""
        return self.n // (8 * self.wn)

    @property
    def regs(self) -> int:
        """Accumulator registers per thread."""
        return self.mi * self.ni * 4

    def warp_coords(self, tid: Any) -> tuple[Any, Any, Any]:
        """``(lane, w_m, w_n)`` of linear thread `tid`; the layout repeats every ``wm * wn`` warps, so a warp role
        of that many warps starting on a multiple of them (``128 <= tx < 256``) holds the whole tile."""
        warp = tid // 32
        return tid % 32, warp % self.wm, (warp // self.wm) % self.wn

    def position(self, tid: Any, r: Any) -> tuple[Any, Any]:
        """``(row, col)`` in the tile of register `r` of thread `tid`."""
        lane, w_m, w_n = self.warp_coords(tid)
        if self.instr in VOLTA:
            return self._volta_position(lane, w_m, w_n, r)
        e, h = r % 2, (r // 2) % 2
        atom = r // 4
        mi, ni = atom // self.ni, atom % self.ni
        row = mi * (16 * self.wm) + w_m * 16 + lane // 4 + h * 8
        col = w_n * (self.n // self.wn) + ni * 8 + (lane % 4) * 2 + e
        return row, col

    def _volta_position(self, lane: Any, w_m: Any, w_n: Any, r: Any) -> tuple[Any, Any]:
        """Register `r` = 8 * atom + i: value i of the lane's m8n8k4 accumulator fragment in 16 x 16 atom `atom`."""
        atom, i = r // 8, r % 8
        mi, nj = atom // (self.ni // 2), atom % (self.ni // 2)
        quad, hi = (lane // 4) % 4, lane // 16
        # fp32: row (lane & 1) + (i & 2) (+4 for lanes 16..31), col (i & 4) + (lane & 2) + (i & 1)
        if self.instr == VOLTA_F32:
            row = lane % 2 + ((i // 2) % 2) * 2 + hi * 4
            col = (i // 4) * 4 + ((lane // 2) % 2) * 2 + i % 2
        else:  # fp16: row lane % 4 (+4 for lanes 16..31), col i
            row, col = lane % 4 + hi * 4, i
        row = mi * (16 * self.wm) + w_m * 16 + (quad % 2) * 8 + row
        col = w_n * (self.n // self.wn) + nj * 16 + (quad // 2) * 8 + col
        return row, col

    def to_args(self) -> list[int]:
        return [self.m, self.n, self.wm, self.wn, self.instr]

    @classmethod
    def from_args(cls, values: list[int]) -> AccumulatorLayout:
        return cls(*values[:5])


def choose(m: int, n: int, warps: int, policy: int, *, n_unit: int = 16, wgmma: bool = False,
           split_n: bool = False, instr: int = MMA) -> AccumulatorLayout | None:
    """A feasible warp grid for an ``m x n`` tile (policy: 0 square, 1 full row, 2 full column), or None. Square
    is the reference's (and `GemmWarpPolicy.compute_warp_partition`'s) choice: 128x256 over 4 warps is 2x2.

    wgmma: warpgroups stacked along M (each issues ``m64nN`` for every 64-row block of its own); with `split_n`,
    where that is infeasible (fewer than 64 rows per warpgroup, or N over 256), warpgroups side by side along N,
    each issuing ``m64n(N/g)`` on its column slice -- the reference's grid for MLA decode's 64 heads over two
    warpgroups."""
    if wgmma:
        if warps % 4:
            return None
        if m % (16 * warps) == 0 and n % 8 == 0 and 8 <= n <= 256:
            return AccumulatorLayout(m, n, warps, 1, WGMMA)
        groups = warps // 4
        for g_n in range(2, groups + 1) if split_n else ():
            g_m = groups // g_n
            if groups % g_n == 0 and m % (64 * g_m) == 0 and n % (8 * g_n) == 0 and 8 <= n // g_n <= 256:
                return AccumulatorLayout(m, n, 4 * g_m, g_n, WGMMA)
        return None
    grids = [(wm, warps // wm) for wm in range(1, warps + 1) if warps % wm == 0]
    grids = [(wm, wn) for wm, wn in grids if m % (16 * wm) == 0 and n % (n_unit * wn) == 0]
    if not grids:
        return None
    if policy == 1:
        wm, wn = max(grids)
    elif policy == 2:
        wm, wn = min(grids)
    else:  # the warp tile's 16x8 atom grid closest to the tile's M:N (the first such grid on a tie)
        wm, wn = min(grids, key=lambda g: abs((m / (16 * g[0])) / (n / (8 * g[1])) - m / n))
    return AccumulatorLayout(m, n, wm, wn, instr)
