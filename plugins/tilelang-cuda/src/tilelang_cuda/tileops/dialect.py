"""Lowerings of the CUDA dialect's intrinsics (`tilelang_cuda.language`) to the inline-PTX helpers of the plugin's
headers (``include/tilelang_cuda/*.cuh``, `tilelang_cuda.intrinsics.device`), run by core's LowerIntrinsics.

Each construct names the lowest architecture that has its instruction (`REQUIRES`); on an older CUDA target
the lowering raises a LoweringError naming the construct, the target's arch and that architecture. On any
other target kind the priority -1 implementations of `elsewhere_impls` raise the same kind of error (they are
registered for every target when the dialect is first imported).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import tvm
from tvm import tirx

from tilelang.backend import TileOpImpl
from tilelang.backend.sdk import Lowered
from tilelang.transform import utils as C
from tilelang_cuda.tileops.common import is_cuda


@dataclass(frozen=True)
class Requirement:
    """The lowest architecture that has a construct: ``sm`` (``90``), arch-specific (``sm_90a``), a feature name;
    ``families`` lists the only sm generations that have an arch-specific construct (wgmma: Hopper only), empty
    when every later arch-specific target has it."""

    sm: int
    arch_specific: bool
    feature: str
    families: tuple[int, ...] = ()

    @property
    def arch(self) -> str:
        return f"sm_{self.sm}{'a' if self.arch_specific else ''}"


def _r(sm: int, feature: str, specific: bool = False, families: tuple[int, ...] = ()) -> Requirement:
    return Requirement(sm, specific, feature, families)


_DATACENTER_BLACKWELL = (100, 101, 103, 110)
MBARRIER = _r(80, "mbarrier objects")
ASYNC_TX = _r(90, "mbarrier transaction counts")
CP_ASYNC = _r(80, "cp.async")
CLUSTER = _r(90, "thread-block clusters")
CLC = _r(100, "cluster launch control")
TMA = _r(90, "the Tensor Memory Accelerator (TMA)")
GATHER4 = _r(100, "TMA tile::gather4 / scatter4", True, _DATACENTER_BLACKWELL)
WGMMA = _r(90, "wgmma", True, (90,))
SETMAXNREG = _r(90, "setmaxnreg", True)
TCGEN05 = _r(100, "tcgen05 and tensor memory", True, _DATACENTER_BLACKWELL)
PDL = _r(90, "programmatic dependent launch (griddepcontrol)")
LDMATRIX = _r(75, "ldmatrix")
MMA = _r(80, "mma.sync")
MMA_SM75 = _r(75, "mma.sync (m16n8k8 / m8n8k16 / m8n8k32)")  # Turing's shapes; the rest need `MMA`
MMA_ANY = _r(70, "mma.sync")  # T.ptx_mma's own entry: each shape then requires its arch (MMA_SM75 or MMA)
MMA_BLOCK_SCALE = _r(120, "block-scaled mma.sync (kind::mxf4nvf4)", True, (120, 121))
V256 = _r(100, "256-bit global loads and stores")
BASE = _r(70, "this instruction")

_ARCH_SPECIFIC_SUFFIXES = ("a", "f")


def _arch(target: Any) -> tuple[int, bool, str]:
    arch = str(target.attrs.get("arch", "sm_80")) if hasattr(target, "attrs") else str(target.get("arch", "sm_80"))
    digits = "".join(ch for ch in arch if ch.isdigit())
    return int(digits or 80), arch.endswith(_ARCH_SPECIFIC_SUFFIXES), arch


def missing(target: Any, req: Requirement) -> tuple[str, str] | None:
    """(message, hint) when `target` lacks `req`, else None.  An arch-specific construct needs an arch-specific
    target (``sm_90a``, not ``sm_90``) and, where ``req.families`` says so, one of those generations."""
    sm, specific, arch = _arch(target)
    hint = f"compile for {{\"kind\": \"cuda\", \"arch\": \"{req.arch}\"}}"
    if sm < req.sm or (req.arch_specific and not specific):
        return f"needs {req.feature}, which {req.arch} and newer have; target arch {arch} does not", hint
    if req.arch_specific and req.families and sm not in req.families:
        families = ", ".join(f"sm_{f}a" for f in req.families)
        return f"needs {req.feature}, which only {families} have; target arch {arch} does not", hint
    return None


def require(ctx: Any, req: Requirement) -> None:
    """LoweringError naming the construct, the target and the lowest arch that has it, unless the target has it."""
    lacking = missing(ctx.target, req)
    if lacking is None:
        return
    message, hint = lacking
    if hasattr(ctx, "target_kind"):  # an intrinsic's context names the construct and the target itself
        raise ctx.error(message, hint)
    # a tile operator's context (T.tcgen05_gemm, T.copy out of TMEM): name them the same way
    from tilelang.backend.sdk import dsl_name

    raise C.lowering_error(ctx.func, f"{dsl_name(ctx.op)} on target 'cuda': {message}; {hint}")


# ------------------------------------------------------------------------------------------------ IR helpers
def ext(name: str, *args: Any, dtype: str = "void") -> Any:
    return tirx.call_extern(dtype, name, *args)


def stmt(name: str, *args: Any) -> Any:
    return tirx.Evaluate(ext(name, *args))


def addr_of(load: Any) -> Any:
    """``&buf[idx]`` of a barrier / register element."""
    return tirx.address_of(load)


def is_call(x: Any, name: str) -> bool:
    return isinstance(x, tvm.ir.Call) and isinstance(x.op, tvm.ir.Op) and x.op.name == name


def ptr_dtype(ptr: Any) -> str:
    """The element dtype a ``tvm_access_ptr`` points at (uint8 for other pointers)."""
    if is_call(ptr, "tirx.tvm_access_ptr"):
        return str(ptr.args[0].ty.dtype)
    if is_call(ptr, "tirx.address_of"):
        return str(ptr.args[0].ty.dtype)
    return "uint8"


def ptr_scope(ptr: Any) -> str:
    """The storage scope a pointer points into ("" when unknown)."""
    buf = None
    if is_call(ptr, "tirx.tvm_access_ptr"):
        data = ptr.args[1]
        buf = data.args[0] if is_call(data, "tirx.buffer_data") else None
    elif is_call(ptr, "tirx.address_of"):
        buf = ptr.args[0].source
    return C.scope_of(buf) if buf is not None else ""


def ptr_add(ptr: Any, offset: Any) -> Any:
    """`ptr` advanced by `offset` elements."""
    if C.is_const(offset, 0):
        return ptr
    if is_call(ptr, "tirx.tvm_access_ptr"):
        a = list(ptr.args)
        return tirx.call_intrin("handle", "tirx.tvm_access_ptr", a[0], a[1], a[2] + offset, a[3], a[4])
    if is_call(ptr, "tirx.address_of"):
        load = ptr.args[0]
        idx = list(load.indices)
        idx[-1] = idx[-1] + offset
        return tirx.address_of(tirx.BufferLoad(load.source, idx))
    raise TypeError(f"cannot offset pointer {ptr}")


def bits_of(dtype: str) -> int:
    from tilelang.backend.sdk import dtype_bits

    return int(dtype_bits(dtype))


def seq(stmts: list[Any]) -> Any:
    return C.seq([s for s in stmts if s is not None])


def _as_u32(x: Any) -> Any:
    return tirx.Cast("uint32", x) if str(x.ty.dtype) != "uint32" else x


# ------------------------------------------------------------------------------------------------ lowerings
LowerFn = Callable[[Any], Any]
_LOWER: dict[str, tuple[Requirement, LowerFn]] = {}


def lowering(name: str, req: Requirement) -> Callable[[LowerFn], LowerFn]:
    def deco(fn: LowerFn) -> LowerFn:
        _LOWER[f"tl.{name}"] = (req, fn)
        return fn

    return deco


def simple(name: str, req: Requirement, helper: str, dtype: str = "void",
           arg_fn: Callable[[Any], list[Any]] | None = None) -> None:
    """A construct that is one helper call on its (adapted) arguments."""
    def lower(ctx: Any) -> Any:
        args = arg_fn(ctx) if arg_fn is not None else list(ctx.args)
        return ext(helper, *args, dtype=dtype)

    _LOWER[f"tl.{name}"] = (req, lower)


def _bar_first(ctx: Any) -> list[Any]:
    a = list(ctx.args)
    return [addr_of(a[0]), *a[1:]]


# -- mbarriers
def _init_barriers(ctx: Any) -> Any:
    load, *counts = ctx.args
    buf = load.source
    inits = [stmt("tl_mbarrier_init", addr_of(tirx.BufferLoad(buf, [tirx.IntImm("int32", i)])), c)
             for i, c in enumerate(counts)]
    first = tirx.IfThenElse(ctx.linear_thread() == 0, seq([*inits, stmt("tl_fence_barrier_init")]), None)
    sync = tirx.Evaluate(tirx.call_intrin("int32", "tirx.tvm_storage_sync", "shared"))
    return Lowered(None, [first, sync])


def _init_cluster_barriers(ctx: Any) -> Any:
    """`_init_barriers`, then a cluster barrier: the other CTAs arrive (and TMA completes bytes) on these only
    after every CTA of the cluster initialised its copies."""
    lowered = _init_barriers(ctx)
    return Lowered(None, [lowered.prefix[0], stmt("tl_cluster_sync")])


_LOWER["tl.init_barriers"] = (MBARRIER, _init_barriers)
_LOWER["tl.init_cluster_barriers"] = (CLUSTER, _init_cluster_barriers)
simple("mbarrier_wait_parity", MBARRIER, "tl_mbarrier_wait_parity", arg_fn=_bar_first)
simple("ptx_arrive_barrier", MBARRIER, "tl_mbarrier_arrive", arg_fn=_bar_first)
simple("mbarrier_expect_tx", ASYNC_TX, "tl_mbarrier_expect_tx", arg_fn=_bar_first)
simple("ptx_arrive_barrier_expect_tx", ASYNC_TX, "tl_mbarrier_arrive_expect_tx", arg_fn=_bar_first)
simple("ptx_arrive_cluster_barrier", CLUSTER, "tl_mbarrier_arrive_cluster", arg_fn=_bar_first)
simple("ptx_cp_async_barrier_noinc", CP_ASYNC, "tl_cp_async_mbarrier_arrive_noinc", arg_fn=_bar_first)
simple("ptx_cp_async_barrier", CP_ASYNC, "tl_cp_async_mbarrier_arrive", arg_fn=_bar_first)
simple("ptx_init_barrier_thread_count", MBARRIER, "tl_mbarrier_init", arg_fn=_bar_first)
# core's spellings (tilelang.language.barriers): the same constructs
simple("mbarrier_init", MBARRIER, "tl_mbarrier_init", arg_fn=_bar_first)
simple("mbarrier_arrive_expect_tx", ASYNC_TX, "tl_mbarrier_arrive_expect_tx", arg_fn=_bar_first)


@lowering("mbarrier_arrive", MBARRIER)
def _mbarrier_arrive(ctx: Any) -> Any:
    """``T.mbarrier_arrive(b)``, or with a CTA id the arrival on that CTA's barrier of the cluster (sm_90+)."""
    args = _bar_first(ctx)
    if len(args) > 1:
        require(ctx, CLUSTER)
        return ext("tl_mbarrier_arrive_cluster", *args)
    return ext("tl_mbarrier_arrive", *args)

