"""Recognising GEMM-like blocks and rewriting them to the canonical ``C[S, I, J] += A[S, I, K] * B[S, J, K]``.

`get_tensorized_func_and_tags` is the entry point the roller uses: for a target with matrix units (CUDA
sm_70+, RDNA gfx11/gfx12) it normalises the single reduction block of a function to that form and returns the
tags the `TensorCorePolicy` reads (tensor-core axes, pipeline depth, async copy, intrinsic dtypes).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import Enum
from typing import Any

import tvm_ffi
from tvm import ir, tirx
from tvm.s_tir import Schedule
from tvm.s_tir.schedule import SBlockRV
from tvm.tirx import IndexMap, IterVar
from tvm.tirx.analysis import undefined_vars

from tilelang.carver.analysis import (
    collect_block_iter_vars_used_in_access_region,
    expr_dtype,
    func_buffers,
    get_reduction_blocks,
    get_root_block,
)
from tilelang.carver.arch import get_arch, is_tensorcore_supported_precision
from tilelang.carver.arch._target import target_attr, target_get_mcpu, target_is_rdna, target_kind
from tilelang.carver.arch.cuda import check_sm_version
from tilelang.carver.arch.rdna import _get_rdna_tuning_config

__all__ = [
    "check_sm_version", "collect_vars_from_expr", "auto_inline_producers", "auto_inline_consumers",
    "auto_inline_consumer_chain", "find_first_similar_region", "find_first_similar_buffer",
    "find_last_producer_from_buffer", "find_arg_idx_from_buffer_chain", "IterKind", "IterTrait",
    "make_iter_fusion_index_map", "detect_iter_traits", "get_index_map", "get_in_out_dtypes",
    "get_dequantize_block", "is_identity_or_transpose_block", "is_identity_block", "is_transpose_block",
    "inline_transpose_block", "normalize_to_matmul", "get_tensorized_func_and_tags", "get_propagate_map",
    "get_ladder_stage3_map", "layout_propagate_chain",
]

logger = logging.getLogger(__name__)


def collect_vars_from_expr(prim_expr: Any) -> list[tirx.Var]:
    """The Vars of `prim_expr` in visiting order (a Var used twice appears twice)."""
    found: list[tirx.Var] = []
    tvm_ffi.structural_walk(prim_expr, (tirx.Var, found.append), order="pre")
    return found


def _is_one(x: Any) -> bool:
    return isinstance(x, tirx.IntImm) and int(x.value) == 1


def _dtype(buffer: Any) -> str:
    return str(buffer.dtype)


def _transitive(step: Any, sch: Schedule, block: SBlockRV) -> list[SBlockRV]:
    out = []
    for nxt in step(block):
        out.append(nxt)
        out.extend(_transitive(step, sch, nxt))
    return out


def _same_block(sch: Schedule, a: SBlockRV, b: SBlockRV) -> bool:
    return sch.get(a).same_as(sch.get(b))


def auto_inline_producers(sch: Schedule, block: SBlockRV, skip_blocks: list[SBlockRV] | None = None) -> None:
    """Inline every producer of `block` that can be inlined (except `skip_blocks`), until none is left."""
    skip = skip_blocks or []
    while True:
        done = 0
        for producer in _transitive(sch.get_producers, sch, block):
            if any(_same_block(sch, producer, s) for s in skip):
                continue
            try:
                sch.compute_inline(producer)
                done += 1
            except Exception:  # not inlinable: keep it
                continue
        if done == 0:
            return


def auto_inline_consumers(sch: Schedule, block: SBlockRV) -> None:
    """Inline every consumer of `block` forwards or backwards where possible, until none is left."""
    while True:
        done = 0
        consumers = _transitive(sch.get_consumers, sch, block)
        for inline in (sch.compute_inline, sch.reverse_compute_inline):
            for consumer in consumers:
                try:
                    inline(consumer)
                    done += 1
                except Exception:
                    continue
        if done == 0:
            return


def auto_inline_consumer_chain(sch: Schedule, block: SBlockRV) -> None:
    """Inline `block`'s consumers; consumers held back by another producer get that producer inlined first."""
    auto_inline_consumers(sch, block)
    remaining = sch.get_consumers(block)
    if remaining:
        for consumer in remaining:
            for producer in sch.get_producers(consumer):
                if not _same_block(sch, producer, block):
                    sch.compute_inline(producer)
        auto_inline_consumers(sch, block)


