"""CUDA's low-level TIR operators (``T.ptx_*``, ``T.mma_store``, ...): one PTX instruction (family) each, on
register buffers, shared-memory pointers and barriers.

Register operands are a local buffer (or its ``.data``) and an element offset; shared operands are pointers
(``T.access_ptr``). The lowering checks the architecture and emits the inline-PTX helpers of the plugin's
headers (``tilelang_cuda/*.cuh``).
"""

from __future__ import annotations

import functools
from typing import Any

from tilelang_cuda.language._emit import barrier_load, call, const_int, public

CUDA_ONLY = ("mma_fill", "mma_store", "ptx_cp_async_bulk", "ptx_fence_barrier_init", "ptx_ldmatrix", "ptx_mma",
             "ptx_mma_block_scale", "ptx_mma_sp", "ptx_tcgen05_mma_blockscaled_ss", "ptx_tcgen05_mma_ss",
             "ptx_tcgen05_mma_ts", "ptx_wait_barrier", "ptx_wgmma_rs", "ptx_wgmma_sp_rs", "ptx_wgmma_sp_ss",
             "ptx_wgmma_ss")
SHARED_LEGACY = ("ptx_arrive_barrier", "ptx_arrive_barrier_expect_tx", "ptx_commit_group", "ptx_cp_async",
                 "ptx_cp_async_barrier", "ptx_init_barrier_thread_count", "ptx_wait_group")
__all__ = tuple(sorted((*CUDA_ONLY, *SHARED_LEGACY, "ptx_legacy")))


def __getattr__(name: str) -> Any:
    if name == "ptx_legacy":  # apache-tvm's namespace of its legacy PTX intrinsics, as the reference re-exports it
        from tvm.tirx.script.parser import ptx_legacy

        return ptx_legacy
    raise AttributeError(f"module 'tilelang.cuda.language.tir' has no attribute {name!r}")


def _dtype_first(fn: Any) -> Any:
    """Accept the result dtype as keyword ``dtype=`` too (the reference's TIR operator convention)."""
    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if "dtype" in kwargs:
            args = (kwargs.pop("dtype"), *args)
        return fn(*args, **kwargs)

    return public(wrapped)


def register_buffer(x: Any) -> Any:
    """A register operand given as a buffer or as its ``.data`` (``tirx.buffer_data(buf)``): the buffer."""
    import tvm

    if isinstance(x, tvm.ir.Call) and isinstance(x.op, tvm.ir.Op) and x.op.name == "tirx.buffer_data":
        return x.args[0]
    return x


def _regs(x: Any, offset: Any) -> Any:
    """A register operand: the element `offset` of a 1-D local buffer."""
    from tvm import tirx

    from tilelang_cuda.language._emit import expr

    return tirx.BufferLoad(register_buffer(x), [expr(offset)])


# ------------------------------------------------------------------------------------------------ cp.async
@public
def ptx_cp_async(dst_access_ptr: Any, src_access_ptr: Any, num_elems: Any, predicate: Any = None) -> Any:
    """``cp.async`` of `num_elems` elements (4, 8 or 16 bytes) from global to shared memory (sm_80+); with
    `predicate` false the destination is zero-filled instead."""
    args = [dst_access_ptr, src_access_ptr, num_elems]
    if predicate is not None:
        args.append(predicate)
    return call("ptx_cp_async", "handle", args)


@public
def ptx_commit_group() -> Any:
    """``cp.async.commit_group``: the cp.async copies issued so far form one group."""
    return call("ptx_commit_group", "handle", [])


@public
def ptx_wait_group(num: int) -> Any:
    """``cp.async.wait_group num``: wait until at most `num` groups are in flight."""
    return call("ptx_wait_group", "handle", [const_int(num, "T.ptx_wait_group num")])


@public
def ptx_cp_async_barrier(barrier: Any) -> Any:
    """``cp.async.mbarrier.arrive``: `barrier` gets one more expected arrival, made when this thread's copies land."""
    return call("ptx_cp_async_barrier", "handle", [barrier_load(barrier, "T.ptx_cp_async_barrier")])


