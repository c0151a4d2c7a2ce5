"""The CUDA-only builtins of the reference's ``tilelang.language`` (``T.alloc_barrier``, ``T.mbarrier_wait_parity``,
``T.fence_proxy_async``, ``T.set_max_nreg``, ``T.ldg128``, ``T.shuffle_elect``, ...), with its signatures.

Each returns (or, for allocations, emits) a ``tl.*`` intrinsic call; `tilelang_cuda.tileops.dialect` lowers it to
the inline-PTX helpers of the plugin's headers (`tilelang_cuda.intrinsics.device`) on the architectures that have
the instruction.
Barrier operands are elements of a barrier buffer (``mbars[i]``) or one-barrier buffers.
"""

from __future__ import annotations

from typing import Any

from tilelang.errors import KernelTypeError
from tilelang_cuda.language._emit import barrier_load, call, const_int, expr, pointer, public

__all__ = [
    "alloc_barrier", "alloc_cluster_barrier", "mbarrier_wait_parity", "mbarrier_arrive", "mbarrier_expect_tx",
    "mbarrier_arrive_expect_tx", "barrier_wait", "barrier_arrive", "ptx_arrive_cluster_barrier",
    "cp_async_barrier_noinc", "named_barrier_arrive", "fence_proxy_async", "set_max_nreg", "inc_max_nreg",
    "dec_max_nreg", "annotate_producer_reg_dealloc", "annotate_consumer_reg_alloc", "no_set_max_nreg",
    "disable_warp_group_reg_alloc", "shuffle_elect", "get_warp_group_idx", "warpgroup_arrive",
    "warpgroup_commit_batch", "warpgroup_wait", "warpgroup_fence_operand", "wait_wgmma", "tma_store_arrive",
    "tma_store_wait", "ldg32", "ldg64", "ldg128", "ldg256", "stg32", "stg64", "stg128", "stg256", "lds32",
    "lds64", "lds128", "sts32", "sts64", "sts128", "__ldg", "__ffs", "__fns", "annotate_min_blocks_per_sm",
    "annotate_l2_hit_ratio",
]

BARRIER_SCOPE = "shared"  # a static __shared__ array of 64-bit mbarrier words (never part of the dynamic pool)


# ------------------------------------------------------------------------------------------------ mbarriers
def _counts(arrive_count: Any, what: str) -> list[int]:
    counts = [arrive_count] if isinstance(arrive_count, int) else list(arrive_count)
    if not counts:
        raise KernelTypeError(f"{what} needs at least one arrive count")
    out = [const_int(c, f"{what} arrive count") for c in counts]
    if any(c < 1 for c in out):
        raise KernelTypeError(f"{what}: arrive counts must be positive, got {out}")
    return out


def _alloc_barriers(arrive_count: Any, what: str, init_op: str) -> Any:
    from tvm import tirx
    from tvm.script.ir_builder import tirx as B

    from tilelang.language import alloc_shared

    counts = _counts(arrive_count, what)
    buf = alloc_shared((len(counts),), "uint64", scope=BARRIER_SCOPE)
    B.evaluate(call(init_op, "handle", [tirx.BufferLoad(buf, [tirx.IntImm("int32", 0)]), *counts]))
    return buf


@public
def alloc_barrier(arrive_count: int | list[int]) -> Any:
    """``len(arrive_count)`` mbarriers in shared memory, initialised (by one thread, then a block barrier) with
    the given arrival counts: ``T.alloc_barrier(128)``, ``T.alloc_barrier([128] * n)``."""
    return _alloc_barriers(arrive_count, "T.alloc_barrier", "init_barriers")


@public
def alloc_cluster_barrier(arrive_count: int | list[int]) -> Any:
    """Like `alloc_barrier`, for barriers other CTAs of the cluster arrive on (``T.mbarrier_arrive(b, cta_id)``):
    the initialisation is fenced for the cluster (sm_90+)."""
    return _alloc_barriers(arrive_count, "T.alloc_cluster_barrier", "init_cluster_barriers")