def find_first_similar_region(regions: list[Any], buffer: Any) -> Any | None:
    """The first region whose buffer has as many dimensions as `buffer`."""
    for region in regions:
        if len(region.source.shape) == len(buffer.shape):
            return region
    return None


def find_first_similar_buffer(regions: list[Any], buffer: Any) -> Any | None:
    """The buffer of `find_first_similar_region`."""
    region = find_first_similar_region(regions, buffer)
    return None if region is None else region.source


def find_last_producer_from_buffer(sch: Schedule, main_block: SBlockRV, buffer: Any) -> SBlockRV | None:
    """Walk producers back from `main_block` along `buffer` to the block nearest the function arguments."""
    block = main_block
    while True:
        before = buffer
        producers = sch.get_producers(block)
        if not producers:
            break
        for producer in producers:
            for write in sch.get(producer).writes:
                if buffer is not None and write.source.same_as(buffer):
                    block = producer
                    buffer = find_first_similar_buffer(sch.get(producer).reads, before)
        if buffer is None or buffer.same_as(before):
            break
    return block


def _param_index(sch: Schedule, buffer: Any) -> int | None:
    for i, param in enumerate(sch.mod["main"].params):
        if param.same_as(buffer):
            return i
    return None


def find_arg_idx_from_buffer_chain(sch: Schedule, main_block: SBlockRV, buffer: Any) -> int | None:
    """The parameter index `buffer` comes from, following single-input single-output producer blocks."""
    producers = sch.get_producers(main_block)
    if not producers:
        return _param_index(sch, buffer)
    for producer in producers:
        stmt = sch.get(producer)
        if len(stmt.reads) != 1 or len(stmt.writes) != 1:
            continue
        if any(w.source.same_as(buffer) for w in stmt.writes):
            return find_arg_idx_from_buffer_chain(sch, producer, buffer)
    return _param_index(sch, buffer)


class IterKind(Enum):
    """Axis roles in ``C[S, I, J] += A[S, I, K] * B[S, J, K]``: S batch, I rows, J columns, K reduction, T unit."""

    kIter_S = 0
    kIter_I = 1
    kIter_J = 2
    kIter_K = 3
    kIter_T = 4


@dataclass
class IterTrait:
    kind: IterKind
    extent: Any


def make_iter_fusion_index_map(traits: list[IterTrait], kind_order: list[IterKind]) -> IndexMap:
    """An IndexMap that fuses the iterators of each kind (row-major) and lays them out in `kind_order`."""
    fused: dict[IterKind, Any] = {}
    inputs: list[tirx.Var] = []
    for i, trait in enumerate(traits):
        var = tirx.Var(f"i{i}", expr_dtype(trait.extent))
        inputs.append(var)
        if trait.kind == IterKind.kIter_T:
            continue
        if trait.kind not in kind_order:
            raise ValueError(f"Unknown iter kind {trait.kind}")
        fused[trait.kind] = fused[trait.kind] * trait.extent + var if trait.kind in fused else var
    zero = tirx.IntImm(expr_dtype(traits[0].extent), 0)
    return IndexMap(inputs, [fused.get(kind, zero) for kind in kind_order], None)


def _point_vars(region: list[ir.Range]) -> set[tirx.Var]:
    axes: set[tirx.Var] = set()
    for rng in region:
        if not _is_one(rng.extent):
            raise ValueError("Expect elemwise block access")
        axes |= set(undefined_vars(rng.min))
    return axes


