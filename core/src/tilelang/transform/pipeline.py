"""The target-neutral lowering pipeline: tile IR in, host and device IRModules out.

Order (``[point]`` = `tilelang.backend.passes` extension point where backends' passes run)::

    LegalizeTFloat32 CheckSemantics AttachLayouts [pre_layout] RasterizeBlocks LayoutInference [post_layout]
    InjectSoftwarePipeline
    LowerTileOps LowerIntrinsics [post_tile_lowering] PartitionParallel LegalizeSafeMemoryAccess [post_parallel]
    ApplyLayouts [post_pipelining] PlanSharedMemory [post_storage]
    FinalizeTileIR ConfigIndexBitwidth (TVM: FlattenBuffer, VectorizeLoop, StorageRewrite, simplification)
    InsertBarriers LowerThreadAllreduce [post_barriers]
    HostChecks, MergeSharedMemoryAllocations (TVM's, locals out of its way), (TVM: SplitHostDevice, MakePackedAPI)
    CheckDynamicExtents
    split -> device module [device_module] + host module [host_module] -> TVM finalize passes

From CheckSemantics to ``[post_storage]`` the passes see one ``T.Kernel`` launch at a time: a function of several
launches (a split kernel and its combine kernel) goes through them once per launch (`tilelang.transform.launches`),
since they read the launch's thread variable and count off the function.

Core never names a target: differences come from ``TargetKind.pipeline_options`` (``has_threads``,
``vectorize``, ``static_shared_memory``, ``software_pipeline``, ``shared_layouts``, ``native_bf16``, ``emulate_fp8``)
and the passes backends register. ``native_bf16`` keeps bfloat16 arithmetic and storage in the device code (no fp32
compute legalization, no 16-bit-integer storage); the host module still gets its bf16 storage legalized (LLVM host
codegen needs it). ``emulate_fp8`` computes fp8 arithmetic and conversions in fp32 (a target without fp8
instructions, e.g. LLVM for a CPU, whose codegen would treat the stored bytes as integers).

Shared-tile layouts (``T.annotate_layout``): AttachLayouts checks them and moves each onto its tile's
allocation (``tl.layout``) before any backend pass runs; ApplyLayouts rewrites the tile to its storage shape and
every load / store through the layout once tile operators are plain loads and stores with logical indices
(bounds guards included), before shared memory is sized; a target with ``shared_layouts: False`` (or the pass
config ``tl.disable_shared_layouts``) keeps them as hints. See `tilelang.transform.apply_layouts`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import tvm

from tilelang.backend.device_codegen import IMPORT_SOURCE_ATTR
from tilelang.backend.passes import passes_at
from tilelang.transform import utils as C
from tilelang.transform.apply_layouts import ApplyLayouts, AttachLayouts
from tilelang.transform.check_semantics import CheckSemantics
from tilelang.transform.config import PrintIRInstrument, print_ir_target
from tilelang.transform.config_index_bitwidth import CheckDynamicExtents, ConfigIndexBitwidth
from tilelang.transform.config_index_bitwidth import configured_bits as _configured_index_bits
from tilelang.transform.finalize_tile_ir import FinalizeTileIR
from tilelang.transform.host_checks import HostChecks
from tilelang.transform.inject_software_pipeline import InjectSoftwarePipeline
from tilelang.transform.insert_barriers import InsertBarriers
from tilelang.transform.launches import each_launch
from tilelang.transform.layout_inference import LayoutInference
from tilelang.transform.legalize_safe_memory_access import LegalizeSafeMemoryAccess
from tilelang.transform.legalize_tfloat32 import LegalizeTFloat32
from tilelang.transform.lower_intrinsics import LowerIntrinsics
from tilelang.transform.lower_thread_allreduce import LowerThreadAllreduce
from tilelang.transform.lower_tile_ops import LowerTileOps
from tilelang.transform.partition_parallel import PartitionParallel
from tilelang.transform.plan_shared_memory import MergeSharedMemoryAllocations, PlanSharedMemory
from tilelang.transform.rasterize_blocks import RasterizeBlocks
from tilelang.transform.shared_reuse_barriers import BarrierBeforeSharedReuse
from tilelang.transform.unroll_budget import UnrollBudget

# (core pass factory or None, extension point run after it or None). Software pipelining works on whole tile
# operators (the copies it multi-buffers are still ``tl.copy`` calls), so it runs before LowerTileOps; the
# ``post_pipelining`` point keeps its place in `EXTENSION_POINTS` (T.Pipelined is expanded by then too). Bounds
# guards need the final loops and indices, so they come right after PartitionParallel; shared-tile layouts
# are applied after them (guards compare logical indices), and checked before any backend pass sees the tiles.
CORE_STAGES: tuple[tuple[Callable[[Any], Any] | None, str | None], ...] = (
    (CheckSemantics, None),
    (AttachLayouts, "pre_layout"),
    (RasterizeBlocks, None),
    (LayoutInference, "post_layout"),
    (InjectSoftwarePipeline, None),
    (LowerTileOps, None),
    (LowerIntrinsics, "post_tile_lowering"),
    (PartitionParallel, None),
    (LegalizeSafeMemoryAccess, "post_parallel"),
    (ApplyLayouts, "post_pipelining"),
    (PlanSharedMemory, "post_storage"),
)


def _tvm_legalize(target: Any) -> list[Any]:
    """TVM's generic passes that turn our tirx into codegen-ready tirx."""
    from tvm import s_tir, tirx

    config = tvm.transform.PassContext.current().config
    vectorize = bool(C.pipeline_options(target).get("vectorize", True)) and not bool(
        config.get("tirx.disable_vectorize", False))
    bf16 = [] if _native_bf16(target) else [tirx.transform.BF16ComputeLegalize()]
    # no fp8 instructions: fp8 reads decode the stored bits exactly before TVM's legalization computes in fp32
    fp8 = [_exact_fp8_reads()] if C.pipeline_options(target).get("emulate_fp8") else []
    bits = C.pipeline_options(target).get("vector_bits")
    # ``tl.config_index_bitwidth: 64`` asks for 64-bit index arithmetic throughout: nothing is narrowed back
    narrow = [] if _configured_index_bits(None, target) == 64 else [tirx.transform.NarrowDataType(32)]
    return [
        tirx.transform.RemoveAssume(),  # T.assume has served the simplifier; device code generators have no form
        tirx.transform.FlattenBuffer(),
        *fp8,
        *([_exact_fp8_writes()] if fp8 else []),
        # fp8 arithmetic in fp32 where the target has none (TVM decides: CUDA keeps fp8); FP8StorageLegalize in
        # `lower`'s tail then stores bytes. A value is rounded to fp8 where it is stored to a global fp8 tensor;
        # local fp8 tiles are promoted to fp32 and keep the unrounded value (TVM's legalization).
        tirx.transform.FP8ComputeLegalize("float32"),
        *bf16,
        *narrow,
        s_tir.transform.LoopPartition(),
        *([_cap_vector_width(int(bits))] if bits else []),
        tirx.transform.VectorizeLoop(vectorize),
        BarrierBeforeSharedReuse(target),  # StorageRewrite may reuse a tile's bytes with another dtype
        tirx.transform.StorageRewrite(),
        UnrollBudget(target),  # what UnrollLoop cannot copy out (or should not: a body too big) stays a loop
        tirx.transform.UnrollLoop(),
        tirx.transform.StmtSimplify(),
        tirx.transform.RemoveNoOp(),
    ]


