"""Blackwell (sm_100) tensor memory and ``tcgen05`` MMAs on the CuTe DSL, through inline PTX.

Tensor memory (TMEM) addresses are 32-bit: lane in the high 16 bits, column in the low 16. MMAs are issued by one
elected thread of the calling warp (``elect.sync``); the accumulator lives in TMEM at `tmem_c`; `desc_val` is the
32-bit instruction descriptor and `scale_out` 0 overwrites the accumulator. ``tcgen05_ld_*`` / ``tcgen05_st_*``
move `N` columns between TMEM (at ``tmem_start_col + tmem_col_offset``) and the thread's registers; the 32dp
forms cover the warp's 32 lanes with two 16-lane accesses.
"""

from __future__ import annotations

import cutlass
import cutlass.cute as cute
from cutlass._mlir.dialects import llvm
from cutlass.base_dsl.typing import Int32
from cutlass.cutlass_dsl import T

from tilelang_cuda.contrib.cutedsl._dsl._asm import asm, smem_addr

_KIND = {"fp16": "f16", "bf16": "f16", "float16": "f16", "bfloat16": "f16", "tf32": "tf32", "float32": "tf32",
         "s8": "i8", "u8": "i8", "int8": "i8", "uint8": "i8", "e4m3": "f8f6f4", "e5m2": "f8f6f4",
         "float8_e4m3": "f8f6f4", "float8_e4m3fn": "f8f6f4", "float8_e5m2": "f8f6f4"}
_MAX_REGS = 32  # registers per tcgen05.ld / st statement (larger N is split into several)


class Tcgen05SmemDescriptor:
    """A tcgen05 shared-memory matrix descriptor in two 32-bit registers; `desc_64` initialises it."""

    def __init__(self, desc_64=None):
        self.desc = cute.make_rmem_tensor(cute.make_layout(2), cutlass.Int32)
        self.desc_i64 = cute.make_tensor(cute.recast_ptr(self.desc.iterator, dtype=cutlass.Int64),
                                         cute.make_layout(1))
        if desc_64 is not None:
            self.desc_i64[0] = cutlass.Int64(desc_64)

    def __add__(self, offset):
        """A copy whose start address is `offset` bytes further."""
        out = Tcgen05SmemDescriptor()
        out.desc[0] = self.desc[0] + (Int32(offset) >> 4)
        out.desc[1] = self.desc[1]
        return out

    def value(self):
        """The descriptor as one 64-bit value."""
        return self.desc_i64[0]


def initialize_tcgen05_descriptor(desc, start_address, leading_byte_offset, stride_byte_offset, base_offset,
                                  leading_abs, swizzle_mode):
    """Fill `desc` for the shared-memory matrix at `start_address`: leading / stride byte offsets in 16-byte
    units (bits 16-29 and 32-45), descriptor version 1 (bits 46-47), `base_offset` (49-51), `leading_abs`
    (bit 52: the leading offset is absolute) and the swizzle `swizzle_mode` (61-63)."""
    address = Int32(smem_addr(start_address)) >> 4
    desc.desc[0] = (address & 0x3FFF) | (Int32(leading_byte_offset) << 16)
    desc.desc[1] = (Int32(stride_byte_offset) | Int32(1 << 14) | (Int32(base_offset & 0x7) << 17)
                    | (Int32(1 if leading_abs else 0) << 20) | (Int32(swizzle_mode & 0x7) << 29))


def _kind(dtype):
    kind = _KIND.get(str(dtype).lower())
    if kind is None:
        raise ValueError(f"tcgen05 mma: unsupported dtype {dtype!r}")
    return kind


_ELECTED = "{{ .reg .pred p, q; elect.sync _|q, 0xffffffff; setp.ne.b32 p, $4, 0; @q {op}; }}"


def _issue(op, operands, constraints):
    asm(None, operands, _ELECTED.format(op=op), constraints)


