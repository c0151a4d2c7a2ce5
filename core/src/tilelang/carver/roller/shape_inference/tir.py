"""Tile-shape inference over a block-structured PrimFunc.

Given the tile an output block computes (a bound per spatial iterator) and the reduction steps, work out the
extent of every buffer region the blocks read: ``C[i, j] += A[i, k] * B[j, k]`` with i in [0, 64), j in
[0, 32) and a K step of 16 reads a 64x16 tile of A and a 32x16 tile of B. Spatial blocks in between are
inverted (their index maps run backwards) so a chain of elementwise producers resolves to the function inputs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import tvm_ffi
from tvm import ir, tirx
from tvm import sym as arith

from tilelang.carver.analysis import expr_dtype

__all__ = [
    "Statement", "TensorDepNode", "DependencyAnalysis", "InputShapeInference", "region_exist_in_list",
    "walk_indice", "get_analyzer_by_tir",
]


def _substitute(expr: Any, vmap: dict[Any, Any]) -> Any:
    return tvm_ffi.structural_map(expr, (tirx.Var, lambda v: vmap.get(v, v)))


def _cast_to(value: Any, var: Any) -> Any:
    """`value` in `var`'s dtype."""
    want = expr_dtype(var)
    return value if expr_dtype(value) == want else tirx.Cast(want, value)


def _unknown_index(extent: Any) -> Any:
    """An index the analysis cannot follow (it reads data): anywhere in ``[0, extent)``."""
    return tirx.floormod(tirx.Var("undefined", "int32"), extent)


def _same_expr(a: Any, b: Any) -> bool:
    if isinstance(a, tirx.IntImm) and isinstance(b, tirx.IntImm):
        return int(a.value) == int(b.value)
    return bool(tvm_ffi.structural_equal(a, b))


def region_exist_in_list(region: list[Any], regions: Iterable[list[Any]]) -> bool:
    """Whether an index list equal (structurally) to `region` is in `regions`."""
    return any(len(region) == len(other) and all(_same_expr(a, b) for a, b in zip(region, other))
               for other in regions)


def walk_indice(expr: Any) -> Any | None:
    """`expr` when it is an affine-analysable index (vars, constants, arithmetic, casts), None when it depends
    on loaded data or a call."""
    dynamic: list[Any] = []
    tvm_ffi.structural_walk(expr, [(ir.TensorLoad, dynamic.append), (ir.Call, dynamic.append)], order="pre")
    return None if dynamic else expr


def _extract_dependent_region(block_analyzer: Any, block: Any) -> dict[str, list[list[Any]]]:
    """Per input buffer name, the distinct index lists the block reads it with (unit leading indices of value 0,
    from reindexed buffers, dropped)."""
    regions: dict[str, list[list[Any]]] = {b.name: [] for b in block_analyzer.get_input_buffers(block)}

    def visit(load: Any) -> None:
        name = load.source.name
        if name not in regions:
            return
        index = []
        for idx, extent in zip(load.indices, load.source.shape):
            expr = walk_indice(idx)
            if expr is None:
                expr = _unknown_index(extent)
            if isinstance(expr, tirx.IntImm) and int(expr.value) == 0:
                continue
            index.append(expr)
        if not region_exist_in_list(index, regions[name]):
            regions[name].append(index)

    tvm_ffi.structural_walk(block_analyzer.sch.get(block), (ir.TensorLoad, visit), order="post")
    return regions


class Statement:
    """One block seen as ``output = f(inputs)``: its output name and how it indexes each input."""

    def __init__(self, block_analyzer: Any, block: Any):
        self.block_analyzer = block_analyzer
        self.block = block
        self.dep_name = block_analyzer.get_output_buffers(block)[0].name
        self.dependent_region = _extract_dependent_region(block_analyzer, block)
        self.reverse_bound_inference: dict[str, Any] = {}

    def make_reverse(self, input_name: str, input_iter: list[Any]) -> list[Any] | None:
        """Output indices that read `input_name` at `input_iter`, when the block is spatial and reads that input
        through one affine, surjective index map; None otherwise."""
        if self.block_analyzer.get_reduce_axis(self.block):
            return None
        if len(self.dependent_region[input_name]) != 1:
            return None
        (indices,) = self.dependent_region[input_name]
        if len(indices) != len(input_iter):
            return None
        spatial = self.block_analyzer.get_spatial_axis(self.block)
        result = arith.detect_iter_map(indices, {it.var: it.dom for it in spatial},
                                       check_level=arith.iter_affine_map.IterMapLevel.Surjective,
                                       simplify_trivial_iterators=False)
        if len(result.errors) > 0:
            return None
        inverse = dict(arith.inverse_affine_iter_map(result.indices, input_iter).items())
        out = []
        for it in spatial:
            found = [v for k, v in inverse.items() if k.same_as(it.var)]
            out.append(found[0] if found else _unknown_index(int(it.dom.extent)))
        return out