@public
def mbarrier_wait_parity(mbarrier: Any, parity: Any) -> Any:
    """Wait until the phase of `mbarrier` with parity `parity` has completed (``mbarrier.try_wait.parity``)."""
    return call("mbarrier_wait_parity", "handle", [barrier_load(mbarrier, "T.mbarrier_wait_parity"), parity])


@public
def mbarrier_arrive(mbarrier: Any, cta_id: Any = None) -> Any:
    """Arrive on `mbarrier`; with `cta_id`, on that CTA's copy of a cluster barrier."""
    load = barrier_load(mbarrier, "T.mbarrier_arrive")
    if cta_id is not None:
        return ptx_arrive_cluster_barrier(load, cta_id)
    return call("ptx_arrive_barrier", "handle", [load])


@public
def mbarrier_expect_tx(mbarrier: Any, tx: Any) -> Any:
    """Add `tx` bytes to the transaction count the current phase of `mbarrier` waits for (sm_90+)."""
    return call("mbarrier_expect_tx", "handle", [barrier_load(mbarrier, "T.mbarrier_expect_tx"), tx])


@public
def mbarrier_arrive_expect_tx(mbarrier: Any, tx: Any) -> Any:
    """Arrive on `mbarrier` and expect `tx` more bytes of asynchronous transactions (sm_90+)."""
    return call("ptx_arrive_barrier_expect_tx", "handle", [barrier_load(mbarrier, "T.mbarrier_arrive_expect_tx"), tx])


@public
def barrier_wait(mbarrier: Any, parity: Any) -> Any:
    """`mbarrier_wait_parity`."""
    return mbarrier_wait_parity(mbarrier, parity)


@public
def barrier_arrive(mbarrier: Any) -> Any:
    """`mbarrier_arrive` on this CTA's barrier."""
    return mbarrier_arrive(mbarrier)


@public
def ptx_arrive_cluster_barrier(mbarrier: Any, cta_id: Any) -> Any:
    """Arrive on the copy of `mbarrier` held by CTA `cta_id` of the cluster (sm_90+)."""
    return call("ptx_arrive_cluster_barrier", "handle", [barrier_load(mbarrier, "T.ptx_arrive_cluster_barrier"),
                                                         cta_id])


@public
def cp_async_barrier_noinc(barrier: Any) -> Any:
    """Arrive on `barrier` when this thread's earlier cp.async copies land (``cp.async.mbarrier.arrive.noinc``:
    the arrival counts against the barrier's expected count)."""
    return call("ptx_cp_async_barrier_noinc", "handle", [barrier_load(barrier, "T.cp_async_barrier_noinc")])


@public
def named_barrier_arrive(barrier_id: Any, thread_count: Any) -> Any:
    """Arrive on named barrier `barrier_id` (0-15) of `thread_count` threads without waiting (``bar.arrive``);
    the other side waits with ``T.sync_threads(barrier_id, thread_count)``."""
    return call("named_barrier_arrive", "handle", [barrier_id, thread_count])


# ------------------------------------------------------------------------------------------------ fences, registers
@public
def fence_proxy_async() -> Any:
    """Order this thread's shared-memory accesses with the async proxy (TMA, wgmma): ``fence.proxy.async``."""
    return call("fence_proxy_async", "handle", [])


@public
def set_max_nreg(reg_count: int, is_inc: int) -> Any:
    """``setmaxnreg.inc`` (`is_inc` 1) or ``.dec`` (0) to `reg_count` registers per thread for the warpgroup
    (sm_90a; 24..256, a multiple of 8)."""
    count = const_int(reg_count, "T.set_max_nreg reg_count")
    if not (24 <= count <= 256 and count % 8 == 0):
        raise KernelTypeError(f"T.set_max_nreg: reg_count must be a multiple of 8 in [24, 256], got {count}")
    return call("set_max_nreg", "handle", [count, const_int(is_inc, "T.set_max_nreg is_inc")])


