"""Hopper and Blackwell tensor cores in the language: matrix descriptors (``T.alloc_wgmma_desc``,
``T.initialize_wgmma_descriptor``), tensor memory (``T.alloc_tmem``), ``tcgen05`` synchronisation, and the
explicit asynchronous GEMMs ``T.wgmma_gemm`` (no implicit wait), ``T.tcgen05_gemm`` and
``T.tcgen05_gemm_blockscaled`` (completion on an mbarrier; one CTA or a CTA pair, ``use_2cta``).
"""

from __future__ import annotations

from typing import Any

from tilelang.errors import KernelTypeError
from tilelang.ir import GemmWarpPolicy
from tilelang_cuda.language._emit import barrier_load, call, const_int, pointer, public

__all__ = ["alloc_descriptor", "alloc_wgmma_desc", "alloc_tcgen05_smem_desc", "alloc_tcgen05_instruction_desc",
           "alloc_tcgen05_instr_desc", "initialize_wgmma_descriptor", "initialize_tcgen05_descriptor",
           "increase_descriptor_offset", "alloc_tmem", "deallocate_tmem", "tcgen05_before_thread_sync",
           "tcgen05_after_thread_sync", "tcgen05_mma_arrive", "tcgen05_cp_warpx4", "tcgen05_sf_warp_transpose",
           "wgmma_gemm", "tcgen05_gemm", "tcgen05_gemm_blockscaled", "mma_gemm_blockscaled",
           "make_blockscaled_gemm_layout", "tcgen05_gemm_sp", "wgmma_gemm_sp", "wgmma_mma", "tcgen05_mma",
           "tcgen05_mma_blockscaled", "TMEM_SCOPE"]

TMEM_SCOPE = "shared.tmem"
DESCRIPTOR_KINDS = {"wgmma": "uint64", "tcgen05_smem": "uint64", "utcmma": "uint64", "tcgen05_instr": "uint32"}


# ------------------------------------------------------------------------------------------------ descriptors
@public
def alloc_descriptor(kind: str = "wgmma", dtype: Any = "uint64") -> Any:
    """A one-element register holding a matrix descriptor (``"wgmma"``, ``"tcgen05_smem"`` / ``"utcmma"``) or a
    tcgen05 instruction descriptor (``"tcgen05_instr"``)."""
    from tilelang.language import alloc_local

    if kind not in DESCRIPTOR_KINDS:
        raise ValueError(f"alloc_descriptor kind must be one of {', '.join(DESCRIPTOR_KINDS)}, got {kind!r}")
    return alloc_local((1,), dtype)


@public
def alloc_wgmma_desc(dtype: Any = "uint64") -> Any:
    return alloc_descriptor("wgmma", dtype)


@public
def alloc_tcgen05_smem_desc(dtype: Any = "uint64") -> Any:
    return alloc_descriptor("tcgen05_smem", dtype)


@public
def alloc_tcgen05_instruction_desc(dtype: Any = "uint32") -> Any:
    return alloc_descriptor("tcgen05_instr", dtype)


@public
def alloc_tcgen05_instr_desc(dtype: Any = "uint32") -> Any:
    return alloc_tcgen05_instruction_desc(dtype)


def _descriptor(descriptor: Any, what: str) -> Any:
    from tvm import tirx

    from tilelang.ir import region as R

    if R.is_load(descriptor):
        return descriptor
    if R.is_buffer(descriptor):
        shape = R.buffer_shape(descriptor)
        if len(shape) != 1 or const_int(shape[0], "descriptor size") != 1:
            raise ValueError("Descriptor must be a 1D buffer of size 1.")
        return tirx.BufferLoad(descriptor, [tirx.IntImm("int32", 0)])
    raise TypeError(f"{what}: the descriptor must be a buffer from T.alloc_*_desc or its element")