@_dtype_first
def ptx_cp_async_bulk(dtype: Any, shared_ptr: Any, shared_offset: Any, global_ptr: Any, global_offset: Any,
                      bytes: Any, barrier: Any) -> Any:
    """``cp.async.bulk`` of `bytes` (a multiple of 16) from global to shared memory, completing on `barrier`."""
    from tilelang_cuda.language._emit import expr

    return call("ptx_cp_async_bulk", "handle", [str(dtype), shared_ptr, expr(shared_offset), global_ptr,
                                                expr(global_offset), bytes, barrier_load(barrier, "barrier")])


# ------------------------------------------------------------------------------------------------ mbarriers
@public
def ptx_init_barrier_thread_count(barrier: Any, thread_count: Any) -> Any:
    """``mbarrier.init`` of `barrier` with `thread_count` expected arrivals (one thread)."""
    return call("ptx_init_barrier_thread_count", "handle",
                [barrier_load(barrier, "T.ptx_init_barrier_thread_count"), thread_count])


@public
def ptx_arrive_barrier(barrier: Any) -> Any:
    """``mbarrier.arrive`` on `barrier`."""
    return call("ptx_arrive_barrier", "handle", [barrier_load(barrier, "T.ptx_arrive_barrier")])


@public
def ptx_arrive_barrier_expect_tx(barrier: Any, byte_count: Any) -> Any:
    """``mbarrier.arrive.expect_tx``: arrive and expect `byte_count` more bytes of async transactions (sm_90+)."""
    return call("ptx_arrive_barrier_expect_tx", "handle",
                [barrier_load(barrier, "T.ptx_arrive_barrier_expect_tx"), byte_count])


@public
def ptx_wait_barrier(barrier: Any, parity: Any = 0) -> Any:
    """Wait on `barrier` for the phase of `parity` (``mbarrier.try_wait.parity``)."""
    return call("mbarrier_wait_parity", "handle", [barrier_load(barrier, "T.ptx_wait_barrier"), parity])


@public
def ptx_fence_barrier_init() -> Any:
    """``fence.mbarrier_init``: make mbarrier initialisations visible to the cluster (sm_90+)."""
    return call("ptx_fence_barrier_init", "handle", [])


# ------------------------------------------------------------------------------------------------ mma.sync
@public
def ptx_ldmatrix(trans: Any, num: int, src_access_ptr: Any, dst_access_ptr: Any) -> Any:
    """``ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16`` (sm_75+): each lane gives one 16-byte row
    address; the `num` 8x8 matrices land in the registers at `dst_access_ptr`."""
    n = const_int(num, "T.ptx_ldmatrix num")
    if n not in (1, 2, 4):
        raise ValueError(f"T.ptx_ldmatrix loads 1, 2 or 4 matrices, got {n}")
    return call("ptx_ldmatrix", "handle", [bool(const_int(trans, "T.ptx_ldmatrix trans")), n, src_access_ptr,
                                           dst_access_ptr])


@_dtype_first
def ptx_mma(dtype: Any, shape: str, A_layout: str, B_layout: str, A_dtype: str, B_dtype: str, C_dtype: str,
            multiplicand_a: Any, a_index: Any, multiplicand_b: Any, b_index: Any, accumulator: Any, c_index: Any,
            saturate: Any = False, operator: Any = None) -> Any:
    """``mma.sync.aligned.{shape}.{A_layout}.{B_layout}`` on register fragments: accumulator[c_index..] +=
    A[a_index..] * B[b_index..] (sm_80+; m16n8k8 and the m8n8 shapes from sm_75)."""
    if (str(A_layout), str(B_layout)) != ("row", "col"):
        raise ValueError(f"T.ptx_mma supports the row.col operand layouts, got {A_layout}.{B_layout}")
    return call("ptx_mma", "handle", [str(dtype), str(shape), str(A_dtype), str(B_dtype), str(C_dtype),
                                      _regs(multiplicand_a, a_index), _regs(multiplicand_b, b_index),
                                      _regs(accumulator, c_index), bool(saturate)])