def tcgen05mma_ss(kind_dtype, desc_a, desc_b, tmem_c, desc_val, scale_out, mask0, mask1, mask2, mask3):
    """``tcgen05.mma.cta_group::1`` with A and B in shared memory (descriptors); the four masks disable output
    lanes."""
    _issue(f"tcgen05.mma.cta_group::1.kind::{_kind(kind_dtype)} [$0], $1, $2, $3, {{$5, $6, $7, $8}}, p",
           [Int32(tmem_c).ir_value(), desc_a.value().ir_value(), desc_b.value().ir_value(),
            Int32(desc_val).ir_value(), Int32(scale_out).ir_value(),
            *(Int32(m).ir_value() for m in (mask0, mask1, mask2, mask3))], "r,l,l,r,r,r,r,r,r")


def tcgen05mma_ws_ss(kind_dtype, desc_a, desc_b, tmem_c, desc_val, scale_out):
    """The weight-stationary ``tcgen05.mma.ws.cta_group::1`` with A and B in shared memory."""
    _issue(f"tcgen05.mma.ws.cta_group::1.kind::{_kind(kind_dtype)} [$0], $1, $2, $3, p, 0",
           [Int32(tmem_c).ir_value(), desc_a.value().ir_value(), desc_b.value().ir_value(),
            Int32(desc_val).ir_value(), Int32(scale_out).ir_value()], "r,l,l,r,r")


def tcgen05mma_ts(kind_dtype, tmem_a, desc_b, tmem_c, desc_val, scale_out, mask0, mask1, mask2, mask3):
    """``tcgen05.mma.cta_group::1`` with A in tensor memory at `tmem_a` and B in shared memory."""
    _issue(f"tcgen05.mma.cta_group::1.kind::{_kind(kind_dtype)} [$0], [$1], $2, $3, {{$5, $6, $7, $8}}, p",
           [Int32(tmem_c).ir_value(), Int32(tmem_a).ir_value(), desc_b.value().ir_value(),
            Int32(desc_val).ir_value(), Int32(scale_out).ir_value(),
            *(Int32(m).ir_value() for m in (mask0, mask1, mask2, mask3))], "r,r,l,r,r,r,r,r,r")


def tcgen05_mma_arrive(mbar_ptr):
    """Arrive on the mbarrier `mbar_ptr` once this thread's earlier tcgen05 MMAs complete
    (``tcgen05.commit ... mbarrier::arrive::one``, one elected thread)."""
    asm(None, [smem_addr(mbar_ptr)],
        "{ .reg .pred q; elect.sync _|q, 0xffffffff; "
        "@q tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [$0]; }", "r")


def tcgen05_before_thread_sync():
    """Order earlier tcgen05 operations before a following thread barrier
    (``tcgen05.fence::before_thread_sync``)."""
    asm(None, [], "tcgen05.fence::before_thread_sync;", "~{memory}")


def tcgen05_after_thread_sync():
    """Order later tcgen05 operations after a preceding thread barrier (``tcgen05.fence::after_thread_sync``)."""
    asm(None, [], "tcgen05.fence::after_thread_sync;", "~{memory}")


def tmem_allocate(tmem_buffer_ptr, num_cols, use_2cta=False):
    """Allocate `num_cols` TMEM columns (a power of two, 32 to 512) for the block (`use_2cta`: for the CTA pair);
    the warp's call writes their address to the shared-memory word `tmem_buffer_ptr` (``tcgen05.alloc``, whole
    warp)."""
    if isinstance(num_cols, int) and (num_cols < 32 or num_cols > 512 or num_cols & (num_cols - 1)):
        raise ValueError(f"tmem_allocate: num_cols must be a power of two in [32, 512], got {num_cols}")
    asm(None, [smem_addr(tmem_buffer_ptr), Int32(num_cols).ir_value()],
        f"tcgen05.alloc.cta_group::{2 if use_2cta else 1}.sync.aligned.shared::cta.b32 [$0], $1;", "r,r")


def tmem_deallocate(tmem_ptr, num_cols, use_2cta=False):
    """Free the `num_cols` TMEM columns whose address is in the shared-memory word `tmem_ptr`
    (``tcgen05.dealloc``, whole warp)."""
    address = cute.make_tensor(cute.recast_ptr(tmem_ptr, dtype=Int32), cute.make_layout(1))[0]
    asm(None, [Int32(address).ir_value(), Int32(num_cols).ir_value()],
        f"tcgen05.dealloc.cta_group::{2 if use_2cta else 1}.sync.aligned.b32 $0, $1;", "r,r")