def _cap_vector_width(bits: int) -> tvm.transform.Pass:
    """Vectorised loops wider than `bits` (the ``vector_bits`` pipeline option) for the widest dtype they touch run
    serially instead: the target has no such vectors (C's widest is 128 bits)."""
    import tvm_ffi
    from tvm import tirx

    def on_for(loop: Any, mutator: Any) -> Any:
        mutated = mutator.default_mutate(loop)
        if mutated.kind != tirx.ForKind.VECTORIZED:
            return mutated
        extent = C.as_int(mutated.extent)
        widths = [tvm.DataType(str(st.value.ty.dtype)).bits for st in C.collect(mutated.body, tirx.BufferStore)]
        if extent is not None and extent * max(widths, default=32) <= bits:
            return mutated
        return tirx.For(mutated.loop_var, mutated.min, mutated.extent, tirx.ForKind.SERIAL, mutated.body)

    @C.prim_func_pass("tl.CapVectorWidth")
    def cap(func: Any, mod: Any, ctx: Any) -> Any:
        body = tvm_ffi.structural_mutate(func.body, [(tirx.For, on_for)])
        return func if body.same_as(func.body) else C.with_body(func, body)

    return cap


# fp8 formats: (exponent bits, mantissa bits, exponent bias)
_FP8_FORMATS = {"float8_e4m3fn": (4, 3, 7), "float8_e5m2": (5, 2, 15)}