def detect_iter_traits(block: Any) -> tuple[list[IterTrait], ...] | None:
    """The iterator traits of A, B, C and the block if `block` is ``C[S, I, J] += A[S, I, K] * B[S, J, K]``
    (up to axis order), else None."""
    if len(block.reads) != 2 or len(block.writes) != 1:
        return None
    try:
        a_axes = _point_vars(block.reads[0].region)
        b_axes = _point_vars(block.reads[1].region)
        c_axes = _point_vars(block.writes[0].region)
    except ValueError:
        return None
    spatial, reduce = int(IterVar.DataPar), int(IterVar.CommReduce)
    traits: dict[Any, IterTrait] = {}
    for iv in block.iter_vars:
        var, kind_of = iv.var, int(iv.iter_type)
        in_a, in_b, in_c = var in a_axes, var in b_axes, var in c_axes
        if _is_one(iv.dom.extent):
            kind = IterKind.kIter_K if kind_of == reduce else IterKind.kIter_T
        elif kind_of == spatial:
            if in_a and in_b and in_c:
                kind = IterKind.kIter_S
            elif in_a and in_c:
                kind = IterKind.kIter_I
            elif in_b and in_c:
                kind = IterKind.kIter_J
            else:
                return None
        elif kind_of == reduce and in_a and in_b and not in_c:
            kind = IterKind.kIter_K
        else:
            return None
        traits[var] = IterTrait(kind, iv.dom.extent)
    needed = {IterKind.kIter_I, IterKind.kIter_J, IterKind.kIter_K}
    if not needed <= {t.kind for t in traits.values()}:
        return None

    def of(axes: set[Any]) -> list[IterTrait]:
        return [traits[iv.var] for iv in block.iter_vars if iv.var in axes]

    return of(a_axes), of(b_axes), of(c_axes), [traits[iv.var] for iv in block.iter_vars]


def _reduce_vars(block: Any) -> list[tirx.Var]:
    return [iv.var for iv in block.iter_vars if int(iv.iter_type) == int(IterVar.CommReduce)]


def _last_axis_reduces(block: Any, region: list[ir.Range]) -> bool:
    """Whether the innermost index of `region` uses a reduction iterator (e.g. B is [N, K])."""
    indices = []
    for rng in region:
        if not _is_one(rng.extent):
            raise ValueError("Expect elemwise block access")
        indices.append(rng.min)
    reduce_vars = _reduce_vars(block)
    return any(any(v.same_as(r) for r in reduce_vars) for v in collect_vars_from_expr(indices[-1]))


def get_index_map(block: Any, layout: list[str] | None = None) -> tuple[IndexMap, ...] | None:
    """IndexMaps (block, A, B, C) that bring a GEMM-like block to the canonical form; None if it is not one.

    `layout` per operand: ``"n"`` keeps [S, I, K] / [S, K, J] order, ``"t"`` transposes, ``"a"`` infers it from
    whether the operand's innermost index is the reduction axis.
    """
    layout = layout or ["n", "t", "n"]
    traits = detect_iter_traits(block)
    if traits is None:
        return None
    a_traits, b_traits, c_traits, block_traits = traits
    roles = {"A": (IterKind.kIter_I, IterKind.kIter_K), "B": (IterKind.kIter_K, IterKind.kIter_J),
             "C": (IterKind.kIter_I, IterKind.kIter_J)}
    spatial_role = {"A": IterKind.kIter_I, "B": IterKind.kIter_J}

    def order(mode: str, region: list[ir.Range], operand: str) -> list[IterKind]:
        first, second = roles[operand]
        if mode == "n":
            return [IterKind.kIter_S, first, second]
        if mode == "t":
            return [IterKind.kIter_S, second, first]
        if mode == "a":
            if operand == "C":
                return [IterKind.kIter_S, first, second]
            if _last_axis_reduces(block, region):
                return [IterKind.kIter_S, spatial_role[operand], IterKind.kIter_K]
            return [IterKind.kIter_S, IterKind.kIter_K, spatial_role[operand]]
        raise ValueError(f"Unknown layout {mode}")

    return (
        make_iter_fusion_index_map(block_traits, [IterKind.kIter_S, IterKind.kIter_I, IterKind.kIter_J,
                                                  IterKind.kIter_K]),
        make_iter_fusion_index_map(a_traits, order(layout[0], block.reads[0].region, "A")),
        make_iter_fusion_index_map(b_traits, order(layout[1], block.reads[1].region, "B")),
        make_iter_fusion_index_map(c_traits, order(layout[2], block.writes[0].region, "C")),
    )


def get_in_out_dtypes(block: Any) -> tuple[str, str]:
    """(dtype of the first read, dtype of the write)."""
    if not block.reads or not block.writes:
        raise ValueError(f"block {block.name_hint!r} must read and write a buffer")
    return _dtype(block.reads[0].source), _dtype(block.writes[0].source)


