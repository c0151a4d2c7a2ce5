"""Kernel-signature finishing of TVM's MSL, with facts from the device IRModule (run by the Metal build).

TVM's Metal codegen writes ``kernel void f(device T* X_ptr [[ buffer(i) ]], ..., uint2 threadIdx [[...]])``.
Two kinds of kernel get more:

- a kernel calling Metal 4 GEMM helpers (`tilelang_metal.mpp`) gets ``[[kernel,
  max_total_threads_per_threadgroup(N)]]``, its tensors as ``const device T* __restrict X`` (``const`` for a
  tensor the kernel never writes, ``__restrict`` under ``tirx.noalias``, the ``_ptr`` suffix dropped when the
  plain name is free) and the simdgroup index ``uint __simd_group_id [[simdgroup_index_in_threadgroup]]``,
  which replaces ``threadIdx.x >> 5`` (a 1-D threadgroup's simdgroups are consecutive runs of 32 threads);
- a kernel with the MLX swizzle marker ``tl_metal_mlx_swizzle(p);`` (already written in logical block indices by
  `tilelang_metal.passes.mlx_block_indices`) takes the launch's index as ``__physical_blockIdx`` and declares
  the logical ``blockIdx`` from it once, where the marker was.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from tilelang.errors import LoweringError
from tilelang_metal.mpp import HELPER_PREFIX
from tilelang_metal.passes.mlx_swizzle import MLX_MARKER, marker_panel
from tilelang_metal.threadgroup_memory import KERNEL_HEAD

SIMD_GROUP_ID = "__simd_group_id"
_HEAD = re.compile(KERNEL_HEAD)
_BUFFER = re.compile(r"^(\s*)(device|constant) (\w+)\* (\w+) (\[\[ buffer\(\d+\) \]\])$")
_BLOCK = re.compile(r"^(\s*)(uint[23]?) blockIdx (\[\[threadgroup_position_in_grid\]\])$")
_SHIFT = re.compile(r"\(\(\(int\)threadIdx\.x\) >> (\d+)\)")
_MASKED_SHIFT = re.compile(r"\(\(\(\(int\)threadIdx\.x\) & (\d+)\) >> (\d+)\)")
_MARKER_LINE = re.compile(r"^([ \t]*)" + MLX_MARKER + r"\((\d+)\);[ \t]*\n", re.M)


@dataclass(frozen=True)
class KernelFacts:
    """What the signature rewrite needs to know of one device function."""

    threads: int | None  # threads per threadgroup when constant
    one_dim: bool  # only threadIdx.x
    written: frozenset[str]  # pointer parameters the kernel may write
    noalias: bool
    mlx_panel: int | None


def _written_params(func: Any) -> frozenset[str]:
    """Names of pointer parameters stored to, or whose address reaches a call other than as a helper's A / B."""
    import tvm
    from tvm import tirx

    from tilelang.transform import utils as C

    params = {str(p.name) for p in func.params}
    # a parameter's buffers: the tensor views ``X = decl_buffer(..., data=X_ptr)`` (by name) and the pointer itself
    owner = {str(d.buffer.name): str(d.data.name) for d in C.collect(func.body, tirx.DeclBuffer)
             if isinstance(d.data, tvm.ir.Var) and str(d.data.name) in params}
    owner.update({p: p for p in params})
    written: set[str] = set()

    def mark(buf: Any) -> None:
        if str(buf.name) in owner:
            written.add(owner[str(buf.name)])

    def note(expr: Any) -> None:
        for ld in C.collect(expr, tvm.ir.TensorLoad):
            mark(ld.source)

    for st in C.collect(func.body, tirx.BufferStore):
        mark(st.buffer)
    for call in C.collect(func.body, tvm.ir.Call, lambda c: isinstance(c.op, tvm.ir.Op)):
        name = str(call.op.name)
        if name == "tirx.call_extern" and str(call.args[0].value).startswith(HELPER_PREFIX):
            note(call.args[3])  # C; A and B (args 1, 2) are only read
        elif name in ("tirx.call_extern", "tirx.call_pure_extern"):
            for arg in call.args[1:]:
                for addr in C.collect(arg, tvm.ir.Call, lambda c: isinstance(c.op, tvm.ir.Op)
                                      and str(c.op.name) == "tirx.address_of"):
                    note(addr)
        elif name == "tirx.tvm_access_ptr":
            for v in C.collect(call, tvm.ir.Var):
                mark(v)
    return frozenset(written)


def kernel_facts(mod: Any) -> dict[str, KernelFacts]:
    """`KernelFacts` of every device function of `mod`, by global symbol."""
    from tilelang.transform import utils as C

    out = {}
    for _, func in mod.functions.items():
        attrs = func.attrs or {}
        symbol = attrs.get("global_symbol") if hasattr(attrs, "get") else None
        if symbol is None:
            continue
        ext = C.launch_extents(func)
        tags = [t for t in ("threadIdx.x", "threadIdx.y", "threadIdx.z") if t in ext]
        counts = [C.as_int(ext[t][1]) for t in tags]
        threads = None if any(c is None for c in counts) or not counts else math.prod(counts)
        noalias = bool(attrs.get("tirx.noalias", False)) if hasattr(attrs, "get") else False
        out[str(symbol)] = KernelFacts(threads, tags == ["threadIdx.x"], _written_params(func), noalias,
                                       marker_panel(func.body))
    return out


