"""`DefaultPolicy`: the roller's plan for CUDA-core (SIMT) kernels.

The roller walks output tiles from small to large in order of estimated cost ``(traffic + 1) * waves``,
keeps those whose cached operand tiles fit in shared memory and whose accumulators fit in registers, grows the
reduction step while shared memory allows, then splits each tile over threads so reads stay coalesced.
"""

from __future__ import annotations

import functools
import heapq
import math
from collections.abc import Iterator
from typing import Any

import tvm

from tilelang.carver.arch import TileDevice
from tilelang.carver.roller.bestfit import BestFit
from tilelang.carver.roller.hint import Hint, Stride, TileDict
from tilelang.carver.roller.node import OutputNode, PrimFuncNode, find_topo_sort
from tilelang.carver.roller.policy.common import coalesced_factor, coalesced_tensor_shape, factorize, get_all_factors
from tilelang.carver.roller.rasterization import NoRasterization, Rasterization

__all__ = ["DefaultPolicy"]

_MAX_VISITED_TILES = 2000
_MAX_BLOCK_SIZE = 1024


def _prod(values: Any) -> int:
    return int(math.prod(int(v) for v in values))


def _bytes(dtype: Any) -> int:
    return (dtype.bits + 7) // 8


class DefaultPolicy:
    """Tile, reduction-step and thread recommendations for one operator graph on one device."""

    func: tvm.tirx.PrimFunc
    nodes: list[PrimFuncNode] = []
    arch: TileDevice
    tags: dict

    def __init__(self, arch: TileDevice, tags: dict | None = None) -> None:
        self.arch = arch
        self.tags = tags or {}
        self.rasterization: Rasterization = NoRasterization()

    @classmethod
    def from_prim_func(cls, func: tvm.tirx.PrimFunc, arch: TileDevice, tags: dict | None = None,
                       name: str = "PrimFuncNode") -> DefaultPolicy:
        return cls(arch, tags)._init_with_prim_func(func, name)

    @classmethod
    def from_output_nodes(cls, nodes: list[OutputNode], arch: TileDevice, tags: dict | None = None) -> DefaultPolicy:
        return cls(arch, tags)._init_with_output_nodes(nodes)

    def _init_with_prim_func(self, func: tvm.tirx.PrimFunc, name: str = "PrimFuncNode") -> DefaultPolicy:
        if not isinstance(func, tvm.tirx.PrimFunc):
            raise TypeError(f"the roller plans a tvm.tirx.PrimFunc, got {type(func).__name__}")
        self.func = func
        self.prim_func_node = PrimFuncNode(func, tags=self.tags, name=name)
        return self._init_with_output_nodes([OutputNode(self.prim_func_node)])

    def _init_with_output_nodes(self, output_nodes: list[OutputNode]) -> DefaultPolicy:
        self.ordered_nodes: list[PrimFuncNode] = [
            n for n in find_topo_sort(output_nodes) if not n.is_placeholder() and not n.is_output()]
        for node in self.ordered_nodes:
            node.update_tags(self.tags)
        self.output_nodes = [n for n in self.ordered_nodes if all(e.dst_node.is_output() for e in n.outputs)]
        return self

    # ---------------------------------------------------------------- search
    def emit_config(self, topk: int) -> list[Hint]:
        """Up to `topk` hints, best first."""
        base_tile = self.get_base_tile()
        if base_tile is None:
            return []
        rstep_map = {node: self._assign_reduce_step(node) for node in self.ordered_nodes}
        results: list[Hint] = []
        for td in self.dfs_smem_tile(base_tile, rstep_map):
            if not self.check_tile_shape_isvalid(td):
                continue
            self._expand_reduce_axis(td)
            for assignment in self.assign_block_size(td):
                results.append(next(iter(assignment.values())) if len(assignment) == 1 else assignment)
                if len(results) >= topk:
                    return results
        return results

    def dfs_smem_tile(self, init_tile: list[int], rstep_map: dict) -> list[TileDict]:
        """Valid tiles reachable from `init_tile` by growing one axis at a time, cheapest first."""
        dims = self.output_nodes[0].get_space_dim()
        steps = []
        for extent, start in zip(dims, init_tile):
            factors = get_all_factors(extent)
            axis = factors[factors.index(start):]
            axis += [p for p in (2, 4, 8, 16, 32) if axis[0] < p < axis[-1] and p not in axis]
            steps.append(sorted(axis))

        visited: dict[tuple[int, ...], TileDict] = {}
        heap: list[tuple[float, list[int]]] = []

        def priority(td: TileDict) -> float:
            return (td.traffic + 1) * td.num_wave

        def push(tile: list[int]) -> None:
            if tuple(tile) in visited:
                return
            td = self.compute_tile_dict(tile, rstep_map)
            visited[tuple(tile)] = td
            if td.valid:
                heapq.heappush(heap, (priority(td), tile))

        push(list(init_tile))
        while heap and len(visited) <= _MAX_VISITED_TILES:
            _, tile = heapq.heappop(heap)
            for i in reversed(range(len(tile))):
                pos = steps[i].index(tile[i])
                if pos + 1 < len(steps[i]):
                    push([*tile[:i], steps[i][pos + 1], *tile[i + 1:]])
        return sorted((td for td in visited.values() if td.valid), key=priority)

    def get_base_tile(self) -> list[int] | None:
        """The smallest output tile that computes nothing twice (all ones for a single operator); None when the
        outputs have different ranks."""
        if len({len(n.get_space_dim()) for n in self.output_nodes}) > 1:
            return None
        shape = self.output_nodes[0].get_space_dim()
        tile = [1] * len(shape)
        work = self.compute_workload_per_item(tile)
        for dim, extent in enumerate(shape):
            if extent == tile[dim]:
                continue
            trial = tile.copy()
            trial[dim] = extent
            trial_work = self.compute_workload_per_item(trial)
            if trial_work < work:
                work, tile = trial_work, trial
        return tile

    def _get_output_tile_map(self, tile: list[int]) -> dict[PrimFuncNode, list[int]]:
        """Each output node's tile, scaled from the first output's."""
        ref = self.output_nodes[0].get_space_dim()
        return {node: [t * d // r for t, d, r in zip(tile, node.get_space_dim(), ref)] for node in self.output_nodes}

    def compute_workload_per_item(self, output_tile: list[int]) -> float:
        """Elements all operators compute per output element for this tile (recompute of fused producers)."""
        tiles: dict[Any, list[int]] = dict(self._get_output_tile_map(output_tile))
        compute = 0
        for node in reversed(self.ordered_nodes):
            tile = tiles[node]
            compute += _prod(tile)
            for edge, dep in zip(node.inputs, node.propagate_inputs(tile)):
                tiles[edge.src_node] = dep
        return compute / _prod(output_tile)

    # ---------------------------------------------------------------- block size
    def score_block_size(self, n: int) -> tuple[float, float]:
        """(warps away from one per scheduler, fraction of idle lanes): smaller is better."""
        warps = -(-n // self.arch.warp_size)
        balance = max(warps / self.arch.sm_partition, self.arch.sm_partition / warps)
        idle = (warps * self.arch.warp_size - n) / n
        return balance, idle

    def get_block_size(self, n: int) -> int:
        """The best-scoring divisor of `n` up to 1024."""
        return min((f for f in get_all_factors(n) if f <= _MAX_BLOCK_SIZE), key=self.score_block_size)

    # ---------------------------------------------------------------- reduction steps
    def get_node_reduce_step_candidates(self, node: PrimFuncNode) -> dict[str, list[int]]:
        """Reduction step choices per axis: its divisors, or powers of two for a large prime extent."""
        out = {}
        for ax in node.raxis:
            extent = int(ax.dom.extent)
            factors = get_all_factors(extent)
            if len(factors) == 2 and extent > 64:
                factors = [1]
                while factors[-1] * 2 < extent:
                    factors.append(factors[-1] * 2)
            out[ax.var.name] = factors
        return out

    def _assign_reduce_step(self, node: PrimFuncNode) -> dict[str, int]:
        """The reduction step whose input reads best match the read transaction size."""
        if node.reduction_block is None:
            return {}
        candidates = self.get_node_reduce_step_candidates(node)
        ones = [1] * len(node.get_space_dim())

        def closeness(a: int, b: int) -> float:
            return 2 * a * b / (a * a + b * b)

        def score(ids: dict[str, int]) -> float:
            rstep = {k: candidates[k][i] for k, i in ids.items()}
            shapes = node.propagate_inputs(ones, rstep=rstep)
            total = 0.0
            for shape, buffer in zip(shapes, node.input_buffers):
                per_transaction = self.arch.transaction_size[1] // _bytes(node.get_buffer_dtype(buffer))
                total += closeness(coalesced_factor(shape, list(buffer.shape)), per_transaction)
            return total

        ids = {ax.var.name: 0 for ax in node.raxis}
        best = score(ids)
        while best != 0:
            options = [(ids, best)]
            for ax in ids:
                if ids[ax] + 1 < len(candidates[ax]):
                    trial = {**ids, ax: ids[ax] + 1}
                    options.append((trial, score(trial)))
            trial, trial_score = max(options, key=lambda o: o[1])
            if trial_score <= best:
                break
            ids, best = trial, trial_score
        return {k: candidates[k][i] for k, i in ids.items()}

    def _expand_reduce_axis(self, td: TileDict) -> None:
        """Grow each node's reduction step (keeping it a multiple of the current one) while the shared memory
        of the block stays within its share of the SM."""
        limit = min(self.arch.max_smem_usage // td.block_per_SM, self.arch.smem_cap)
        rstep_map = td.rstep_map.copy()
        for node in self.ordered_nodes:
            if node.raxis:
                rstep_map[node] = self._grow_rstep(node, td, rstep_map, limit)
        td.rstep_map = rstep_map
        td.smem_cost, td.cached_tensors_map = self._compute_shared_memory_usage(td)

    def _grow_rstep(self, node: PrimFuncNode, td: TileDict, rstep_map: dict, limit: int) -> dict[str, int]:
        current = rstep_map[node]
        steps = {k: [s for s in v if s % current[k] == 0]
                 for k, v in self.get_node_reduce_step_candidates(node).items()}
        names = [ax.var.name for ax in node.raxis]

        def score(ids: dict[str, int]) -> int:
            rstep = {k: steps[k][ids[k]] for k in names}
            shapes = node.propagate_inputs(td.get_tile(node), rstep=rstep)
            return sum(coalesced_factor(s, list(b.shape)) for s, b in zip(shapes, node.input_buffers))

        ids = {k: steps[k].index(current[k]) for k in names}
        while True:
            options = [({**ids, k: ids[k] + 1}) for k in names if ids[k] + 1 < len(steps[k])]
            if not options:
                break
            trial = max(options, key=score)
            saved = td.rstep_map
            td.rstep_map = {**rstep_map, node: {k: steps[k][trial[k]] for k in names}}
            usage, _ = self._compute_shared_memory_usage(td)
            td.rstep_map = saved
            if usage > limit:
                break
            ids = trial
        return {k: steps[k][ids[k]] for k in names}

    # ---------------------------------------------------------------- cost model
    def _compute_memory_traffic(self, output_tile: list[int]) -> tuple[float, dict]:
        """Global-memory bytes one block moves (reads of graph inputs, writes of graph outputs), and the tile
        of every node."""
        tiles: dict[Any, list[int]] = dict(self._get_output_tile_map(output_tile))
        traffic = 0.0
        for node in reversed(self.ordered_nodes):
            tile = tiles[node]
            in_shapes = node.propagate_inputs(tile)
            out_shapes = node.propagate_outputs(tile)
            for edge, shape in zip(node.inputs, in_shapes):
                tiles[edge.src_node] = shape
                if edge.src_node.is_placeholder():
                    nbytes = _bytes(edge.src_node.get_dtype())
                    per_read = self.arch.transaction_size[1] // nbytes
                    traffic += coalesced_tensor_shape(shape, edge.src_node.get_shape(), per_read) * nbytes
            for edge in node.outputs:
                if edge.dst_node.is_output():
                    nbytes = _bytes(node.get_dtype(edge.src_id))
                    per_write = self.arch.transaction_size[0] // nbytes
                    traffic += coalesced_tensor_shape(out_shapes[edge.src_id], node.get_shape(edge.src_id),
                                                      per_write) * nbytes
        return traffic, tiles

    def infer_node_smem_usage(self, td: TileDict, node: PrimFuncNode) -> tuple[int, list[str]]:
        """Shared-memory bytes `node` caches for this tile, and the cached tensor names."""
        return node.footprint(td.get_tile(node), td.get_rstep(node), td.tensor_strides_map[node])

    def _compute_shared_memory_usage(self, td: TileDict) -> tuple[int, dict]:
        """Peak shared memory of the block: each node's cached tiles, plus intermediate tensors passed between
        nodes while a consumer still needs them."""
        self._compute_stride_map(td)
        arena = BestFit()
        live: dict[tuple[Any, int], Any] = {}
        done: set[Any] = set()
        cached: dict[Any, list[str]] = {}
        for node in self.ordered_nodes:
            internal, cached[node] = self.infer_node_smem_usage(td, node)
            arena.free(arena.malloc(internal))
            done.add(node)
            for edge in node.inputs:
                src = edge.src_node
                if src.is_placeholder():
                    continue
                consumers_done = all(e.dst_node in done for e in src.outputs if e.src_id == edge.src_id)
                if consumers_done and (src, edge.src_id) in live:
                    arena.free(live.pop((src, edge.src_id)))
            for edge in node.outputs:
                if edge.dst_node.is_output() or (node, edge.src_id) in live:
                    continue
                stride = td.output_strides_map[node][len(node.inputs) + edge.src_id]
                elements = stride.compute_elements_from_shape(td.get_tile(node))
                live[(node, edge.src_id)] = arena.malloc(elements * _bytes(node.get_dtype(edge.src_id)))
        if live:
            raise RuntimeError(f"intermediate tensors never consumed: {list(live)}")
        return arena.limit, cached

    def compute_node_stride_map(self, node: PrimFuncNode, td: TileDict) -> tuple[dict[int, Stride], dict[str, Stride]]:
        """Padding of `node`'s outputs (by argument index) and cached tensors (by name): none by default."""
        outputs = {len(node.input_buffers) + i: Stride() for i in range(len(node.output_buffers))}
        return outputs, {}

    def _compute_stride_map(self, td: TileDict) -> None:
        td.output_strides_map, td.tensor_strides_map = {}, {}
        for node in self.ordered_nodes:
            td.output_strides_map[node], td.tensor_strides_map[node] = self.compute_node_stride_map(node, td)

    def compute_tile_dict(self, output_tile: list[int], rstep_map: dict) -> TileDict:
        """Evaluate one output tile: traffic, shared memory, register estimate, occupancy and waves."""
        td = TileDict(output_tile)
        td.rstep_map = rstep_map
        td.traffic, td.tile_map = self._compute_memory_traffic(output_tile)
        td.smem_cost, td.cached_tensors_map = self._compute_shared_memory_usage(td)
        if td.smem_cost > self.arch.smem_cap:
            td.valid = False
            return td
        shape = self.output_nodes[0].get_space_dim()
        td.grid_size = _prod(-(-y // x) for x, y in zip(output_tile, shape))
        # accumulators: twice the largest node tile, in 32-bit registers
        regs = int(2 * max(_prod(td.get_tile(n)) * n.get_dtype().bits / 32 for n in self.ordered_nodes))
        if regs > self.arch.reg_cap:
            td.valid = False
            return td
        td.block_per_SM = min(self.arch.max_smem_usage // max(td.smem_cost, 1), self.arch.reg_cap // max(regs, 1),
                              self.arch.sm_partition)
        if td.block_per_SM <= 0:
            td.valid = False
            return td
        td.num_wave = -(-td.grid_size // (td.block_per_SM * self.arch.compute_max_core))
        return td

    def check_tile_shape_isvalid(self, td: TileDict) -> bool:
        """Every node has a non-empty tile and the same number of blocks as the output."""
        for node in self.ordered_nodes:
            tile = td.get_tile(node)
            if _prod(tile) == 0:
                return False
            if _prod(-(-y // x) for x, y in zip(tile, node.get_space_dim())) != td.grid_size:
                return False
            reduce_op = getattr(node, "reduce_op", None)
            if reduce_op is not None and len(reduce_op.axis) == len(td.output_tile):
                if any(int(reduce_op.axis[i].dom.extent) % t for i, t in enumerate(td.output_tile)):
                    return False
        return True

    def recommend_block_size(self, td: TileDict) -> list[int]:
        """Thread counts to try for this tile, best first."""
        spaces = [_prod(td.get_tile(node)) for node in self.ordered_nodes]
        largest = functools.reduce(math.gcd, spaces)
        if largest < self.arch.warp_size * self.arch.sm_partition and largest == min(spaces):
            # too few output elements for a full block: let threads also split the reduction
            reduces = [_prod(td.get_rstep(node).values()) for node in self.ordered_nodes]
            possible = functools.reduce(math.gcd, [s * r for s, r in zip(spaces, reduces)])
            sizes = [x for x in get_all_factors(possible) if x % largest == 0 and x <= _MAX_BLOCK_SIZE]
            sizes = [x for x in sizes if all(x % s == 0 or s % x == 0 for s in spaces)]
        else:
            sizes = [x for x in get_all_factors(largest) if x <= _MAX_BLOCK_SIZE]
        return sorted(sizes, key=self.score_block_size)

    def assign_block_size(self, td: TileDict, topk: int = 1) -> Iterator[dict[PrimFuncNode, Hint]]:
        """Hints for the first `topk` thread counts every node accepts."""
        for block_size in self.recommend_block_size(td):
            assignment = {}
            for node in self.ordered_nodes:
                hint = self._assign_block_size(node, td, block_size)
                if hint is None:
                    break
                assignment[node] = hint
            else:
                yield assignment
                topk -= 1
                if topk == 0:
                    return

    def _assign_block_size(self, node: PrimFuncNode, td: TileDict, block_size: int) -> Hint | None:
        """Split `block_size` threads over the tile's axes (then the reduction) by prime factors, each going
        where the per-thread reads are smallest; None when a factor fits nowhere."""
        tile, rsteps = td.get_tile(node), td.get_rstep(node)
        ndim = len(tile)
        threads = [1] * ndim
        reduce_threads = {k: 1 for k in rsteps}

        def cost(trial: list[int]) -> float:
            per_thread = [-(-tile[i] // trial[i]) for i in range(ndim)]
            total = sum(_prod(s) / self.arch.bandwidth[1] for s in node.propagate_inputs(per_thread))
            for buffer in node.output_buffers:
                total += coalesced_tensor_shape(trial, list(buffer.shape), 8) / self.arch.bandwidth[0]
            return total

        for factor in reversed(factorize(block_size)):
            options = []
            for i in range(ndim):
                if threads[i] >= tile[i] or tile[i] % (threads[i] * factor):
                    continue
                trial = threads.copy()
                trial[i] *= factor
                options.append((cost(trial), i))
            if options:
                threads[min(options)[1]] *= factor
                continue
            axis = next((ax for ax, n in reversed(list(rsteps.items())) if n % (reduce_threads[ax] * factor) == 0),
                        None)
            if axis is None:
                return None
            reduce_threads[axis] *= factor

        hint = Hint()
        hint.block = tile
        hint.thread = threads
        hint.rstep = [rsteps[ax.var.name] for ax in node.raxis]
        hint.reduce_thread = [reduce_threads[ax.var.name] for ax in node.raxis]
        hint.cached_tensors = td.cached_tensors_map[node]
        hint.rasterization_plan = self.plan_rasterization(td)
        bits = node.get_dtype().bits
        if bits in (16, 8):  # per-thread steps that keep narrow-type accesses coalesced
            want = 2 if bits == 16 else 4
            hint._step = [1] * ndim
            for i in reversed(range(ndim)):
                if hint.block[i] // hint.thread[i] % want == 0:
                    hint._step[i] = want
                    break
        hint.vectorize = self._plan_vectorize(node, td, block_size)
        hint.arch = self.arch
        hint.opt_shapes = node.get_tag("opt_shapes")
        return hint

    def _plan_vectorize(self, node: PrimFuncNode, td: TileDict, block_size: int) -> dict[str, int]:
        """Vector width (16, 8, 4 or 2 elements, at most 128 bits) per reduction input whose tile divides evenly
        among the threads and is contiguous over that width."""
        def contiguous(shape: list[int], vec: int) -> bool:
            if not shape:
                return vec == 1
            if shape[-1] == 1:
                return contiguous(shape[:-1], vec)
            return shape[-1] % vec == 0

        dtypes = node.get_reduce_inputs_dtype()
        out = {}
        for name, shape in node.propagate_reduction_inputs(td.get_tile(node), td.get_rstep(node)).items():
            for vec in (16, 8, 4, 2):
                if (_prod(shape) % (block_size * vec) == 0 and contiguous(shape, vec)
                        and dtypes[name].bits * vec <= 128):
                    out[name] = vec
                    break
        return out

    def plan_rasterization(self, td: TileDict) -> Rasterization:
        """No block reordering for SIMT kernels."""
        return NoRasterization()