simple("ptx_fence_barrier_init", CLUSTER, "tl_fence_barrier_init")
simple("named_barrier_arrive", BASE, "tl_named_barrier_arrive")
simple("named_barrier_sync", BASE, "tl_named_barrier_sync")  # core's T.sync_threads(id, n)

# -- fences, registers, launch attributes
simple("fence_proxy_async", _r(90, "fence.proxy.async"), "tl_fence_proxy_async_all")
simple("pdl_trigger", PDL, "tl_griddepcontrol_launch_dependents")
simple("pdl_sync", PDL, "tl_griddepcontrol_wait")


@lowering("set_max_nreg", SETMAXNREG)
def _set_max_nreg(ctx: Any) -> Any:
    count, inc = ctx.int_arg(0), ctx.int_arg(1)
    return ext("tl_set_max_nreg_inc" if inc else "tl_set_max_nreg_dec", count)


def _annotation(ctx: Any) -> Any:
    """Register annotations act through `tilelang_cuda.passes.dialect_scopes` on ``T.ws`` scopes; left outside
    such a kernel they have nothing to apply to."""
    return Lowered(None)


for _name in ("annotate_producer_reg_dealloc", "annotate_consumer_reg_alloc", "no_set_max_nreg"):
    _LOWER[f"tl.{_name}"] = (SETMAXNREG, _annotation)