def _merge_two_bounds(x: arith.ConstIntBound, y: arith.ConstIntBound) -> arith.ConstIntBound:
    return arith.ConstIntBound(min(x.min_value, y.min_value), max(x.max_value, y.max_value))


class TensorDepNode:
    """A tensor in the dependency graph, with the tensors computed from it (`_next`) and from which it is
    computed (`_prev`)."""

    def __init__(self, name: str):
        self.name = name
        self._next: list[TensorDepNode] = []
        self._prev: list[TensorDepNode] = []

    @staticmethod
    def _add(lst: list[TensorDepNode], node: TensorDepNode) -> None:
        if node not in lst:
            lst.append(node)

    def add_next(self, node: TensorDepNode) -> None:
        self._add(self._next, node)

    def add_prev(self, node: TensorDepNode) -> None:
        self._add(self._prev, node)

    def deduplicate(self, lst: list[TensorDepNode]) -> None:
        seen: list[TensorDepNode] = []
        for n in lst:
            if n not in seen:
                seen.append(n)
        lst[:] = seen

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__


class DependencyAnalysis:
    """The producer/consumer graph between the tensors of a list of `Statement` objects."""

    def __init__(self, deps: list[Statement]):
        self.deps = deps
        self.name2dep = self._construct_unique_name2dep(deps)
        self.mapping: dict[str, TensorDepNode] = {}

    @staticmethod
    def _construct_unique_name2dep(deps: list[Statement]) -> dict[str, Statement]:
        """Statements by output name; a repeated name (two identical fused ops) gets a ``_<n>`` suffix."""
        out: dict[str, Statement] = {}
        for dep in deps:
            base = dep.block_analyzer.get_output_buffers(dep.block)[0].name
            name, n = base, 1
            while name in out:
                name, n = f"{base}_{n}", n + 1
            out[name] = dep
        return out

    def get_or_create_node(self, name: str) -> TensorDepNode:
        if name not in self.mapping:
            self.mapping[name] = TensorDepNode(name)
        return self.mapping[name]

    def traverse_dependencies(self, compute: Any) -> TensorDepNode:
        if isinstance(compute, Statement):
            analyzer = compute.block_analyzer
            node = self.get_or_create_node(analyzer.get_output_buffers(compute.block)[0].name)
            for buffer in analyzer.get_input_buffers(compute.block):
                source = self.traverse_dependencies(buffer)
                source.add_next(node)
                node.add_prev(source)
            return node
        return self.get_or_create_node(compute.name)

    def analyze(self) -> None:
        for dep in self.name2dep.values():
            self.traverse_dependencies(dep)

    def print_dependencies(self) -> None:
        for name, node in self.mapping.items():
            print(f"{name} depends on {', '.join(p.name for p in node._prev)}")

    def find_path_from_source(self, start_name: str, target_name: str) -> list[TensorDepNode]:
        """Nodes on a path from `start_name` to `target_name` (both included), [] when there is none."""
        path: list[TensorDepNode] = []
        visited: set[str] = set()

        def walk(node: TensorDepNode) -> bool:
            if node.name == target_name:
                path.append(node)
                return True
            if node.name in visited:
                return False
            visited.add(node.name)
            path.append(node)
            if any(walk(nxt) for nxt in node._next):
                return True
            path.pop()
            return False

        return path if start_name in self.mapping and walk(self.mapping[start_name]) else []