@public
def inc_max_nreg(reg_count: int) -> Any:
    return set_max_nreg(reg_count, 1)


@public
def dec_max_nreg(reg_count: int) -> Any:
    return set_max_nreg(reg_count, 0)


@public
def annotate_producer_reg_dealloc(reg_count: int = 24) -> Any:
    """Registers per thread for the producer warpgroup of a ``T.ws`` kernel: its scopes start with
    ``setmaxnreg.dec`` to this count."""
    return call("annotate_producer_reg_dealloc", "handle", [const_int(reg_count, "reg_count")])


@public
def annotate_consumer_reg_alloc(reg_count: int = 240) -> Any:
    """Registers per thread for the consumer warpgroups of a ``T.ws`` kernel: their scopes start with
    ``setmaxnreg.inc`` to this count."""
    return call("annotate_consumer_reg_alloc", "handle", [const_int(reg_count, "reg_count")])


@public
def no_set_max_nreg() -> Any:
    """No ``setmaxnreg`` in this kernel's warp-specialised scopes, whatever the annotations say."""
    return call("no_set_max_nreg", "handle", [])


@public
def disable_warp_group_reg_alloc() -> Any:
    """`no_set_max_nreg`."""
    return no_set_max_nreg()


# ------------------------------------------------------------------------------------------------ warps
@public
def shuffle_elect(thread_extent: int) -> Any:
    """True on exactly one thread of each group of `thread_extent` consecutive threads (0: of the block)."""
    return call("tl_shuffle_elect", "bool", [const_int(thread_extent, "T.shuffle_elect thread_extent")])


@public
def get_warp_group_idx(warp_size: Any = None, warps_per_group: Any = None) -> Any:
    """The warpgroup of the calling thread: linear thread id // (`warp_size` * `warps_per_group`) (32 * 4)."""
    if warps_per_group is not None and warp_size is None:
        raise ValueError("get_warp_group_idx expects `warp_size` when specifying `warps_per_group`.")
    args = [a for a in (warp_size, warps_per_group) if a is not None]
    return call("get_warp_group_idx", "int32", args, effect="pure")


@public
def warpgroup_arrive() -> Any:
    """``wgmma.fence``: registers and shared memory written before are visible to the next wgmma (sm_90a)."""
    return call("warpgroup_arrive", "handle", [])


@public
def warpgroup_commit_batch() -> Any:
    """``wgmma.commit_group``: the wgmmas issued since the last commit form one batch (sm_90a)."""
    return call("warpgroup_commit_batch", "handle", [])


@public
def warpgroup_wait(num_mma: int) -> Any:
    """``wgmma.wait_group num_mma``: at most `num_mma` batches stay in flight (sm_90a)."""
    return call("warpgroup_wait", "handle", [const_int(num_mma, "T.warpgroup_wait num_mma")])


@public
def wait_wgmma(id: int) -> Any:
    """`warpgroup_wait`: wait until at most `id` wgmma batches are in flight."""
    return call("wait_wgmma", "handle", [const_int(id, "T.wait_wgmma id")])


@public
def warpgroup_fence_operand(buffer_or_ptr: Any, offset: Any = 0, num_regs: Any = None, dtype: Any = None) -> Any:
    """Pin the accumulator registers of `buffer_or_ptr` (an empty asm on each of `num_regs` 32-bit registers from
    element `offset`) so the compiler moves no access to them across the wgmmas in flight."""
    from tilelang.ir import region as R

    if R.is_buffer(buffer_or_ptr) or R.is_load(buffer_or_ptr) or R.is_region(buffer_or_ptr):
        buf = R.buffer_of(buffer_or_ptr)
        inferred = R.buffer_dtype(buf)
        if dtype is not None and str(dtype) != inferred:
            raise ValueError(f"dtype mismatch: provided {dtype}, buffer uses {inferred}.")
        if num_regs is None:
            if R.is_load(buffer_or_ptr):
                raise ValueError("num_regs must be provided when passing a BufferLoad.")
            extents = (R.region_extents(buffer_or_ptr) if R.is_region(buffer_or_ptr) else R.buffer_shape(buf))
            total = 1
            for e in extents:
                total *= const_int(e, "warpgroup_fence_operand extent")
            from tilelang.backend.sdk import dtype_bits

            num_regs = (total * dtype_bits(inferred) + 31) // 32
        ptr = pointer(buffer_or_ptr, "rw", "T.warpgroup_fence_operand")
    else:
        if num_regs is None:
            raise ValueError("num_regs must be provided when passing a pointer expression.")
        ptr = buffer_or_ptr
    return call("warpgroup_fence_operand", "handle", [ptr, offset, num_regs])