@lowering("cluster_dims", CLUSTER)
def _cluster_dims(ctx: Any) -> Any:
    return ext("tl_cluster_dims_marker", *ctx.args)


@lowering("source_kernel", BASE)
def _source_kernel(ctx: Any) -> Any:
    """`tilelang_cuda.source_kernels` puts the user's source in place of the kernel this marker is in."""
    return ext("tl_source_kernel_marker", *ctx.args)


@lowering("min_blocks_per_sm", BASE)
def _min_blocks(ctx: Any) -> Any:
    return ext("tl_min_blocks_per_sm_marker", *ctx.args)


# -- clusters
simple("cluster_arrive", CLUSTER, "tl_cluster_arrive")
simple("cluster_arrive_relaxed", CLUSTER, "tl_cluster_arrive_relaxed")
simple("cluster_wait", CLUSTER, "tl_cluster_wait")
simple("cluster_sync", CLUSTER, "tl_cluster_sync")
simple("block_rank_in_cluster", CLUSTER, "tl_cluster_ctarank", dtype="int32")
simple("clc_try_cancel", CLC, "tl_clc_try_cancel")
simple("clc_try_cancel_multicast", CLC, "tl_clc_try_cancel_multicast")
simple("clc_is_canceled", CLC, "tl_clc_is_canceled", dtype="int32")
for _axis in "xyz":
    simple(f"clc_get_first_ctaid_{_axis}", CLC, f"tl_clc_get_first_ctaid_{_axis}", dtype="uint32")