@public
def initialize_wgmma_descriptor(descriptor: Any, start_address: Any, layout_type_: int = 0,
                                leading_byte_offset: int = 0, stride_byte_offset: int = 0) -> Any:
    """Fill a wgmma matrix descriptor: shared `start_address`, swizzle `layout_type_` (0 none, 1 128B, 2 64B,
    3 32B), leading / stride byte offsets."""
    desc = _descriptor(descriptor, "T.initialize_wgmma_descriptor")
    return call("initialize_wgmma_descriptor", "handle",
                [desc, pointer(start_address, "r", "T.initialize_wgmma_descriptor"),
                 const_int(layout_type_, "layout_type_"), int(leading_byte_offset), int(stride_byte_offset)])


@public
def initialize_tcgen05_descriptor(descriptor: Any, start_address: Any, leading_byte_offset: int,
                                  stride_byte_offset: int, base_offset: int = 0, leading_is_absolute: bool = False,
                                  swizzle_mode: int = 0) -> Any:
    """Fill a tcgen05 shared-memory matrix descriptor: start address, leading / stride byte offsets (16-byte
    units), swizzle (0 none, 2 128B, 4 64B, 6 32B), `base_offset` (bits 49-51: the swizzle pattern's phase when
    the start is not on a pattern repeat, ``(address >> 7) & 7``) and `leading_is_absolute` (bit 52: the leading
    field is an absolute address, not an offset)."""
    desc = _descriptor(descriptor, "T.initialize_tcgen05_descriptor")
    base = const_int(base_offset, "base_offset")
    if not 0 <= base <= 7:
        raise ValueError(f"T.initialize_tcgen05_descriptor: base_offset is a 3-bit field (0..7), got {base}")
    return call("initialize_tcgen05_descriptor", "handle",
                [desc, pointer(start_address, "r", "T.initialize_tcgen05_descriptor"), int(leading_byte_offset),
                 int(stride_byte_offset), const_int(swizzle_mode, "swizzle_mode"), base,
                 int(bool(leading_is_absolute))])


@public
def increase_descriptor_offset(descriptor: Any, offset: Any) -> Any:
    """Advance a matrix descriptor's start address by `offset` bytes."""
    return call("increase_descriptor_offset", "handle", [_descriptor(descriptor, "T.increase_descriptor_offset"),
                                                         offset])


# ------------------------------------------------------------------------------------------------ tensor memory
@public
def alloc_tmem(shape: Any, dtype: Any) -> Any:
    """A tile in Blackwell tensor memory (TMEM: 128 datapaths x 512 32-bit columns; sm_100a): allocated by warp
    0 of the block (a power-of-two number of columns, at least 32) and released at the end of the kernel unless
    ``T.deallocate_tmem`` releases it earlier. The last two modes are the matrix (M, N); leading modes repeat it
    along the columns."""
    from tvm import tirx
    from tvm.script.ir_builder import tirx as B

    from tilelang.backend.sdk import normalize_shape, require_build_state
    from tilelang.dtypes import canonical

    st = require_build_state("T.alloc_tmem")
    shape = normalize_shape(shape, "T.alloc_tmem shape")
    if len(shape) < 2:
        raise KernelTypeError("T.alloc_tmem: shape must have at least two modes (M, N)")
    buf = tirx.decl_buffer(shape, canonical(dtype), name="tmem", scope=TMEM_SCOPE, span=st.span)
    B.add_to_parent(tirx.AllocBuffer(buf))
    return st.fresh(buf)


def _tmem(x: Any, what: str) -> Any:
    from tilelang.ir import region as R

    buf = R.buffer_of(x) if (R.is_load(x) or R.is_region(x)) else x
    if not R.is_buffer(buf) or R.buffer_scope(buf) != TMEM_SCOPE:
        raise ValueError(f"{what} expects a {TMEM_SCOPE} buffer from T.alloc_tmem, got {x!r}")
    return buf


@public
def deallocate_tmem(tmem: Any) -> Any:
    """Release `tmem` here (by the warp that allocated it) instead of at the end of the kernel."""
    from tvm import tirx

    buf = _tmem(tmem, "T.deallocate_tmem")
    return call("deallocate_tmem", "handle", [tirx.BufferLoad(buf, [tirx.IntImm("int32", 0)] * len(buf.shape))])