def _exact_fp8_reads() -> tvm.transform.Pass:
    """Each conversion of an fp8 value to another type decodes its bits exactly, subnormals and zero included (TVM's
    FP8ComputeLegalize reads every fp8 byte as a normal number: 0 became 2**-7); NaN / inf stay NaN / inf."""
    import tvm_ffi
    from tvm import tirx

    def decode(value: Any, fmt: str) -> Any:
        ebits, mbits, bias = _FP8_FORMATS[fmt]
        i32 = "int32"
        u = tirx.Cast(i32, tirx.reinterpret("uint8", value))
        e = (u >> mbits) & ((1 << ebits) - 1)
        m = u & ((1 << mbits) - 1)
        top = (1 << ebits) - 1
        normal_bits = ((e + (127 - bias)) << 23) | (m << (23 - mbits))
        special_bits = tirx.const(255 << 23, i32) | (m << (23 - mbits))  # e4m3fn: only m == 7 is NaN
        if fmt == "float8_e4m3fn":
            special = tirx.all(e == top, m == (1 << mbits) - 1)
        else:
            special = e == top
        bits = tirx.Select(special, special_bits, normal_bits)
        subnormal = tirx.Cast("float32", m) * tirx.const(2.0 ** (1 - bias - mbits), "float32")
        mag = tirx.Select(e == 0, subnormal, tirx.reinterpret("float32", bits))
        return tirx.Select((u >> 7) == 1, -mag, mag)

    def on_cast(c: Any, mutator: Any) -> Any:
        c = mutator.default_mutate(c)
        src = tvm.DataType(str(c.value.ty.dtype))
        fmt = str(c.value.ty.dtype)
        if fmt not in _FP8_FORMATS or src.lanes != 1 or str(c.ty.dtype) in _FP8_FORMATS:
            return c
        out = decode(c.value, fmt)
        return out if str(c.ty.dtype) == "float32" else tirx.Cast(str(c.ty.dtype), out)

    @C.prim_func_pass("tl.ExactFP8Reads")
    def exact(func: Any, mod: Any, ctx: Any) -> Any:
        body = tvm_ffi.structural_mutate(func.body, [(tirx.Cast, on_cast)])
        return func if body.same_as(func.body) else C.with_body(func, body)

    return exact


# fp8 encodings from float32 bits: (exponent bias, mantissa bits, float32 magnitude bits from which the value
# overflows, the code of an overflow, float32 magnitude bits below which it is subnormal)
_FP8_ENCODINGS = {"float8_e4m3fn": (7, 3, 0x43E80000, 0x7E, 121 << 23),
                  "float8_e5m2": (15, 2, 143 << 23, 0x7C, 113 << 23)}


def _exact_fp8_writes() -> tvm.transform.Pass:
    """Each conversion of a float value to fp8 rounds to nearest even, subnormals included, as torch's
    ``.to(float8)`` and CUDA's conversions do: TVM's FP8ComputeLegalize flushed e4m3 values under 2**-6 to 0 and
    wrapped those over 448 into NaN. Overflow saturates to 448 in e4m3fn and is infinity in e5m2; NaN stays NaN."""
    import tvm_ffi
    from tvm import tirx

    def encode(value: Any, fmt: str) -> Any:
        bias, mbits, overflow, overflow_code, normal_min = _FP8_ENCODINGS[fmt]
        u32 = "uint32"

        def k(v: int) -> Any:
            return tirx.const(v, u32)

        bits = tirx.reinterpret(u32, value)
        mag = tirx.bitwise_and(bits, k(0x7FFFFFFF))
        shift = 23 - mbits
        # subnormal: adding 2**(24 - bias - mbits), whose float32 step is the fp8 subnormal step, rounds |x| to a
        # multiple of that step (to nearest even); the bits above the magic number's are then the fp8 code
        magic = k((127 + 24 - bias - mbits) << 23)
        sub = tirx.reinterpret(u32, tirx.reinterpret("float32", mag) + tirx.reinterpret("float32", magic)) - magic
        # normal: rebias the exponent and round the mantissa to nearest even
        odd = tirx.bitwise_and(tirx.shift_right(mag, k(shift)), k(1))
        normal = tirx.shift_right(mag + k((((bias - 127) << 23) + (1 << (shift - 1)) - 1) & 0xFFFFFFFF) + odd, k(shift))
        code = tirx.Select(mag > k(0x7F800000), k(0x7F),
                           tirx.Select(mag >= k(overflow), k(overflow_code),
                                       tirx.Select(mag < k(normal_min), sub, normal)))
        sign = tirx.bitwise_and(tirx.shift_right(bits, k(24)), k(0x80))
        return tirx.reinterpret(fmt, tirx.Cast("uint8", tirx.bitwise_or(code, sign)))

    def on_cast(c: Any, mutator: Any) -> Any:
        c = mutator.default_mutate(c)
        fmt, src = str(c.ty.dtype), str(c.value.ty.dtype)
        if fmt not in _FP8_ENCODINGS or not src.startswith(("float", "bfloat")) or src in _FP8_FORMATS \
                or tvm.DataType(src).lanes != 1:
            return c
        return encode(c.value if src == "float32" else tirx.Cast("float32", c.value), fmt)

    @C.prim_func_pass("tl.ExactFP8Writes")
    def exact(func: Any, mod: Any, ctx: Any) -> Any:
        body = tvm_ffi.structural_mutate(func.body, [(tirx.Cast, on_cast)])
        return func if body.same_as(func.body) else C.with_body(func, body)

    return exact