# ------------------------------------------------------------------------------------------------ TMA stores
@public
def tma_store_arrive() -> Any:
    """``cp.async.bulk.commit_group``: the TMA stores issued so far form one bulk group (sm_90+)."""
    return call("tma_store_arrive", "handle", [])


@public
def tma_store_wait(count: int = 0, read: bool = True) -> Any:
    """Wait until at most `count` TMA store groups are in flight (``cp.async.bulk.wait_group[.read]``; with
    `read`, only until their shared-memory sources have been read)."""
    return call("tma_store_wait", "handle", [const_int(count, "T.tma_store_wait count"), bool(read)])


# ------------------------------------------------------------------------------------------------ ld / st
_LD_DTYPES = {32: "uint32", 64: "uint32x2", 128: "uint32x4", 256: "uint32x8"}


def _ld(bits: int, space: str, src: Any, pred: Any) -> Any:
    name = f"{space}{bits}"
    ptr = pointer(src, "r", f"T.{name}")
    args = [ptr] if pred is None else [ptr, pred]
    return call(name, _LD_DTYPES[bits], args)


def _st(bits: int, space: str, dst: Any, value: Any, pred: Any) -> Any:
    name = f"{space}{bits}"
    ptr = pointer(dst, "w", f"T.{name}")
    args = [ptr, value] if pred is None else [ptr, value, pred]
    return call(name, "handle", args)


@public
def ldg32(src: Any, pred: Any = None) -> Any:
    """32 bits from global memory through the read-only path (``ld.global.nc``), skipped when `pred` is false."""
    return _ld(32, "ldg", src, pred)


@public
def ldg64(src: Any, pred: Any = None) -> Any:
    """64 bits (``uint32x2``) from global memory; see `ldg32`."""
    return _ld(64, "ldg", src, pred)


@public
def ldg128(src: Any, pred: Any = None) -> Any:
    """128 bits (``uint32x4``) from global memory; see `ldg32`."""
    return _ld(128, "ldg", src, pred)


@public
def ldg256(src: Any, pred: Any = None) -> Any:
    """256 bits (``uint32x8``) from global memory in one instruction (sm_100+); see `ldg32`."""
    return _ld(256, "ldg", src, pred)


@public
def stg32(dst: Any, value: Any, pred: Any = None) -> Any:
    """Store 32 bits to global memory (``st.global``), skipped when `pred` is false."""
    return _st(32, "stg", dst, value, pred)


@public
def stg64(dst: Any, value: Any, pred: Any = None) -> Any:
    return _st(64, "stg", dst, value, pred)


@public
def stg128(dst: Any, value: Any, pred: Any = None) -> Any:
    return _st(128, "stg", dst, value, pred)


@public
def stg256(dst: Any, value: Any, pred: Any = None) -> Any:
    """Store 256 bits in one instruction (sm_100+)."""
    return _st(256, "stg", dst, value, pred)


@public
def lds32(src: Any) -> Any:
    """32 bits from shared memory (``ld.shared``)."""
    return _ld(32, "lds", src, None)


@public
def lds64(src: Any) -> Any:
    return _ld(64, "lds", src, None)


@public
def lds128(src: Any) -> Any:
    return _ld(128, "lds", src, None)