# -- warps
@lowering("tl_shuffle_elect", BASE)
def _shuffle_elect(ctx: Any) -> Any:
    return ext("tl_shuffle_elect_n", ctx.int_arg(0), ctx.linear_thread(), dtype="bool")


@lowering("get_warp_group_idx", BASE)
def _warp_group_idx(ctx: Any) -> Any:
    warp = ctx.args[0] if ctx.args else tirx.IntImm("int32", ctx.warp_size)
    per = ctx.args[1] if len(ctx.args) > 1 else tirx.IntImm("int32", 4)
    return tirx.floordiv(ctx.linear_thread(), warp * per)


simple("warpgroup_arrive", WGMMA, "tl_warpgroup_arrive")
simple("warpgroup_commit_batch", WGMMA, "tl_warpgroup_commit_batch")


@lowering("warpgroup_wait", WGMMA)
def _warpgroup_wait(ctx: Any) -> Any:
    return ext("tl_warpgroup_wait_n", ctx.int_arg(0))


_LOWER["tl.wait_wgmma"] = (WGMMA, _warpgroup_wait)


@lowering("warpgroup_fence_operand", WGMMA)
def _fence_operand(ctx: Any) -> Any:
    ptr, offset, num = ctx.args
    return ext("tl_warpgroup_fence_operand", ptr_add(ptr, offset), num)


# -- TMA stores (bulk groups)
simple("tma_store_arrive", TMA, "tl_tma_store_arrive")


@lowering("tma_store_wait", TMA)
def _tma_store_wait(ctx: Any) -> Any:
    return ext("tl_tma_store_wait_n", ctx.int_arg(0), tirx.IntImm("int32", 1 if ctx.int_arg(1) else 0))


# -- explicit loads and stores
_VEC_TYPES = {32: "uint32", 64: "uint32x2", 128: "uint32x4", 256: "uint32x8"}


def _ld_st(name: str, bits: int, space: str) -> None:
    req = V256 if bits == 256 else BASE

    def lower(ctx: Any) -> Any:
        args = list(ctx.args)
        if space in ("ldg", "lds"):
            # the value goes through a register array: a vector-typed extern call would be printed lane by lane
            lanes = bits // 32
            tmp = tirx.decl_buffer((lanes,), "uint32", name=f"{space}_regs", scope="local")
            call_args = [args[0]]
            if space == "ldg":
                call_args.append(args[1] if len(args) > 1 else tirx.const(True, "bool"))
            fill = stmt(f"tl_{space}{bits}_to", addr_of(tirx.BufferLoad(tmp, [tirx.IntImm("int32", 0)])), *call_args)
            index = tirx.IntImm("int32", 0) if lanes == 1 else tirx.Ramp(tirx.IntImm("int32", 0), 1, lanes)
            return Lowered(tirx.BufferLoad(tmp, [index]), [tirx.AllocBuffer(tmp), fill])
        if space == "stg":
            pred = args[2] if len(args) > 2 else tirx.const(True, "bool")
            return ext(f"tl_stg{bits}", args[0], args[1], pred)
        return ext(f"tl_sts{bits}", args[0], args[1])

    _LOWER[f"tl.{name}"] = (req, lower)


for _bits in (32, 64, 128, 256):
    _ld_st(f"ldg{_bits}", _bits, "ldg")
    _ld_st(f"stg{_bits}", _bits, "stg")
    if _bits <= 128:
        _ld_st(f"lds{_bits}", _bits, "lds")
        _ld_st(f"sts{_bits}", _bits, "sts")


@lowering("__ldg", BASE)
def _ldg(ctx: Any) -> Any:
    (load,) = ctx.args
    return ext("__ldg", addr_of(load), dtype=ctx.dtype)


@lowering("__ffs", BASE)
def _ffs(ctx: Any) -> Any:
    (v,) = ctx.args
    bits = bits_of(str(v.ty.dtype))
    return ext("__ffsll" if bits == 64 else "__ffs", v if bits in (32, 64) else tirx.Cast("int32", v), dtype="int32")