@public
def ptx_mma_sp(dtype: Any, shape: str, A_layout: str, B_layout: str, A_dtype: str, B_dtype: str, C_dtype: str,
               multiplicand_a: Any, a_index: Any, multiplicand_b: Any, b_index: Any, accumulator: Any, c_index: Any,
               metadata: Any, meta_index: Any, sparse_selector: Any = 0, saturate: Any = False) -> Any:
    """``mma.sp::ordered_metadata.sync.aligned.{shape}.row.col`` (2:4-sparse A, sm_80+): accumulator[c_index..] +=
    decompress(A[a_index..]) * B[b_index..], the 32-bit metadata register at `metadata` element `meta_index`
    (m16n8k32 fp16/bf16, m16n8k64 int8 and fp8 from sm_89; sparsity selector 0)."""
    if (str(A_layout), str(B_layout)) != ("row", "col"):
        raise ValueError(f"T.ptx_mma_sp supports the row.col operand layouts, got {A_layout}.{B_layout}")
    return call("ptx_mma_sp", "handle", [str(dtype), str(shape), str(A_dtype), str(B_dtype), str(C_dtype),
                                         _regs(multiplicand_a, a_index), _regs(multiplicand_b, b_index),
                                         _regs(accumulator, c_index), _regs(metadata, meta_index),
                                         const_int(sparse_selector, "T.ptx_mma_sp sparse_selector"),
                                         bool(saturate)])


@_dtype_first
def ptx_mma_block_scale(dtype: Any, shape: str, A_layout: str, B_layout: str, kind: str, scale_vec_size: int,
                        A_dtype: str, B_dtype: str, stype: str, multiplicand_a: Any, a_index: Any,
                        multiplicand_b: Any, b_index: Any, accumulator: Any, c_index: Any, scale_a: Any,
                        scale_b: Any, byte_id_a: Any = 0, thread_id_a: Any = 0, byte_id_b: Any = 0,
                        thread_id_b: Any = 0) -> Any:
    """``mma.sync.aligned.{shape}.row.col.kind::{kind}.block_scale.scale_vec::{N}X`` (sm_120a): like
    `ptx_mma`, each lane also giving a 32-bit scale word of A and of B (`scale_a` / `scale_b`: a ``uint32``
    element or ``T.access_ptr`` of one); the instruction takes the words of the lanes the thread selectors
    (`thread_id_a` / `thread_id_b`) pick, from byte `byte_id_*` on."""
    from tilelang_cuda.intrinsics.macro.mma_sm120_macro_generator import _scale_value, block_scale_mma_config

    if (str(A_layout), str(B_layout)) != ("row", "col"):
        raise ValueError(f"T.ptx_mma_block_scale supports the row.col operand layouts, got {A_layout}.{B_layout}")
    cfg = block_scale_mma_config(str(kind), const_int(scale_vec_size, "T.ptx_mma_block_scale scale_vec_size"),
                                 str(stype))
    if (str(shape), str(A_dtype), str(B_dtype)) != (cfg.mma_prefix, cfg.a_dtype_abbrv, cfg.b_dtype_abbrv):
        raise ValueError(f"T.ptx_mma_block_scale kind::{cfg.kind} is {cfg.mma_prefix} on {cfg.a_dtype_abbrv} x "
                         f"{cfg.b_dtype_abbrv}, got {shape} on {A_dtype} x {B_dtype}")
    return call("ptx_mma_block_scale", "handle",
                [str(dtype), cfg.mma_prefix, cfg.kind, cfg.scale_vec_size, cfg.a_dtype_abbrv, cfg.b_dtype_abbrv,
                 cfg.scale_type, _regs(multiplicand_a, a_index), _regs(multiplicand_b, b_index),
                 _regs(accumulator, c_index), _scale_value(scale_a), _scale_value(scale_b), byte_id_a,
                 thread_id_a, byte_id_b, thread_id_b])


@_dtype_first
def mma_fill(dtype: Any, local_size: int, local_ptr: Any, offset: Any) -> Any:
    """Zero `local_size` accumulator registers from element `offset`."""
    return call("mma_fill", "handle", [str(dtype), const_int(local_size, "T.mma_fill local_size"),
                                       _regs(local_ptr, offset)])


@_dtype_first
def mma_store(dtype: Any, m: int, n: int, dst_ptr: Any, src_ptr: Any, src_offset: Any, dst_stride: Any) -> Any:
    """Store an ``m x n`` (16 x 8 per MMA atom, 16 x 16 here) accumulator tile of the warp from registers
    (`src_ptr` + `src_offset`) to memory at `dst_ptr` with row stride `dst_stride`."""
    return call("mma_store", "handle", [str(dtype), const_int(m, "m"), const_int(n, "n"), dst_ptr,
                                        _regs(src_ptr, src_offset), dst_stride])