def _native_bf16(target: Any) -> bool:
    """Whether the target's device code computes and stores bfloat16 natively (``pipeline_options``)."""
    return bool(C.pipeline_options(target).get("native_bf16", False))


def _spell_bf16_constants() -> tvm.transform.Pass:
    """Native bf16: each bfloat16 literal becomes an fp32 literal cast to bfloat16.

    C-family device languages have no bf16 literal suffix (TVM's Metal codegen prints one as ``0.0h``, a ``half``
    that Metal does not convert implicitly to ``bfloat``); the cast rounds as the literal would and folds at
    compile time.
    """
    import tvm_ffi
    from tvm import tirx

    def on_float(imm: Any, m: Any) -> Any:
        if str(imm.ty.dtype).startswith("bfloat16"):
            return tirx.Cast(str(imm.ty.dtype), tirx.FloatImm("float32", float(imm.value)))
        return imm

    @C.prim_func_pass("tl.SpellBF16Constants")
    def spell(func: Any, mod: Any, ctx: Any) -> Any:
        body = tvm_ffi.structural_mutate(func.body, [(tirx.FloatImm, on_float)])
        return func if body.same_as(func.body) else C.with_body(func, body)

    return spell


def _layout_visual(mod: tvm.IRModule) -> tvm.IRModule:
    """Under ``tl.layout_visualization_enable``: print (and plot, ``tl.layout_visualization_formats``) the fragment
    layouts LayoutInference chose (`tilelang.analysis.LayoutVisual`)."""
    from tilelang.transform.config import current_tl_config

    if not current_tl_config("tl.layout_visualization_enable", False):
        return mod
    from tilelang.analysis import LayoutVisual

    return LayoutVisual(current_tl_config("tl.layout_visualization_formats", "") or "")(mod)


def _run(mod: tvm.IRModule, passes: list[Any]) -> tvm.IRModule:
    for p in passes:
        mod = p(mod)
    return mod


def pipeline_scope(target: Any) -> contextlib.AbstractContextManager[None]:
    """The instrumentation scope of one pipeline run for `target` (phase ``pipeline_<kind>``, see
    `tilelang.instrumentation.pass_pipeline`); nothing when a phase is already open (the engine opened it)."""
    from tilelang.instrumentation import current_pass_phase, pass_pipeline

    if current_pass_phase() is not None:
        return contextlib.nullcontext()
    return pass_pipeline(str(target.kind.name))


def lower_tile_program(mod: tvm.IRModule, target: Any, target_host: Any) -> tvm.IRModule:
    """Run the pipeline up to (and including) MakePackedAPI; the result still holds host and device functions.

    `target` / `target_host` are ``tvm.target.Target``; functions get ``target`` bound here.
    """
    with pipeline_scope(target):
        return _lower_tile_program(mod, target, target_host)


def _core_stages(mod: tvm.IRModule, target: Any) -> tvm.IRModule:
    """`CORE_STAGES` with their extension points, on a module whose functions hold one launch each."""
    for factory, point in CORE_STAGES:
        if factory is not None:
            mod = factory(target)(mod)
        if factory is LayoutInference:
            mod = _layout_visual(mod)
        if point is not None:
            mod = _run(mod, passes_at(point, target))
    return mod


