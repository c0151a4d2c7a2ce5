"""The WebGPU backend's passes: rewrite what TVM's WGSL codegen cannot emit.

- `FoldBlockIdxZ` (``post_barriers``): TVM's WebGPU code reserves blockIdx.z to spread a wide blockIdx.x, and
  refuses kernels that use it. A 3-D grid becomes 2-D: one blockIdx.y of extent ``gy * gz`` whose quotient and
  remainder by ``gz`` replace blockIdx.y and blockIdx.z. Runs before the host/device split, so the host
  launches the new extents.
- `SplitWideVectors` (``post_storage``, before TVM vectorizes): WGSL vectors have 2 to 4 lanes; a vectorized
  loop wider than 4 becomes a serial loop over 4-wide (or, when 4 does not divide it, 2-wide) vectorized loops,
  or a serial loop.
- `HoistGemmAccumulators` (``post_storage``): the register-blocked GEMM (`tilelang_webgpu.gemm`) moves C into
  its private accumulator before the product and back after it, marked ``tl.webgpu_gemm_in`` / ``_out``. In a
  serial loop whose body touches C (and the exchange tile) only there -- the K loop of every tiled GEMM -- the
  two moves are hoisted out of the loop, so the accumulator stays in registers across all K tiles; the marks
  are removed either way.
- `UnrollRegisterLoops` (``post_storage``): a short serial loop that indexes a thread's registers (a ``local``
  buffer, e.g. a partitioned fragment's ``*_local`` tile) with its loop variable is unrolled, so every register
  index becomes a constant and `tilelang_webgpu.scalarize` can turn the array into scalars. Otherwise the array
  is indexed dynamically and WebGPU compilers (llvmpipe among them) keep it in memory.
- `CheckWorkgroupMemory` (``device_module``): the workgroup arrays a kernel declares (after TVM has merged those
  whose lifetimes do not overlap) must fit the target's ``max_shared_memory_per_block`` (WebGPU guarantees
  32 KiB); otherwise a `LoweringError` lists every array with its size.
- `LegalizeFloatLiterals` (``device_module``): WGSL has no infinity or NaN literal (TVM prints ``inff``); they
  become ``bitcast<f32>`` of their bit pattern.
- `DebugLog` (``post_layout``, `tilelang_webgpu.debug_log`): ``T.print`` / ``T.device_assert`` become records
  in a hidden log buffer that the launcher reads back and prints.
- `CheckDtypes` (``pre_layout``, `tilelang_webgpu.dtypes_check`): tensors and tiles of a dtype WGSL cannot store
  (bfloat16, float64, 8/16-bit integers) are a clear `LoweringError` naming each and what to use instead.
- `MarkVectorGlobals` (``device_module``, `tilelang_webgpu.vector_globals`): marks the buffer parameters whose
  4-lane accesses are all aligned, so the WGSL reads them as ``array<vec4<T>>``.
"""

from __future__ import annotations

import math
from typing import Any

from tilelang.backend import PipelinePass

__all__ = ["FoldBlockIdxZ", "SplitWideVectors", "HoistGemmAccumulators", "UnrollRegisterLoops",
           "CheckWorkgroupMemory",
           "LegalizeFloatLiterals", "PASSES"]


def _launch(func: Any) -> dict[str, Any]:
    """thread tag -> the thread_extent AttrStmt binding it (first occurrence)."""
    import tvm_ffi
    from tvm import tirx

    found: dict[str, Any] = {}

    def on_attr(node: Any) -> None:
        if node.attr_key == "thread_extent":
            found.setdefault(str(node.node.thread_tag), node)

    tvm_ffi.structural_walk(func.body, [(tirx.AttrStmt, on_attr)])
    return found


def _with_body(func: Any, body: Any) -> Any:
    from tvm import tirx

    return tirx.PrimFunc(func.params, body, func.ret_type, func.attrs)