# ------------------------------------------------------------------------------------------------ wgmma, tcgen05
@_dtype_first
def ptx_wgmma_ss(dtype: Any, wgmma_prefix: str, a_is_k_major: Any, b_is_k_major: Any, a_dtype_abbrv: str,
                 b_dtype_abbrv: str, accum_dtype_abbrv: str, A_desc: Any, A_offset: Any, B_desc: Any, B_offset: Any,
                 C_data: Any, C_offset: Any, scale_out: Any, scale_in_a: Any = 1, scale_in_b: Any = 1) -> Any:
    """``wgmma.mma_async`` with both operands in shared memory through matrix descriptors (``A_desc`` /
    ``B_desc``: 64-bit descriptor values, advanced by the byte offsets / 16); accumulates into the warpgroup's
    registers `C_data` from `C_offset` (sm_90a). `scale_out` 0 overwrites instead of accumulating."""
    from tilelang_cuda.language._emit import expr

    return call("ptx_wgmma_ss", "handle", [str(dtype), str(wgmma_prefix), bool(a_is_k_major), bool(b_is_k_major),
                                           str(a_dtype_abbrv), str(b_dtype_abbrv), str(accum_dtype_abbrv),
                                           A_desc, expr(A_offset), B_desc, expr(B_offset),
                                           _regs(C_data, C_offset), expr(scale_out), expr(scale_in_a),
                                           expr(scale_in_b)])


@_dtype_first
def ptx_wgmma_rs(dtype: Any, wgmma_prefix: str, b_is_k_major: Any, a_dtype_abbrv: str, b_dtype_abbrv: str,
                 accum_dtype_abbrv: str, A_buf: Any, A_offset: Any, B_desc: Any, B_offset: Any, C_data: Any,
                 C_offset: Any, scale_out: Any, scale_in_a: Any = 1, scale_in_b: Any = 1) -> Any:
    """``wgmma.mma_async`` with A in registers (`A_buf` from `A_offset`) and B in shared memory (sm_90a)."""
    from tilelang_cuda.language._emit import expr

    return call("ptx_wgmma_rs", "handle", [str(dtype), str(wgmma_prefix), bool(b_is_k_major), str(a_dtype_abbrv),
                                           str(b_dtype_abbrv), str(accum_dtype_abbrv), _regs(A_buf, A_offset),
                                           B_desc, expr(B_offset), _regs(C_data, C_offset), expr(scale_out),
                                           expr(scale_in_a), expr(scale_in_b)])


@_dtype_first
def ptx_wgmma_sp_ss(dtype: Any, wgmma_prefix: str, a_is_k_major: Any, b_is_k_major: Any, a_dtype_abbrv: str,
                    b_dtype_abbrv: str, accum_dtype_abbrv: str, A_desc: Any, A_offset: Any, E_data: Any,
                    E_offset: Any, sparse_selector: Any, B_desc: Any, B_offset: Any, C_data: Any, C_offset: Any,
                    scale_out: Any, scale_in_a: Any = 1, scale_in_b: Any = 1) -> Any:
    """``wgmma.mma_async.sp`` (2:4-sparse A, sm_90a) with both operands in shared memory through descriptors, as
    `ptx_wgmma_ss`: A holds the compressed half of K, the thread's 32-bit metadata register is `E_data` element
    `E_offset` (the ``mma.sp`` m16n8k32 metadata layout per warp; sparsity selector 0)."""
    from tilelang_cuda.language._emit import expr

    return call("ptx_wgmma_sp_ss", "handle",
                [str(dtype), str(wgmma_prefix), bool(a_is_k_major), bool(b_is_k_major), str(a_dtype_abbrv),
                 str(b_dtype_abbrv), str(accum_dtype_abbrv), A_desc, expr(A_offset), _regs(E_data, E_offset),
                 const_int(sparse_selector, "T.ptx_wgmma_sp_ss sparse_selector"), B_desc, expr(B_offset),
                 _regs(C_data, C_offset), expr(scale_out), expr(scale_in_a), expr(scale_in_b)])