@public
def sts32(dst: Any, value: Any) -> Any:
    """Store 32 bits to shared memory (``st.shared``)."""
    return _st(32, "sts", dst, value, None)


@public
def sts64(dst: Any, value: Any) -> Any:
    return _st(64, "sts", dst, value, None)


@public
def sts128(dst: Any, value: Any) -> Any:
    return _st(128, "sts", dst, value, None)


@public
def __ldg(load_or_buf: Any, index: Any = None) -> Any:
    """A load through the read-only data cache: ``T.__ldg(x[i])`` emits ``__ldg(&x[i])``."""
    from tvm import tirx

    from tilelang.ir import region as R

    if R.is_load(load_or_buf):
        load = load_or_buf
    elif R.is_buffer(load_or_buf):
        if index is None:
            raise ValueError("T.__ldg(Buffer, index) requires an index when passing a Buffer.")
        if isinstance(index, (list, tuple)):
            if len(index) != 1:
                raise ValueError("T.__ldg currently supports 1D flattened indices.")
            index = index[0]
        load = tirx.BufferLoad(load_or_buf, [expr(index)])
    else:
        raise TypeError("T.__ldg expects a BufferLoad or a Buffer.")
    return call("__ldg", R.buffer_dtype(load.source), [load])


@public
def __ffs(value: Any) -> Any:
    """One-based position of the least significant set bit (0 for 0): ``__ffs`` / ``__ffsll``."""
    return call("__ffs", "int32", [value], effect="pure")


@public
def __fns(mask: Any, base: Any, offset: Any) -> Any:
    """Position of the `offset`-th set bit of `mask` from bit `base` (``__fns``; 0xFFFFFFFF when none)."""
    return call("__fns", "uint32", [expr(mask, "uint32"), expr(base, "uint32"), offset], effect="pure")


# ------------------------------------------------------------------------------------------------ annotations
@public
def annotate_min_blocks_per_sm(num: int) -> Any:
    """``__launch_bounds__(threads, num)``: ask the compiler to fit `num` blocks per SM (inside the kernel)."""
    count = const_int(num, "T.annotate_min_blocks_per_sm")
    if count < 1:
        raise KernelTypeError(f"T.annotate_min_blocks_per_sm: num must be positive, got {count}")
    return call("min_blocks_per_sm", "handle", [count])


@public
def annotate_l2_hit_ratio(buffer: Any, hit_ratio: float) -> Any:
    """Record an L2 persistence hint for `buffer` (``cudaAccessPolicyWindow`` hit ratio in [0, 1]); the launch
    applies it where the driver supports access policy windows."""
    from tilelang.backend.sdk import require_build_state
    from tilelang.ir import region as R

    st = require_build_state("T.annotate_l2_hit_ratio")
    if not (0.0 <= float(hit_ratio) <= 1.0):
        raise ValueError(f"T.annotate_l2_hit_ratio: hit_ratio must be in [0, 1], got {hit_ratio}")
    ratios = dict(st.func_attrs.get("tl.l2_hit_ratio", {}))
    ratios[R.buffer_name(R.buffer_of(buffer))] = float(hit_ratio)
    st.func_attrs["tl.l2_hit_ratio"] = ratios


def adopt_core_barriers(namespace: dict[str, Any], names: tuple[str, ...]) -> None:
    """Bind `names` to core's spellings where core's language has them (``tilelang.language.barriers``: one form
    of each construct whichever module the user reaches it through; this backend lowers both forms). The
    definitions above remain for a core without them."""
    import importlib

    try:
        core = importlib.import_module("tilelang.language.barriers")
    except ImportError:
        return
    for name in names:
        if hasattr(core, name):
            namespace[name] = getattr(core, name)


adopt_core_barriers(globals(), ("alloc_barrier", "mbarrier_wait_parity", "mbarrier_arrive", "mbarrier_expect_tx",
                                "mbarrier_arrive_expect_tx", "barrier_wait", "barrier_arrive", "no_set_max_nreg"))