def get_dequantize_block(sch: Schedule, blocks: list[SBlockRV]) -> SBlockRV | None:
    """The one block that turns unsigned-integer inputs into a float output (a dequantize), if exactly one."""
    def dequantizes(block: SBlockRV) -> bool:
        stmt = sch.get(block)
        if len(stmt.reads) < 2 or len(stmt.writes) != 1:
            return False
        return any("uint" in _dtype(r.source) for r in stmt.reads) and "float" in _dtype(stmt.writes[0].source)

    found = [b for b in blocks if dequantizes(b)]
    return found[0] if len(found) == 1 else None


def is_identity_or_transpose_block(block_stmt: Any) -> tuple[bool, bool]:
    """(copies its input unchanged, copies it with the last two axes swapped) for a spatial copy block."""
    if {int(iv.iter_type) for iv in block_stmt.iter_vars} != {int(IterVar.DataPar)}:
        return False, False
    body = block_stmt.body
    if not isinstance(body, tirx.BufferStore) or not isinstance(body.value, ir.TensorLoad):
        return False, False
    unit = {iv.var for iv in block_stmt.iter_vars if _is_one(iv.dom.extent)}

    def access(region: list[ir.Range]) -> list[Any] | None:
        axes: list[Any] = []
        for rng in region:
            if not _is_one(rng.extent):
                return None
            axes.extend(undefined_vars(rng.min))
        axes = [a for a in axes if a not in unit]
        return [a for i, a in enumerate(axes) if i == 0 or not a.same_as(axes[i - 1])]

    src, dst = access(block_stmt.reads[0].region), access(block_stmt.writes[0].region)
    if src is None or dst is None:
        return False, False
    src, dst = src[-2:], dst[-2:]
    same = len(src) == len(dst) and all(a.same_as(b) for a, b in zip(src, dst))
    return same, (not same and set(src) == set(dst))


def is_identity_block(block_stmt: Any) -> bool:
    return is_identity_or_transpose_block(block_stmt)[0]


def is_transpose_block(block_stmt: Any) -> bool:
    return is_identity_or_transpose_block(block_stmt)[1]


def inline_transpose_block(sch: Schedule, blocks: list[SBlockRV]) -> list[SBlockRV]:
    """Inline the transpose blocks among `blocks`; return the blocks that remain."""
    remaining = []
    for block in blocks:
        if not is_transpose_block(sch.get(block)):
            remaining.append(block)
            continue
        try:
            sch.compute_inline(block)
        except Exception:
            try:
                sch.reverse_compute_inline(block)
            except Exception:
                remaining.append(block)
    return remaining


def normalize_to_matmul(sch: Schedule, main_block: SBlockRV, layout: list[str] | None = None) -> Schedule | None:
    """Reindex `main_block`'s operands and iterators into ``C[S, I, J] += A[S, I, K] * B[S, J, K]`` (or the
    layouts asked for); None when the block is not GEMM-like."""
    maps = get_index_map(sch.get(main_block), layout=layout or ["n", "t", "n"])
    if maps is None:
        logger.debug("Cannot find the appropriate index map for tensorcore")
        return None
    block_map, a_map, b_map, c_map = maps
    for operand, index_map, side in ((("read", 0)), a_map, "write"), ((("read", 1)), b_map, "write"), \
            ((("write", 0)), c_map, "read"):
        staged = sch.reindex(main_block, operand)
        sch.transform_layout(staged, (side, 0), index_map)
    sch.transform_block_layout(main_block, block_map)
    sch.mod["main"] = sch.mod["main"].with_attr("dlight.tensorcore_prenormlized", True)
    return sch


def _cuda_tc_target(target: Any) -> bool:
    return target_kind(target) == "cuda" and check_sm_version(str(target_attr(target, "arch", ""))) >= 70


def _rdna_wmma_target(target: Any) -> bool:
    return target_kind(target) in ("hip", "rocm") and target_is_rdna(target)