@_dtype_first
def ptx_wgmma_sp_rs(dtype: Any, wgmma_prefix: str, b_is_k_major: Any, a_dtype_abbrv: str, b_dtype_abbrv: str,
                    accum_dtype_abbrv: str, A_buf: Any, A_offset: Any, E_buf: Any, E_offset: Any,
                    sparse_selector: Any, B_desc: Any, B_offset: Any, C_data: Any, C_offset: Any, scale_out: Any,
                    scale_in_a: Any = 1, scale_in_b: Any = 1) -> Any:
    """``wgmma.mma_async.sp`` with the compressed A in registers (`A_buf` from `A_offset`: the dense k16 A
    fragment of the compressed tile) and B in shared memory; otherwise as `ptx_wgmma_sp_ss`."""
    from tilelang_cuda.language._emit import expr

    return call("ptx_wgmma_sp_rs", "handle",
                [str(dtype), str(wgmma_prefix), bool(b_is_k_major), str(a_dtype_abbrv), str(b_dtype_abbrv),
                 str(accum_dtype_abbrv), _regs(A_buf, A_offset), _regs(E_buf, E_offset),
                 const_int(sparse_selector, "T.ptx_wgmma_sp_rs sparse_selector"), B_desc, expr(B_offset),
                 _regs(C_data, C_offset), expr(scale_out), expr(scale_in_a), expr(scale_in_b)])


def _descriptor(x: Any, what: str) -> Any:
    """A 64-bit matrix descriptor operand: a descriptor buffer (``T.alloc_tcgen05_smem_desc``), its ``.data`` or
    its element, or a descriptor value."""
    from tvm import tirx

    from tilelang.ir import region as R

    x = register_buffer(x)
    if R.is_buffer(x):
        return tirx.BufferLoad(x, [tirx.IntImm("int32", 0)] * len(R.buffer_shape(x)))
    if R.is_load(x) or (hasattr(x, "ty") and str(getattr(x.ty, "dtype", "")) == "uint64"):
        return x
    raise TypeError(f"{what}: a descriptor must be a T.alloc_tcgen05_smem_desc buffer, its .data or a uint64 "
                    f"value, got {x!r}")


def _tensor_memory(x: Any, what: str) -> Any:
    """A TMEM operand (``T.alloc_tmem`` buffer, its ``.data`` or an element): its first element, which the lowering
    turns into the tile's TMEM base address."""
    from tvm import tirx

    from tilelang_cuda.language.tensorcore import _tmem

    buf = _tmem(register_buffer(x), what)
    return tirx.BufferLoad(buf, [tirx.IntImm("int32", 0)] * len(buf.shape))


def _flag(x: Any, what: str) -> int:
    return int(bool(const_int(x, what))) if not isinstance(x, bool) else int(x)


@_dtype_first
def ptx_tcgen05_mma_ss(kind_dtype: Any, desc_a: Any, A_offset: Any, desc_b: Any, B_offset: Any, C_ptr: Any,
                       C_offset: Any, desc_val: Any, scale_out: Any, mask0: Any = 0, mask1: Any = 0, mask2: Any = 0,
                       mask3: Any = 0, enable_ws: Any = False, enable_2cta: Any = False, ws: Any = None,
                       warp_specialized: Any = None, variant: Any = None) -> Any:
    """One ``tcgen05.mma`` with A and B in shared memory (sm_100a), issued by one elected lane of the calling warp:
    descriptors advanced by the byte offsets `A_offset` / `B_offset`, the accumulator at TMEM tile `C_ptr` plus
    `C_offset` columns, instruction descriptor `desc_val`; `scale_out` 0 overwrites instead of accumulating.
    `kind_dtype` picks the kind (float16 / bfloat16: f16, tf32 / float32: tf32, int8 / uint8: i8, FP8 / FP6 / FP4:
    f8f6f4). `mask0..3`: the disable-output-lane masks of the one-CTA form; `enable_ws` (or `ws`,
    `warp_specialized`, ``variant="ws"``): the ``.ws`` form; `enable_2cta`: ``cta_group::2``, issued by the even CTA
    of a pair (the masks do not apply to these two forms)."""
    from tilelang_cuda.language._emit import expr

    for alias in (ws, warp_specialized):
        if alias is not None:
            enable_ws = alias
    if variant is not None:
        if str(variant) not in ("ws", "default"):
            raise ValueError(f"T.ptx_tcgen05_mma_ss: variant must be 'ws' or 'default', got {variant!r}")
        enable_ws = str(variant) == "ws"
    ws_flag, pair = _flag(enable_ws, "enable_ws"), _flag(enable_2cta, "enable_2cta")
    if ws_flag and pair:
        raise ValueError("T.ptx_tcgen05_mma_ss: enable_ws and enable_2cta cannot be true at the same time")
    what = "T.ptx_tcgen05_mma_ss"
    return call("ptx_tcgen05_mma_ss", "handle",
                [str(kind_dtype), _descriptor(desc_a, what), expr(A_offset), _descriptor(desc_b, what),
                 expr(B_offset), _tensor_memory(C_ptr, what), expr(C_offset), expr(desc_val), expr(scale_out),
                 expr(mask0), expr(mask1), expr(mask2), expr(mask3), ws_flag, pair])