class InputShapeInference:
    """Bounds the regions every tensor of a block chain is read in, for a given output tile."""

    def __init__(self, deps: list[Statement]):
        self.deps = deps
        self.target_mapping: dict[tuple[str, ...], tuple[list[list[Any]], dict[str, list[list[Any]]]]] = {}
        self.buffer_mapping: dict[str, Any] = {}
        self.reduce_axes = [ax for dep in deps for ax in dep.block_analyzer.get_reduce_axis(dep.block)]
        self.dep_analysis = DependencyAnalysis(deps)
        self.dep_analysis.analyze()

    def construct_dependency_target(self, targets: tuple[str, ...]) -> tuple[list[list[Any]],
                                                                             dict[str, list[list[Any]]]]:
        """For outputs `targets`, the iterator vars standing for their indices and, per tensor, the index lists
        it is read at in terms of those vars."""
        if targets in self.target_mapping:
            return self.target_mapping[targets]
        by_output = {dep.dep_name: dep for dep in self.deps}
        mapping: dict[str, list[list[Any]]] = {}
        input_vars = []
        for target in targets:
            dep = by_output[target]
            axes = [it.var for it in dep.block_analyzer.get_spatial_axis(dep.block)]
            input_vars.append(axes)
            mapping[target] = [axes]
        simplifier = arith.Analyzer()
        # forwards: outputs of spatial blocks that consume a known tensor
        for dep in self.deps:
            for name in dep.dependent_region:
                if name not in mapping or dep.dep_name in targets:
                    continue
                out_indices = dep.make_reverse(name, mapping[name][0])
                if out_indices is None:
                    continue
                if dep.dep_name not in mapping:
                    mapping[dep.dep_name] = [out_indices]
                elif not region_exist_in_list(out_indices, mapping[dep.dep_name]):
                    mapping[dep.dep_name].append(out_indices)
        # backwards: inputs from outputs
        for dep in reversed(self.deps):
            axes = [it.var for it in dep.block_analyzer.get_spatial_axis(dep.block)]
            for input_name, regions in dep.dependent_region.items():
                if input_name in targets:
                    continue
                known = mapping.setdefault(input_name, [])
                for indices in mapping.get(dep.dep_name, []):
                    vmap = {k: _cast_to(v, k) for k, v in zip(axes, indices)}
                    for region in regions:
                        region = [simplifier.simplify(_substitute(ax, vmap)) for ax in region]
                        if not region_exist_in_list(region, known):
                            known.append(region)
        for dep in self.deps:
            for buffer in dep.block_analyzer.get_buffers(dep.block):
                self.buffer_mapping[buffer.name] = buffer
        self.target_mapping[targets] = input_vars, mapping
        return input_vars, mapping

    def infer(self, shape: dict[str, list[arith.ConstIntBound]], rstep: dict[str, int] | None = None,
              targets: Iterable[str] | None = None) -> tuple[dict[str, list[int]], dict[str, str]]:
        """Extents of every (or each `targets`) tensor's region for output bounds `shape` and reduction steps
        `rstep`; also which inputs were bound through an intermediate tensor of the same rank."""
        rstep = rstep or {}
        outputs = tuple(shape.keys())
        input_vars, mapping = self.construct_dependency_target(outputs)
        analyzer = arith.Analyzer()
        for axes, bounds in zip(input_vars, shape.values()):
            for var, bound in zip(axes, bounds):
                analyzer.update(var, bound, True)
        for ax in self.reduce_axes:
            lo, extent = int(ax.dom.min), int(ax.dom.extent)
            step = min(extent, int(rstep[ax.var.name])) if ax.var.name in rstep else extent
            analyzer.update(ax.var, arith.ConstIntBound(lo, lo + step - 1), True)

        wanted = None if targets is None else set(targets)
        results: dict[str, list[arith.ConstIntBound]] = {}
        intermediate_bind: dict[str, str] = {}
        for name, regions in mapping.items():
            if wanted is not None and name not in wanted:
                continue
            if len(outputs) == 1:
                path = self.dep_analysis.find_path_from_source(name, outputs[0])
                for node in path[1:-1]:
                    via = mapping.get(node.name, [])
                    if len(via) != 1 or len(regions) != 1:
                        continue
                    if len(via[0]) != len(regions[0]):
                        break
                    regions = via
                    intermediate_bind[name] = outputs[0]
            for region in regions:
                bounds = [analyzer.const_int_bound(index) for index in region]
                if name in results:
                    bounds = [_merge_two_bounds(a, b) for a, b in zip(results[name], bounds)]
                results[name] = bounds
        extents = {name: [b.max_value - b.min_value + 1 for b in bounds] for name, bounds in results.items()}
        return extents, intermediate_bind

    def get_input_exprs(self, output_exprs: dict[str, list[Any]]) -> dict[str, list[Any]]:
        """Each tensor's first read index list with the outputs' iterators replaced by `output_exprs` (and the
        reduction iterators by 0)."""
        input_vars, mapping = self.construct_dependency_target(tuple(output_exprs.keys()))
        analyzer = arith.Analyzer()
        for ax in self.reduce_axes:
            analyzer.bind(ax.var, 0)
        vmap = {}
        for axes, exprs in zip(input_vars, output_exprs.values()):
            for var, expr in zip(axes, exprs):
                vmap[var] = _cast_to(expr, var)
        return {name: [analyzer.simplify(_substitute(i, vmap)) for i in regions[0]]
                for name, regions in mapping.items()}


def get_analyzer_by_tir(block_analyzer: Any, args: list[Any]) -> InputShapeInference:
    """The shape inference over blocks `args` of the function `block_analyzer` reads."""
    return InputShapeInference([Statement(block_analyzer, block) for block in args])