_BLOCK_SCALED_KIND = {"e4m3": "mxf8f6f4", "float8_e4m3": "mxf8f6f4", "float8_e4m3fn": "mxf8f6f4",
                      "e5m2": "mxf8f6f4", "float8_e5m2": "mxf8f6f4", "e2m1": "mxf4", "float4_e2m1fn": "mxf4",
                      "fp4": "mxf4"}


def tcgen05mma_blockscaled_ss(kind_dtype, desc_a, desc_b, tmem_c, desc_val, scale_out, tmem_sfa, tmem_sfb,
                              use_2cta=False):
    """Block-scaled ``tcgen05.mma ... .block_scale`` (MX fp8 / fp4) with A and B in shared memory and their scale
    factors already in TMEM at `tmem_sfa` / `tmem_sfb` (one elected thread issues it)."""
    kind = _BLOCK_SCALED_KIND.get(str(kind_dtype).lower())
    if kind is None:
        raise ValueError(f"tcgen05mma_blockscaled_ss: unsupported dtype {kind_dtype!r} (fp8 e4m3 / e5m2 or fp4)")
    _issue(f"tcgen05.mma.cta_group::{2 if use_2cta else 1}.kind::{kind}.block_scale [$0], $1, $2, $3, [$5], [$6], p",
           [Int32(tmem_c).ir_value(), desc_a.value().ir_value(), desc_b.value().ir_value(),
            Int32(desc_val).ir_value(), Int32(scale_out).ir_value(), Int32(tmem_sfa).ir_value(),
            Int32(tmem_sfb).ir_value()], "r,l,l,r,r,r,r")


def tcgen05_cp_warpx4(smem_ptr, tmem_ptr, tmem_col_offset, use_2cta=False):
    """Copy a 32 x 128-bit scale-factor tile from shared memory (unswizzled, 128-byte rows) to TMEM at the address
    held in the shared word `tmem_ptr` plus `tmem_col_offset`, replicated to the four warps' lane quarters
    (``tcgen05.cp ... 32x128b.warpx4``, one elected thread)."""
    holder = tmem_ptr if isinstance(tmem_ptr, cute.Tensor) else cute.make_tensor(
        cute.recast_ptr(tmem_ptr, dtype=Int32), cute.make_layout(1))
    taddr = Int32(holder[0]) + Int32(tmem_col_offset)
    low = (Int32(smem_addr(smem_ptr)) >> 4) & 0x3FFF  # start address; leading byte offset 0
    high = Int32((128 >> 4) | (1 << 14))  # stride 128 bytes, descriptor version 1, no swizzle
    asm(None, [taddr.ir_value(), low.ir_value(), high.ir_value()],
        "{ .reg .pred q; .reg .b64 d; mov.b64 d, {$1, $2}; elect.sync _|q, 0xffffffff; "
        f"@q tcgen05.cp.cta_group::{2 if use_2cta else 1}.32x128b.warpx4 [$0], d; }}", "r,r,r")


def tcgen05_sf_warp_transpose(smem_ptr):
    """Transpose, in place and within one warp, 128 scale-factor words in shared memory from 4 rows of 32 to
    32 rows of 4 (the layout ``tcgen05_cp_warpx4`` reads); each lane rotates its quad by ``lane // 8`` to spread
    the shared-memory banks."""
    words = cute.make_tensor(cute.recast_ptr(smem_ptr, dtype=cutlass.Uint32), cute.make_layout(128))
    tidx, _, _ = cute.arch.thread_idx()
    lane = tidx % 32
    quad = lane >> 3
    values = [words[(row ^ quad) * 32 + lane] for row in range(4)]
    cute.arch.sync_warp()
    for row in range(4):
        words[lane * 4 + (row ^ quad)] = values[row]