def _tensorcore_tags(func: tirx.PrimFunc, block_stmt: Any, target: Any) -> dict[str, Any] | bool:
    """The tags `TensorCorePolicy` reads, for a block already in canonical form; False when unsupported."""
    is_cuda, is_rdna = _cuda_tc_target(target), _rdna_wmma_target(target)
    if not (is_cuda or is_rdna):
        return False
    sm = check_sm_version(str(target_attr(target, "arch", ""))) if is_cuda else -1
    out_ndim = len(block_stmt.writes[0].source.shape)
    tags: dict[str, Any] = {"tensorcore_config": [out_ndim - 2, out_ndim - 1]}
    if is_cuda:
        tags["pipeline_stage"] = 2 if sm in (80, 90) else 1
    else:
        tags["pipeline_stage"] = _get_rdna_tuning_config(target_get_mcpu(target)).pipeline_stage
    tags["use_async_copy"] = is_cuda and tags["pipeline_stage"] == 2 and sm in (80, 90)

    in_dtype, out_dtype = get_in_out_dtypes(block_stmt)
    if is_cuda and 70 <= sm < 80 and out_dtype == "int32":
        return False  # Volta tensor cores have no int32 accumulation
    intrin: dict[str, Any] = {"in_dtype": in_dtype, "out_dtype": out_dtype,
                              "trans_b": _last_axis_reduces(block_stmt, block_stmt.reads[1].region)}
    attrs = func.attrs if func.attrs is not None else {}
    for key in ("input_transform_kind", "weight_transform_kind"):
        if key in attrs:
            intrin[key] = int(attrs[key])
    tags["intrin_info"] = intrin
    # a small-M dequantize GEMM on sm_80 reduces over two blocks
    if is_cuda and sm == 80 and "dequantize_info" in attrs and in_dtype in ("bfloat16", "float16"):
        params = func_buffers(func)
        rows = params[0].shape[0] if params else None
        if isinstance(rows, tirx.IntImm) and int(rows) <= 128:
            tags["block_reduction_depth"] = 2
    return tags


def get_tensorized_func_and_tags(func: tirx.PrimFunc, target: Any, layout: list[str] | None = None,
                                 skip_normalize: bool = False,
                                 allow_gemv: bool = False) -> tuple[tirx.PrimFunc, dict[str, Any] | None]:
    """`func` rewritten for matrix units with its policy tags, or ``(func, None)`` when matrix units do not apply
    (no matrix units on the target, unsupported dtypes, no single GEMM-like reduction, axes too short).

    `allow_gemv` is accepted for the reference's signature; GEMV-shaped blocks fail the axis-length check.
    """
    layout = layout or ["a", "a", "a"]
    sch = Schedule(func)
    blocks = sch.get_child_blocks(get_root_block(sch))
    reductions = get_reduction_blocks(sch, blocks)
    if not reductions or len(reductions) != 1:
        return func, None
    (main_block,) = reductions
    stmt = sch.get(main_block)
    if len(stmt.reads) != 2 or len(stmt.writes) != 1 or not collect_block_iter_vars_used_in_access_region(
            stmt, stmt.writes[0].region):
        return func, None
    if not (_cuda_tc_target(target) or _rdna_wmma_target(target)):
        return func, None
    in_dtype, out_dtype = get_in_out_dtypes(stmt)
    if _cuda_tc_target(target):
        if not is_tensorcore_supported_precision(in_dtype, out_dtype, arch=get_arch(target)):
            logger.debug("(%s, %s) is not a tensor-core precision", in_dtype, out_dtype)
            return func, None
    elif (in_dtype, out_dtype) != ("float16", "float32"):
        logger.debug("(%s, %s) is not an RDNA WMMA precision", in_dtype, out_dtype)
        return func, None
    if not skip_normalize and normalize_to_matmul(sch, main_block, layout) is None:
        return func, None
    stmt = sch.get(main_block)
    min_reduce = 16 if in_dtype in ("bfloat16", "float16") else 32
    for iv in list(stmt.iter_vars)[1:]:  # the batch axis does not count
        kind = int(iv.iter_type)
        if kind == int(IterVar.DataPar):
            least = 16
        elif kind == int(IterVar.CommReduce):
            least = min_reduce
        else:
            raise ValueError(f"Unknown IterVar type {iv.iter_type}")
        if isinstance(iv.dom.extent, tirx.IntImm) and int(iv.dom.extent) < least:
            return func, None
    tags = _tensorcore_tags(func, stmt, target)
    return sch.mod["main"], (tags or None)