@lowering("__fns", BASE)
def _fns(ctx: Any) -> Any:
    mask, base, offset = ctx.args
    return ext("__fns", _as_u32(mask), _as_u32(base), tirx.Cast("int32", offset), dtype="uint32")


# -- random numbers
@lowering("rng_init", BASE)
def _rng_init(ctx: Any) -> Any:
    load, seed, seq_, off = ctx.args
    if isinstance(seq_, tvm.ir.StringImm):  # the thread's global x index
        tx = ctx.thread_vars[0] if ctx.thread_vars else tirx.IntImm("int32", 0)
        bx = ctx.block_vars[0] if ctx.block_vars else tirx.IntImm("int32", 0)
        ex = ctx.thread_extents[0] if ctx.thread_extents else 1
        seq_ = tirx.Cast("uint64", tx + bx * ex)
    return ext("tl_rng_init", addr_of(load), seed, seq_, off)


@lowering("rng_rand", BASE)
def _rng_rand(ctx: Any) -> Any:
    return ext("tl_rng_rand", addr_of(ctx.args[0]), dtype="uint32")


@lowering("rng_rand_float", BASE)
def _rng_rand_float(ctx: Any) -> Any:
    load, dist = ctx.args
    kind = "normal" if str(dist.value) == "normal" else "uniform"
    width = "f64" if ctx.dtype == "float64" else "f32"
    return ext(f"tl_rng_{kind}_{width}", addr_of(load), dtype=ctx.dtype)


# -- cp.async
@lowering("ptx_cp_async", CP_ASYNC)
def _cp_async(ctx: Any) -> Any:
    args = list(ctx.args)
    dst, src, n = args[:3]
    elems = C.as_int(n)
    nbytes = None if elems is None else elems * bits_of(ptr_dtype(dst)) // 8
    if nbytes not in (4, 8, 16):
        raise ctx.error(f"copies {nbytes if nbytes is not None else n} bytes; cp.async copies 4, 8 or 16 bytes "
                        "(num_elems times the element size)")
    src_bytes: Any = tirx.IntImm("int32", nbytes)
    if len(args) > 3:
        src_bytes = tirx.if_then_else(args[3], tirx.IntImm("int32", nbytes), tirx.IntImm("int32", 0))
    return ext(f"tl_cp_async_{nbytes}", dst, src, src_bytes)


simple("ptx_commit_group", CP_ASYNC, "tl_cp_async_commit")


@lowering("ptx_wait_group", CP_ASYNC)
def _wait_group(ctx: Any) -> Any:
    return ext("tl_cp_async_wait_group", ctx.int_arg(0))


# -- ldmatrix / mma.sync
@lowering("ptx_ldmatrix", LDMATRIX)
def _ldmatrix(ctx: Any) -> Any:
    trans, num = ctx.int_arg(0), ctx.int_arg(1)
    src, dst = ctx.args[2], ctx.args[3]
    return ext(f"tl_ldmatrix_x{num}{'_trans' if trans else ''}", dst, src)


_MMA_EXISTING = {("m16n8k16", "fp16", "fp32"): "tl_mma_f16_f32", ("m16n8k16", "bf16", "fp32"): "tl_mma_bf16_f32",
                 ("m16n8k8", "tf32", "fp32"): "tl_mma_tf32_f32", ("m16n8k32", "int8", "int32"): "tl_mma_s8_s32"}
MMA_SM75_SHAPES = ("m16n8k8", "m8n8k16", "m8n8k32")


@lowering("ptx_mma", MMA_ANY)
def _mma(ctx: Any) -> Any:
    from tilelang_cuda.intrinsics.mma_sync import helper_name

    args = list(ctx.args)
    shape, a_t, b_t, c_t = (str(args[i].value) for i in (1, 2, 3, 4))
    a, b, c = args[5], args[6], args[7]
    require(ctx, MMA_SM75 if shape in MMA_SM75_SHAPES and a_t != "fp64" else MMA)
    name = _MMA_EXISTING.get((shape, a_t, c_t)) if a_t == b_t else None
    if name is None:
        try:
            name = helper_name(shape, a_t, b_t, c_t)
        except ValueError as exc:
            raise ctx.error(str(exc)) from None
    return ext(name, addr_of(c), addr_of(a), addr_of(b))