@public
def tcgen05_before_thread_sync() -> Any:
    """``tcgen05.fence::before_thread_sync``: order this thread's tcgen05 operations before a following barrier."""
    return call("tcgen05_before_thread_sync", "handle", [])


@public
def tcgen05_after_thread_sync() -> Any:
    """``tcgen05.fence::after_thread_sync``: order tcgen05 operations after a preceding barrier."""
    return call("tcgen05_after_thread_sync", "handle", [])


@public
def tcgen05_mma_arrive(mbar: Any, arrive_2cta: bool = False) -> Any:
    """``tcgen05.commit``: `mbar` gets an arrival once every tcgen05.mma this thread issued has completed; with
    `arrive_2cta`, the commit of a CTA pair (``cta_group::2``) arrives on both CTAs' copies of `mbar`."""
    return call("tcgen05_mma_arrive", "handle", [barrier_load(mbar, "T.tcgen05_mma_arrive"), int(bool(arrive_2cta))])


def _chunks(smem_src: Any, what: str) -> int:
    from tilelang.ir import region as R

    extents = R.region_extents(smem_src) if R.is_region(smem_src) else R.buffer_shape(R.buffer_of(smem_src))
    total = 1
    for e in extents:
        total *= const_int(e, f"{what} extent")
    if total % 128:
        raise ValueError(f"{what}: packed scale factors come in chunks of 128 words, got {total}")
    return total // 128


@public
def tcgen05_cp_warpx4(smem_src: Any, tmem_dst: Any, tmem_col_offset: Any = 0, *, use_2cta: bool = False) -> Any:
    """Copy packed scale factors (chunks of 128 uint32) from shared memory into TMEM columns (4 per chunk) with
    ``tcgen05.cp.32x128b.warpx4`` (sm_100a); `use_2cta`: the ``cta_group::2`` form, issued by the even CTA of a
    pair, copies each CTA's chunk into its own TMEM."""
    from tvm import tirx

    buf = _tmem(tmem_dst, "T.tcgen05_cp_warpx4")
    return call("tcgen05_cp_warpx4", "handle", [pointer(smem_src, "r", "T.tcgen05_cp_warpx4"),
                                                tirx.BufferLoad(buf, [tirx.IntImm("int32", 0)] * len(buf.shape)),
                                                tmem_col_offset, _chunks(smem_src, "T.tcgen05_cp_warpx4"),
                                                int(bool(use_2cta))])


@public
def tcgen05_sf_warp_transpose(smem_src: Any) -> Any:
    """One warp transposes each 128-word chunk of packed scale factors in shared memory (4x32 -> 32x4 words)."""
    return call("tcgen05_sf_warp_transpose", "handle", [pointer(smem_src, "rw", "T.tcgen05_sf_warp_transpose"),
                                                        _chunks(smem_src, "T.tcgen05_sf_warp_transpose")])


# ------------------------------------------------------------------------------------------------ GEMMs
def _gemm_regions(A: Any, B: Any, C: Any, what: str) -> list[Any]:
    from tilelang.ir import region as R

    out = []
    for name, x in (("A", A), ("B", B), ("C", C)):
        if not (R.is_buffer(x) or R.is_load(x) or R.is_region(x)):
            raise KernelTypeError(f"{what}: {name} must be a buffer or a region, got {x!r}")
        out.append(R.to_region(x))
    return out


@public
def wgmma_gemm(A: Any, B: Any, C: Any, transpose_A: bool = False, transpose_B: bool = False,
               policy: Any = GemmWarpPolicy.Square, clear_accum: bool = False, annotations: dict | None = None) -> Any:
    """``C (+)= op(A) @ op(B)`` on Hopper wgmma (sm_90a) without the wait: the warpgroups commit the batch and go
    on; ``T.wait_wgmma(0)`` (or ``T.warpgroup_wait``) retires it before C is read. Fails on targets or operands
    wgmma cannot serve instead of falling back."""
    from tilelang.backend.sdk import clear_flag

    a, b, c = _gemm_regions(A, B, C, "T.wgmma_gemm")
    return call("wgmma_gemm", "handle", [a, b, c, bool(transpose_A), bool(transpose_B), int(policy),
                                         clear_flag(c, clear_accum, "T.wgmma_gemm")])


