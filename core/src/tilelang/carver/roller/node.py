"""The roller's operator graph: a `PrimFuncNode` per analysed PrimFunc, placeholders for its inputs, an
`OutputNode` per result, and `Edge`s between them. A node answers "which input tiles does this output tile
need" (`propagate_inputs`) and "how much shared memory does that take" (`footprint`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import tvm
import tvm_ffi
from tvm import sym as arith
from tvm import tirx
from tvm.s_tir import Schedule
from tvm.s_tir.schedule import SBlockRV

from tilelang.carver import analysis
from tilelang.carver.analysis import (
    BlockInfo,
    expr_dtype,
    func_buffers,
    get_reduction_blocks,
    is_buffer,
    normalize_prim_func,
)
from tilelang.carver.roller.shape_inference import tir as shape_inference

__all__ = [
    "BlockAnalyzer", "Edge", "Node", "PlaceHolderNode", "PrimFuncNode", "OutputNode", "topo_order",
    "find_topo_sort_priority", "find_topo_sort", "pre_order_traverse",
]


def pre_order_traverse(block_analyzer: BlockAnalyzer, blocks: list[SBlockRV], func: Any) -> None:
    """Call `func` on each of `blocks` and on everything downstream of it, consumers before producers."""
    seen: list[Any] = []

    def visit(block: SBlockRV) -> None:
        stmt = block_analyzer.sch.get(block)
        if any(stmt.same_as(s) for s in seen):
            return
        seen.append(stmt)
        for consumer in block_analyzer.get_consumer_blocks(block):
            visit(consumer)
        func(block)

    for block in blocks:
        visit(block)


class BlockAnalyzer:
    """Per-block queries over a schedule: iterators by kind, buffers read and written, neighbours."""

    def __init__(self, sch: Schedule) -> None:
        self.sch = sch
        infos = normalize_prim_func(sch)
        if infos is None:
            raise ValueError("the carver cannot analyse this PrimFunc: its blocks do not normalise (every block "
                             "needs a perfect loop nest with spatial and reduction iterators)")
        self.block_infos: list[BlockInfo] = infos

    def get_block_name(self, block: SBlockRV) -> str:
        return self.sch.get(block).name_hint

    def get_block_info(self, block: SBlockRV) -> BlockInfo | None:
        name = self.get_block_name(block)
        return next((info for info in self.block_infos if info.name == name), None)

    def _axes(self, block: SBlockRV, kind: str) -> list[Any]:
        info = self.get_block_info(block)
        return [] if info is None else [it for it in info.iters if it.kind == kind]

    def get_spatial_axis(self, block: SBlockRV) -> list[Any]:
        return self._axes(block, "S")

    def get_reduce_axis(self, block: SBlockRV) -> list[Any]:
        return self._axes(block, "R")

    def get_input_buffers(self, block: SBlockRV) -> list[Any]:
        return [r.source for r in self.sch.get(block).reads]

    def get_output_buffers(self, block: SBlockRV) -> list[Any]:
        return [r.source for r in self.sch.get(block).writes]

    def get_buffers(self, block: SBlockRV) -> list[Any]:
        return self.get_input_buffers(block) + self.get_output_buffers(block)

    def get_producer_blocks(self, block: SBlockRV) -> list[SBlockRV]:
        return list(self.sch.get_producers(block))

    def get_consumer_blocks(self, block: SBlockRV) -> list[SBlockRV]:
        return list(self.sch.get_consumers(block))


@dataclass
class Edge:
    """Output `src_id` of `src_node` feeds input `dst_id` of `dst_node`."""

    src_node: Node
    dst_node: Node
    src_id: int
    dst_id: int


class Node:
    """A vertex of the operator graph, with tags (policy knobs) and per-output shapes and dtypes."""

    def __init__(self, tags: dict | None = None, name: str = "Node") -> None:
        self.name = name
        self._out_edges: list[Edge] = []
        self._in_edges: list[Edge] = []
        self._shapes: list[list[int] | None] = []
        self._dtypes: list[Any] = []
        self._tag: dict[str, Any] = {}
        self.update_tags(tags or {})

    def update_tags(self, tags: dict) -> None:
        for key, value in tags.items():
            self.add_tag(key, value)

    def set_tag(self, k: str, v: Any = True) -> None:
        self.add_tag(k, v)

    def add_tag(self, k: str, v: Any = True) -> None:
        self._tag[k] = v

    def get_tag(self, k: str) -> Any:
        return self._tag.get(k)

    def is_placeholder(self) -> bool:
        return False

    def is_output(self) -> bool:
        return False

    @property
    def inputs(self) -> list[Edge]:
        return self._in_edges

    @property
    def outputs(self) -> list[Edge]:
        return self._out_edges

    def set_inputs(self, i: int, edge: Edge) -> None:
        if i >= len(self._in_edges):
            raise IndexError(f"{self} has {len(self._in_edges)} inputs, cannot set input {i}")
        self._in_edges[i] = edge

    def set_outputs(self, i: int, edge: Edge) -> None:
        if i >= len(self._out_edges):
            raise IndexError(f"{self} has {len(self._out_edges)} outputs, cannot set output {i}")
        self._out_edges[i] = edge

    def get_dtype(self, id: int = 0) -> Any:
        return self._dtypes[id]

    def set_dtype(self, dtype: Any, id: int = 0) -> None:
        if not isinstance(dtype, tvm.DataType):
            raise TypeError(f"set_dtype expects a tvm.DataType, got {type(dtype).__name__}")
        if dtype == tvm.DataType("bool"):
            dtype = tvm.DataType("int8")
        if len(self._dtypes) <= id:
            self._dtypes.extend([None] * (id + 1 - len(self._dtypes)))
        elif self._dtypes[id] is not None and self._dtypes[id] != dtype:
            raise ValueError(f"{self}: output {id} is {self._dtypes[id]}, cannot become {dtype}")
        self._dtypes[id] = dtype

    def get_shape(self, id: int = 0) -> list[int]:
        return self._shapes[id]  # type: ignore[return-value]

    def set_shape(self, shape: list[int], id: int = 0, overwrite: bool = False) -> None:
        if len(self._shapes) <= id:
            self._shapes.extend([None] * (id + 1 - len(self._shapes)))
        self._shapes[id] = [int(s) for s in shape]

    def num_outputs(self) -> int:
        return max((e.src_id for e in self.outputs), default=-1) + 1

    def get_ir(self) -> str:
        raise NotImplementedError(f"{type(self).__name__} has no IR")

    def __repr__(self) -> str:
        return f"<Node, {self.name}>"


class PlaceHolderNode(Node):
    """A function input."""

    def __init__(self, name: str = ""):
        super().__init__(name="PlaceHolder_" + name)

    def is_placeholder(self) -> bool:
        return True

    def get_ir(self) -> str:
        return "placeholder"


def _as_int(value: Any) -> Any:
    return int(value) if isinstance(value, (tirx.IntImm, int)) else value


class PrimFuncNode(Node):
    """A block-structured PrimFunc (from ``te.create_prim_func``) as one operator of the graph."""

    def __init__(self, prim_func: tirx.PrimFunc, tags: dict | None = None, name: str = "PrimFuncNode") -> None:
        super().__init__(tags, name=name)
        self.prim_func = self._specialize_func(prim_func)
        self.sch: Schedule = Schedule(self.prim_func)
        self.block_analyzer = BlockAnalyzer(self.sch)
        self.schedule_stages: list[SBlockRV] = []
        self.blocks: list[SBlockRV] = []
        self.output_blocks: list[SBlockRV] = []
        self.reduction_block: SBlockRV | None = None
        self.raxis: list[Any] = []
        self.input_buffers: list[Any] = []
        self.output_buffers: list[Any] = []
        self.buffers: list[Any] = []
        self.args: list[Any] = []
        self._analysis_funcinfo()
        self._assign_placeholder_node()
        self.ana = shape_inference.get_analyzer_by_tir(self.block_analyzer, self.blocks)
        for edge, buffer in zip(self.inputs, self.input_buffers):
            edge.src_node.set_shape(buffer.shape, edge.src_id)
            edge.src_node.set_dtype(tvm.DataType(str(buffer.dtype)), edge.src_id)
        for i, buffer in enumerate(self.output_buffers):
            self.set_shape(buffer.shape, i)
            self.set_dtype(tvm.DataType(str(buffer.dtype)), i)

    def _assign_placeholder_node(self) -> None:
        for dst_id, buffer in enumerate(self.input_buffers):
            source = PlaceHolderNode(buffer.name)
            edge = Edge(source, self, 0, dst_id)
            self._in_edges.append(edge)
            source._out_edges.append(edge)

    def _specialize_func(self, func: tirx.PrimFunc) -> tirx.PrimFunc:
        """Copy the function's attributes into tags; bind symbolic shapes to their ``opt_shapes`` values."""
        if func.attrs is not None:
            for key, value in func.attrs.items():
                self.set_tag(str(key), value)
        if self.get_tag("is_speclized"):
            return func
        opt_shapes = self.get_tag("opt_shapes")
        for name, value in (opt_shapes or {}).items():
            var = analysis.find_var_from_func(func, str(name))
            if var is None:
                continue
            const = tirx.IntImm(expr_dtype(var), int(value))
            if any(p.same_as(var) for p in func.params):
                func = func.specialize({var: const})
            else:  # a shape variable that is not a parameter: substitute it everywhere (buffer shapes included)
                func = tvm_ffi.structural_map(func, (tirx.Var, lambda v, var=var, const=const:
                                                     const if v.same_as(var) else v))
        return func

    def _analysis_funcinfo(self) -> None:
        root = analysis.get_root_block(self.sch)
        self.blocks = list(self.sch.get_child_blocks(root))
        self.output_blocks = list(self.sch.get_output_blocks(root))
        reductions = get_reduction_blocks(self.sch, self.blocks)
        if reductions is None:
            self.reduction_block = None
            self.schedule_stages.extend(self.output_blocks)
        else:
            self.reduction_block = reductions[-1]
            info = self.block_analyzer.get_block_info(self.reduction_block)
            self.raxis = [it for it in info.iters if it.kind == "R"]
            self.schedule_stages.append(self.reduction_block)
        for block in self.output_blocks:
            for region in self.sch.get(block).writes:
                if not any(region.source.same_as(b) for b in self.output_buffers):
                    self.output_buffers.append(region.source)
        params = func_buffers(self.prim_func)
        self.input_buffers = [b for b in params if not any(b.same_as(o) for o in self.output_buffers)]
        self.args = self.input_buffers + self.output_buffers
        self.buffers = params
        if not self.output_buffers:
            raise ValueError(f"{self.name}: the function writes no output buffer")
        self.set_dtype(tvm.DataType(str(self.output_buffers[0].dtype)))

    def get_opt_shape(self, name: str) -> int | None:
        opt_shapes = self.get_tag("opt_shapes")
        return None if opt_shapes is None else int(opt_shapes[name])

    def extent_wrapper(self, value: Any) -> Any:
        """An extent as an int: constants converted, symbolic dims through ``opt_shapes``."""
        if isinstance(value, tirx.Var) and not is_buffer(value):
            return self.get_opt_shape(value.name)
        return _as_int(value)

    @functools.lru_cache  # noqa: B019 - nodes live as long as the policy that analyses them
    def get_space_dim(self) -> list[int]:
        """Extents of the spatial axes the schedule tiles."""
        dims: list[Any] = []
        if self.reduction_block is not None:
            info = self.block_analyzer.get_block_info(self.reduction_block)
            for it in info.iters:
                if it.kind != "S":
                    continue
                extent = it.dom.extent
                dims.append(self.get_opt_shape(extent.name) if isinstance(extent, tirx.Var) else int(extent))
        else:
            for loop in self.sch.get_loops(self.schedule_stages[0]):
                dims.append(int(self.sch.get(loop).extent))
        return [int(d) for d in dims]

    def set_dtype(self, dtype: Any, id: int = 0) -> None:
        super().set_dtype(dtype, id)

    def get_buffer_dtype(self, buffer: Any) -> Any:
        return tvm.DataType(str(buffer.dtype))

    def propagate(self, tile: list[int], rstep: dict | None = None,
                  targets: list[str] | None = None) -> tuple[dict[str, list[int]], dict[str, str]]:
        """Region extents of the tensors `targets` for an output tile `tile` and reduction steps `rstep`."""
        bounds = [arith.ConstIntBound(0, int(v) - 1) for v in tile]
        shape = {self.block_analyzer.get_output_buffers(b)[0].name: bounds for b in self.schedule_stages}
        return self.ana.infer(shape, rstep or {}, targets)

    def propagate_inputs(self, tile: list[int], rstep: dict | None = None) -> list[list[int]]:
        """The tile of each function input that an output tile needs (clipped to the input's shape)."""
        names = [b.name for b in self.input_buffers]
        shapes, bound_through = self.propagate(tile, rstep, names)
        out = []
        for buffer in self.input_buffers:
            if buffer.name in bound_through:
                out.append(shapes[buffer.name])
            else:
                out.append(_clip(self, shapes[buffer.name], list(buffer.shape)))
        return out

    def propagate_inputs_on_reduction(self, tile: list[int], rstep: dict | None = None) -> list[list[int]]:
        """The tile of each buffer the reduction block reads (its innermost dims when the buffer has more)."""
        buffers = self.block_analyzer.get_input_buffers(self.reduction_block)
        shapes, bound_through = self.propagate(tile, rstep, [b.name for b in buffers])
        out = []
        for buffer in buffers:
            shape = shapes[buffer.name]
            if buffer.name in bound_through:
                out.append(shape)
                continue
            full = list(buffer.shape)[-len(shape):] if len(buffer.shape) > len(shape) else list(buffer.shape)
            out.append(_clip(self, shape, full))
        return out

    def propagate_outputs(self, tile: list[int], rstep: dict | None = None) -> list[list[int]]:
        """The tile of each output buffer for an output tile."""
        shapes, _ = self.propagate(tile, rstep, [b.name for b in self.output_buffers])
        return [[min(int(s), int(f)) for s, f in zip(shapes[b.name], b.shape)] for b in self.output_buffers]

    def propagate_reduction_inputs(self, shape: list[int], rstep: dict | None = None) -> dict[str, list[int]]:
        """Region extents of the reduction block's inputs, by buffer name."""
        if self.reduction_block is None:
            return {}
        names = [b.name for b in self.block_analyzer.get_input_buffers(self.reduction_block)]
        results, _ = self.propagate(shape, rstep, names)
        return results

    def get_reduce_inputs_dtype(self) -> dict[str, Any]:
        if self.reduction_block is None:
            return {}
        return {b.name: tvm.DataType(str(b.dtype)) for b in self.block_analyzer.get_input_buffers(self.reduction_block)}

    @functools.lru_cache  # noqa: B019
    def infer_tensorcore_axis(self) -> tuple[int, ...]:
        """(A's M, A's K, B's K, B's N, C's M, C's N) axes of the tensor-core operands."""
        config = self.get_tag("tensorcore_config")
        if not config:
            raise ValueError(f"{self.name} has no tensorcore_config tag: it was not tensorized")
        c_m, c_n = config
        probe_m, probe_n, probe_k = 16, 16, 16  # distinct from 1, any value works
        out_shape = self.block_analyzer.sch.get(self.reduction_block).writes[0].source.shape
        kept = [d for d in out_shape if int(d) != 1]
        dropped = len(out_shape) - len(kept)
        self.set_tag("num_nvalid_regions", dropped)
        space = self.get_space_dim()
        if len(kept) != len(space):
            raise ValueError(f"{self.name}: output dims {kept} do not match the spatial axes {space}")
        probe = [1] * len(space)
        probe[c_m - dropped] = probe_m
        probe[c_n - dropped] = probe_n
        self.set_tag("tensorcore_config", [c_m - dropped, c_n - dropped])
        a_deps, b_deps = self.propagate_reduction_inputs(probe, {ax.var.name: 1 for ax in self.raxis}).values()
        a_m, b_n = a_deps.index(probe_m), b_deps.index(probe_n)
        ones = [1] * len(space)
        a_deps, b_deps = self.propagate_reduction_inputs(ones, {ax.var.name: probe_k for ax in self.raxis}).values()
        a_k = len(a_deps) - 1 - a_deps[::-1].index(probe_k)
        b_k = len(b_deps) - 1 - b_deps[::-1].index(probe_k)
        return a_m, a_k, b_k, b_n, c_m, c_n

    def footprint(self, shape: list[int], rstep: dict, stride_map: dict | None = None) -> tuple[int, list[str]]:
        """Shared-memory bytes (32-byte aligned per tensor) for the tensors a block caches at this tile, and
        their names: inputs of reductions and broadcast inputs, except those read after the reduction."""
        stride_map = stride_map or {}
        shapes, _ = self.propagate(shape, rstep)
        total, cached = 0, []

        def broadcast(buffer: Any, output: Any) -> bool:
            return (any(buffer.same_as(a) for a in self.args) and len(shapes[output.name]) > len(shapes[buffer.name])
                    and math.prod(shapes[output.name]) > math.prod(shapes[buffer.name]))

        reduce_and_after = self._reduce_dependent_blocks()
        for block in self.blocks:
            output = self.block_analyzer.get_output_buffers(block)[0]
            info = self.block_analyzer.get_block_info(block)
            for buffer in self.block_analyzer.get_input_buffers(block):
                if buffer.name in cached:
                    continue
                if not (broadcast(buffer, output) or (info is not None and info.is_reduction())):
                    continue
                cached.append(buffer.name)
                if reduce_and_after is not None and not any(self.sch.get(block).same_as(s) for s in reduce_and_after):
                    continue  # a producer of the reduction: its tile reuses the reduction's buffers
                if buffer.name in stride_map:
                    elements = stride_map[buffer.name].compute_elements_from_shape(shapes[buffer.name])
                else:
                    elements = math.prod(shapes[buffer.name])
                nbytes = int(elements) * ((tvm.DataType(str(buffer.dtype)).bits + 7) // 8)
                total += -(-nbytes // 32) * 32
        return total, cached

    def _reduce_dependent_blocks(self) -> list[Any] | None:
        """Statements of the reduction block and everything downstream of it (None without a reduction)."""
        if self.reduction_block is None:
            return None
        cached = getattr(self, "_after_reduce", None)
        if cached is None:
            cached = []
            pre_order_traverse(self.block_analyzer, [self.reduction_block],
                               lambda b: cached.append(self.sch.get(b)))
            self._after_reduce = cached
        return cached

    def get_input_buffers(self) -> list[Any]:
        return self.input_buffers


def _clip(node: PrimFuncNode, shape: list[int], full: list[Any]) -> list[Any]:
    """`shape` bounded by the buffer extents `full` (symbolic extents through ``opt_shapes``)."""
    out = []
    for s, f in zip(shape, full):
        f = node.extent_wrapper(f)
        out.append(int(s) if f is None else min(int(s), int(f)))
    return out


class OutputNode(Node):
    """The graph's sink for output `id` of a `PrimFuncNode`."""

    def __init__(self, node: PrimFuncNode, id: int = 0):
        super().__init__(name="OutputNode")
        if not isinstance(node, PrimFuncNode):
            raise TypeError(f"OutputNode should connect to PrimFuncNode, got {type(node).__name__}")
        edge = Edge(node, self, id, 0)
        self._in_edges.append(edge)
        node._out_edges.append(edge)
        self.set_shape(node.get_shape(id))
        self.set_dtype(node.get_dtype(id))

    def is_output(self) -> bool:
        return True

    def get_ir(self) -> str:
        return "output"


def topo_order(list_of_nodes: list[Node]) -> list[Node]:
    """Kahn's order of the nodes reachable from `list_of_nodes` (extends the list with what it reaches)."""
    pending = {node: len(node.inputs) for node in list_of_nodes}
    ready = [node for node in list_of_nodes if pending[node] == 0]
    ordered = []
    while ready:
        node = ready.pop(0)
        ordered.append(node)
        for edge in node.outputs:
            dst = edge.dst_node
            if dst not in pending:
                pending[dst] = len(dst.inputs)
                list_of_nodes.append(dst)
            pending[dst] -= 1
            if pending[dst] == 0:
                ready.append(dst)
    if len(ordered) != len(list_of_nodes):
        raise ValueError("the operator graph has a cycle")
    return ordered


def find_topo_sort_priority(output_node_list: list[Node]) -> list[Node]:
    """Producers before consumers; among a node's inputs the deeper subgraph is emitted first."""
    depth: dict[Node, int] = {}

    def measure(node: Node) -> int:
        if node not in depth:
            depth[node] = 0
            depth[node] = max((measure(e.src_node) + 1 for e in node.inputs), default=0)
        return depth[node]

    for node in output_node_list:
        measure(node)
    order: list[Node] = []
    seen: set[Node] = set()

    def emit(node: Node) -> None:
        if node in seen:
            return
        seen.add(node)
        for src in sorted((e.src_node for e in node.inputs), key=lambda n: depth[n], reverse=True):
            emit(src)
        order.append(node)

    for node in output_node_list:
        emit(node)
    return order


def find_topo_sort(output_node_list: list[Node]) -> list[Node]:
    """Producers before consumers, depth first from the outputs."""
    order: list[Node] = []
    seen: set[Node] = set()

    def emit(node: Node) -> None:
        if node in seen:
            return
        seen.add(node)
        for edge in node.inputs:
            emit(edge.src_node)
        order.append(node)

    for node in output_node_list:
        emit(node)
    return order
