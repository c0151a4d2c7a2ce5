"""`TensorCorePolicy`: the roller's plan for matrix-unit kernels (CUDA mma/wmma, RDNA WMMA).

Nodes tagged by `get_tensorized_func_and_tags` (``tensorcore_config``) get tiles that are whole multiples of
the matrix instruction, reduction steps in multiples of its K, warps instead of threads, a software pipeline
depth and a block rasterization; untagged nodes fall back to `DefaultPolicy`.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import tvm

from tilelang.carver.arch import is_rdna_arch
from tilelang.carver.roller.hint import Hint, IntrinInfo, Stride, TileDict
from tilelang.carver.roller.node import PrimFuncNode
from tilelang.carver.roller.policy.common import coalesced_factor, factorize, get_all_factors
from tilelang.carver.roller.policy.default import DefaultPolicy
from tilelang.carver.roller.rasterization import NoRasterization, Rasterization, Rasterization2DColumn

__all__ = ["TensorCorePolicy"]

logger = logging.getLogger(__name__)

_ASYNC_COPY_ARCHS = {"sm_80", "sm_90", "sm_90a", "80", "90"}


class TensorCorePolicy(DefaultPolicy):
    """Tiles in matrix-instruction units; warps split the tile; K grows for small tiles."""

    wmma_k: int = 16
    pipeline_stage: int = 1
    use_async_copy: bool = False
    block_reduction_depth: int | None = None

    def _init_with_prim_func(self, func: tvm.tirx.PrimFunc, name: str | None = None) -> TensorCorePolicy:
        super()._init_with_prim_func(func, name or "PrimFuncNode")
        self._legalize_info()
        return self

    def _legalize_info(self) -> None:
        """Pipeline depth, async copy and block-reduction depth from the function's tags, else the device's."""
        node = self.prim_func_node
        stage = node.get_tag("pipeline_stage")
        if stage:
            self.pipeline_stage = int(stage)
        elif is_rdna_arch(self.arch):
            self.pipeline_stage = self.arch.tuning.pipeline_stage
        else:
            self.pipeline_stage = 2 if self.arch.compute_capability in _ASYNC_COPY_ARCHS else 1
        use_async = node.get_tag("use_async_copy")
        self.use_async_copy = bool(use_async) if use_async else self.arch.compute_capability in _ASYNC_COPY_ARCHS
        depth = node.get_tag("block_reduction_depth")
        if depth:
            self.block_reduction_depth = int(depth)

    def _compute_tc_strides(self, node: PrimFuncNode, tile: list[int],
                            rstep: dict[str, int] | None = None) -> tuple[Stride, Stride, Stride]:
        """Row paddings of the A, B and C tiles (8 elements past the outer tensor-core axis) that avoid bank
        conflicts when no swizzled layout is used."""
        a_shape, b_shape = node.propagate_reduction_inputs(tile, rstep or {}).values()
        a_m, a_k, b_k, b_n, c_m, c_n = node.infer_tensorcore_axis()
        pad = 8

        def stride(shape: list[int], outer: int) -> Stride:
            return Stride(stride=math.prod(shape[outer + 1:]) + pad, ax=outer)

        return stride(a_shape, min(a_m, a_k)), stride(b_shape, min(b_n, b_k)), stride(list(tile), min(c_m, c_n))

    def infer_node_smem_usage(self, td: TileDict, node: PrimFuncNode) -> tuple[int, list[str]]:
        usage, cached = super().infer_node_smem_usage(td, node)
        return usage * self.pipeline_stage, cached

    def _assign_reduce_step(self, node: PrimFuncNode) -> dict[str, int]:
        """K steps of 512 bytes of input (or the RDNA table's step), 16 for extents that need padding."""
        if not node.get_tag("tensorcore_config"):
            return super()._assign_reduce_step(node)
        in_buffer = node.block_analyzer.get_input_buffers(node.reduction_block)[0]
        bits = node.get_buffer_dtype(in_buffer).bits
        basic = (self.arch.transaction_size[0] * 2 * 8) // bits
        if is_rdna_arch(self.arch):
            basic = self.arch.tuning.reduction_step_for_dtype_bits(bits) or basic
        steps = {}
        for ax in node.raxis:
            extent = int(ax.dom.extent)
            if extent % 16:
                steps[ax.var.name] = 16 if extent < basic else basic
            elif extent % basic == 0:
                steps[ax.var.name] = basic
            else:
                return super()._assign_reduce_step(node)
        return steps

    def _expand_reduce_axis(self, td: TileDict) -> None:
        """RDNA: the generic growth. Otherwise grow K only for tiles with an axis of 32 or less, then apply the
        block-reduction depth."""
        if is_rdna_arch(self.arch):
            return super()._expand_reduce_axis(td)
        if any(t <= 32 for node in self.ordered_nodes for t in td.get_tile(node)):
            limit = min(self.arch.max_smem_usage // td.block_per_SM, self.arch.smem_cap)
            rstep_map = td.rstep_map.copy()
            for node in self.ordered_nodes:
                if node.raxis:
                    rstep_map[node] = self._grow_small_tile_rstep(node, td, rstep_map[node], limit)
            td.rstep_map = rstep_map
            td.smem_cost, td.cached_tensors_map = self._compute_shared_memory_usage(td)
        if self.block_reduction_depth is not None:
            td.rstep_map = {node: {k: v * self.block_reduction_depth for k, v in steps.items()}
                            for node, steps in td.rstep_map.items()}
        return None

    def _grow_small_tile_rstep(self, node: PrimFuncNode, td: TileDict, current: dict[str, int],
                               limit: int) -> dict[str, int]:
        steps = {k: [s for s in v if s % current[k] == 0]
                 for k, v in self.get_node_reduce_step_candidates(node).items()}
        if any(not v for v in steps.values()):
            return current
        names = [ax.var.name for ax in node.raxis]
        in_buffers = node.block_analyzer.get_input_buffers(node.reduction_block)

        def score(ids: dict[str, int]) -> int:
            rstep = {k: steps[k][ids[k]] for k in names}
            shapes = node.propagate_inputs_on_reduction(td.get_tile(node), rstep=rstep)
            return sum(coalesced_factor(s, list(b.shape)) for s, b in zip(shapes, in_buffers))

        ids = {k: steps[k].index(current[k]) for k in names}
        while True:
            options = [{**ids, k: ids[k] + 1} for k in names if ids[k] + 1 < len(steps[k])]
            if not options:
                break
            trial = max(options, key=score)
            usage, _ = node.footprint(td.output_tile, {k: steps[k][trial[k]] for k in names},
                                      td.tensor_strides_map[node])
            if usage > limit:
                break
            ids = trial
        return {k: steps[k][ids[k]] for k in names}

    def get_node_reduce_step_candidates(self, node: PrimFuncNode) -> dict[str, list[int]]:
        if not node.get_tag("tensorcore_config"):
            return super().get_node_reduce_step_candidates(node)
        return {ax.var.name: [f * self.wmma_k for f in get_all_factors(int(ax.dom.extent) // self.wmma_k)]
                for ax in node.raxis}

    def check_tile_shape_isvalid(self, td: TileDict) -> bool:
        """Tensor-core nodes need a tile at least one instruction wide on M and N that divides the output."""
        for node in self.ordered_nodes:
            config = node.get_tag("tensorcore_config")
            if not config:
                continue
            ax_m, ax_n = config
            block_m, block_n = td.tile_map[node][ax_m], td.tile_map[node][ax_n]
            shapes = self.arch.get_avaliable_tensorintrin_shapes()
            if all(block_m < m or block_n < n for m, n in shapes):
                return False
            if any(y % x for x, y in zip(td.tile_map[node], node.get_space_dim())):
                return False
        return super().check_tile_shape_isvalid(td)

    def score_block_size(self, n: int) -> tuple[Any, ...]:
        base = super().score_block_size(n)
        if is_rdna_arch(self.arch):
            preferred = self.arch.tuning.preferred_warps_per_block
            warps = -(-n // self.arch.warp_size)
            return (0 if warps == preferred else 1, abs(warps - preferred), *base)
        return base

    def _can_implement_layout(self, node: PrimFuncNode, td: TileDict) -> bool:
        """Whether a swizzled shared layout is planned for this tile (not modelled: padding is used)."""
        return False

    def compute_node_stride_map(self, node: PrimFuncNode, td: TileDict) -> tuple[dict[int, Stride], dict[str, Stride]]:
        if not node.get_tag("tensorcore_config"):
            return super().compute_node_stride_map(node, td)
        # the padded strides are computed for validation of the tensor-core axes; cached operands connect to
        # shared inputs at full stride, so no tensor stride is recorded
        self._compute_tc_strides(node, td.get_tile(node), td.get_rstep(node))
        outputs = {len(node.input_buffers) + i: Stride() for i in range(len(node.output_buffers))}
        return outputs, {}

    def _assign_block_size(self, node: PrimFuncNode, td: TileDict, block_size: int) -> Hint | None:
        """Split the tile over ``block_size / warp_size`` warps in instruction-sized steps, each factor going
        to the axis with the smallest per-warp reads."""
        config = node.get_tag("tensorcore_config")
        if not config:
            return super()._assign_block_size(node, td, block_size)
        ax_m, ax_n = config
        if block_size % self.arch.warp_size:
            return None
        tile, rsteps = td.get_tile(node), td.get_rstep(node)
        warps = block_size // self.arch.warp_size
        ndim = len(tile)
        instr = self.arch.get_avaliable_tensorintrin_shapes()[-1]
        warp_tile = [1] * ndim
        warp_tile[ax_m], warp_tile[ax_n] = instr[0], instr[1]
        if tile[ax_m] < warp_tile[ax_m] or tile[ax_n] < warp_tile[ax_n]:
            return None
        space = math.prod(tile[i] // warp_tile[i] for i in range(ndim))
        if space < warps or space % warps:
            return None
        in_buffers = node.block_analyzer.get_input_buffers(node.reduction_block)

        def cost(trial: list[int]) -> float:
            shapes = node.propagate_inputs_on_reduction(trial)
            return sum(math.prod(s) / self.arch.bandwidth[1] for s in shapes[: len(in_buffers)])

        for factor in reversed(factorize(space // warps)):
            options = []
            for i in range(ndim):
                if tile[i] % (warp_tile[i] * factor):
                    continue
                trial = warp_tile.copy()
                trial[i] *= factor
                options.append((cost(trial), i))
            if not options:
                return None
            warp_tile[min(options)[1]] *= factor

        hint = Hint()
        hint.block = tile
        hint.warp = warp_tile
        hint.use_tc = True
        hint.pipeline_stage = self.pipeline_stage
        hint.block_reduction_depth = self.block_reduction_depth
        hint.use_async = self.use_async_copy
        hint.rstep = [int(rsteps[ax.var.name]) for ax in node.raxis]
        hint.cached_tensors = td.cached_tensors_map[node]
        hint.rasterization_plan = self.plan_rasterization(td)
        intrin = node.get_tag("intrin_info")
        if intrin:
            hint.intrin_info = IntrinInfo(**dict(intrin))
        # operand tiles go to dynamic shared memory (merged allocations, beyond the static 48 KiB)
        hint.shared_scope = "shared.dyn"
        hint.complete_config(node)
        hint.vectorize = self._plan_vectorize(node, td, block_size)
        hint.arch = self.arch
        hint.opt_shapes = node.get_tag("opt_shapes")
        return hint.tensorcore_legalization()

    def plan_rasterization(self, td: TileDict) -> Rasterization:
        """Column rasterization of width sqrt(#SMs) for a single operator on sm_80+ whose inputs exceed L2."""
        if len(self.ordered_nodes) > 1 or self.arch.compute_capability < "80":
            return NoRasterization()
        input_bytes = sum(math.prod(int(d) for d in b.shape) * tvm.DataType(str(b.dtype)).bits // 8
                          for node in self.ordered_nodes for b in node.input_buffers)
        if input_bytes < self.arch.l2_cache_size_bytes:
            return NoRasterization()
        return Rasterization2DColumn(int(self.arch.compute_max_core ** 0.5))