@public
def wgmma_gemm_sp(A_sparse: Any, E: Any, B: Any, C: Any, transpose_A: bool = False, transpose_E: bool = False,
                  transpose_B: bool = False, policy: Any = GemmWarpPolicy.Square, clear_accum: bool = False,
                  annotations: dict | None = None) -> Any:
    """`T.gemm_sp` (2:4-sparse A, metadata E) that must lower to Hopper ``wgmma.mma_async.sp`` (sm_90a; fp16 /
    bf16 into fp32, 64 accumulator rows per warpgroup): a target or operands it cannot serve fail to lower instead
    of falling back to ``mma.sp``. Its batch reads A and the metadata from registers (the RS form), so, as for
    `wgmma_gemm`'s RS forms, it keeps its wait; ``T.wait_wgmma`` after it finds nothing in flight."""
    from tilelang.backend.sdk import gemm_sp_args

    return call("wgmma_gemm_sp", "handle", gemm_sp_args(A_sparse, E, B, C, transpose_A, transpose_E, transpose_B,
                                                        policy, clear_accum, "T.wgmma_gemm_sp"))


@public
def tcgen05_gemm(A: Any, B: Any, C: Any, transpose_A: bool = False, transpose_B: bool = False,
                 policy: Any = GemmWarpPolicy.Square, clear_accum: Any = False, *, mbar: Any,
                 use_2cta: bool = False, annotations: dict | None = None) -> Any:
    """``C[tmem] (+)= op(A) @ op(B)`` with A and B in shared memory on Blackwell ``tcgen05.mma`` (sm_100a), issued
    by one thread; `mbar` (if not None) gets an arrival when the MMAs complete (``tcgen05.commit``). No wait.

    `use_2cta`: one ``tcgen05.mma.cta_group::2`` over a CTA pair (cluster dims (2, 1, 1) or (1, 2, 1)), issued by
    the even CTA: each CTA holds its 128 rows of A and of C and half of B's N columns (C's N / 2); the commit
    arrives on `mbar` in both CTAs."""
    a, b, c = _gemm_regions(A, B, C, "T.tcgen05_gemm")
    _tmem(c, "T.tcgen05_gemm C")
    bar = 0 if mbar is None else barrier_load(mbar, "T.tcgen05_gemm mbar")
    from tilelang_cuda.language._emit import expr

    return call("tcgen05_gemm", "handle", [a, b, c, bool(transpose_A), bool(transpose_B), expr(clear_accum), bar,
                                           int(bool(use_2cta))])


