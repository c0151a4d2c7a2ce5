"""Facts about schedulable (``s_tir``) PrimFuncs: their blocks, loops, iteration kinds and buffer accesses.

The carver analyses the block-structured functions `tvm.te.create_prim_func` builds. In TVM 0.27 a buffer is a
``Var`` of `BufferType` (function parameters hold them directly: there is no ``buffer_map``) and a block's
read/write regions name it as ``region.source``.
"""

from __future__ import annotations

from typing import Any, Literal

import tvm_ffi
from tvm import ir, tirx
from tvm.s_tir import Schedule
from tvm.s_tir.schedule import LoopRV, SBlockRV

__all__ = [
    "IterInfo", "BlockInfo", "normalize_prim_func", "find_var_from_func", "check_func_with_dynamic",
    "get_max_threads_per_block", "get_max_shared_memory_per_block", "get_root_block",
    "collect_block_iter_vars_used_in_access_region", "collect_vars_used_in_prim_expr", "detect_dominant_read",
    "is_broadcast_epilogue", "get_reduction_blocks", "get_coalesced_veclen", "is_buffer", "func_buffers", "expr_dtype",
]


def expr_dtype(expr: Any) -> str:
    """The dtype name of a scalar expression or Var (``expr.ty.dtype`` in TVM 0.27)."""
    ty = getattr(expr, "ty", None)
    if ty is not None and hasattr(ty, "dtype"):
        return str(ty.dtype)
    return str(expr.dtype)


def is_buffer(value: Any) -> bool:
    """Whether `value` is a buffer (a Var of BufferType) rather than a scalar Var or an expression."""
    return isinstance(getattr(value, "ty", None), tirx.BufferType)


def func_buffers(func: tirx.PrimFunc) -> list[Any]:
    """The buffer parameters of `func`, in order (scalar parameters skipped)."""
    return [p for p in func.params if is_buffer(p)]


class IterInfo:
    """One block iterator: its kind ("S" spatial, "R" reduction, "O" other), var, domain and loop.

    `dom` is the iterator's Range (``dom.min``, ``dom.extent``); `extent` is the extent as an int when it is
    constant, else the symbolic expression.
    """

    kind: Literal["S", "R", "O"]

    def __init__(self, kind: Literal["S", "R", "O"], var: tirx.Var, dom: Any, loop_rv: LoopRV):
        self.kind = kind
        self.var = var
        self._dom = dom
        self.loop_rv = loop_rv

    @property
    def dom(self) -> Any:
        return self._dom

    @property
    def extent(self) -> int | Any:
        ext = getattr(self._dom, "extent", self._dom)
        return int(ext) if isinstance(ext, tirx.IntImm) else ext

    def __repr__(self) -> str:
        return f'Iter("{self.kind}", {self.extent})'

    __str__ = __repr__


class BlockInfo:
    """One block of a normalised function: its name, iterators and whether it reduces."""

    def __init__(self, name: str, iters: list[IterInfo], block_rv: SBlockRV, reduction_block: bool = False,
                 block_stmt: Any = None):
        self.name = name
        self.iters = iters
        self.block_rv = block_rv
        self._reduction_block = reduction_block
        self._stmt = block_stmt

    def dom(self) -> list[int | Any]:
        """The iterator extents (ints where constant)."""
        return [i.extent for i in self.iters]

    def dom_kind(self) -> str:
        """The iterator kinds in order, e.g. "SSR"."""
        return "".join(i.kind for i in self.iters)

    def is_injective(self) -> bool:
        return all(k == "S" for k in self.dom_kind())

    def is_elementwise(self, sch: Schedule) -> bool:
        """An injective block that reads one buffer at exactly the point it writes."""
        if not self.is_injective():
            return False
        block = sch.get(self.block_rv)
        if len(block.reads) != 1 or len(block.writes) != 1:
            return False
        read, write = block.reads[0].region, block.writes[0].region
        if len(read) != len(write) or len(read) != len(block.iter_vars):
            return False

        def point_at(rng: ir.Range, var: tirx.Var) -> bool:
            return rng.min.same_as(var) and _is_const(rng.extent, 1)

        return all(point_at(r, iv.var) and point_at(w, iv.var) for iv, r, w in zip(block.iter_vars, read, write))

    def is_reduction(self) -> bool:
        return self._reduction_block

    def _spatial_extents(self) -> list[Any]:
        return [i.extent for i in self.iters if i.kind == "S" and not (isinstance(i.extent, int) and i.extent == 1)]

    def is_gemv(self) -> bool:
        """A reduction with one non-trivial spatial axis and two inputs (a matrix-vector product)."""
        reads = len(self._stmt.reads) if self._stmt is not None else 2
        return self.is_reduction() and reads == 2 and len(self._spatial_extents()) == 1

    def is_gemm(self) -> bool:
        """A reduction with two inputs whose iterators split into I, J and K axes (a matrix product)."""
        if not self.is_reduction() or self._stmt is None:
            return False
        from tilelang.carver.matmul_analysis import detect_iter_traits

        return detect_iter_traits(self._stmt) is not None

    def __repr__(self) -> str:
        return f'BlockInfo("{self.name}", "{self.dom_kind()}", {self.dom()})'

    __str__ = __repr__


def _is_const(expr: Any, value: int) -> bool:
    return isinstance(expr, tirx.IntImm) and int(expr.value) == value


def _normalize_fn() -> Any:
    return tvm_ffi.get_global_func("s_tir.schedule.NormalizePrimFunc")