# ldmatrix thread/element -> tile position maps (PTX ISA, "Warp-level matrix load instruction: ldmatrix")
def _ldmatrix_16x16(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return thread_id % 16, 8 * (thread_id // 16) + local_id % 8


def _ldmatrix_16x16_trans(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return 8 * (thread_id // 16) + thread_id % 8, 8 * ((thread_id % 16) // 8) + local_id % 8


def _ldmatrix_16x32_a(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return thread_id % 16, local_id + 16 * (thread_id // 16)


def _ldmatrix_16x32_b(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return 8 * (thread_id // 16) + thread_id % 8, local_id + 16 * ((thread_id % 16) // 8)


_PROPAGATE_DTYPES = ("bfloat16", "float16", "int8", "float8_e4m3", "float8_e4m3fn", "float8_e5m2")


def get_propagate_map(trans: bool = True, dtype: str = "float16", matrix_name: str = "A",
                      index_dtype: str = "int32") -> tuple[IndexMap, IndexMap]:
    """The (tile -> ldmatrix fragment) IndexMap of an operand tile and its inverse.

    16-bit operands use 16x16 tiles (``trans`` picks the transposed load), 8-bit ones 16x32 tiles (A must not
    be transposed, B must be).
    """
    dtype = str(dtype)
    if dtype not in _PROPAGATE_DTYPES:
        raise ValueError(f"Only support bfloat16, float16, int8, float8_e4m3, float8_e5m2, got {dtype}")
    sixteen_bit = dtype in ("bfloat16", "float16")
    if sixteen_bit:
        layout = _ldmatrix_16x16_trans if trans else _ldmatrix_16x16
        per_row = 8
    elif matrix_name == "A" and not trans:
        layout, per_row = _ldmatrix_16x32_a, 16
    elif matrix_name == "B" and trans:
        layout, per_row = _ldmatrix_16x32_b, 16
    else:
        raise ValueError(f"Unknown matrix name {matrix_name} (8-bit operands: A not transposed, B transposed)")

    def permute(i: Any, j: Any) -> tuple[Any, Any]:
        return layout(i * 2 + j // per_row, j % per_row)

    index_map = IndexMap.from_func(permute, index_dtype=index_dtype)
    rows, cols = (16, 16) if sixteen_bit else (16, 32)
    return index_map, index_map.inverse([rows, cols])


def get_ladder_stage3_map(dtype: str = "float16", index_dtype: str = "int32") -> tuple[IndexMap, IndexMap]:
    """The IndexMap (and inverse) that stores a tile in mma fragment order, so no ldmatrix is needed."""
    dtype = str(dtype)
    if dtype not in _PROPAGATE_DTYPES:
        raise ValueError(f"Only support float16, int8, float8_e4m3, float8_e5m2, got {dtype}")
    sixteen_bit = dtype in ("bfloat16", "float16")
    per_row, width = (8, 16) if sixteen_bit else (16, 32)
    group = 2 if sixteen_bit else 4

    def permute(i: Any, j: Any) -> tuple[Any, Any]:
        thread, local = i * 2 + j // per_row, j % per_row
        new_thread = (thread % 8) * 4 + local // group
        new_local = (thread // 8) * group + local % group
        flat = new_thread * per_row + new_local
        return flat // width, flat % width

    index_map = IndexMap.from_func(permute, index_dtype=index_dtype)
    rows, cols = (16, 16) if sixteen_bit else (16, 32)
    return index_map, index_map.inverse([rows, cols])


def layout_propagate_chain(sch: Schedule, start_block: SBlockRV, start_buffer: Any, end_block: SBlockRV,
                           index_map: IndexMap) -> IndexMap:
    """Carry `index_map` (a layout of `start_buffer`) back through the single-output producers of
    `start_block` up to `end_block`, rescaling the last index for producers that unpack elements."""
    block, buffer = start_block, start_buffer
    while True:
        before = buffer
        producers = sch.get_producers(block)
        if not producers:
            break
        for producer in producers:
            stmt = sch.get(producer)
            if len(stmt.writes) != 1 or stmt.same_as(sch.get(end_block)):
                return index_map
            (write,) = stmt.writes
            read = find_first_similar_region(stmt.reads, before)
            if read is None or not write.source.same_as(buffer):
                continue
            block, buffer = producer, read.source
            write_idx = [r.min for r in write.region]
            read_idx = [r.min for r in read.region]
            back = IndexMap(write_idx, read_idx, None).non_surjective_inverse(write.source.shape)[0]
            scale = 1
            for w, r in zip(write.source.shape, read.source.shape):
                scale *= int(w) // int(r)
            final = list(index_map.map_indices(back.map_indices(write_idx)))
            final[-1] = final[-1] // scale
            index_map = IndexMap(write_idx, final, None)
        if buffer.same_as(before):
            break
    return index_map