@public
def tcgen05_gemm_blockscaled(A: Any, B: Any, C: Any, SFA_tmem: Any, SFB_tmem: Any, transpose_A: bool = False,
                             transpose_B: bool = False, clear_accum: Any = False, wg_wait: int = 0, mbar: Any = None,
                             *, k_start: Any, sf_a_granularity_k: int, sf_b_granularity_k: int,
                             use_2cta: bool = False) -> Any:
    """Block-scaled ``C[tmem] (+)= (A * SFA) @ (B * SFB)`` on ``tcgen05.mma ... kind::mxf8f6f4.block_scale``
    (sm_100a), A and B FP8 tiles in shared memory, SFA / SFB packed E8M0 scale factors in TMEM (four per 32-bit
    word, ``T.tcgen05_cp_warpx4``). `k_start`: this tile's K offset; one scale factor covers
    `sf_*_granularity_k` K elements, so each K32 step reads byte ``(k_start + 32 i) // granularity % 4`` of its
    word. `mbar` (if not None) gets the completion arrival; `use_2cta` as in `tcgen05_gemm`. No wait."""
    from tvm import tirx

    from tilelang_cuda.language._emit import expr

    a, b, c = _gemm_regions(A, B, C, "T.tcgen05_gemm_blockscaled")
    _tmem(c, "T.tcgen05_gemm_blockscaled C")
    if const_int(wg_wait, "wg_wait") not in (0, -1):
        raise ValueError(f"T.tcgen05_gemm_blockscaled: wg_wait must be 0 or -1, got {wg_wait}")
    sfs = []
    for name, sf in (("SFA_tmem", SFA_tmem), ("SFB_tmem", SFB_tmem)):
        buf = _tmem(sf, f"T.tcgen05_gemm_blockscaled {name}")
        sfs.append(tirx.BufferLoad(buf, [tirx.IntImm("int32", 0)] * len(buf.shape)))
    ga, gb = const_int(sf_a_granularity_k, "sf_a_granularity_k"), const_int(sf_b_granularity_k, "sf_b_granularity_k")
    if ga <= 0 or gb <= 0:
        raise ValueError(f"T.tcgen05_gemm_blockscaled: scale-factor granularities must be positive, got {ga}, {gb}")
    bar = 0 if mbar is None else barrier_load(mbar, "T.tcgen05_gemm_blockscaled mbar")
    return call("tcgen05_gemm_blockscaled", "handle",
                [a, b, c, *sfs, bool(transpose_A), bool(transpose_B), expr(clear_accum), bar, expr(k_start), ga, gb,
                 int(bool(use_2cta))])


@public
def mma_gemm_blockscaled(A: Any, B: Any, C: Any, SFA: Any, SFB: Any, transpose_A: bool = False,
                         transpose_B: bool = False, policy: Any = GemmWarpPolicy.Square, clear_accum: bool = False,
                         *, k_start: Any, sf_a_granularity_k: int, sf_b_granularity_k: int,
                         sf_layout: str | None = None) -> None:
    """``C (+)= (A * SFA) @ (B * SFB)^T`` on sm_120a block-scaled ``mma.sync`` (``kind::mxf4nvf4``,
    ``scale_vec::4X``, ue4m3 scales): A ``[M, K]`` and B ``[N, K]`` (``transpose_B=True``) packed e2m1 shared
    tiles, C an fp32 fragment, SFA ``[M, K/64]`` / SFB ``[N, K/64]`` uint32 tiles of four ue4m3 bytes (one per
    `sf_*_granularity_k` = 16 K elements). `k_start`: the K of this tile, for ``sf_layout="rowmajor"`` (the
    default) scale tiles indexed by global word column; ``"blockscaled_chunk_kmajor"`` tiles hold this K chunk's
    words in CUTLASS's K-major order (`tilelang.cuda.intrinsics.macro.mma_sm120_macro_generator`)."""
    from tvm import tirx
    from tvm.script.ir_builder import tirx as B_

    from tilelang.ir import ops
    from tilelang.ir import region as R
    from tilelang_cuda.intrinsics.macro.mma_sm120_macro_generator import SF_LAYOUTS
    from tilelang_cuda.language._emit import expr

    what = "T.mma_gemm_blockscaled"
    a, b, c = _gemm_regions(A, B, C, what)
    sfa, sfb = _gemm_regions(SFA, SFB, C, what)[:2]
    layout = "rowmajor" if sf_layout is None else str(sf_layout)
    if layout not in SF_LAYOUTS:
        raise ValueError(f"Unsupported SM120 scale layout: {layout}; use one of {', '.join(SF_LAYOUTS)}")
    for name, region, scopes in (("A", a, ("shared", "shared.dyn")), ("B", b, ("shared", "shared.dyn")),
                                 ("C", c, ("local.fragment",)), ("SFA", sfa, ("shared", "shared.dyn")),
                                 ("SFB", sfb, ("shared", "shared.dyn"))):
        scope = R.buffer_scope(region.source)
        if scope not in scopes:
            raise KernelTypeError(f"{what}: {name} is {R.describe(region.source)}; it must be in scope "
                                  f"{' or '.join(scopes)}")
    for name, region in (("SFA", sfa), ("SFB", sfb)):
        if R.buffer_dtype(region.source) != "uint32":
            raise KernelTypeError(f"{what}: {name} must hold uint32 scale words, got {R.buffer_dtype(region.source)}")
    ops.register_tile_op("tl.mma_gemm_blockscaled", "sm_120 block-scaled mma.sync GEMM",
                         printer_name="tl.mma_gemm_blockscaled")
    i32 = lambda v: tirx.IntImm("int32", int(v))
    args = [a, b, c, sfa, sfb, i32(bool(transpose_A)), i32(bool(transpose_B)), i32(int(policy)),
            i32(bool(clear_accum)), expr(k_start), i32(const_int(sf_a_granularity_k, "sf_a_granularity_k")),
            i32(const_int(sf_b_granularity_k, "sf_b_granularity_k")), expr(layout)]
    B_.evaluate(ops.tile_call("tl.mma_gemm_blockscaled", args))