def FoldBlockIdxZ(target: Any = None) -> Any:
    """Fold blockIdx.z into blockIdx.y (see the module docstring)."""
    import tvm
    import tvm_ffi
    from tvm import tirx

    @tirx.transform.prim_func_pass(opt_level=0, name="tilelang_webgpu.FoldBlockIdxZ")
    def fold(func: Any, mod: Any, ctx: Any) -> Any:
        launch = _launch(func)
        z = launch.get("blockIdx.z")
        if z is None:
            return func
        y = launch.get("blockIdx.y")
        bz = z.node.var
        if y is None:
            fused, extent, vmap = bz, z.value, {}
        else:
            by = y.node.var
            fused = tirx.Var(f"{by.name}_{bz.name}", by.ty.dtype if hasattr(by.ty, "dtype") else "int32")
            extent = y.value * z.value
            vmap = {by: tirx.floordiv(fused, z.value), bz: tirx.floormod(fused, z.value)}

        def on_attr(node: Any) -> Any:
            if node.attr_key != "thread_extent":
                return node
            tag = str(node.node.thread_tag)
            if tag == "blockIdx.z" and y is not None:
                return node.body
            if tag in ("blockIdx.y", "blockIdx.z"):
                iv = tirx.IterVar(tvm.ir.Range(0, extent), fused, tirx.IterVar.ThreadIndex, "blockIdx.y")
                return tirx.AttrStmt(iv, "thread_extent", extent, node.body)
            return node

        body = tvm_ffi.structural_map(func.body, (tirx.AttrStmt, on_attr))
        if vmap:
            body = tvm_ffi.structural_map(body, (tvm.ir.Var, lambda v: vmap.get(v, v)))
        return _with_body(func, body)

    return fold