# (shape, A type, C type) -> (mma.sp helper, A element bits)
_MMA_SP = {("m16n8k32", "fp16", "fp32"): ("tl_mma_sp_f16_f32", 16),
           ("m16n8k32", "bf16", "fp32"): ("tl_mma_sp_bf16_f32", 16),
           ("m16n8k64", "int8", "int32"): ("tl_mma_sp_s8_s32", 8),
           ("m16n8k64", "e4m3", "fp32"): ("tl_mma_sp_e4m3_f32", 8),
           ("m16n8k64", "e5m2", "fp32"): ("tl_mma_sp_e5m2_f32", 8)}
FP8_MMA = _r(89, "fp8 mma.sp")


@lowering("ptx_mma_sp", MMA)
def _mma_sp(ctx: Any) -> Any:
    args = list(ctx.args)
    shape, a_t, b_t, c_t = (str(args[i].value) for i in (1, 2, 3, 4))
    a, b, c, e = args[5], args[6], args[7], args[8]
    found = _MMA_SP.get((shape, a_t, c_t)) if a_t == b_t else None
    if found is None:
        supported = ", ".join(f"{s} {t} -> {ct}" for s, t, ct in _MMA_SP)
        raise ctx.error(f"has no sparse mma for {shape} {a_t} x {b_t} -> {c_t}; supported: {supported}")
    if ctx.int_arg(9) != 0:
        raise ctx.error(f"uses sparsity selector {ctx.int_arg(9)}; this backend emits selector 0 (metadata from "
                        "the first threads of each quad)")
    require(ctx, FP8_MMA if a_t in ("e4m3", "e5m2") else MMA)
    name, bits = _MMA_SP[(shape, a_t, c_t)]
    b_hi = tirx.BufferLoad(b.source, [*list(b.indices)[:-1], b.indices[-1] + 2 * 32 // bits])
    meta = ext("tl_u32_at", addr_of(e), dtype="uint32")
    return ext(name, addr_of(c), addr_of(a), addr_of(b), addr_of(b_hi), meta)


@lowering("ptx_mma_block_scale", MMA_BLOCK_SCALE)
def _mma_block_scale(ctx: Any) -> Any:
    from tilelang_cuda.intrinsics.mma_sync import block_scale_helper_name

    args = list(ctx.args)
    shape, kind = str(args[1].value), str(args[2].value)
    a_t, b_t, stype = (str(args[i].value) for i in (4, 5, 6))
    name = block_scale_helper_name(shape, kind, ctx.int_arg(3), a_t, b_t, stype)
    a, b, c = args[7], args[8], args[9]
    sels = [tirx.Cast("uint16", x) for x in args[12:16]]
    return ext(name, addr_of(c), addr_of(a), addr_of(b), _as_u32(args[10]), _as_u32(args[11]), *sels)


@lowering("mma_fill", BASE)
def _mma_fill(ctx: Any) -> Any:
    n = ctx.int_arg(1)
    load = ctx.args[2]
    buf, idx = load.source, list(load.indices)
    zero = tirx.const(0, str(buf.ty.dtype))
    return Lowered(None, [tirx.BufferStore(buf, zero, [*idx[:-1], idx[-1] + i]) for i in range(n)])


@lowering("mma_store", MMA)
def _mma_store(ctx: Any) -> Any:
    m, n = ctx.int_arg(1), ctx.int_arg(2)
    if (m, n) != (16, 16):
        raise ctx.error(f"stores 16 x 16 accumulator tiles, got {m} x {n}")
    dst, src, stride = ctx.args[3], ctx.args[4], ctx.args[5]
    return ext("tl_mma_store_16x16", dst, addr_of(src), stride, tirx.Cast("int32", ctx.linear_thread() % 32))


# -- wgmma on descriptors
_WGMMA_AB = {"fp16": "f16", "bf16": "bf16"}


def _desc_plus(desc: Any, offset: Any) -> Any:
    """A descriptor advanced by `offset` 16-byte units (its start address field is the low 14 bits)."""
    if C.is_const(offset, 0):
        return desc
    return desc + tirx.Cast("uint64", offset)


@lowering("ptx_wgmma_ss", WGMMA)
def _wgmma_ss(ctx: Any) -> Any:
    a = list(ctx.args)
    prefix = str(a[1].value)
    a_k_major, b_k_major = bool(ctx.int_arg(2)), bool(ctx.int_arg(3))
    ab, b_t, acc_t = str(a[4].value), str(a[5].value), str(a[6].value)
    if ab != b_t or ab not in _WGMMA_AB or acc_t != "fp32":
        raise ctx.error(f"lowers fp16 / bf16 operands with an fp32 accumulator; got {ab} x {b_t} -> {acc_t}")
    m, rest = prefix[1:].split("n")
    n, k = rest.split("k")
    if (m, k) != ("64", "16") or not (8 <= int(n) <= 256 and int(n) % 8 == 0):
        raise ctx.error(f"{prefix} is not a wgmma m64nNk16 shape (N a multiple of 8 up to 256)")
    name = f"tl_wgmma_ss_m64n{n}k16_{_WGMMA_AB[ab]}_t{int(not a_k_major)}{int(not b_k_major)}_sd"
    c_load = a[11]
    return ext(name, addr_of(c_load), _desc_plus(a[7], a[8]), _desc_plus(a[9], a[10]), tirx.Cast("int32", a[12]))


def _wgmma_sp_checks(ctx: Any, prefix: str, ab: str, b_t: str, acc_t: str, sel: int, scales: list[Any]) -> str:
    """The N of a checked ``wgmma.sp`` call (m64nNk32, fp16 / bf16 -> fp32, selector 0, unit input scales)."""
    if ab != b_t or ab not in _WGMMA_AB or acc_t != "fp32":
        raise ctx.error(f"lowers fp16 / bf16 operands with an fp32 accumulator; got {ab} x {b_t} -> {acc_t}")
    m, rest = prefix[1:].split("n") if prefix.startswith("m") and "n" in prefix else ("", "k")
    n, k = rest.split("k") if rest.count("k") == 1 else ("", "")
    if (m, k) != ("64", "32") or not n.isdigit() or not (8 <= int(n) <= 256 and int(n) % 8 == 0):
        raise ctx.error(f"{prefix} is not a sparse wgmma m64nNk32 shape (N a multiple of 8 up to 256)")
    if sel != 0:
        raise ctx.error(f"uses sparsity selector {sel}; this backend emits selector 0 (metadata from the first "
                        "two threads of each quad)")
    for name, s in zip(("scale_in_a", "scale_in_b"), scales):
        if not C.is_const(s, 1):
            raise ctx.error(f"has {name} {s}; this backend emits the input scale 1 only")
    return n


@lowering("ptx_wgmma_sp_ss", WGMMA)
def _wgmma_sp_ss(ctx: Any) -> Any:
    a = list(ctx.args)
    a_k_major, b_k_major = bool(ctx.int_arg(2)), bool(ctx.int_arg(3))
    n = _wgmma_sp_checks(ctx, str(a[1].value), str(a[4].value), str(a[5].value), str(a[6].value), ctx.int_arg(10),
                         a[15:17])
    name = f"tl_wgmma_sp_ss_m64n{n}k32_{_WGMMA_AB[str(a[4].value)]}_t{int(not a_k_major)}{int(not b_k_major)}_sd"
    meta = ext("tl_u32_at", addr_of(a[9]), dtype="uint32")
    return ext(name, addr_of(a[13]), _desc_plus(a[7], a[8]), _desc_plus(a[11], a[12]), meta,
               tirx.Cast("int32", a[14]))


@lowering("ptx_wgmma_sp_rs", WGMMA)
def _wgmma_sp_rs(ctx: Any) -> Any:
    a = list(ctx.args)
    b_k_major = bool(ctx.int_arg(2))
    n = _wgmma_sp_checks(ctx, str(a[1].value), str(a[3].value), str(a[4].value), str(a[5].value), ctx.int_arg(8),
                         a[13:15])
    name = f"tl_wgmma_sp_rs_m64n{n}k32_{_WGMMA_AB[str(a[3].value)]}_t0{int(not b_k_major)}_sd"
    meta = ext("tl_u32_at", addr_of(a[7]), dtype="uint32")
    return ext(name, addr_of(a[11]), addr_of(a[6]), _desc_plus(a[9], a[10]), meta, tirx.Cast("int32", a[12]))


# -- descriptors
@lowering("initialize_wgmma_descriptor", WGMMA)
def _init_wgmma_desc(ctx: Any) -> Any:
    load, ptr, layout, lbo, sbo = ctx.args  # offsets in 16-byte units (the descriptor fields)
    return Lowered(None, [tirx.BufferStore(load.source, ext("tl_wgmma_desc_user", ptr, lbo * 16, sbo * 16, layout,
                                                            dtype="uint64"), list(load.indices))])


@lowering("initialize_tcgen05_descriptor", TCGEN05)
def _init_umma_desc(ctx: Any) -> Any:
    load, ptr, lbo, sbo, swizzle, *rest = ctx.args  # offsets in 16-byte units (the descriptor fields)
    base, absolute = (C.as_int(x) for x in rest) if rest else (0, 0)
    if base or absolute:  # the matrix base offset (bits 49-51) and the absolute leading-address mode (bit 52)
        desc = ext("tl_umma_desc_based", ptr, lbo * 16, sbo * 16, swizzle, base, absolute, dtype="uint64")
    else:
        desc = ext("tl_umma_desc", ptr, lbo * 16, sbo * 16, swizzle, dtype="uint64")
    return Lowered(None, [tirx.BufferStore(load.source, desc, list(load.indices))])


@lowering("tcgen05_gemm_sp", BASE)
def _tcgen05_gemm_sp(ctx: Any) -> Any:
    arch = str(ctx.target.attrs.get("arch", "")) if hasattr(ctx.target, "attrs") else ""
    raise ctx.error("requires Blackwell TCGEN5MMA sparse lowering, but sparse TCGEN5MMA lowering is not yet "
                    f"available (as in the reference TileLang 0.1.15). Got target=cuda -arch={arch}",
                    "use T.gemm_sp (mma.sp) or T.wgmma_gemm_sp (sm_90a)")


@lowering("increase_descriptor_offset", BASE)
def _increase_desc(ctx: Any) -> Any:
    load, offset = ctx.args
    dt = str(load.source.ty.dtype)
    step = tirx.Cast(dt, tirx.shift_right(offset, tirx.IntImm(str(offset.ty.dtype), 4)))
    return Lowered(None, [tirx.BufferStore(load.source, load + step, list(load.indices))])


# ------------------------------------------------------------------------------------------------ registration
def resolve_pointer(x: Any) -> Any:
    """A ``T.access_ptr`` value (core's ``tl.access_ptr(element, extent, rw_mask)``) as the ``tvm_access_ptr`` it
    lowers to, so the dialect's lowerings (and the passes after them) see the buffer, dtype and offset."""
    if not is_call(x, "tl.access_ptr"):
        return x
    from tilelang.backend.sdk import linear_index

    load, extent, mask = x.args[0], x.args[1], x.args[2]
    buf = load.source
    return buf.access_ptr(int(C.as_int(mask) or 3), offset=linear_index(buf, list(load.indices)), extent=extent)


def _with_resolved_pointers(ctx: Any) -> Any:
    import dataclasses

    args = ctx.args
    if not dataclasses.is_dataclass(ctx) or not any(is_call(a, "tl.access_ptr") for a in args):
        return ctx
    call = tvm.ir.Call(ctx.call.op, [resolve_pointer(a) for a in args], ret_ty=ctx.call.ty)
    return dataclasses.replace(ctx, call=call)


def _make_impl(op: str, req: Requirement, fn: LowerFn) -> TileOpImpl:
    def lower(ctx: Any) -> Any:
        require(ctx, req)
        return fn(_with_resolved_pointers(ctx))

    return TileOpImpl(op, "cuda_dialect", lower, supports_target=is_cuda, priority=10)


def _more_lowerings() -> dict[str, tuple[Requirement, LowerFn]]:
    """Constructs lowered in their own modules (TMA copies, tensor memory, wgmma / tcgen05 GEMMs)."""
    from tilelang_cuda.tileops import dialect_tensorcore, dialect_tma

    return {**dialect_tma.LOWER, **dialect_tensorcore.LOWER}


def cuda_impls() -> tuple[TileOpImpl, ...]:
    table = {**_LOWER, **_more_lowerings()}
    return tuple(_make_impl(op, req, fn) for op, (req, fn) in sorted(table.items()))


def elsewhere_impls() -> tuple[TileOpImpl, ...]:
    """For targets other than CUDA: a LoweringError naming the construct and the CUDA arch that has it."""
    table = {**_LOWER, **_more_lowerings()}
    out = []
    for op, (req, _) in sorted(table.items()):
        def lower(ctx: Any, req: Requirement = req) -> Any:
            raise ctx.error(f"is a CUDA construct ({req.feature}, {req.arch} and newer); target kind "
                            f"{ctx.target_kind!r} does not have it", "use a CUDA target or the common language")

        out.append(TileOpImpl(op, "cuda_dialect_elsewhere", lower, supports_target=lambda t: not is_cuda(t),
                              priority=-1))
    return tuple(out)


_elsewhere_registered = False


def register_elsewhere() -> None:
    """Register `elsewhere_impls` for every target kind (once)."""
    global _elsewhere_registered
    if _elsewhere_registered:
        return
    from tilelang.backend import ANY_TARGET, register_tile_op_impl

    for impl in elsewhere_impls():
        register_tile_op_impl(impl, target_kind=ANY_TARGET)
    _elsewhere_registered = True


IMPLS = cuda_impls()