@public
def make_blockscaled_gemm_layout(C: Any, A: Any, transpose_A: bool = False) -> Any:
    """The TMEM layout of the accumulator `C` of ``T.tcgen05_gemm_blockscaled`` over the FP8 tile `A` (K from A's
    last mode, or its second-to-last when `transpose_A`): the fragment of the one-CTA, non-``.ws`` instruction the
    GEMM selects for C's ``M x N`` (M=128: row ``i`` on datapath ``i``; M=64: rows in 16-datapath halves). Annotate
    it on C (``T.annotate_layout({C: layout})``) for the ``T.copy`` out of tensor memory."""
    from tilelang.ir import region as R
    from tilelang_cuda.intrinsics.macro.tcgen05_macro_generator import TensorCoreIntrinEmitter

    what = "T.make_blockscaled_gemm_layout"
    c_buf = _tmem(C, f"{what} C")
    a, _, c = _gemm_regions(A, C, C, what)
    c_ext, a_ext = [const_int(r.extent, f"{what} C extent") for r in c.region], list(a.region)
    if len(c_ext) < 2 or len(a_ext) < 2:
        raise ValueError(f"{what}: C and A need two matrix modes, got ranks {len(c_ext)} and {len(a_ext)}")
    m, n = c_ext[-2:]
    k = const_int(a_ext[-2].extent if transpose_A else a_ext[-1].extent, f"{what} K")
    a_dtype, accum = str(R.buffer_dtype(a.source)), str(R.buffer_dtype(c.source))
    emitter = TensorCoreIntrinEmitter(a_dtype=a_dtype, b_dtype=a_dtype, accum_dtype=accum, a_transposed=transpose_A,
                                      warp_row_tiles=m, warp_col_tiles=n, chunk=k)
    try:
        emitter.get_tcgen5_mma_meta(m, n, k, disable_2cta=True, disable_ws=True)
    except ValueError as err:
        raise ValueError(f"{what}: {err}") from None
    return emitter.make_mma_store_layout(c_buf)


@public
def tcgen05_gemm_sp(A_sparse: Any, E: Any, B: Any, C: Any, transpose_A: bool = False, transpose_E: bool = False,
                    transpose_B: bool = False, policy: Any = GemmWarpPolicy.Square, clear_accum: bool = False,
                    annotations: dict | None = None) -> Any:
    """`T.gemm_sp` that must lower to Blackwell sparse ``tcgen05.mma`` with no implicit wait. As in the reference
    TileLang 0.1.15, which has no sparse TCGEN5MMA lowering, the call builds but fails to lower on every target
    (it does not fall back to ``mma.sp`` / ``wgmma.sp``: use ``T.gemm_sp`` or ``T.wgmma_gemm_sp``)."""
    from tilelang.backend.sdk import gemm_sp_args

    return call("tcgen05_gemm_sp", "handle", gemm_sp_args(A_sparse, E, B, C, transpose_A, transpose_E, transpose_B,
                                                          policy, clear_accum, "T.tcgen05_gemm_sp"))



wgmma_mma = wgmma_gemm
tcgen05_mma = tcgen05_gemm
tcgen05_mma_blockscaled = tcgen05_gemm_blockscaled