def SplitWideVectors(target: Any = None) -> Any:
    """Vectorized loops of more than 4 lanes become serial loops over 4- or 2-lane ones (or serial)."""
    import tvm_ffi
    from tvm import tirx

    def on_for(loop: Any) -> Any:
        extent = getattr(loop.extent, "value", None)
        if loop.kind != tirx.ForKind.VECTORIZED or (extent is not None and extent <= 4):
            return loop
        width = next((w for w in (4, 2) if extent is not None and extent % w == 0), None)
        if width is None:
            return tirx.For(loop.loop_var, loop.min, loop.extent, tirx.ForKind.SERIAL, loop.body)
        outer = tirx.Var(f"{loop.loop_var.name}_o", loop.loop_var.ty.dtype)
        inner = tirx.Var(f"{loop.loop_var.name}_v", loop.loop_var.ty.dtype)
        index = loop.min + outer * width + inner
        body = tvm_ffi.structural_map(loop.body, (type(loop.loop_var), lambda v: index if v.same_as(loop.loop_var)
                                                                         else v))
        vec = tirx.For(inner, 0, width, tirx.ForKind.VECTORIZED, body)
        return tirx.For(outer, 0, extent // width, tirx.ForKind.SERIAL, vec)

    @tirx.transform.prim_func_pass(opt_level=0, name="tilelang_webgpu.SplitWideVectors")
    def split(func: Any, mod: Any, ctx: Any) -> Any:
        return _with_body(func, tvm_ffi.structural_map(func.body, (tirx.For, on_for)))

    return split


_GEMM_IN, _GEMM_OUT = "tl.webgpu_gemm_in", "tl.webgpu_gemm_out"  # == tilelang_webgpu.gemm.GEMM_IN / GEMM_OUT


def _flat(stmt: Any) -> list[Any]:
    from tvm import tirx

    if isinstance(stmt, tirx.SeqStmt):
        return [s for child in stmt.seq for s in _flat(child)]
    return [stmt]


def _key(var: Any) -> str:
    """A hashable identity for a buffer's data var (FFI wrappers of one var do not hash alike): its name, which
    the GEMM's own buffers make unique (``*_acc``, ``*_xchg``, core's ``*_local``)."""
    name = getattr(var, "name", None)
    return str(name) if name is not None else f"<expr {var}>"


def _touched(stmt: Any) -> set[str]:
    """The data vars (`_key`) of every buffer `stmt` loads or stores."""
    import tvm
    from tvm import tirx

    from tilelang.transform import utils as C

    return ({_key(ld.source.data) for ld in C.collect(stmt, tvm.ir.TensorLoad)}
            | {_key(st.buffer.data) for st in C.collect(stmt, tirx.BufferStore)})


def _is_mark(stmt: Any, key: str) -> bool:
    from tvm import tirx

    return isinstance(stmt, tirx.AttrStmt) and stmt.attr_key == key


def _hoist(loop: Any) -> Any:
    """`loop` with one GEMM's C -> accumulator -> C moves outside it, or None when that is not safe."""
    from tvm import tirx

    from tilelang.transform import utils as C

    if loop.kind != tirx.ForKind.SERIAL:
        return None
    body = _flat(loop.body)
    ins = [i for i, s in enumerate(body) if _is_mark(s, _GEMM_IN)]
    outs = [i for i, s in enumerate(body) if _is_mark(s, _GEMM_OUT)]
    if len(ins) != 1 or len(outs) != 1 or not ins[0] < outs[0] or _key(body[ins[0]].node) != _key(body[outs[0]].node):
        return None
    i_in, i_out = ins[0], outs[0]
    acc = _key(body[i_in].node)
    moved = _touched(body[i_in]) | _touched(body[i_out])  # C's registers, the exchange tile, the accumulator
    allocs = [i for i, s in enumerate(body) if isinstance(s, tirx.AllocBuffer) and _key(s.buffer.data) in moved]
    if any(i > i_in for i in allocs):
        return None
    for i, s in enumerate(body):
        if i in (i_in, i_out) or i in allocs:
            continue
        hit = _touched(s) & moved
        if hit and (hit != {acc} or not i_in < i < i_out):
            return None  # something else in the loop reads or writes C (or the exchange tile)
    if C.uses_var(body[i_in], [loop.loop_var]) or C.uses_var(body[i_out], [loop.loop_var]):
        return None
    rest = [s for i, s in enumerate(body) if i not in (i_in, i_out) and i not in allocs]
    inner = tirx.For(loop.loop_var, loop.min, loop.extent, loop.kind, C.seq(rest), loop.thread_binding,
                     loop.annotations, getattr(loop, "step", None))
    return C.seq([*[body[i] for i in allocs], body[i_in].body, inner, body[i_out].body])


def HoistGemmAccumulators(target: Any = None) -> Any:
    """Hoist the GEMM's accumulator moves out of the K loop (see the module docstring)."""
    import tvm_ffi
    from tvm import tirx

    def on_for(loop: Any) -> Any:
        hoisted = _hoist(loop)
        return loop if hoisted is None else hoisted

    def unmark(attr: Any) -> Any:
        return attr.body if attr.attr_key in (_GEMM_IN, _GEMM_OUT) else attr

    @tirx.transform.prim_func_pass(opt_level=0, name="tilelang_webgpu.HoistGemmAccumulators")
    def hoist(func: Any, mod: Any, ctx: Any) -> Any:
        body = tvm_ffi.structural_map(func.body, (tirx.For, on_for))
        return _with_body(func, tvm_ffi.structural_map(body, (tirx.AttrStmt, unmark)))

    return hoist


UNROLL_MAX_EXTENT = 64  # iterations
UNROLL_MAX_STATEMENTS = 256  # statements of the unrolled loop (iterations x statements of the body)


def _indexes_registers(loop: Any) -> bool:
    """Whether `loop`'s body indexes a ``local`` buffer with an index that depends on the loop variable."""
    import tvm
    import tvm_ffi
    from tvm import tirx

    from tilelang.transform import utils as C

    var = loop.loop_var
    found = [False]

    def uses_var(indices: Any) -> bool:
        return any(C.uses_var(i, [var]) for i in indices)

    def on_load(ld: Any) -> None:
        if C.scope_of(ld.source) == "local" and uses_var(ld.indices):
            found[0] = True

    def on_store(st: Any) -> None:
        if C.scope_of(st.buffer) == "local" and uses_var(st.indices):
            found[0] = True

    tvm_ffi.structural_walk(loop.body, [(tvm.ir.TensorLoad, on_load), (tirx.BufferStore, on_store)])
    return found[0]


def _statements(stmt: Any) -> int:
    import tvm_ffi
    from tvm import tirx

    count = [0]

    def on_stmt(_: Any) -> None:
        count[0] += 1

    tvm_ffi.structural_walk(stmt, [(tirx.BufferStore, on_stmt), (tirx.Bind, on_stmt), (tirx.Evaluate, on_stmt)])
    return count[0]


def UnrollRegisterLoops(target: Any = None) -> Any:
    """Unroll short serial loops that index registers with their loop variable (see the module docstring)."""
    import tvm_ffi
    from tvm import tirx

    def on_for(loop: Any) -> Any:
        extent = getattr(loop.extent, "value", None)
        if (loop.kind != tirx.ForKind.SERIAL or extent is None or extent > UNROLL_MAX_EXTENT
                or not _indexes_registers(loop) or extent * _statements(loop.body) > UNROLL_MAX_STATEMENTS):
            return loop
        return tirx.For(loop.loop_var, loop.min, loop.extent, tirx.ForKind.UNROLLED, loop.body)

    @tirx.transform.prim_func_pass(opt_level=0, name="tilelang_webgpu.UnrollRegisterLoops")
    def unroll(func: Any, mod: Any, ctx: Any) -> Any:
        return _with_body(func, tvm_ffi.structural_map(func.body, (tirx.For, on_for)))

    return unroll


WORKGROUP_LIMIT = 32 * 1024  # bytes: WebGPU's guaranteed maxComputeWorkgroupStorageSize


def workgroup_arrays(func: Any) -> list[tuple[str, str, int]]:
    """``(name, dtype, bytes)`` of every workgroup-memory allocation of a device function."""
    from tilelang.transform import utils as C
    from tilelang.transform.plan_shared_memory import dtype_bytes

    out = []
    for alloc in C.allocations(func.body):
        buf = alloc.buffer
        if C.scope_of(buf).startswith("shared"):
            count = C.num_elements(buf.ty.shape)
            if count is not None:
                out.append((str(buf.name), str(buf.ty.dtype), count * dtype_bytes(str(buf.ty.dtype))))
    return out


def CheckWorkgroupMemory(target: Any = None) -> Any:
    """Raise a `LoweringError` naming the workgroup arrays when they exceed the target's limit."""
    import tvm
    from tvm import tirx

    from tilelang.errors import LoweringError

    def limit_of(tgt: Any) -> int:
        value = tgt.attrs.get("max_shared_memory_per_block") if tgt is not None else None
        return int(value) if value else WORKGROUP_LIMIT

    @tvm.transform.module_pass(opt_level=0, name="tilelang_webgpu.CheckWorkgroupMemory")
    def check(mod: Any, ctx: Any) -> Any:
        for gv, func in mod.functions.items():
            if not isinstance(func, tirx.PrimFunc):
                continue
            arrays = workgroup_arrays(func)
            total = sum(size for _, _, size in arrays)
            tgt = target if target is not None else (func.attrs.get("target") if func.attrs else None)
            limit = limit_of(tgt)
            if total > limit:
                listing = ", ".join(f"{name} ({dtype}, {size} B)" for name, dtype, size in
                                    sorted(arrays, key=lambda a: -a[2]))
                raise LoweringError(
                    f"kernel {gv.name_hint!r} needs {total} bytes of workgroup memory but this WebGPU target allows "
                    f"{limit} (max_shared_memory_per_block): {listing}. Use smaller tiles, fewer stages or "
                    "float16 tiles, or set max_shared_memory_per_block in the target if the adapter allows more")
        return mod

    return check


def LegalizeFloatLiterals(target: Any = None) -> Any:
    """Infinite and NaN float literals become bitcasts of their IEEE bit pattern (WGSL has no such literal)."""
    import struct

    import tvm_ffi
    from tvm import tirx

    def on_float(imm: Any) -> Any:
        value = float(imm.value)
        if math.isfinite(value):
            return imm
        dtype = str(imm.ty.dtype) if hasattr(imm.ty, "dtype") else str(imm.dtype)
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
        as_f32 = tirx.reinterpret("float32", tirx.IntImm("uint32", bits))
        return as_f32 if dtype == "float32" else tirx.Cast(dtype, as_f32)

    @tirx.transform.prim_func_pass(opt_level=0, name="tilelang_webgpu.LegalizeFloatLiterals")
    def legalize(func: Any, mod: Any, ctx: Any) -> Any:
        return _with_body(func, tvm_ffi.structural_map(func.body, (tirx.FloatImm, on_float)))

    return legalize


def _debug_log(target: Any = None) -> Any:
    from tilelang_webgpu.debug_log import DebugLog

    return DebugLog(target)


def _mark_vector_globals(target: Any = None) -> Any:
    from tilelang_webgpu.vector_globals import MarkVectorGlobals

    return MarkVectorGlobals(target)


def _check_dtypes(target: Any = None) -> Any:
    from tilelang_webgpu.dtypes_check import CheckDtypes

    return CheckDtypes(target)


PASSES = [
    PipelinePass("webgpu.check_dtypes", "pre_layout", _check_dtypes),
    PipelinePass("webgpu.debug_log", "post_layout", _debug_log),
    PipelinePass("webgpu.fold_blockidx_z", "post_barriers", FoldBlockIdxZ),
    PipelinePass("webgpu.split_wide_vectors", "post_storage", SplitWideVectors),
    PipelinePass("webgpu.hoist_gemm_accumulators", "post_storage", HoistGemmAccumulators),
    PipelinePass("webgpu.unroll_register_loops", "post_storage", UnrollRegisterLoops),
    PipelinePass("webgpu.check_workgroup_memory", "device_module", CheckWorkgroupMemory),
    PipelinePass("webgpu.legalize_float_literals", "device_module", LegalizeFloatLiterals),
    PipelinePass("webgpu.mark_vector_globals", "device_module", _mark_vector_globals),
]