def _segments(n, regs_per_x):
    """(first x, x count) pieces of `n` x-elements, each a power of two of at most `_MAX_REGS` registers."""
    cap = max(1, _MAX_REGS // regs_per_x)
    first = 0
    while first < n:
        count = 1 << min((n - first).bit_length() - 1, cap.bit_length() - 1)
        yield first, count
        first += count


def _columns(shape):
    """TMEM columns (32 bits each) one x-element of `shape` spans: its per-lane width / 32."""
    return {"32x32b": 1, "16x64b": 2, "16x128b": 4, "16x256b": 8}[shape]


def _ld(shape, regs_per_x, n, address, regs, base):
    for first, count in _segments(n, regs_per_x):
        total = count * regs_per_x
        taddr = (address + Int32(first * _columns(shape))).ir_value()
        outs = ", ".join(f"${i}" for i in range(total))
        result = asm(T.i32() if total == 1 else llvm.StructType.get_literal([T.i32()] * total), [taddr],
                     f"tcgen05.ld.sync.aligned.{shape}.x{count}.b32 {{{outs}}}, [${total}];",
                     ",".join(["=r"] * total + ["r"]))
        for i in range(total):
            regs[base + first * regs_per_x + i] = Int32(result if total == 1 else
                                                        llvm.extractvalue(T.i32(), result, [i]))


def _st(shape, regs_per_x, n, address, regs, base):
    for first, count in _segments(n, regs_per_x):
        total = count * regs_per_x
        taddr = (address + Int32(first * _columns(shape))).ir_value()
        values = [Int32(regs[base + first * regs_per_x + i]).ir_value() for i in range(total)]
        ins = ", ".join(f"${i + 1}" for i in range(total))
        asm(None, [taddr, *values], f"tcgen05.st.sync.aligned.{shape}.x{count}.b32 [$0], {{{ins}}};",
            ",".join(["r"] * (total + 1)))


def _move(load, shape, regs_per_x, halves, N, pack16, tmem_start_col, tmem_col_offset, ptr):
    if pack16:
        raise ValueError("tcgen05 ld/st: 16-bit packing (pack16) is not supported by these helpers")
    if not isinstance(N, int) or N <= 0:
        raise ValueError(f"tcgen05 ld/st: N must be a positive int, got {N!r}")
    per_half = N * regs_per_x
    regs = cute.make_tensor(cute.recast_ptr(ptr, dtype=Int32), cute.make_layout(per_half * halves))
    address = Int32(tmem_start_col) + Int32(tmem_col_offset)
    for half in range(halves):  # the 32dp forms: lanes 0-15, then lanes 16-31 (lane offset 16 << 16)
        where = address + Int32(half * (16 << 16)) if half else address
        (_ld if load else _st)(shape, regs_per_x, N, where, regs, half * per_half)
    asm(None, [], "tcgen05.wait::ld.sync.aligned;" if load else "tcgen05.wait::st.sync.aligned;", "~{memory}")


def _make(load, name, shape, regs_per_x, halves):
    def move(N, pack16, tmem_start_col, tmem_col_offset, ptr):
        _move(load, shape, regs_per_x, halves, N, pack16, tmem_start_col, tmem_col_offset, ptr)

    move.__name__ = move.__qualname__ = name
    what = "Load" if load else "Store"
    lanes = "32 lanes (two 16-lane accesses)" if halves == 2 else "16 lanes"
    move.__doc__ = (f"{what} `N` x-elements of ``tcgen05.{'ld' if load else 'st'}.{shape}`` over {lanes} "
                    f"{'into' if load else 'from'} the registers at `ptr` ({regs_per_x * halves} per element), then "
                    f"wait for {'them' if load else 'the stores'}.")
    return move


for _load in (True, False):
    _op = "ld" if _load else "st"
    for _name, _shape, _regs, _halves in [("32dp32b", "32x32b", 1, 1), ("32dp64b", "16x64b", 1, 2),
                                          ("32dp128b", "16x128b", 2, 2), ("32dp256b", "16x256b", 4, 2),
                                          ("16dp64b", "16x64b", 1, 1), ("16dp128b", "16x128b", 2, 1),
                                          ("16dp256b", "16x256b", 4, 1)]:
        globals()[f"tcgen05_{_op}_{_name}Nx"] = _make(_load, f"tcgen05_{_op}_{_name}Nx", _shape, _regs, _halves)