def _kernels(source: str) -> list[tuple[str, int, int, int]]:
    """``(name, header start, body start, end)`` of every kernel, in source order."""
    heads = list(_HEAD.finditer(source))
    out = []
    for i, m in enumerate(heads):
        body = source.index(") {\n", m.end()) + len(") {\n")
        end = heads[i + 1].start() if i + 1 < len(heads) else len(source)
        out.append((m.group(1), m.start(), body, end))
    return out


def _simdgroup_index(body: str) -> str:
    def shift(m: re.Match[str]) -> str:
        n = int(m.group(1))
        if n < 5:
            return m.group(0)
        return f"((int){SIMD_GROUP_ID})" if n == 5 else f"(((int){SIMD_GROUP_ID}) >> {n - 5})"

    def masked(m: re.Match[str]) -> str:
        mask, n = int(m.group(1)), int(m.group(2))
        if n < 5 or mask & 31 != 31:
            return m.group(0)
        base = f"(((int){SIMD_GROUP_ID}) & {mask >> 5})"
        return base if n == 5 else f"({base} >> {n - 5})"

    return _SHIFT.sub(shift, _MASKED_SHIFT.sub(masked, body))


def _mpp_kernel(name: str, params: list[str], body: str, facts: KernelFacts) -> tuple[str, list[str], str]:
    head = (f"[[kernel, max_total_threads_per_threadgroup({facts.threads})]] void {name}("
            if facts.threads else f"kernel void {name}(")
    out = []
    for p in params:
        m = _BUFFER.match(p)
        if m is None or m.group(2) != "device":
            out.append(p)
            continue
        indent, _, dtype, pname, attr = m.groups()
        plain = pname[:-4] if pname.endswith("_ptr") else pname
        if plain != pname and not re.search(rf"\b{plain}\b", body + "\n".join(params)):
            body = re.sub(rf"\b{pname}\b", plain, body)
        else:
            plain = pname
        const = "" if pname in facts.written else "const "
        restrict = "__restrict " if facts.noalias else ""
        out.append(f"{indent}{const}device {dtype}* {restrict}{plain} {attr}")
    if facts.one_dim and facts.threads and facts.threads % 32 == 0:
        out.append(f"  uint {SIMD_GROUP_ID} [[simdgroup_index_in_threadgroup]]")
        body = _simdgroup_index(body)
    return head, out, body


def _mlx_kernel(params: list[str], body: str, panel: int) -> tuple[list[str], str]:
    m = _MARKER_LINE.search(body)
    block = [i for i, p in enumerate(params) if _BLOCK.match(p)]
    if m is None or not block:
        raise LoweringError("metal: an MLX-swizzled kernel lost its block-index marker or its 2-D grid")
    indent, vec, attr = _BLOCK.match(params[block[0]]).groups()  # type: ignore[union-attr]
    params = list(params)
    params[block[0]] = f"{indent}{vec} __physical_blockIdx {attr}"
    p = "__physical_blockIdx"
    if panel & (panel - 1) == 0:
        shift = panel.bit_length() - 1
        x, y = f"{p}.x >> {shift}", f"({p}.y << {shift}) + ({p}.x & {panel - 1}u)"
    else:
        x, y = f"{p}.x / {panel}u", f"{p}.y * {panel}u + {p}.x % {panel}u"
    z = f", {p}.z" if vec == "uint3" else ""
    decl = f"{m.group(1)}const {vec} blockIdx = {vec}({x}, {y}{z});  // MLX swizzle: the logical tile\n"
    return params, body[:m.start()] + decl + body[m.end():]


def finish_kernels(source: str, mod: Any) -> str:
    """`source` with the signatures of Metal 4 GEMM and MLX-swizzled kernels finished (module docstring)."""
    if HELPER_PREFIX not in source and MLX_MARKER not in source:
        return source  # no such kernel: skip reading the IR
    facts = kernel_facts(mod)
    for name, start, body_start, end in reversed(_kernels(source)):
        f = facts.get(name)
        body = source[body_start:end]
        mpp = HELPER_PREFIX in body
        if f is None or not (mpp or f.mlx_panel):
            continue
        open_paren = source.index("(", source.index(name, start))
        params = [p.rstrip() for p in source[open_paren + 1:body_start - len(") {\n")].strip().split(",\n")]
        head = source[start:open_paren + 1]
        if f.mlx_panel:
            params, body = _mlx_kernel(params, body, f.mlx_panel)
        if mpp:
            head, params, body = _mpp_kernel(name, params, body, f)
        source = source[:start] + head + ",\n".join(params) + "\n) {\n" + body + source[end:]
    return source