def _lower_tile_program(mod: tvm.IRModule, target: Any, target_host: Any) -> tvm.IRModule:
    from tvm import tirx

    mod = tirx.transform.BindTarget(target.with_host(target_host))(mod)
    mod = LegalizeTFloat32(target)(mod)
    mod = each_launch(mod, lambda m: _core_stages(m, target))
    mod = FinalizeTileIR(target)(mod)
    mod = ConfigIndexBitwidth(target)(mod)
    mod = _run(mod, _tvm_legalize(target))
    mod = InsertBarriers(target)(mod)
    mod = LowerThreadAllreduce(target)(mod)
    mod = _run(mod, passes_at("post_barriers", target))
    mod = HostChecks(target)(mod)
    tail = [
        tirx.transform.AnnotateEntryFunc(),
        MergeSharedMemoryAllocations(target),
        tirx.transform.SplitHostDevice(),
        tirx.transform.MakePackedAPI(),
        CheckDynamicExtents(target),
        tirx.transform.FP8StorageLegalize(),
    ]
    if not _native_bf16(target):  # native: only the host module's storage is legalized, in `split`
        tail.append(tirx.transform.BF16StorageLegalize())
    return _run(mod, tail)


def split(mod: tvm.IRModule, target: Any) -> tuple[tvm.IRModule, tvm.IRModule | None]:
    """``(host module, device module or None)`` after the split, each through its extension point and TVM's
    finalize passes."""
    from tvm.s_tir.pipeline import finalize_device_passes, finalize_host_passes
    from tvm.tirx.build import split_host_device_mods

    imported = _imported_source(mod)
    host_mod, device_mods = split_host_device_mods(mod)
    device_mod = None
    nonempty = [m for m in device_mods.values() if len(m.functions)]
    if len(nonempty) > 1:
        raise RuntimeError(f"expected one device module, got {len(nonempty)}")
    if nonempty:
        device_mod = _run(nonempty[0], passes_at("device_module", target))
        device_mod = finalize_device_passes()(device_mod)
        if _native_bf16(target):
            device_mod = _spell_bf16_constants()(device_mod)
    if _native_bf16(target):  # the device keeps bf16; LLVM host codegen needs it legalized (bf16 pointers)
        from tvm import tirx

        host_mod = tirx.transform.BF16StorageLegalize()(host_mod)
    host_mod = _run(host_mod, passes_at("host_module", target))
    host_mod = finalize_host_passes()(host_mod)
    if imported:  # for the module the device codegen builds (the host module where kernels run as host code)
        if device_mod is not None:
            device_mod = device_mod.with_attr(IMPORT_SOURCE_ATTR, imported)
        else:
            host_mod = host_mod.with_attr(IMPORT_SOURCE_ATTR, imported)
    return host_mod, device_mod


def _imported_source(mod: tvm.IRModule) -> str:
    """The code ``T.import_source`` gave the module's functions, in order, each text once."""
    texts: list[str] = []
    for func in mod.functions.values():
        text = func.attrs.get(IMPORT_SOURCE_ATTR) if getattr(func, "attrs", None) is not None else None
        if text is not None and str(text) not in texts:
            texts.append(str(text))
    return "".join(texts)


@contextlib.contextmanager
def pass_context(configs: dict[str, Any], *, context: str | None = None) -> Iterator[tvm.transform.PassContext]:
    """A PassContext with TVM's share of `configs`; the ``tl.*`` share is visible to core's passes through
    `tilelang.transform.config.current_tl_config`.

    Its instruments: those of the enclosing PassContext, the printing instrument under ``TILELANG_PRINT_IR``,
    and the active compile session's tools (`tilelang.instrumentation`; `context` describes this PassContext
    to them) unless the enclosing PassContext already holds that session's instruments.
    """
    from tilelang.instrumentation import current_compile_pass_instrumentation
    from tilelang.transform.config import tl_configs, tvm_pass_configs

    which = print_ir_target()
    instruments = list(tvm.transform.PassContext.current().instruments)
    session = current_compile_pass_instrumentation()
    attached = session is not None and any(session.created(i) for i in instruments)
    instruments += [PrintIRInstrument(which)] if which else []
    if session is not None and not attached:
        instruments += session.create_pass_instruments(context=context)
    with tl_configs(configs), tvm.transform.PassContext(
            opt_level=3, config=tvm_pass_configs(configs), instruments=instruments) as ctx:
        yield ctx