@_dtype_first
def ptx_tcgen05_mma_ts(kind_dtype: Any, A_ptr: Any, A_offset: Any, desc_b: Any, B_offset: Any, C_ptr: Any,
                       C_offset: Any, desc_val: Any, scale_out: Any, mask0: Any = 0, mask1: Any = 0, mask2: Any = 0,
                       mask3: Any = 0, enable_2cta: Any = False) -> Any:
    """``tcgen05.mma`` with A in TMEM (tile `A_ptr` plus `A_offset` columns) and B in shared memory (sm_100a);
    otherwise as `ptx_tcgen05_mma_ss`."""
    from tilelang_cuda.language._emit import expr

    what = "T.ptx_tcgen05_mma_ts"
    return call("ptx_tcgen05_mma_ts", "handle",
                [str(kind_dtype), _tensor_memory(A_ptr, what), expr(A_offset), _descriptor(desc_b, what),
                 expr(B_offset), _tensor_memory(C_ptr, what), expr(C_offset), expr(desc_val), expr(scale_out),
                 expr(mask0), expr(mask1), expr(mask2), expr(mask3), _flag(enable_2cta, "enable_2cta")])


@_dtype_first
def ptx_tcgen05_mma_blockscaled_ss(kind_dtype: Any, desc_a: Any, A_offset: Any, desc_b: Any, B_offset: Any,
                                   C_ptr: Any, C_offset: Any, desc_val: Any, scale_out: Any, sfa_ptr: Any,
                                   sfa_offset: Any, sfb_ptr: Any, sfb_offset: Any, reserved0: Any = 0,
                                   reserved1: Any = 0, enable_2cta: Any = False) -> Any:
    """``tcgen05.mma ... kind::mxf8f6f4.block_scale`` (sm_100a) on FP8 (e4m3 / e5m2) `kind_dtype` operands, the E8M0
    scale factors at TMEM tiles `sfa_ptr` / `sfb_ptr` plus their column offsets (the instruction descriptor's
    scale-factor ids pick the byte of each word); otherwise as `ptx_tcgen05_mma_ss`."""
    from tilelang_cuda.language._emit import expr

    what = "T.ptx_tcgen05_mma_blockscaled_ss"
    return call("ptx_tcgen05_mma_blockscaled_ss", "handle",
                [str(kind_dtype), _descriptor(desc_a, what), expr(A_offset), _descriptor(desc_b, what),
                 expr(B_offset), _tensor_memory(C_ptr, what), expr(C_offset), expr(desc_val), expr(scale_out),
                 _tensor_memory(sfa_ptr, what), expr(sfa_offset), _tensor_memory(sfb_ptr, what), expr(sfb_offset),
                 expr(reserved0), expr(reserved1), _flag(enable_2cta, "enable_2cta")])


def _adopt_core() -> None:
    from tilelang_cuda.language.api import adopt_core_barriers

    adopt_core_barriers(globals(), ("ptx_arrive_barrier", "ptx_arrive_barrier_expect_tx", "ptx_commit_group",
                                    "ptx_cp_async", "ptx_init_barrier_thread_count", "ptx_wait_group"))


_adopt_core()