def normalize_prim_func(sch: Schedule) -> list[BlockInfo] | None:
    """Every block of ``sch.mod["main"]`` with its loops and iterator kinds; None when the function has a
    shape the normaliser does not accept (e.g. imperfect loop nests)."""
    try:
        result = _normalize_fn()(sch)
    except Exception:
        return None
    if result is None:
        return None
    kinds = {tirx.IterVar.DataPar: "S", tirx.IterVar.CommReduce: "R"}
    infos = []
    for block, loops, iters, is_reduction in zip(*result):
        infos.append(BlockInfo(
            name=sch.get(block).name_hint,
            iters=[IterInfo(kinds.get(int(it.iter_type), "O"), it.var, it.dom, loop)  # type: ignore[arg-type]
                   for loop, it in zip(loops, iters)],
            block_rv=block,
            reduction_block=bool(is_reduction),
            block_stmt=sch.get(block),
        ))
    return infos


def find_var_from_func(func: tirx.PrimFunc, var: str) -> tirx.Var | None:
    """The symbolic shape variable named `var` in `func`'s buffer shapes."""
    for buffer in func_buffers(func):
        for dim in buffer.shape:
            if isinstance(dim, tirx.Var) and not is_buffer(dim) and dim.name == var:
                return dim
    return None


def check_func_with_dynamic(func: tirx.PrimFunc) -> bool:
    """Whether any buffer of `func` has a symbolic dimension."""
    return any(isinstance(d, tirx.Var) for b in func_buffers(func) for d in b.shape)


def _require_gpu_target(target: Any) -> None:
    if "gpu" not in [str(k) for k in target.keys]:
        raise ValueError(f"Expect a GPU target, but got {target}")


def get_max_threads_per_block(target: Any) -> int:
    """The target's thread limit per block (64 when it states none)."""
    _require_gpu_target(target)
    for name in ("max_threads_per_block", "max_num_threads"):
        value = target.attrs.get(name, None)
        if value is not None:
            return int(value)
    return 64


def get_max_shared_memory_per_block(target: Any) -> int:
    """The target's shared-memory limit per block; ValueError when the target does not state it."""
    _require_gpu_target(target)
    value = target.attrs.get("max_shared_memory_per_block", None)
    if value is None:
        raise ValueError(f"Cannot find `max_shared_memory_per_block` in {target}, please specify it manually")
    return int(value)


def get_root_block(sch: Schedule, func_name: str = "main") -> SBlockRV:
    """The root block of ``sch.mod[func_name]``."""
    body = sch.mod[func_name].body
    block = getattr(body, "block", None)
    if block is None:
        raise ValueError(f"The function body is expected to be the root block, but got:\n{body}")
    return sch.get_sblock(block.name_hint)


def collect_vars_used_in_prim_expr(expr: Any) -> set[tirx.Var]:
    """Every Var `expr` mentions."""
    found: set[tirx.Var] = set()
    tvm_ffi.structural_walk(expr, (tirx.Var, found.add), order="post")
    return found


def collect_block_iter_vars_used_in_access_region(block: Any, region: list[ir.Range]) -> set[tirx.Var]:
    """The block iterators that index `region` through its unit-extent (point) dimensions."""
    found: set[tirx.Var] = set()
    for rng in region:
        if _is_const(rng.extent, 1):
            found |= collect_vars_used_in_prim_expr(rng.min)
    return found & {iv.var for iv in block.iter_vars}


def detect_dominant_read(block: Any) -> Any:
    """The flattened offset of the read that uses the most block iterators."""
    best, best_count = None, -1
    for region in block.reads:
        count = len(collect_block_iter_vars_used_in_access_region(block, region.region))
        if count > best_count:
            best, best_count = region, count
    if best is None:
        raise ValueError(f"block {block.name_hint!r} reads nothing")
    (offset,) = best.source.offset_of([r.min for r in best.region])
    return offset


def is_broadcast_epilogue(sch: Schedule, block: SBlockRV, epilogue: SBlockRV) -> bool:
    """Whether `epilogue` reads `block`'s output with fewer iterators than it has (a broadcast)."""
    written = [r.source for r in sch.get(block).writes]
    epi = sch.get(epilogue)
    iters = [iv for iv in epi.iter_vars if not _is_const(iv.dom.extent, 1)]
    for region in epi.reads:
        if not any(region.source.same_as(w) for w in written):
            continue
        if len(collect_block_iter_vars_used_in_access_region(epi, region.region)) < len(iters):
            return True
    return False


def get_reduction_blocks(sch: Schedule, blocks: list[SBlockRV]) -> list[SBlockRV] | None:
    """The reduction blocks among `blocks`; None when there is none or a block is neither spatial nor a
    reduction."""
    def kinds(block: SBlockRV) -> set[int]:
        return {int(iv.iter_type) for iv in sch.get(block).iter_vars}

    spatial, reduce = int(tirx.IterVar.DataPar), int(tirx.IterVar.CommReduce)
    reductions = []
    for block in blocks:
        k = kinds(block)
        if k == {spatial, reduce}:
            reductions.append(block)
        elif k != {spatial}:
            return None
    return reductions or None


def get_coalesced_veclen(block_stmt: Any, target_bits: int = 128) -> int:
    """Elements of the widest dtype the block touches that fit one `target_bits` access."""
    import tvm

    regions = list(block_stmt.reads) + list(block_stmt.writes)
    widest = max((tvm.DataType(str(r.source.dtype)).bits for r in regions), default=32)
    return target_bits // widest
