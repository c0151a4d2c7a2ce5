"""A lock-step SIMT emulator of the final CUDA device TIR, for checking generated kernels without a GPU.

`emulate(artifact, *tensors)` runs every device PrimFunc of a lowered CUDA artifact on torch CPU tensors, in
place, like the real launch. Blocks run one after another; inside a block every thread runs in lock step:
expressions evaluate vectorised over the block's threads (numpy arrays of shape ``(T,)``; vectors are
``(lanes, T)``), thread-varying ``if`` runs masked, loop bounds must be uniform.

Memory is bytes: global = the tensors' storage, shared = one byte array per allocation (typed views at byte
offsets, so the merged ``buf_dyn_shmem`` pool and its casts work), local = ``(T, nbytes)`` per-thread bytes.
The plugin's inline-PTX helpers are modelled from the PTX ISA text (fragment layouts of ldmatrix, Volta's
mma.m8n8k4 (per quad-pair; fp16 / fp32 accumulators) and mma.m16n8k16 / m16n8k8 / m16n8k32 (s8, and e4m3 / e5m2
in any mix through the generated ``tl_mma_sync_*`` helpers), sparse mma.sp m16n8k32 / m16n8k64 and their
metadata; wgmma m64nNk16 and wgmma.sp m64nNk32 register fragments, m64nNk32 fp8 SS operands, matrix
descriptors and the canonical swizzled shared layouts), not from our lowering. Checks that make a broken kernel
fail loudly:

- out-of-bounds loads/stores of active threads raise `EmulationError`;
- ``__syncthreads`` under divergence raises, as does a named barrier (``bar.sync id, count``) reached by other than
  ``count`` threads in whole warps;
- shared-memory races between two barriers (a thread reads/writes bytes another thread wrote, or writes bytes
  another thread read, in the same barrier interval) raise;
- cp.async is deferred: copies land at the ``cp.async.wait_group`` that retires their group, and touching
  their destination bytes before that raises (a missing or too-weak wait is caught);
- reading shared bytes no thread of the block wrote, or local bytes the thread never wrote, raises;
- a shared buffer reading bytes of the pool that were last written through another buffer raises (two tiles
  overlapping in the merged ``buf_dyn_shmem`` while both are live).

sm_90a (per warpgroup = 4 consecutive warps, all 128 threads or none):

- wgmma is asynchronous: an issued wgmma captures its descriptors (uniform over the warpgroup) and runs when the
  ``wgmma.wait_group`` that retires its commit group executes; its shared operand bytes count as read until
  then, so any write to them (st.shared, cp.async, TMA) in between raises, as do generic accesses to its
  accumulator registers (and writes to its A registers) before the wait;
- a wgmma whose accumulator or A registers were written since the warpgroup's last ``wgmma.fence`` raises;
- its shared operands must have been made visible to the async proxy: every generic write (st.shared, cp.async)
  needs a ``fence.proxy.async`` by the writer, or by a reader after a barrier that orders the write (the sm_90
  ``tl_cp_async_wait`` helper ends with one); ``check_proxy=False`` skips this check;
- TMA (``tl_tma_load_2d`` / ``tl_tma_wait``): the box of the kernel tensor (row-major, out-of-bounds elements
  zero) lands when a thread waits on its mbarrier; each thread's phase parity is followed (a wait on a phase no
  copy completes, or a second arrival before the phase completes, raises).

Shared allocations get 1024-byte aligned addresses in an emulated shared window (descriptor start addresses
and the swizzle act on them, like the 1024-byte aligned dynamic pool of a wgmma kernel).

``patch={"helper_name": fn(emu, args)}`` replaces a helper (or ``tvm_storage_sync``) -- tests use it to break
kernels on purpose; ``emu.call_default(name, args)`` runs the built-in model from a patch.

Anything not modelled raises NotImplementedError naming the construct.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from cuda_emulator_dialect import DialectHelpers
from tvm import tirx

__all__ = ["EmulationError", "Emulator", "emulate", "ldmatrix_x4", "mma_sp", "mma_sync", "shfl_xor", "warp_butterfly"]


class EmulationError(RuntimeError):
    """The kernel did something a GPU would not do correctly (race, out-of-bounds, divergent barrier...)."""


# ------------------------------------------------------------------------------------------- dtypes
_NP = {"float16": np.float16, "float32": np.float32, "float64": np.float64, "int8": np.int8, "uint8": np.uint8,
       "int16": np.int16, "uint16": np.uint16, "int32": np.int32, "uint32": np.uint32, "int64": np.int64,
       "uint64": np.uint64, "bool": np.bool_, "bfloat16": np.float32}
_STORE_NP = dict(_NP, bfloat16=np.uint16, bool=np.uint8)
# fp8 tiles are moved as their bit patterns (loads, stores, copies); only the mma.sp model reads their values
_FP8 = ("float8_e4m3", "float8_e4m3fn", "float8_e5m2")
_NP.update(dict.fromkeys(_FP8, np.uint8))
_STORE_NP.update(dict.fromkeys(_FP8, np.uint8))
SUB_BYTE = {"float4_e2m1fn": 4, "int4": 4, "uint4": 4}  # packed two a byte; only addressed, never loaded here


def _named_ordered(flag: np.ndarray, lo: np.ndarray, hi: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Whether a named barrier ordered the recorded access of bytes `b` before threads `t` (see `Mem`)."""
    return flag[b] & (lo[b] <= t) & (t <= hi[b])


def _elem_bytes(dt: Any, idx: Any) -> Any:
    """Byte offset of element `idx` of type `dt` (half a byte per element of a 4-bit type)."""
    if dt.base in SUB_BYTE:
        return np.asarray(idx, np.int64) * SUB_BYTE[dt.base] // 8
    return np.asarray(idx, np.int64) * np.dtype(dt.store_np).itemsize


@dataclass(frozen=True)
class DType:
    base: str
    lanes: int

    @property
    def np(self) -> Any:
        """The numpy dtype values of this type are computed in (bfloat16 computes in float32)."""
        if self.base not in _NP:
            raise NotImplementedError(f"dtype {self.base}")
        return _NP[self.base]

    @property
    def store_np(self) -> Any:
        """The numpy dtype of one element in memory (bfloat16 is its uint16 bit pattern)."""
        if self.base not in _STORE_NP:
            raise NotImplementedError(f"dtype {self.base} in memory")
        return _STORE_NP[self.base]


def _vector_elements(dt: DType, idx: Callable, off0: int) -> tuple[DType, Callable, int]:
    """A buffer of vector elements (``float4 a[2]``, StorageRewrite's packing of a register array) accessed
    element-wise: ``(scalar dtype, lane indices (lanes, T), offset in scalars)``; other buffers unchanged."""
    if dt.lanes == 1:
        return dt, idx, off0
    lanes = np.arange(dt.lanes, dtype=np.int64)

    def run(emu: Any) -> Any:
        i = np.asarray(emu._full(idx(emu)))
        if i.ndim > 1:
            raise NotImplementedError("a vector index into a buffer of vector elements")
        return i * dt.lanes + lanes.reshape((dt.lanes,) + (1,) * i.ndim)
    return DType(dt.base, 1), run, off0 * dt.lanes


def _parse_dtype(s: str) -> DType:
    if s.startswith(("handle", "T.handle")):  # a pointer (its pointee may print as ``float16x8``)
        return DType("handle", 1)
    base, _, lanes = s.partition("x")
    return DType(base, int(lanes) if lanes else 1)


def dtype_of(e: Any) -> DType:
    return _parse_dtype(str(e.ty))


def bf16_round(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to bfloat16 precision (round to nearest even), kept as float32."""
    return bf16_decode(bf16_encode(x))


def bf16_encode(x: np.ndarray) -> np.ndarray:
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_decode(b: np.ndarray) -> np.ndarray:
    return (np.asarray(b).astype(np.uint32) << 16).view(np.float32)


def _cast(v: Any, dt: DType) -> np.ndarray:
    v = np.asarray(v)
    if dt.base == "bfloat16":
        return bf16_round(v.astype(np.float32))
    if dt.base == "bool":
        return v.astype(np.bool_)
    return v.astype(dt.np)


def _key(v: Any) -> int:
    """A stable identity for a Var / buffer Var (python wrappers differ between visits)."""
    return int(v.id_)


def _name(v: Any) -> str:
    return str(getattr(v, "name_hint", None) or v.name)


def _buffer_of(load: Any) -> Any:
    """The buffer a BufferLoad / TensorLoad reads (TensorLoad's source is the buffer itself)."""
    return load.buffer if hasattr(load, "buffer") else load.source


# ------------------------------------------------------------------------------------------- PTX models
_LANE = np.arange(32)
_G, _TG = _LANE >> 2, _LANE & 3


def _frag(rows: list[np.ndarray], cols: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    return np.stack(rows, 1), np.stack(cols, 1)  # (32 lanes, n elements)


# PTX ISA 9.7.14.5.8 "Matrix Fragments for mma.m16n8k16 with floating point type" (f16/bf16)
_F16_A = _frag([_G + 8 * ((i >> 1) & 1) for i in range(8)], [_TG * 2 + (i & 1) + 8 * (i >= 4) for i in range(8)])
_F16_B = _frag([_TG * 2 + (i & 1) + 8 * (i >= 2) for i in range(4)], [_G for _ in range(4)])
_ACC_C = _frag([_G + 8 * (i >= 2) for i in range(4)], [_TG * 2 + (i & 1) for i in range(4)])
# "Matrix Fragments for mma.m16n8k8" (.tf32): a0,a2 rows g / a1,a3 rows g+8; cols t / t+4; b rows t, t+4
_TF32_A = _frag([_G + 8 * (i & 1) for i in range(4)], [_TG + 4 * (i >= 2) for i in range(4)])
_TF32_B = _frag([_TG + 4 * i for i in range(2)], [_G for _ in range(2)])
# "Matrix Fragments for mma.m16n8k32" (.s8): a0..a15 in four .b32 registers, b0..b7 in two
_S8_A = _frag([_G + 8 * ((i >> 2) & 1) for i in range(16)], [_TG * 4 + (i & 3) + 16 * (i >= 8) for i in range(16)])
_S8_B = _frag([_TG * 4 + (i & 3) + 16 * (i >= 4) for i in range(8)], [_G for _ in range(8)])

MMA_SHAPES = {  # kind: (K, A layout, B layout)
    "f16": (16, _F16_A, _F16_B), "bf16": (16, _F16_A, _F16_B), "tf32": (8, _TF32_A, _TF32_B),
    "s8": (32, _S8_A, _S8_B),
}
# fp8 operands: the m16n8k32 fragments of .s8 hold .e4m3 / .e5m2 too ("Matrix Fragments for mma.m16n8k32");
# an fp8 kind names A's type then B's (``e4m3e5m2``)
FP8 = ("e4m3", "e5m2")
for _a, _b in itertools.product(FP8, FP8):
    MMA_SHAPES[_a + _b] = (32, _S8_A, _S8_B)


def fp8_decode(raw: np.ndarray, kind: str) -> np.ndarray:
    """fp8 bit patterns (uint8) -> float64: e4m3 (bias 7, no infinities, S.1111.111 is NaN) or e5m2 (IEEE-like,
    bias 15)."""
    raw = np.asarray(raw, np.uint8).astype(np.int64)
    man_bits, bias = (3, 7) if kind == "e4m3" else (2, 15)
    sign = np.where(raw & 0x80, -1.0, 1.0)
    exp = (raw & 0x7F) >> man_bits
    man = raw & ((1 << man_bits) - 1)
    val = np.where(exp == 0, man / (1 << man_bits) * 2.0 ** (1 - bias),
                   (1 + man / (1 << man_bits)) * 2.0 ** (exp - bias))
    if kind == "e4m3":
        val = np.where((raw & 0x7F) == 0x7F, np.nan, val)
    else:
        top = exp == 0x1F
        val = np.where(top & (man == 0), np.inf, np.where(top, np.nan, val))
    return sign * val


def _unpack(regs: np.ndarray, kind: str) -> np.ndarray:
    """``(..., nregs)`` uint32 registers -> ``(..., nelems)`` element values (low bits first)."""
    regs = np.ascontiguousarray(regs, dtype=np.uint32)
    if kind == "f16":
        return regs.view(np.float16).astype(np.float64)
    if kind == "bf16":
        return bf16_decode(regs.view(np.uint16)).astype(np.float64)
    if kind == "tf32":  # tf32 operands: the fp32 pattern with the low 13 mantissa bits ignored
        return (regs & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    if kind == "s8":
        return regs.view(np.int8).astype(np.int64)
    if kind in FP8:
        return fp8_decode(regs.view(np.uint8), kind)
    raise NotImplementedError(f"mma operand kind {kind}")


# PTX ISA "Matrix Fragments for mma.m16n8k64" (.e2m1, packed 8 a register): a_i of register r = i // 8: row g
# (+8 for r = 1, 3), column 8 t + i % 8 (+32 for r = 2, 3); b_i of register r: row (k) 8 t + i % 8 (+32 for r = 1),
# column g
_E2M1_A = _frag([_G + 8 * ((i // 8) & 1) for i in range(32)], [_TG * 8 + i % 8 + 32 * (i >= 16) for i in range(32)])
_E2M1_B = _frag([_TG * 8 + i % 8 + 32 * (i >= 8) for i in range(16)], [_G for _ in range(16)])
_E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0])


def _e2m1(regs: np.ndarray) -> np.ndarray:
    """``(..., n)`` uint32 registers -> ``(..., 8 n)`` e2m1 values (lowest nibble first)."""
    nib = (np.asarray(regs, np.uint32)[..., None] >> (4 * np.arange(8, dtype=np.uint32))) & 15
    return _E2M1[nib.reshape(*regs.shape[:-1], -1)]


def _ue4m3(byte: np.ndarray) -> np.ndarray:
    e, m = (byte >> 3) & 15, byte & 7
    return np.where(e == 0, m / 8.0 * 2.0 ** -6, (1 + m / 8.0) * 2.0 ** (e.astype(np.float64) - 7))


def mma_block_scale_mxf4nvf4(a: np.ndarray, b: np.ndarray, c: np.ndarray, sfa: np.ndarray, sfb: np.ndarray,
                             tid_a: np.ndarray, tid_b: np.ndarray) -> np.ndarray:
    """``mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3``
    per warp (PTX ISA, "Warp-level matrix multiply with block scaling"): byte j of a scale word scales K elements
    16 j .. 16 j + 15. A's scales: within each quad, thread-id-a picks the lane pair (2 tid_a, 2 tid_a + 1); the
    pair's first lane holds row g's word, the second row g + 8's. B's: lane tid_b of quad g holds column g's word."""
    T = a.shape[0]
    W = T // 32
    A = np.zeros((W, 16, 64))
    B = np.zeros((W, 64, 8))
    A[:, _E2M1_A[0], _E2M1_A[1]] = _e2m1(a).reshape(W, 32, -1)
    B[:, _E2M1_B[0], _E2M1_B[1]] = _e2m1(b).reshape(W, 32, -1)
    sfa, sfb = np.asarray(sfa, np.uint32).reshape(W, 32), np.asarray(sfb, np.uint32).reshape(W, 32)
    ta, tb = int(np.asarray(tid_a).reshape(-1)[0]), int(np.asarray(tid_b).reshape(-1)[0])
    groups = np.arange(4, dtype=np.uint32)
    rows = np.arange(16)
    lane_a = 4 * (rows % 8) + 2 * ta + rows // 8
    sa = _ue4m3((sfa[:, lane_a, None] >> (8 * groups)) & 255)  # (W, 16 rows, 4 groups)
    sb = _ue4m3((sfb[:, 4 * np.arange(8) + tb, None] >> (8 * groups)) & 255)  # (W, 8 cols, 4 groups)
    A = A * np.repeat(sa, 16, axis=2)
    B = B * np.repeat(sb, 16, axis=2).transpose(0, 2, 1)
    C = np.zeros((W, 16, 8))
    C[:, _ACC_C[0], _ACC_C[1]] = np.asarray(c, np.float64).reshape(W, 32, 4)
    D = A @ B + C
    return D[:, _ACC_C[0], _ACC_C[1]].reshape(T, 4).astype(np.float32)


# PTX ISA "Matrix Fragments for mma.m8n8k4" (Volta, .f16 operands): the warp is four quad-pairs, quad-pair q =
# lanes 4q..4q+3 and 4q+16..4q+19, each an independent m8n8k4; h = 1 for lanes 16..31 (the second quad).
# A .row: a_i at row lane % 4 + 4h, col i; A .col: row i + 4h, col lane % 4.
# B .row: b_i at row lane % 4, col i + 4h; B .col: row i, col lane % 4 + 4h.
# C/D .f16 (four .f16x2 registers): c_i at row lane % 4 + 4h, col i.
# C/D .f32: c_i at row (lane & 1) + (i & 2) + 4h, col (i & 4) + (lane & 2) + (i & 1).
_H = _LANE >> 4
M8N8K4_A = {"row": _frag([_TG + 4 * _H] * 4, [np.full(32, i) for i in range(4)]),
            "col": _frag([i + 4 * _H for i in range(4)], [_TG] * 4)}
M8N8K4_B = {"row": _frag([_TG] * 4, [i + 4 * _H for i in range(4)]),
            "col": _frag([np.full(32, i) for i in range(4)], [_TG + 4 * _H for _ in range(4)])}
M8N8K4_C = {"f16": _frag([_TG + 4 * _H] * 8, [np.full(32, i) for i in range(8)]),
            "f32": _frag([(_LANE & 1) + (i & 2) + 4 * _H for i in range(8)],
                         [(i & 4) + (_LANE & 2) + (i & 1) for i in range(8)])}
M8N8K4_QUAD_PAIRS = [np.r_[4 * q:4 * q + 4, 4 * q + 16:4 * q + 20] for q in range(4)]


def mma_m8n8k4(a: np.ndarray, b: np.ndarray, c: np.ndarray, c_type: str = "f32", a_layout: str = "row",
               b_layout: str = "col") -> np.ndarray:
    """One ``mma.sync.aligned.m8n8k4.<a_layout>.<b_layout>.<c_type>.f16.f16.<c_type>`` per warp: ``a`` / ``b``
    (T, 4) fp16 values, ``c`` (T, 8) accumulators (fp32 or fp16); returns D = A @ B + C per quad-pair in the same
    fragment layout (fp16 D rounded from the exact sum)."""
    (ra, ca), (rb, cb), (rc, cc) = M8N8K4_A[a_layout], M8N8K4_B[b_layout], M8N8K4_C[c_type]
    T = a.shape[0]
    av = np.asarray(a, np.float64).reshape(T // 32, 32, 4)
    bv = np.asarray(b, np.float64).reshape(T // 32, 32, 4)
    cv = np.asarray(c, np.float64).reshape(T // 32, 32, 8)
    out = np.zeros_like(cv)
    for lanes in M8N8K4_QUAD_PAIRS:
        A = np.zeros((T // 32, 8, 4))
        B = np.zeros((T // 32, 4, 8))
        Cm = np.zeros((T // 32, 8, 8))
        A[:, ra[lanes], ca[lanes]] = av[:, lanes]
        B[:, rb[lanes], cb[lanes]] = bv[:, lanes]
        Cm[:, rc[lanes], cc[lanes]] = cv[:, lanes]
        D = A @ B + Cm
        out[:, lanes] = D[:, rc[lanes], cc[lanes]]
    return out.reshape(T, 8).astype(np.float32 if c_type == "f32" else np.float16)


def mma_sync(kind: str, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """One ``mma.sync.aligned.m16n8kK.row.col`` per warp: ``a`` (T, 4) / ``b`` (T, 2) uint32 registers,
    ``c`` (T, 4) fp32 (int32 for s8) accumulators; returns D = A @ B + C in the same fragment layout."""
    K, (ra, ca), (rb, cb) = MMA_SHAPES[kind]
    T = a.shape[0]
    W = T // 32
    ka, kb = (kind[:4], kind[4:]) if kind[:4] in FP8 else (kind, kind)
    av = _unpack(a, ka).reshape(W, 32, -1)
    bv = _unpack(b, kb).reshape(W, 32, -1)
    A = np.zeros((W, 16, K), av.dtype)
    B = np.zeros((W, K, 8), bv.dtype)
    A[:, ra, ca] = av
    B[:, rb, cb] = bv
    acc_t = np.int32 if kind == "s8" else np.float32
    C = np.zeros((W, 16, 8), np.float64 if acc_t is np.float32 else np.int64)
    C[:, _ACC_C[0], _ACC_C[1]] = np.asarray(c).reshape(W, 32, 4)
    D = A @ B + C
    if kind == "s8":
        D = ((D + 2**31) % 2**32 - 2**31)  # s32 wrap-around
    return D[:, _ACC_C[0], _ACC_C[1]].reshape(T, 4).astype(acc_t)


# PTX ISA 9.7.14.6 "Sparse Matrix Multiply-Accumulate" (mma.sp::ordered_metadata, sparsity selector 0). A is the
# compressed 16 x K/2 tile in the dense m16n8k(K/2) A layout; B (K x 8, four .b32 registers): m16n8k32
# .f16/.bf16: b0..b7 at rows 2t + (i & 1) + 8 (i >> 1); m16n8k64 .s8: b0..b15 at rows 4t + (i & 3) + 16 (i >> 2).
# Metadata (one .b32 per lane): 16-bit types -- lanes with t in {0, 1} give rows g (bits 15:0) and g + 8 (31:16),
# dense columns 16t .. 16t + 15; 8-bit types -- every lane gives row g + 8 (t % 2), columns 32 (t // 2) .. + 31.
# Each 4-bit chunk j covers dense columns 4j .. 4j + 3 of its range: bits 1:0 / 3:2 index the two kept values,
# in increasing order.
_F16_SP_B = _frag([_TG * 2 + (i & 1) + 8 * (i >> 1) for i in range(8)], [_G for _ in range(8)])
_S8_SP_B = _frag([_TG * 4 + (i & 3) + 16 * (i >> 2) for i in range(16)], [_G for _ in range(16)])
MMA_SP_SHAPES = {"f16": (32, _F16_A, _F16_SP_B), "bf16": (32, _F16_A, _F16_SP_B), "s8": (64, _S8_A, _S8_SP_B),
                 "e4m3": (64, _S8_A, _S8_SP_B), "e5m2": (64, _S8_A, _S8_SP_B)}


def sparse_metadata(kind: str, e: np.ndarray) -> np.ndarray:
    """The (W, 16, K/4, 2) kept indices of a warp's metadata registers `e` ((T,) uint32)."""
    K = MMA_SP_SHAPES[kind][0]
    e = np.asarray(e, np.uint64).reshape(-1, 32)
    W = e.shape[0]
    out = np.full((W, 16, K // 4, 2), -1, np.int64)
    for lane in range(32):
        g, t = lane >> 2, lane & 3
        if K == 64:  # 8-bit types
            spans = [(g + 8 * (t % 2), 32 * (t // 2), 0)]
        elif t < 2:
            spans = [(g, 16 * t, 0), (g + 8, 16 * t, 16)]
        else:
            continue
        for row, col0, bit0 in spans:
            for j in range((32 if K == 64 else 16) // 4):
                chunk = (e[:, lane] >> np.uint64(bit0 + 4 * j)) & np.uint64(15)
                out[:, row, col0 // 4 + j, 0] = (chunk & np.uint64(3)).astype(np.int64)
                out[:, row, col0 // 4 + j, 1] = (chunk >> np.uint64(2)).astype(np.int64)
    return out


def mma_sp(kind: str, a: np.ndarray, b: np.ndarray, e: np.ndarray, c: np.ndarray) -> np.ndarray:
    """One ``mma.sp::ordered_metadata.sync.aligned.m16n8k{32,64}.row.col`` per warp: ``a`` (T, 4) / ``b`` (T, 4)
    uint32 registers, ``e`` (T,) metadata, ``c`` (T, 4) accumulators; returns D = decompress(A) @ B + C. Metadata
    whose two indices of a group are not increasing raises `EmulationError`."""
    K, (ra, ca), (rb, cb) = MMA_SP_SHAPES[kind]
    T = a.shape[0]
    W = T // 32
    av = _unpack(a, kind).reshape(W, 32, -1)
    bv = _unpack(b, kind).reshape(W, 32, -1)
    compressed = np.zeros((W, 16, K // 2), av.dtype)
    compressed[:, ra, ca] = av
    idx = sparse_metadata(kind, e)
    if (idx[..., 0] >= idx[..., 1]).any():
        raise EmulationError("mma.sp::ordered_metadata: a group's two indices are not increasing")
    A = np.zeros((W, 16, K), av.dtype)
    w, r, j = np.meshgrid(np.arange(W), np.arange(16), np.arange(K // 4), indexing="ij")
    for h in (0, 1):
        A[w, r, 4 * j + idx[..., h]] = compressed[w, r, 2 * j + h]
    B = np.zeros((W, K, 8), bv.dtype)
    B[:, rb, cb] = bv
    acc_t = np.int32 if kind == "s8" else np.float32
    C = np.zeros((W, 16, 8), np.float64 if acc_t is np.float32 else np.int64)
    C[:, _ACC_C[0], _ACC_C[1]] = np.asarray(c).reshape(W, 32, 4)
    D = A @ B + C
    if kind == "s8":
        D = ((D + 2**31) % 2**32 - 2**31)
    return D[:, _ACC_C[0], _ACC_C[1]].reshape(T, 4).astype(acc_t)


def ldmatrix_x4(rows: np.ndarray, trans: bool) -> np.ndarray:
    """``ldmatrix.sync.aligned.m8n8.x4[.trans].b16``: ``rows`` (T, 8) uint16 = the 16-byte row each lane
    addresses (lanes 8j..8j+7 give rows 0..7 of matrix j); returns (T, 4) uint32, register j of lane l
    holding matrix j's elements (l/4, 2(l%4)), (l/4, 2(l%4)+1) -- or, with .trans, (2(l%4), l/4),
    (2(l%4)+1, l/4) -- low half first."""
    T = rows.shape[0]
    M = np.asarray(rows, np.uint16).reshape(T // 32, 4, 8, 8)  # warp, matrix, row, col
    j = np.arange(4)[None, :, None]
    r = (_LANE >> 2)[:, None, None]
    c = (2 * (_LANE & 3))[:, None, None] + np.arange(2)[None, None, :]
    halves = M[:, j, c, r] if trans else M[:, j, r, c]  # (W, 32, 4, 2)
    return np.ascontiguousarray(halves).view(np.uint32).reshape(T, 4)


def shfl_xor(v: np.ndarray, lane_mask: int) -> np.ndarray:
    """``__shfl_xor_sync(0xffffffff, v, lane_mask)`` over (T,) values: lane l reads lane l ^ lane_mask of its
    warp."""
    tid = np.arange(v.shape[0])
    return v[(tid & ~31) | ((tid & 31) ^ lane_mask)]


def warp_butterfly(v: np.ndarray, width: int, op: Callable) -> np.ndarray:
    """The plugin's tl_warp_sum/max/min: ``for m = width/2 .. 1: v = op(v, shfl_xor(v, m))`` in fp32 (max / min
    keep NaN: ``np.maximum`` / ``np.minimum``)."""
    v = np.asarray(v, np.float32)
    m = width >> 1
    while m > 0:
        v = op(v, shfl_xor(v, m)).astype(np.float32)
        m >>= 1
    return v


# ------------------------------------------------------------------------------------------- wgmma (sm_90a)
# PTX ISA 9.7.15.5.1 "Register Fragments and Shared Memory Matrix Layouts". A warpgroup is 4 consecutive warps;
# in the m64nNk16 fragments warp w of the warpgroup holds rows 16w..16w+15 with the m16n8k16 per-warp layouts:
# A (four .f16x2 registers) as mma.m16n8k16's A, accumulator D (N/2 .f32) as the m16n8 C atom repeated over the
# N/8 column blocks (d[4j..4j+3] = columns 8j..8j+7).
_WG_LANE = np.arange(128)
_WG_ROW0 = 16 * (_WG_LANE >> 5)


def wgmma_a_layout() -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) of a0..a7 per warpgroup thread: arrays of shape (128, 8) into the 64 x 16 A tile."""
    lane = _WG_LANE & 31
    return _WG_ROW0[:, None] + _F16_A[0][lane], _F16_A[1][lane]


def wgmma_acc_layout(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) of d0..d(n/2-1) per warpgroup thread: arrays of shape (128, n/2) into the 64 x n tile."""
    lane = _WG_LANE & 31
    i = np.arange(n // 2)
    rows = _WG_ROW0[:, None] + _ACC_C[0][lane][:, i & 3]
    cols = 8 * (i >> 2)[None, :] + _ACC_C[1][lane][:, i & 3]
    return rows, cols


_SWIZZLE_BYTES = {0: 0, 1: 128, 2: 64, 3: 32}  # descriptor bits 62-63


@dataclass(frozen=True)
class Descriptor:
    """A decoded wgmma matrix descriptor ("Matrix Descriptor Format"): byte addresses / offsets."""

    start: int
    lbo: int
    sbo: int
    base_offset: int
    mode: int

    @classmethod
    def decode(cls, d: int) -> Descriptor:
        d = int(d)
        return cls((d & 0x3FFF) << 4, ((d >> 16) & 0x3FFF) << 4, ((d >> 32) & 0x3FFF) << 4, (d >> 49) & 7,
                   (d >> 62) & 3)


def encode_descriptor(addr: Any, lbo: Any, sbo: Any, mode: int = 0) -> np.ndarray:
    """``matrix-descriptor-encode`` of the fields (base offset 0), vectorised over threads."""
    enc = [(np.asarray(x).astype(np.uint64) & np.uint64(0x3FFFF)) >> np.uint64(4) for x in (addr, lbo, sbo)]
    return enc[0] | (enc[1] << np.uint64(16)) | (enc[2] << np.uint64(32)) | (np.uint64(mode & 3) << np.uint64(62))


def canonical_addresses(desc: Descriptor, k_major: bool, mn: int, k: int = 16, elem: int = 2) -> np.ndarray:
    """Shared byte address of every element (mn, k) of a 16-bit operand (shape (mn, k)) read through `desc`:
    the canonical CuTe layouts of the PTX ISA ("Canonical Layouts", T = 8 elements = 16 bytes), then the
    Swizzle<B, 4, 3> of the mode applied to the byte address."""
    if desc.base_offset:
        raise NotImplementedError("wgmma descriptor with a non-zero matrix base offset")
    width = _SWIZZLE_BYTES[desc.mode]
    m = np.arange(mn)[:, None]
    kk = np.arange(k)[None, :]
    if k_major:
        if width:   # ((8, m), (T, 2k)) : ((W/2 elements, SBO), (1, T))
            off = (m % 8) * width + (m // 8) * desc.sbo + kk * elem
        else:       # ((8, m), (T, 2k)) : ((T, SBO), (1, LBO))
            off = (m % 8) * 16 + (m // 8) * desc.sbo + (kk % 8) * elem + (kk // 8) * desc.lbo
    elif width:     # ((T, W/16, m), (8, k)) : ((1, T, LBO), (W/2 elements, SBO))
        row = width // elem
        off = (m % row) * elem + (m // row) * desc.lbo + (kk % 8) * width + (kk // 8) * desc.sbo
    else:           # ((T, 1, m), (8, k)) : ((1, T, SBO), (T, LBO))
        off = (m % 8) * elem + (m // 8) * desc.sbo + (kk % 8) * 16 + (kk // 8) * desc.lbo
    addr = desc.start + off
    if width:
        addr = addr ^ (((addr >> 7) & (width // 16 - 1)) << 4)
    return addr


def wgmma_sp_decompress(compressed: np.ndarray, e: np.ndarray) -> np.ndarray:
    """The dense 64 x 32 A of ``wgmma.mma_async.sp`` (fp16/bf16, sparsity selector 0) from its compressed 64 x 16
    values and the warpgroup's (128,) metadata registers: warp w's rows 16w.. with the m16n8k32 metadata layout."""
    idx = sparse_metadata("f16", e).reshape(64, 8, 2)  # warps stacked along the rows
    if (idx[..., 0] >= idx[..., 1]).any():
        raise EmulationError("wgmma.sp: a group's two metadata indices are not increasing")
    dense = np.zeros((64, 32))
    r, j = np.meshgrid(np.arange(64), np.arange(8), indexing="ij")
    for h in (0, 1):
        dense[r, 4 * j + idx[..., h]] = compressed[r, 2 * j + h]
    return dense


def _sm_version(func: Any) -> int:
    """The SM version of the PrimFunc's target (0 when unknown)."""
    import re

    t = func.attrs.get("target") if func.attrs is not None else None
    arch = str(t.attrs.get("arch", "")) if t is not None else ""
    m = re.match(r"sm_(\d+)", arch)
    return int(m.group(1)) if m else 0


TMA_SLOTS = 16  # tma.py SLOTS: the mbarriers tl_tma_init sets up (arrival count 1 each)


@dataclass
class _MBarrier:
    """One TMA mbarrier: phases completed, the bytes expected by the current phase, its copies in flight."""

    completed: int = 0
    expected: int = 0
    arrived: bool = False
    copies: list = None  # type: ignore[assignment]
    waits: np.ndarray | None = None  # per thread: phases this thread has waited for (its parity bit's history)

    def __post_init__(self) -> None:
        self.copies = []


@dataclass
class _Operand:
    mem: Mem
    addr: np.ndarray  # byte index into mem.data of each element's first byte, (rows, k)
    buf: str
    elem: int = 2     # bytes per element


@dataclass
class _Wgmma:
    """One issued wgmma of one warpgroup: its operands are read when a wgmma.wait_group retires it."""

    wg: int
    kind: str
    n: int
    acc: Mem
    acc_idx: np.ndarray         # (128, n*2) accumulator byte offsets per thread
    a_regs: np.ndarray | None   # (128, 4) uint32 register A (RS)
    a_reg_src: tuple[Mem, np.ndarray] | None
    a: _Operand | None          # shared A (SS), (64, K)
    b: _Operand                 # shared B, (n, K) = B^T (n, k)
    scale: int = 1              # scale-d: 0 overwrites the accumulators
    e: np.ndarray | None = None  # wgmma.sp: (128,) metadata registers; A is then the compressed half of K = 32


def wgmma_k_elem(kind: str) -> tuple[int, int]:
    """``(K, element bytes)`` of one wgmma of operand kind `kind` (fp8 kinds name A's and B's type: k32)."""
    return (32, 1) if kind[:4] in FP8 else (16, 2)


def _half_values(raw: np.ndarray, kind: str) -> np.ndarray:
    """16-bit (or fp8) operand bit patterns -> float64 values."""
    if kind in FP8:
        return fp8_decode(raw, kind)
    if kind == "f16":
        return raw.view(np.float16).astype(np.float64)
    return bf16_decode(raw).astype(np.float64)


def _wgmma_form(fname: str) -> tuple[str, int, str, int, int] | None:
    """``(ss|ss_sd|rs|sp, n, f16|bf16, trans_a, trans_b)`` of a generated wgmma helper name (None: not one);
    ``ss_sd``: the SS form whose last operand is scale-d (0 overwrites the accumulators); ``sp``: the 2:4-sparse
    m64nNk32 RS form (A registers, B descriptor, metadata register)."""
    import re

    m = re.fullmatch(r"tl_wgmma_ss_m64n(\d+)k16_(f16|bf16)_t([01])([01])(_sd)?", fname)
    if m:
        return "ss_sd" if m.group(5) else "ss", int(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4))
    m = re.fullmatch(r"tl_wgmma_rs_m64n(\d+)k16_(f16|bf16)_t([01])", fname)
    if m:
        return "rs", int(m.group(1)), m.group(2), 0, int(m.group(3))
    m = re.fullmatch(r"tl_wgmma_m64n(\d+)k16_(f16|bf16)", fname)
    if m:
        return "rs", int(m.group(1)), m.group(2), 0, 0
    m = re.fullmatch(r"tl_wgmma_ss_m64n(\d+)k32_((?:e4m3|e5m2){2})_t00", fname)  # fp8: both K-major
    if m:
        return "ss", int(m.group(1)), m.group(2), 0, 0
    m = re.fullmatch(r"tl_wgmma_sp_m64n(\d+)k32_(f16|bf16)", fname)
    if m:
        return "sp", int(m.group(1)), m.group(2), 0, 0
    m = re.fullmatch(r"tl_wgmma_sp_(ss|rs)_m64n(\d+)k32_(f16|bf16)_t([01])([01])_sd", fname)  # T.ptx_wgmma_sp_*
    if m:
        return f"sp_{m.group(1)}_sd", int(m.group(2)), m.group(3), int(m.group(4)), int(m.group(5))
    return None


# ------------------------------------------------------------------------------------------- memory
_BUF_IDS: dict[str, int] = {}


def _buf_id(name: str) -> int:
    """A small id per buffer name (-1: unknown), for the shared-pool aliasing check."""
    return _BUF_IDS.setdefault(name, len(_BUF_IDS)) if name else -1


@dataclass
class Mem:
    """Bytes behind one data pointer: ``scope`` global / shared / local (local is (T, nbytes))."""

    name: str
    scope: str
    data: np.ndarray
    # shared only: race bookkeeping per byte
    w_tid: np.ndarray | None = None
    w_epoch: np.ndarray | None = None
    r_min: np.ndarray | None = None
    r_max: np.ndarray | None = None
    r_epoch: np.ndarray | None = None
    pending: np.ndarray | None = None
    w_buf: np.ndarray | None = None
    init: np.ndarray | None = None  # local only: which bytes each thread has written
    dyn: bool = False  # shared only: the dynamic pool (``shared.dyn``)
    # sm_90a: shared bytes made visible to the async proxy (fence.proxy.async) / read by in-flight wgmmas;
    # local bytes written since the thread's last wgmma.fence / held by an in-flight wgmma (1 A, 2 accumulator)
    proxy_ok: np.ndarray | None = None
    wg_reading: np.ndarray | None = None
    dirty: np.ndarray | None = None
    inflight: np.ndarray | None = None
    # shared only: a named barrier (bar.sync id, count) orders the current interval's write / reads of a byte
    # before the threads [lo, hi] it synchronised, and only them (w_ord / r_ord false: no such barrier)
    w_ord: np.ndarray | None = None
    w_lo: np.ndarray | None = None
    w_hi: np.ndarray | None = None
    r_ord: np.ndarray | None = None
    r_lo: np.ndarray | None = None
    r_hi: np.ndarray | None = None

    @classmethod
    def shared(cls, name: str, nbytes: int) -> Mem:
        n = nbytes
        return cls(name, "shared", np.zeros(n, np.uint8), np.full(n, -1, np.int32), np.full(n, -1, np.int64),
                   np.full(n, -1, np.int32), np.full(n, -1, np.int32), np.full(n, -1, np.int64),
                   np.zeros(n, np.bool_), np.full(n, -1, np.int32), proxy_ok=np.zeros(n, np.bool_),
                   wg_reading=np.zeros(n, np.int32), w_ord=np.zeros(n, np.bool_), w_lo=np.zeros(n, np.int32),
                   w_hi=np.zeros(n, np.int32), r_ord=np.zeros(n, np.bool_), r_lo=np.zeros(n, np.int32),
                   r_hi=np.zeros(n, np.int32))

    @classmethod
    def local(cls, name: str, threads: int, nbytes: int) -> Mem:
        shape = (threads, nbytes)
        return cls(name, "local", np.zeros(shape, np.uint8), init=np.zeros(shape, np.bool_),
                   dirty=np.zeros(shape, np.bool_), inflight=np.zeros(shape, np.uint8))


@dataclass
class Ptr:
    """A pointer value: memory + per-thread byte offset."""

    mem: Mem
    off: np.ndarray
    elem: DType
    buf: str = ""  # the buffer it points into ("" when unknown)


@dataclass
class _Copy:
    mem: Mem
    idx: np.ndarray   # flat byte indices
    data: np.ndarray  # bytes to land
    tids: np.ndarray  # issuing thread per byte
    buf: int          # destination buffer id


# ------------------------------------------------------------------------------------------- emulator
_BIN = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Min": np.minimum, "Max": np.maximum,
    "EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal, "GT": np.greater,
    "GE": np.greater_equal, "And": np.logical_and, "Or": np.logical_or, "BitwiseAnd": np.bitwise_and,
    "BitwiseOr": np.bitwise_or, "BitwiseXor": np.bitwise_xor, "LShift": np.left_shift, "RShift": np.right_shift,
}


def _truncdiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    b = np.where(b == 0, 1, b)
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def _truncmod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    b = np.where(b == 0, 1, b)
    return np.fmod(a, b)


def _floordiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.floor_divide(a, np.where(b == 0, 1, b))


def _floormod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.mod(a, np.where(b == 0, 1, b))


_MATH = {
    "exp2": np.exp2, "exp2f": np.exp2, "exp": np.exp, "expf": np.exp, "__expf": np.exp, "log": np.log,
    "logf": np.log, "log2": np.log2, "log2f": np.log2, "sqrt": np.sqrt, "sqrtf": np.sqrt, "fabs": np.abs,
    "fabsf": np.abs, "abs": np.abs, "tanh": np.tanh, "tanhf": np.tanh, "floor": np.floor, "floorf": np.floor,
    "ceil": np.ceil, "ceilf": np.ceil, "sin": np.sin, "sinf": np.sin, "cos": np.cos, "cosf": np.cos,
    "rsqrt": lambda x: 1 / np.sqrt(x), "rsqrtf": lambda x: 1 / np.sqrt(x), "__frsqrt_rn": lambda x: 1 / np.sqrt(x),
    "exp10": lambda x: np.power(10.0, x), "round": np.round, "trunc": np.trunc,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "fmaxf": np.fmax, "fminf": np.fmin, "fmax": np.fmax, "fmin": np.fmin, "pow": np.power, "powf": np.power,
    "hexp2": np.exp2, "hexp": np.exp, "__habs": np.abs, "isnan": np.isnan,
}


def _waits_on_mbarriers(stmt: Any) -> bool:
    import tvm

    from tilelang.transform import utils as C

    def waits(call: Any) -> bool:
        return str(getattr(call.op, "name", "")) == "tirx.call_extern" and bool(call.args) and \
            str(getattr(call.args[0], "value", "")) == "tl_mbarrier_wait_parity"

    return bool(C.collect(stmt, tvm.ir.Call, waits))


class _Aborted(BaseException):
    """Unwinds a role whose kernel failed in another role."""


class _Roles:
    """Divergent branches of a block that hand data to each other through mbarriers, run as coroutines (one Python
    thread each, one running at a time, in the block's lock step within each branch). A role whose mbarrier wait
    cannot return yet (`wait_until`) lets the next role run; when every role still running waits and no phase
    completes, the kernel deadlocks. On a GPU the warps of both branches run concurrently; any interleaving the
    mbarrier protocol allows is one the hardware may pick, so the result is checked on this one."""

    def __init__(self, emu: Emulator, parts: list[tuple[np.ndarray, Callable]]):
        import threading

        self.emu, self.parts = emu, parts
        self.cv = threading.Condition()
        self.turn = 0
        self.done = [False] * len(parts)
        self.blocked: list[int | None] = [None] * len(parts)
        self.abort = False
        self.error: BaseException | None = None

    def _phases(self) -> int:
        return self.emu.stats.get("mbarrier_phases", 0)

    def _wait_turn(self, i: int) -> None:
        while self.turn != i and not self.abort:
            self.cv.wait()
        if self.abort:
            raise _Aborted

    def _next(self, i: int) -> int | None:
        """The role to run after role `i`: the next one still running that is not waiting on the current phase
        count (a waiter rechecks once a phase completed)."""
        n = len(self.parts)
        for step in range(1, n + 1):
            j = (i + step) % n
            if not self.done[j] and self.blocked[j] != self._phases():
                return j
        return None

    def _worker(self, i: int) -> None:
        emu = self.emu
        with self.cv:
            try:
                self._wait_turn(i)
                emu.roles = self
                emu.role = i
                emu.mask = self.parts[i][0]
                with np.errstate(all="ignore"):  # numpy's error state is per thread (as `Emulator.run` sets it)
                    self.parts[i][1](emu)
            except _Aborted:
                return
            except BaseException as exc:  # re-raised by `run`
                self.error, self.abort = exc, True
                self.cv.notify_all()
                return
            self.done[i] = True
            nxt = self._next(i)
            if nxt is None and not all(self.done):  # the others wait on phases nobody can complete
                nxt = next(j for j, d in enumerate(self.done) if not d)
            self.turn = -1 if nxt is None else nxt
            self.cv.notify_all()

    def wait_until(self, ready: Callable[[], bool]) -> bool:
        """Let the other roles run until `ready()`; False when they all wait too (a deadlock)."""
        i, emu = self.emu.role, self.emu
        mask = emu.mask
        while not ready():
            self.blocked[i] = self._phases()
            nxt = self._next(i)
            if nxt is None:
                return False
            self.turn = nxt
            self.cv.notify_all()
            self._wait_turn(i)
            emu.roles, emu.role, emu.mask = self, i, mask
        self.blocked[i] = None
        return True

    def run(self) -> None:
        import threading

        emu = self.emu
        outer = (getattr(emu, "roles", None), getattr(emu, "role", None))
        threads = [threading.Thread(target=self._worker, args=(i,), daemon=True) for i in range(len(self.parts))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        emu.roles, emu.role = outer
        if self.error is not None:
            raise self.error


class Emulator(DialectHelpers):
    """Runs one device PrimFunc over its grid. `args` maps parameter names to a global `Mem` (pointers) or a
    scalar; ``patch`` maps a helper name to ``fn(emu, args) -> value`` overriding it."""

    def __init__(self, func: tirx.PrimFunc, args: dict[str, Any], patch: dict[str, Callable] | None = None,
                 deferred_cp_async: bool = True, check_proxy: bool = True,
                 tensors: dict[str, tuple[Mem, tuple[int, ...], int]] | None = None, poison_locals: bool = False):
        self.func = func
        self.poison_locals = poison_locals
        self.tensors = tensors or {}  # name -> (bytes, shape, element size): what a TMA tensor map describes
        self.check_proxy = check_proxy
        self.patch = patch or {}
        self.deferred = deferred_cp_async
        self.env: dict[Any, Any] = {}
        self.mems: dict[int, Mem] = {}   # buffer var -> its bytes
        self.bases: dict[int, int] = {}  # buffer var -> byte offset of element 0 in those bytes
        for p in func.params:
            if _name(p) in args:
                v = args[_name(p)]
                if isinstance(v, Mem):
                    self.env[_key(p)] = Ptr(v, np.int64(0), DType("uint8", 1))
                else:
                    self.env[_key(p)] = np.asarray(v, dtype_of(p).np)
        self.block_dims, self.thread_dims = self._launch_dims(func.body)
        tx, ty, tz = self.thread_dims
        self.T = tx * ty * tz
        tid = np.arange(self.T, dtype=np.int32)
        self.tid = tid
        self.tidx = {"threadIdx.x": tid % tx, "threadIdx.y": (tid // tx) % ty, "threadIdx.z": tid // (tx * ty)}
        self.mask = np.ones(self.T, np.bool_)
        self.epoch = 0
        self.groups: list[list[_Copy]] = []
        self.open_group: list[_Copy] = []
        self.stats: dict[str, int] = {}
        self.arch = _sm_version(func)
        self._reset_block_state()

    # ---------------------------------------------------------------- launch
    def _launch_dims(self, body: Any) -> tuple[list[int], list[int]]:
        blocks, threads = [1, 1, 1], [1, 1, 1]

        def visit(s: Any) -> None:
            if isinstance(s, tirx.AttrStmt) and s.attr_key == "thread_extent":
                tag = s.node.thread_tag
                ext = self._const(s.value)
                axis = "xyz".index(tag[-1])
                (blocks if tag.startswith("blockIdx") else threads)[axis] = ext
            for k in ("body", "then_case", "else_case"):
                c = getattr(s, k, None)
                if c is not None:
                    visit(c)
            if isinstance(s, tirx.SeqStmt):
                for c in s.seq:
                    visit(c)

        visit(body)
        return blocks, threads

    def _const(self, e: Any) -> int:
        v = self.compile(e)(self)
        v = np.asarray(v)
        if v.ndim:
            raise EmulationError(f"launch extent {e} is not uniform")
        return int(v)

    def run(self) -> None:
        body = self.compile_stmt(self.func.body)
        with np.errstate(all="ignore"):
            for bz, by, bx in itertools.product(*(range(n) for n in self.block_dims[::-1])):
                self.block = {"blockIdx.x": bx, "blockIdx.y": by, "blockIdx.z": bz}
                self.mask = np.ones(self.T, np.bool_)
                self.epoch += 1
                self._reset_block_state()
                body(self)
                self._wait_group(0)
                if self.open_group:
                    raise EmulationError("cp.async copies issued but never committed/waited")
                if any(b.copies for b in self.tma):
                    raise EmulationError("TMA copies issued but never waited on (tl_tma_wait)")
                if any(self.wg_open.values()) or any(self.wg_groups.values()):
                    raise EmulationError("wgmma issued but never retired by wgmma.wait_group before the kernel ended")

    def _reset_block_state(self) -> None:
        self.shared_mems: list[Mem] = []
        self.local_mems: list[Mem] = []
        self.smem_base: dict[int, int] = {}     # id(shared Mem) -> its emulated shared-window address
        self.smem_regions: list[tuple[int, Mem]] = []
        self.desc_bufs: dict[int, str] = {}     # descriptor start address -> the buffer it was made from
        self.wg_open: dict[int, list[_Wgmma]] = {}
        self.wg_groups: dict[int, list[list[_Wgmma]]] = {}
        self.wg_inflight = 0
        self.tma = [_MBarrier() for _ in range(TMA_SLOTS)]
        self._reset_dialect_state()

    # ---------------------------------------------------------------- compile: statements
    def compile_stmt(self, s: Any) -> Callable[[Emulator], None]:
        kind = type(s).__name__
        fn = getattr(self, f"_s_{kind}", None)
        if fn is None:
            raise NotImplementedError(f"statement {kind}")
        return fn(s)

    def _s_SeqStmt(self, s: Any) -> Callable:
        parts = [self.compile_stmt(c) for c in s.seq]

        def run(emu: Emulator) -> None:
            for p in parts:
                p(emu)
        return run

    def _s_DeclBuffer(self, s: Any) -> Callable:
        data = self.compile(s.data) if s.data is not None else None
        key, name = _key(s.buffer), s.buffer.name

        def run(emu: Emulator) -> None:
            p = data(emu) if data is not None else None
            if not isinstance(p, Ptr):
                raise NotImplementedError(f"decl_buffer {name} without a pointer")
            if np.asarray(p.off).ndim:
                raise NotImplementedError(f"decl_buffer {name} at a thread-varying address")
            emu.mems[key] = p.mem
            emu.bases[key] = int(p.off)
        return run

    def _s_AllocBuffer(self, s: Any) -> Callable:
        buf = s.buffer
        scope = buf.scope()
        dt = _parse_dtype(str(buf.dtype))
        n = 1
        for d in buf.shape:
            n *= int(d)
        nbytes = n * np.dtype(dt.store_np).itemsize * dt.lanes
        var = buf.id_

        def run(emu: Emulator) -> None:
            emu.bases[var] = 0
            if scope.startswith("shared"):
                emu.mems[var] = Mem.shared(buf.name, nbytes)
                emu.mems[var].dyn = scope == "shared.dyn"
                emu.shared_mems.append(emu.mems[var])
            elif scope.startswith("local"):
                emu.mems[var] = Mem.local(buf.name, emu.T, nbytes)
                emu.local_mems.append(emu.mems[var])
            else:
                raise NotImplementedError(f"allocation in scope {scope!r}")
        return run

    def _s_AttrStmt(self, s: Any) -> Callable:
        body = self.compile_stmt(s.body)
        if s.attr_key != "thread_extent":
            return body
        var, tag = _key(s.node.var), s.node.thread_tag

        def run(emu: Emulator) -> None:
            if tag.startswith("blockIdx"):
                emu.env[var] = np.int32(emu.block[tag])
            else:
                emu.env[var] = emu.tidx[tag]
            body(emu)
        return run

    def _s_Evaluate(self, s: Any) -> Callable:
        f = self.compile(s.value)
        return lambda emu: (f(emu), None)[1]

    def _s_BufferStore(self, s: Any) -> Callable:
        buf = s.buffer
        idx = self._flat_index(buf, s.indices)
        val = self.compile(s.value)
        dt = _parse_dtype(str(buf.dtype))
        var = buf.id_
        off0 = int(buf.elem_offset) if isinstance(buf.elem_offset, tirx.IntImm) else None
        if off0 is None:
            raise NotImplementedError(f"buffer {buf.name} with a symbolic elem_offset")

        dt, idx, off0 = _vector_elements(dt, idx, off0)

        def run(emu: Emulator) -> None:
            i = idx(emu) + off0
            emu._store(emu.mems[var], dt, i, val(emu), buf.name, emu.bases[var])
        return run

    def _s_For(self, s: Any) -> Callable:
        lo, ext = self.compile(s.min), self.compile(s.extent)
        body = self.compile_stmt(s.body)
        var = _key(s.loop_var)
        vt = dtype_of(s.loop_var).np
        if int(s.kind) == 4:  # thread binding
            raise NotImplementedError("thread-bound For loop")

        def run(emu: Emulator) -> None:
            a, n = emu._uniform(lo(emu), "loop min"), emu._uniform(ext(emu), "loop extent")
            for k in range(a, a + n):
                emu.env[var] = vt(k)
                body(emu)
        return run

    def _s_While(self, s: Any) -> Callable:
        cond, body = self.compile(s.condition), self.compile_stmt(s.body)

        def run(emu: Emulator) -> None:
            saved = emu.mask
            while True:
                c = np.broadcast_to(cond(emu), saved.shape)
                emu.mask = emu.mask & c
                if not emu.mask.any():
                    break
                body(emu)
            emu.mask = saved
        return run

    def _s_IfThenElse(self, s: Any) -> Callable:
        cond = self.compile(s.condition)
        then = self.compile_stmt(s.then_case)
        other = self.compile_stmt(s.else_case) if s.else_case is not None else None

        # warp roles handing stages to each other through mbarriers (a producer loop in one branch, the
        # consumers' loop in the other) run concurrently (`_Roles`)
        roles = other is not None and _waits_on_mbarriers(s.then_case) and _waits_on_mbarriers(s.else_case)

        def run(emu: Emulator) -> None:
            c = np.asarray(cond(emu))
            saved = emu.mask
            if c.ndim == 0:
                if c:
                    then(emu)
                elif other is not None:
                    other(emu)
                return
            if roles and (saved & c).any() and (saved & ~c).any():
                _Roles(emu, [(saved & c, then), (saved & ~c, other)]).run()
                emu.mask = saved
                return
            for m, branch in ((saved & c, then), (saved & ~c, other)):
                if branch is not None and m.any():
                    emu.mask = m
                    branch(emu)
            emu.mask = saved
        return run

    def _s_LetStmt(self, s: Any) -> Callable:
        val, body, var = self.compile(s.value), self.compile_stmt(s.body), _key(s.var)

        def run(emu: Emulator) -> None:
            emu.env[var] = val(emu)
            body(emu)
        return run

    def _s_Bind(self, s: Any) -> Callable:
        val, var = self.compile(s.value), _key(s.var)

        def run(emu: Emulator) -> None:
            emu.env[var] = val(emu)
        return run

    def _s_AssertStmt(self, s: Any) -> Callable:
        cond = self.compile(s.condition)

        def run(emu: Emulator) -> None:
            c = np.broadcast_to(cond(emu), emu.mask.shape)
            if not c[emu.mask].all():
                raise EmulationError(f"device assertion failed: {s.message}")
        return run

    # ---------------------------------------------------------------- compile: expressions
    def compile(self, e: Any) -> Callable[[Emulator], Any]:
        kind = type(e).__name__
        if kind in _BIN:
            return self._binary(e, _BIN[kind])
        fn = getattr(self, f"_e_{kind}", None)
        if fn is None:
            raise NotImplementedError(f"expression {kind}: {e}")
        return fn(e)

    def _binary(self, e: Any, op: Callable) -> Callable:
        a, b = self.compile(e.a), self.compile(e.b)
        dt = dtype_of(e)
        return lambda emu: _cast(op(a(emu), b(emu)), dt)

    def _arith(self, e: Any, int_op: Callable, float_op: Callable) -> Callable:
        a, b = self.compile(e.a), self.compile(e.b)
        dt = dtype_of(e)
        op = float_op if dt.base.startswith(("float", "bfloat")) else int_op
        return lambda emu: _cast(op(a(emu), b(emu)), dt)

    def _e_Div(self, e: Any) -> Callable:
        return self._arith(e, _truncdiv, np.divide)

    def _e_Mod(self, e: Any) -> Callable:
        return self._arith(e, _truncmod, np.fmod)

    def _e_FloorDiv(self, e: Any) -> Callable:
        return self._arith(e, _floordiv, lambda a, b: np.floor(a / b))

    def _e_FloorMod(self, e: Any) -> Callable:
        return self._arith(e, _floormod, lambda a, b: a - np.floor(a / b) * b)

    def _e_Not(self, e: Any) -> Callable:
        a = self.compile(e.a)
        return lambda emu: np.logical_not(a(emu))

    def _e_BitwiseNot(self, e: Any) -> Callable:
        a = self.compile(e.a)
        return lambda emu: np.invert(a(emu))

    def _e_IntImm(self, e: Any) -> Callable:
        v = _cast(int(e.value), dtype_of(e))
        return lambda emu: v

    def _e_FloatImm(self, e: Any) -> Callable:
        v = _cast(float(e.value), dtype_of(e))
        return lambda emu: v

    def _e_Var(self, e: Any) -> Callable:
        key = _key(e)

        def run(emu: Emulator) -> Any:
            if key in emu.env:
                return emu.env[key]
            if key in emu.mems:
                return Ptr(emu.mems[key], np.int64(emu.bases[key]), DType("uint8", 1), _name(e))
            raise EmulationError(f"unbound variable {e}")
        return run

    def _e_Cast(self, e: Any) -> Callable:
        v, dt = self.compile(e.value), dtype_of(e)
        return lambda emu: _cast(v(emu), dt)

    def _e_Ramp(self, e: Any) -> Callable:
        base, stride, lanes = self.compile(e.base), self.compile(e.stride), int(e.lanes)
        dt = dtype_of(e)

        def run(emu: Emulator) -> Any:
            b = np.asarray(base(emu))
            k = np.arange(lanes).reshape((lanes,) + (1,) * max(b.ndim, 1))
            return _cast(b[None] + k * stride(emu), dt)
        return run

    def _e_Broadcast(self, e: Any) -> Callable:
        v, lanes = self.compile(e.value), int(e.lanes)

        def run(emu: Emulator) -> Any:
            x = np.asarray(v(emu))
            x = x.reshape((1,) + (x.shape or (1,)))
            return np.broadcast_to(x, (lanes, *x.shape[1:]))
        return run

    def _e_Shuffle(self, e: Any) -> Callable:
        vecs = [self.compile(v) for v in e.vectors]
        idx = [int(i) for i in e.indices]

        def run(emu: Emulator) -> Any:
            parts = []
            for v in vecs:
                x = np.asarray(v(emu))
                parts.append(x if x.ndim == 2 else x.reshape((1,) + (x.shape or (1,))))
            width = max(p.shape[1] for p in parts)
            allv = np.concatenate([np.broadcast_to(p, (p.shape[0], width)) for p in parts], 0)
            out = allv[idx]
            return out[0] if len(idx) == 1 else out
        return run

    def _e_Select(self, e: Any) -> Callable:
        return self._select(e.condition, e.true_value, e.false_value, dtype_of(e))

    def _select(self, cond_e: Any, t_e: Any, f_e: Any, dt: DType) -> Callable:
        cond, t, f = self.compile(cond_e), self.compile(t_e), self.compile(f_e)

        def run(emu: Emulator) -> Any:
            c = np.asarray(cond(emu))
            if c.ndim == 0:
                return t(emu) if c else f(emu)
            saved = emu.mask
            cm = np.broadcast_to(c, c.shape[:-1] + saved.shape).any(axis=tuple(range(c.ndim - 1)))
            emu.mask = saved & cm
            tv = t(emu) if emu.mask.any() else np.zeros((), dt.np)
            emu.mask = saved & ~np.broadcast_to(c, c.shape[:-1] + saved.shape).all(axis=tuple(range(c.ndim - 1)))
            fv = f(emu) if emu.mask.any() else np.zeros((), dt.np)
            emu.mask = saved
            return _cast(np.where(c, tv, fv), dt)
        return run

    def _e_Let(self, e: Any) -> Callable:
        val, body, var = self.compile(e.value), self.compile(e.body), _key(e.var)

        def run(emu: Emulator) -> Any:
            emu.env[var] = val(emu)
            return body(emu)
        return run

    def _e_StringImm(self, e: Any) -> Callable:
        v = str(e.value)
        return lambda emu: v

    def _flat_index(self, buf: Any, indices: Any) -> Callable:
        idx = [self.compile(i) for i in indices]
        if len(idx) == 1:
            return lambda emu: np.asarray(idx[0](emu)).astype(np.int64)
        shape = [int(d) for d in buf.shape]

        def run(emu: Emulator) -> Any:
            flat = np.int64(0)
            for i, n in zip(idx, shape):
                flat = flat * n + np.asarray(i(emu)).astype(np.int64)
            return flat
        return run

    def _e_BufferLoad(self, e: Any) -> Callable:
        buf = _buffer_of(e)
        idx = self._flat_index(buf, e.indices)
        dt = _parse_dtype(str(buf.dtype))
        var = buf.id_
        dt, idx, off0 = _vector_elements(dt, idx, int(buf.elem_offset))

        def run(emu: Emulator) -> Any:
            return emu._load(emu.mems[var], dt, idx(emu) + off0, buf.name, emu.bases[var])
        return run

    _e_TensorLoad = _e_BufferLoad

    def _e_Call(self, e: Any) -> Callable:
        op = e.op.name
        name = op.split(".", 1)[1] if "." in op else op
        dt = dtype_of(e)
        if name in ("call_extern", "call_pure_extern"):
            fname = str(e.args[0].value)
            args = [self.compile(a) for a in e.args[1:]]
            return self._extern(fname, args, e, dt)
        if name == "address_of":
            load = e.args[0]
            buf = _buffer_of(load)
            idx = self._flat_index(buf, load.indices)
            bdt = _parse_dtype(str(buf.dtype))
            off0 = int(buf.elem_offset)
            dvar = buf.id_
            bname = buf.name
            return lambda emu: Ptr(emu.mems[dvar], emu.bases[dvar] + _elem_bytes(bdt, idx(emu) + off0), bdt, bname)
        if name == "tvm_access_ptr":
            tdt = dtype_of(e.args[0])
            data, off = self.compile(e.args[1]), self.compile(e.args[2])

            def acc(emu: Emulator) -> Ptr:
                p = data(emu)
                o = np.asarray(off(emu)).astype(np.int64)
                return Ptr(p.mem, p.off + (o if tdt.base == "handle" else _elem_bytes(tdt, o)), tdt, p.buf)
            return acc
        if name == "if_then_else":
            return self._select(e.args[0], e.args[1], e.args[2], dt)
        if name == "reinterpret":
            v = self.compile(e.args[0])
            return lambda emu: np.ascontiguousarray(v(emu)).view(dt.store_np if dt.base != "bfloat16" else np.uint16)
        if name == "buffer_data":
            return self.compile(e.args[0])
        if name == "tvm_storage_sync":
            if name in self.patch:
                f = self.patch[name]
                return lambda emu: f(emu, [])
            return lambda emu: emu._barrier()
        if name in ("likely",):
            return self.compile(e.args[0])
        if name == "cuda.__activemask":  # the lanes of each thread's warp that execute here, as bits
            return lambda emu: emu.active_mask()
        shuffles = {"tvm_warp_shuffle": "idx", "tvm_warp_shuffle_down": "down", "tvm_warp_shuffle_up": "up",
                    "cuda.__shfl_sync": "idx", "cuda.__shfl_down_sync": "down", "cuda.__shfl_up_sync": "up"}
        if name in shuffles:
            # (mask, value, lane or delta, width[, warp size]): __shfl_sync / _down / _up and TVM's forms of them
            value, lane, width = self.compile(e.args[1]), self.compile(e.args[2]), self.compile(e.args[3])
            kind = shuffles[name]
            return lambda emu: _cast(emu.shuffle(kind, value(emu), lane(emu), width(emu)), dt)
        if name in _MATH:
            args = [self.compile(a) for a in e.args]
            f = _MATH[name]
            return lambda emu: _cast(f(*[a(emu) for a in args]), dt)
        if name in ("shift_right", "shift_left", "bitwise_and", "bitwise_or", "bitwise_xor"):
            a, b = self.compile(e.args[0]), self.compile(e.args[1])
            f = {"shift_right": np.right_shift, "shift_left": np.left_shift, "bitwise_and": np.bitwise_and,
                 "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor}[name]
            return lambda emu: _cast(f(a(emu), b(emu)), dt)
        raise NotImplementedError(f"intrinsic {op}")

    # ---------------------------------------------------------------- helpers: memory
    def _uniform(self, v: Any, what: str) -> int:
        v = np.asarray(v)
        if v.ndim == 0:
            return int(v)
        act = v[self.mask]
        if act.size and (act != act[0]).any():
            raise EmulationError(f"{what} differs between threads: loops must have thread-uniform bounds")
        return int(act[0]) if act.size else 0

    def _full(self, idx: Any) -> np.ndarray:
        """Index array broadcast to (..., T)."""
        idx = np.asarray(idx)
        if idx.ndim == 0:
            return np.broadcast_to(idx, (self.T,))
        return np.broadcast_to(idx, (*idx.shape[:-1], self.T))

    def _byte_idx(self, mem: Mem, dt: DType, idx: np.ndarray, what: str, base: int = 0
                  ) -> tuple[np.ndarray, np.ndarray]:
        """(byte index array (..., T, size), active mask (..., T)) with a bounds check on active threads."""
        size = np.dtype(dt.store_np).itemsize
        idx = self._full(idx)
        m = np.broadcast_to(self.mask, idx.shape)
        nbytes = mem.data.shape[-1]
        start = base + idx * size
        bad = m & ((start < 0) | (start + size > nbytes))
        if bad.any():
            i = np.argwhere(bad)[0]
            raise EmulationError(f"out-of-bounds {what} of {mem.name}: element {int(idx[tuple(i)])} "
                                 f"({nbytes // size} elements) by thread {int(i[-1])}")
        start = np.where(m, start, 0)
        return start[..., None] + np.arange(size), m

    def _read_bytes(self, mem: Mem, b: np.ndarray, m: np.ndarray, what: str, buf: str = "") -> np.ndarray:
        """Bytes at (..., T, n) byte indices; shared reads are race-checked for active threads."""
        if mem.scope == "local":
            rows = np.broadcast_to(self.tid[:, None], b.shape)
            if self.poison_locals and not mem.init[rows[m], b[m]].all():
                # opted in: a register read before any write gives all-ones bytes (NaN for floats), so a kernel
                # whose lanes compute on unset registers they then discard runs, and a use of one still shows
                return np.where(mem.init[rows, b], mem.data[rows, b], np.uint8(0xFF))
            if not mem.init[rows[m], b[m]].all():
                raise EmulationError(f"{what}: reads {mem.name} (local) bytes this thread never wrote")
            if self.wg_inflight and (mem.inflight[rows[m], b[m]] == 2).any():
                raise EmulationError(f"{what}: reads accumulator registers {mem.name} of an in-flight wgmma "
                                     "(missing wgmma.wait_group)")
            return mem.data[rows, b]
        if mem.scope == "shared":
            self._check_read(mem, b, m, what, buf)
        return mem.data[b]

    def _write_bytes(self, mem: Mem, b: np.ndarray, m: np.ndarray, val: np.ndarray, what: str, buf: str = ""
                     ) -> None:
        if mem.scope == "local":
            rows = np.broadcast_to(self.tid[:, None], b.shape)
            if self.wg_inflight and mem.inflight[rows[m], b[m]].any():
                raise EmulationError(f"{what}: writes registers {mem.name} an in-flight wgmma still uses "
                                     "(missing wgmma.wait_group)")
            mem.data[rows[m], b[m]] = val[m]
            mem.init[rows[m], b[m]] = True
            mem.dirty[rows[m], b[m]] = True
            return
        if mem.scope == "shared":
            self._check_write(mem, b, m, what, buf=buf)
        mem.data[b[m]] = val[m]

    def _tids(self, b: np.ndarray) -> np.ndarray:
        return np.broadcast_to(self.tid[:, None], b.shape[-2:])

    def _check_read(self, mem: Mem, b: np.ndarray, m: np.ndarray, what: str, buf: str = "") -> None:
        bm, tm = b[m], np.broadcast_to(self._tids(b), b.shape)[m]
        if mem.pending[bm].any():
            raise EmulationError(f"{what}: reads {mem.name} bytes an in-flight cp.async has not landed yet "
                                 "(missing cp.async.wait_group)")
        if (mem.w_epoch[bm] < 0).any():
            raise EmulationError(f"{what}: reads {mem.name} (shared) bytes no thread of the block wrote")
        bid = _buf_id(buf)
        if bid >= 0:
            wb = mem.w_buf[bm]
            other = (wb >= 0) & (wb != bid)
            if other.any():
                names = {v: k for k, v in _BUF_IDS.items()}
                raise EmulationError(
                    f"{what}: {buf} reads bytes of {mem.name} last written through {names[int(wb[other][0])]} -- the "
                    f"two buffers overlap in the shared pool while {buf} is still live (shared-memory planning bug)")
        if mem.pending[bm].any():
            raise EmulationError(f"{what}: reads {mem.name} bytes an in-flight cp.async has not landed yet "
                                 "(missing cp.async.wait_group)")
        racy = (mem.w_epoch[bm] == self.epoch) & (mem.w_tid[bm] != tm) & ~_named_ordered(mem.w_ord, mem.w_lo,
                                                                                           mem.w_hi, bm, tm)
        if racy.any():
            k = np.argmax(racy)
            raise EmulationError(f"{what}: shared race on {mem.name} byte {int(bm.flat[k])}: thread {int(tm.flat[k])} "
                                 f"reads what thread {int(mem.w_tid[bm].flat[k])} wrote with no barrier between")
        # reads before a named barrier are ordered before its threads only: a read after it starts a new record
        fresh = (mem.r_epoch[bm] != self.epoch) | mem.r_ord[bm]
        mem.r_ord[bm] = False
        mem.r_min[bm[fresh]] = 1 << 30
        mem.r_max[bm[fresh]] = -1
        mem.r_epoch[bm] = self.epoch
        np.minimum.at(mem.r_min, bm, tm)
        np.maximum.at(mem.r_max, bm, tm)

    def _check_write(self, mem: Mem, b: np.ndarray, m: np.ndarray, what: str, tids: np.ndarray | None = None,
                     buf: str = "") -> None:
        bm = b[m]
        tm = np.broadcast_to(self._tids(b), b.shape)[m] if tids is None else tids
        if mem.pending[bm].any():
            raise EmulationError(f"{what}: writes {mem.name} bytes an in-flight cp.async has not landed yet")
        if mem.wg_reading[bm].any():
            raise EmulationError(f"{what}: writes {mem.name} bytes an in-flight wgmma still reads (it reads them "
                                 "until the wgmma.wait_group that retires it)")
        mem.proxy_ok[bm] = False
        same = mem.r_epoch[bm] == self.epoch
        racy = same & ~((mem.r_min[bm] == tm) & (mem.r_max[bm] == tm)) & ~_named_ordered(mem.r_ord, mem.r_lo,
                                                                                          mem.r_hi, bm, tm)
        racy |= (mem.w_epoch[bm] == self.epoch) & (mem.w_tid[bm] != tm) & ~_named_ordered(mem.w_ord, mem.w_lo,
                                                                                            mem.w_hi, bm, tm)
        if racy.any():
            k = np.argmax(racy)
            raise EmulationError(f"{what}: shared race on {mem.name} byte {int(bm.flat[k])}: thread {int(tm.flat[k])} "
                                 "overwrites bytes another thread read or wrote with no barrier between")
        mem.w_epoch[bm] = self.epoch
        mem.w_tid[bm] = tm
        mem.w_ord[bm] = False
        mem.w_buf[bm] = _buf_id(buf)

    def _load(self, mem: Mem, dt: DType, idx: Any, what: str, base: int = 0) -> np.ndarray:
        b, m = self._byte_idx(mem, dt, idx, f"load of {what}", base)
        raw = self._read_bytes(mem, b, m, f"load of {what}", what)
        vals = np.ascontiguousarray(raw).view(dt.store_np)[..., 0]
        vals = np.where(m, vals, 0).astype(dt.store_np)
        return bf16_decode(vals) if dt.base == "bfloat16" else vals.astype(dt.np)

    def _store(self, mem: Mem, dt: DType, idx: Any, val: Any, what: str, base: int = 0) -> None:
        b, m = self._byte_idx(mem, dt, idx, f"store to {what}", base)
        v = np.asarray(val)
        v = bf16_encode(v) if dt.base == "bfloat16" else v.astype(dt.store_np)
        v = np.broadcast_to(v, m.shape)
        raw = np.ascontiguousarray(v)[..., None].view(np.uint8)
        self._write_bytes(mem, b, m, raw, f"store to {what}", what)

    def ptr_read(self, p: Ptr, nbytes: int, what: str) -> np.ndarray:
        """(T, nbytes) bytes at each thread's pointer (inactive threads read offset 0)."""
        return self._read_bytes(p.mem, *self._ptr_bytes(p, nbytes, what), what, p.buf)

    def ptr_write(self, p: Ptr, data: np.ndarray, what: str) -> None:
        b, m = self._ptr_bytes(p, data.shape[-1], what)
        self._write_bytes(p.mem, b, m, data, what, p.buf)

    def _ptr_bytes(self, p: Ptr, nbytes: int, what: str) -> tuple[np.ndarray, np.ndarray]:
        off = np.asarray(self._full(p.off), np.int64)
        bad = self.mask & ((off < 0) | (off + nbytes > p.mem.data.shape[-1]))
        if bad.any():
            raise EmulationError(f"{what}: out-of-bounds access of {p.mem.name} at byte {int(off[bad][0])}")
        off = np.where(self.mask, off, 0)
        return off[:, None] + np.arange(nbytes), self.mask

    # ---------------------------------------------------------------- helpers: sync, warps, cp.async
    def _barrier(self) -> None:
        if not self.mask.all():
            raise EmulationError(f"__syncthreads reached by {int(self.mask.sum())} of {self.T} threads "
                                 "(barrier under divergence)")
        self.epoch += 1
        self.stats["barriers"] = self.stats.get("barriers", 0) + 1

    def _full_warps(self, what: str) -> None:
        if self.T % 32:
            raise NotImplementedError(f"{what} with a block of {self.T} threads (not whole warps)")
        w = self.mask.reshape(-1, 32)
        if (w.any(1) & ~w.all(1)).any():
            raise EmulationError(f"{what} executed by a partial warp (.sync.aligned needs all 32 lanes)")

    def active_mask(self) -> np.ndarray:
        """``__activemask()`` of every thread: the bits of its warp's lanes that execute this point."""
        self._full_warps_only("__activemask")
        bits = (self.mask.reshape(-1, 32).astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(1)
        return np.repeat(bits.astype(np.uint32), 32)

    def shuffle(self, kind: str, v: Any, lane: Any, width: Any) -> np.ndarray:
        """``__shfl_sync`` (`kind` idx: from lane `lane` of the thread's `width`-lane segment), ``_down`` / ``_up``
        (from `lane` lanes above / below, the thread's own value past its segment's end) over active full warps."""
        self._full_warps("shfl.sync")
        v = np.broadcast_to(np.asarray(v), (self.T,))
        lane = np.broadcast_to(np.asarray(lane, np.int64), (self.T,))
        width = np.broadcast_to(np.asarray(width, np.int64), (self.T,))
        tid = np.arange(self.T)
        start = tid - (tid % 32) % width
        pos = tid - start
        if kind == "idx":
            src = start + lane % width
        elif kind == "down":
            src = np.where(pos + lane < width, tid + lane, tid)
        else:
            src = np.where(pos - lane >= 0, tid - lane, tid)
        if not self.mask[src[self.mask]].all():
            raise EmulationError("a shuffle reads a lane that does not execute it")
        return v[src]

    def _full_warps_only(self, what: str) -> None:
        if self.T % 32:
            raise NotImplementedError(f"{what} with a block of {self.T} threads (not whole warps)")

    def shfl_xor(self, v: np.ndarray, lane_mask: int) -> np.ndarray:
        self._full_warps("shfl.sync")
        return shfl_xor(np.broadcast_to(np.asarray(v), (self.T,)), lane_mask)

    def _cp_async(self, dst: Ptr, src: Ptr, nbytes: int, fill: Any) -> None:
        fill = np.broadcast_to(np.asarray(fill, np.int64), (self.T,))
        data = self.ptr_read(src, nbytes, "cp.async source").copy()
        data[np.arange(nbytes)[None, :] >= fill[:, None]] = 0
        b, m = self._ptr_bytes(dst, nbytes, "cp.async destination")
        if dst.mem.scope != "shared":
            raise EmulationError("cp.async destination is not shared memory")
        tids = np.broadcast_to(self.tid[:, None], b.shape)[m]
        if not self.deferred:
            self._write_bytes(dst.mem, b, m, data, "cp.async", dst.buf)
            return
        self._check_write(dst.mem, b, m, "cp.async", tids, dst.buf)
        dst.mem.pending[b[m]] = True
        self.open_group.append(_Copy(dst.mem, b[m], data[m], tids, _buf_id(dst.buf)))

    def _commit(self) -> None:
        self.groups.append(self.open_group)
        self.open_group = []

    def _wait_group(self, n: int) -> None:
        while len(self.groups) > n:
            for c in self.groups.pop(0):
                if c.mem.wg_reading[c.idx].any():
                    raise EmulationError(f"cp.async lands on {c.mem.name} bytes an in-flight wgmma still reads")
                c.mem.proxy_ok[c.idx] = False
                c.mem.pending[c.idx] = False
                c.mem.data[c.idx] = c.data
                c.mem.w_epoch[c.idx] = self.epoch
                c.mem.w_tid[c.idx] = c.tids
                c.mem.w_ord[c.idx] = False
                c.mem.w_buf[c.idx] = c.buf

    # ---------------------------------------------------------------- extern helpers
    def _extern(self, fname: str, args: list[Callable], e: Any, dt: DType) -> Callable:
        if fname in self.patch:
            f = self.patch[fname]
            return lambda emu: f(emu, [a(emu) for a in args])
        impl = getattr(self, f"_x_{fname}", None)
        if impl is not None:
            return lambda emu: impl([a(emu) for a in args], dt, e)
        if fname in _MATH:
            f = _MATH[fname]
            return lambda emu: _cast(f(*[a(emu) for a in args]), dt)
        wg = _wgmma_form(fname)
        if wg is not None:
            return lambda emu: emu._wgmma_issue(wg, [a(emu) for a in args])
        import re

        m = re.fullmatch(r"tl_mma_sync_m16n8k32_(e4m3|e5m2)_(e4m3|e5m2)_fp32", fname)
        if m:  # the generated fp8 mma.sync helper (tilelang_cuda.intrinsics.mma_sync)
            return lambda emu: emu._mma([a(emu) for a in args], m.group(1) + m.group(2))
        raise NotImplementedError(f"device helper {fname}")

    def call_default(self, fname: str, args: list[Any], dt: DType | None = None) -> Any:
        """Run the built-in model of helper `fname` (for patches that wrap it)."""
        return getattr(self, f"_x_{fname}")(args, dt or DType("void", 1), None)

    def _x_tl_cp_async16(self, a: list, dt: DType, e: Any) -> None:
        self._cp_async(a[0], a[1], 16, a[2] if len(a) > 2 else 16)

    def _x_tl_cp_async_commit(self, a: list, dt: DType, e: Any) -> None:
        self._commit()

    def _x_tl_cp_async_wait_group(self, a: list, dt: DType, e: Any) -> None:
        self._wait_group(int(a[0]))
        if self.arch >= 90:  # the sm_90 helper ends with fence.proxy.async (tilelang_cuda/cp_async.cuh)
            self._proxy_fence()

    _x_tl_cp_async_wait = _x_tl_cp_async_wait_group

    def _ldmatrix(self, a: list, trans: bool) -> None:
        self._full_warps("ldmatrix")
        regs, smem = a
        if smem.mem.scope != "shared":
            raise EmulationError("ldmatrix source is not shared memory")
        if (np.asarray(smem.off) % 16).any():
            raise EmulationError("ldmatrix row address not 16-byte aligned")
        rows = self.ptr_read(smem, 16, "ldmatrix").view(np.uint16)
        out = ldmatrix_x4(rows, trans)
        self.ptr_write(regs, np.ascontiguousarray(out).view(np.uint8).reshape(self.T, 16), "ldmatrix dest")

    def _x_tl_ldmatrix_x4(self, a: list, dt: DType, e: Any) -> None:
        self._ldmatrix(a, False)

    def _x_tl_ldmatrix_x4_trans(self, a: list, dt: DType, e: Any) -> None:
        self._ldmatrix(a, True)

    def _mma(self, a: list, kind: str) -> None:
        self._full_warps(f"mma.sync ({kind})")
        acc, ap, bp = a
        c = self.ptr_read(acc, 16, "mma C").view(np.int32 if kind == "s8" else np.float32)
        av = self.ptr_read(ap, 16, "mma A").view(np.uint32)
        bv = self.ptr_read(bp, 8, "mma B").view(np.uint32)
        d = mma_sync(kind, av, bv, c)
        self.ptr_write(acc, np.ascontiguousarray(d).view(np.uint8).reshape(self.T, 16), "mma D")
        self.stats["mma"] = self.stats.get("mma", 0) + 1

    def _x_tl_mma_f16_f32(self, a: list, dt: DType, e: Any) -> None:
        self._mma(a, "f16")

    def _x_tl_mma_bf16_f32(self, a: list, dt: DType, e: Any) -> None:
        self._mma(a, "bf16")

    def _x_tl_mma_tf32_f32(self, a: list, dt: DType, e: Any) -> None:
        self._mma(a, "tf32")

    def _x_tl_mma_s8_s32(self, a: list, dt: DType, e: Any) -> None:
        self._mma(a, "s8")

    def _m8n8k4(self, a: list, c_type: str) -> None:
        self._full_warps(f"mma.sync.m8n8k4 ({c_type})")
        acc, ap, bp = a
        c_bytes = 32 if c_type == "f32" else 16
        c = self.ptr_read(acc, c_bytes, "mma C").view(np.float32 if c_type == "f32" else np.float16)
        av = self.ptr_read(ap, 8, "mma A").view(np.float16)
        bv = self.ptr_read(bp, 8, "mma B").view(np.float16)
        d = mma_m8n8k4(av, bv, c, c_type)
        self.ptr_write(acc, np.ascontiguousarray(d).view(np.uint8).reshape(self.T, c_bytes), "mma D")
        self.stats["mma"] = self.stats.get("mma", 0) + 1

    def _x_tl_mma_m8n8k4_f16_f32(self, a: list, dt: DType, e: Any) -> None:
        self._m8n8k4(a, "f32")

    def _x_tl_mma_m8n8k4_f16_f16(self, a: list, dt: DType, e: Any) -> None:
        self._m8n8k4(a, "f16")

    def _mma_sp(self, a: list, kind: str) -> None:
        self._full_warps(f"mma.sp ({kind})")
        acc, ap, b_lo, b_hi, meta = a
        c = self.ptr_read(acc, 16, "mma.sp C").view(np.int32 if kind == "s8" else np.float32)
        av = self.ptr_read(ap, 16, "mma.sp A").view(np.uint32)
        bv = np.concatenate([self.ptr_read(b_lo, 8, "mma.sp B (low K half)").view(np.uint32),
                             self.ptr_read(b_hi, 8, "mma.sp B (high K half)").view(np.uint32)], axis=1)
        meta = np.broadcast_to(np.asarray(meta).astype(np.int64) & 0xFFFFFFFF, (self.T,))
        d = mma_sp(kind, av, bv, meta, c)
        self.ptr_write(acc, np.ascontiguousarray(d).view(np.uint8).reshape(self.T, 16), "mma.sp D")
        self.stats["mma_sp"] = self.stats.get("mma_sp", 0) + 1

    def _x_tl_mma_sp_f16_f32(self, a: list, dt: DType, e: Any) -> None:
        self._mma_sp(a, "f16")

    def _x_tl_mma_sp_bf16_f32(self, a: list, dt: DType, e: Any) -> None:
        self._mma_sp(a, "bf16")

    def _x_tl_mma_sp_s8_s32(self, a: list, dt: DType, e: Any) -> None:
        self._mma_sp(a, "s8")

    def _x_tl_u32_at(self, a: list, dt: DType, e: Any) -> np.ndarray:
        """The 32-bit register at a per-thread array element (T.ptx_mma_sp's metadata operand)."""
        (p,) = a
        if p.mem.scope != "local":
            raise EmulationError("tl_u32_at reads a register: the pointer must be a local array")
        return self.ptr_read(p, 4, "metadata register").view(np.uint32)[:, 0].astype(np.int64)

    def _x_tl_mma_sp_e4m3_f32(self, a: list, dt: DType, e: Any) -> None:
        self._mma_sp(a, "e4m3")

    def _x_tl_mma_sp_e5m2_f32(self, a: list, dt: DType, e: Any) -> None:
        self._mma_sp(a, "e5m2")

    def _x_tl_mma_block_scale_m16n8k64_mxf4nvf4_4x_e2m1_e2m1_ue4m3(self, a: list, dt: DType, e: Any) -> None:
        self._full_warps("mma.sync block_scale")
        acc, ap, bp, sfa, sfb, byte_a, tid_a, byte_b, tid_b = a
        if np.any(np.asarray(byte_a)) or np.any(np.asarray(byte_b)):
            raise EmulationError("scale_vec::4X takes byte-id 0")
        for name, sel, hi in (("thread-id-a", tid_a, 1), ("thread-id-b", tid_b, 3)):
            sel = np.asarray(sel)
            if (sel.ndim and (sel != sel.reshape(-1)[0]).any()) or not 0 <= int(sel.reshape(-1)[0]) <= hi:
                raise EmulationError(f"{name} must be a warp-uniform value in [0, {hi}], got {sel}")
        c = self.ptr_read(acc, 16, "mma C").view(np.float32)
        av = self.ptr_read(ap, 16, "mma A").view(np.uint32)
        bv = self.ptr_read(bp, 8, "mma B").view(np.uint32)
        sa = np.broadcast_to(np.asarray(sfa, np.uint32), (self.T,))
        sb = np.broadcast_to(np.asarray(sfb, np.uint32), (self.T,))
        d = mma_block_scale_mxf4nvf4(av, bv, c, sa, sb, tid_a, tid_b)
        self.ptr_write(acc, np.ascontiguousarray(d).view(np.uint8).reshape(self.T, 16), "mma D")
        self.stats["mma"] = self.stats.get("mma", 0) + 1

    def _x_tl_regs_copy16(self, a: list, dt: DType, e: Any) -> None:
        """Four 32-bit registers moved between per-thread arrays (an A fragment taken from registers)."""
        dst, src = a
        if dst.mem.scope != "local" or src.mem.scope != "local":
            raise EmulationError("tl_regs_copy16 moves registers: both pointers must be local arrays")
        self.ptr_write(dst, self.ptr_read(src, 16, "register A fragment").copy(), "register A fragment")

    # ---------------------------------------------------------------- helpers: wgmma (sm_90a)
    def _smem_address(self, p: Ptr) -> np.ndarray:
        """The emulated shared-window address of a shared pointer (allocations 1024-byte aligned, like the pool
        `with_header` aligns for swizzled descriptors)."""
        if p.mem.scope != "shared":
            raise EmulationError(f"wgmma descriptor of a {p.mem.scope} pointer ({p.mem.name}); it must be shared")
        key = id(p.mem)
        if key not in self.smem_base:
            top = max((b + m.data.shape[-1] for b, m in self.smem_regions), default=0)
            base = -(-top // 1024) * 1024
            self.smem_base[key] = base
            self.smem_regions.append((base, p.mem))
        return self.smem_base[key] + np.asarray(p.off, np.int64)

    def _desc(self, a: list, mode: int) -> np.ndarray:
        addr = self._full(self._smem_address(a[0]))
        for v in np.unique(addr[self.mask]):
            self.desc_bufs[int(v) & 0x3FFF0] = a[0].buf
        return encode_descriptor(addr, a[1], a[2], mode)

    def _x_tl_wgmma_desc(self, a: list, dt: DType, e: Any) -> np.ndarray:
        return self._desc(a, 0)

    def _x_tl_wgmma_desc_sw(self, a: list, dt: DType, e: Any) -> np.ndarray:
        return self._desc(a, int(np.asarray(a[3]).flat[0]))

    def _proxy_fence(self) -> None:
        """fence.proxy.async by the active threads: their own generic shared writes, and every write ordered
        before them by a barrier, become visible to the async proxy (wgmma operand reads)."""
        tids = self.tid[self.mask]
        for mem in self.shared_mems:
            mem.proxy_ok |= (mem.w_epoch >= 0) & ((mem.w_epoch < self.epoch) | np.isin(mem.w_tid, tids))

    def _x_tl_fence_proxy_async(self, a: list, dt: DType, e: Any) -> None:
        self._proxy_fence()

    def _x_tl_named_barrier_sync(self, a: list, dt: DType, e: Any) -> None:
        """``bar.sync id, count``: the active threads must be `count` threads, a contiguous range of whole warps.
        The interval's accesses by them become ordered before them, and only them: a thread outside the range
        still races with what they wrote or read (`_named_ordered`)."""
        count = self._uniform(a[1], "named barrier thread count")
        self._full_warps("bar.sync")
        tids = self.tid[self.mask]
        if len(tids) != count or (count and int(tids.max()) - int(tids.min()) + 1 != count):
            raise EmulationError(f"bar.sync {self._uniform(a[0], 'named barrier id')}, {count} reached by "
                                 f"{len(tids)} threads")
        lo, hi = int(tids.min()), int(tids.max())
        for mem in self.shared_mems:
            w = (mem.w_epoch == self.epoch) & (mem.w_tid >= lo) & (mem.w_tid <= hi) & ~mem.w_ord
            mem.w_ord[w], mem.w_lo[w], mem.w_hi[w] = True, lo, hi
            r = (mem.r_epoch == self.epoch) & (mem.r_min >= lo) & (mem.r_max <= hi) & ~mem.r_ord
            mem.r_ord[r], mem.r_lo[r], mem.r_hi[r] = True, lo, hi
        self.stats["named_barriers"] = self.stats.get("named_barriers", 0) + 1

    def _warpgroups(self, what: str) -> list[int]:
        """The warpgroups executing a .sync.aligned warpgroup instruction (all 128 threads or none)."""
        if self.T % 128:
            raise EmulationError(f"{what} in a block of {self.T} threads (not whole warpgroups)")
        w = self.mask.reshape(-1, 128)
        if (w.any(1) & ~w.all(1)).any():
            raise EmulationError(f"{what} executed by part of a warpgroup (.sync.aligned needs all 128 threads)")
        return [int(g) for g in np.nonzero(w.all(1))[0]]

    def _x_tl_wgmma_fence(self, a: list, dt: DType, e: Any) -> None:
        for wg in self._warpgroups("wgmma.fence"):
            for mem in self.local_mems:
                mem.dirty[wg * 128:(wg + 1) * 128] = False

    def _x_tl_wgmma_commit(self, a: list, dt: DType, e: Any) -> None:
        for wg in self._warpgroups("wgmma.commit_group"):
            self.wg_groups.setdefault(wg, []).append(self.wg_open.pop(wg, []))

    def _x_tl_wgmma_wait(self, a: list, dt: DType, e: Any) -> None:
        n = int(np.asarray(a[0]).flat[0]) if a else 0
        for wg in self._warpgroups("wgmma.wait_group"):
            groups = self.wg_groups.get(wg, [])
            while len(groups) > n:
                for op in groups.pop(0):
                    self._wgmma_retire(op)

    _x_tl_wgmma_wait_group = _x_tl_wgmma_wait  # wgmma.wait_group N

    def _x_tl_wgmma_fence_acc(self, a: list, dt: DType, e: Any) -> None:
        """An empty asm naming the accumulator registers (a compiler fence): they must not be in flight."""
        p, regs = a[0], int(np.asarray(a[1]).flat[0])
        b, m = self._ptr_bytes(p, 4 * regs, "tl_wgmma_fence_acc")
        rows = np.broadcast_to(self.tid[:, None], b.shape)
        if (p.mem.inflight[rows[m], b[m]] == 2).any():
            raise EmulationError("tl_wgmma_fence_acc: accumulator registers still in flight (missing wgmma.wait_group)")

    def _operand(self, d: np.ndarray, wg: int, k_major: bool, rows: int, what: str, kind: str = "f16",
                 k: int | None = None) -> _Operand:
        vals = np.unique(np.asarray(d, np.uint64)[wg * 128:(wg + 1) * 128])
        if vals.size != 1:
            raise EmulationError(f"wgmma {what} descriptor differs between the threads of warpgroup {wg}")
        desc = Descriptor.decode(int(vals[0]))
        k_kind, elem = wgmma_k_elem(kind)
        addr = canonical_addresses(desc, k_major, rows, k_kind if k is None else k, elem)
        region = [(b, m) for b, m in self.smem_regions if b <= desc.start < b + m.data.shape[-1]]
        if not region:
            raise EmulationError(f"wgmma {what} descriptor start {desc.start:#x} is outside every shared allocation")
        base, mem = region[0]
        if desc.mode and not mem.dyn:
            raise EmulationError(f"wgmma {what}: swizzled descriptor into static shared {mem.name}; only the dynamic "
                                 "pool is aligned to the 1024-byte swizzle repeat")
        idx = addr - base
        if idx.min() < 0 or idx.max() + elem > mem.data.shape[-1]:
            raise EmulationError(f"wgmma {what} reads outside {mem.name} (descriptor {desc})")
        if (desc.start & 15) or (addr & (elem - 1)).any():
            raise EmulationError(f"wgmma {what} operand not 16-byte aligned (descriptor {desc})")
        # the buffer: the one whose descriptor started nearest below (a gemm adds sub-matrix offsets to the
        # descriptor of its tile's origin)
        starts = [st for st in self.desc_bufs if base <= st <= desc.start]
        return _Operand(mem, idx, self.desc_bufs[max(starts)] if starts else "", elem)

    def _operand_issue(self, op: _Operand, wg: int, what: str) -> None:
        """Issue-time checks of a shared operand, then mark its bytes as read by an in-flight wgmma."""
        mem, b = op.mem, (op.addr[..., None] + np.arange(op.elem)).reshape(-1)
        if mem.pending[b].any():
            raise EmulationError(f"wgmma {what}: reads {mem.name} bytes an in-flight cp.async has not landed yet")
        if (mem.w_epoch[b] < 0).any():
            raise EmulationError(f"wgmma {what}: reads {mem.name} (shared) bytes no thread of the block wrote")
        lo, hi = wg * 128, wg * 128 + 127
        # a named barrier of threads covering the warpgroup orders the write before it (warp-specialised consumers)
        named = mem.w_ord[b] & (mem.w_lo[b] <= lo) & (hi <= mem.w_hi[b])
        racy = (mem.w_epoch[b] == self.epoch) & ((mem.w_tid[b] < lo) | (mem.w_tid[b] > hi)) & ~named
        if racy.any():
            k = int(np.argmax(racy))
            raise EmulationError(f"wgmma {what}: shared race on {mem.name} byte {int(b[k])}: warpgroup {wg} reads "
                                 f"what thread {int(mem.w_tid[b[k]])} wrote with no barrier between")
        if self.check_proxy and not mem.proxy_ok[b].all():
            k = int(np.argmin(mem.proxy_ok[b]))
            raise EmulationError(f"wgmma {what}: reads {mem.name} byte {int(b[k])} written through the generic proxy "
                                 f"(by thread {int(mem.w_tid[b[k]])}) with no fence.proxy.async between")
        np.add.at(mem.wg_reading, b, 1)

    def _wgmma_issue(self, form: tuple[str, int, str, int, int], a: list) -> None:
        """``wgmma.mma_async``: per warpgroup, capture the operands (and scale-d); the MMA runs at its retirement."""
        kind_ss, n, kind, ta, tb = form
        scale = 1
        sparse = kind_ss.startswith("sp")
        if kind_ss.endswith("_sd"):
            scales = np.broadcast_to(np.asarray(a[4 if sparse else 3], np.int64), (self.T,))[self.mask]
            if np.unique(scales).size != 1:
                raise EmulationError("wgmma scale-d differs between the threads of a warpgroup")
            scale = int(scales[0] != 0)
        kind_ss = {"ss_sd": "ss", "sp": "rs", "sp_rs_sd": "rs", "sp_ss_sd": "ss"}.get(kind_ss, kind_ss)
        what = f"wgmma{'.sp' if sparse else ''} m64n{n}k{32 if sparse else wgmma_k_elem(kind)[0]} ({kind_ss})"
        acc_p = a[0]
        if acc_p.mem.scope != "local":
            raise EmulationError(f"{what}: the accumulator must be registers (a local array)")
        acc_idx = self._full(np.asarray(acc_p.off, np.int64))[:, None] + np.arange(n * 2)
        if (acc_idx < 0).any() or acc_idx.max() >= acc_p.mem.data.shape[-1]:
            raise EmulationError(f"{what}: accumulator registers out of bounds of {acc_p.mem.name}")
        for wg in self._warpgroups(what):
            sl = slice(wg * 128, (wg + 1) * 128)
            rows = np.arange(128)[:, None] + wg * 128
            if scale and acc_p.mem.dirty[rows, acc_idx[sl]].any():
                raise EmulationError(f"{what}: accumulator registers written since the last wgmma.fence (missing "
                                     "wgmma.fence before the wgmma)")
            a_regs = a_src = a_op = None
            if kind_ss == "rs":
                ap = a[1]
                if ap.mem.scope != "local":
                    raise EmulationError(f"{what}: register A operand is not a local array")
                a_idx = self._full(np.asarray(ap.off, np.int64))[sl, None] + np.arange(16)
                if not ap.mem.init[rows, a_idx].all():
                    raise EmulationError(f"{what}: A registers {ap.mem.name} never written")
                if ap.mem.dirty[rows, a_idx].any():
                    raise EmulationError(f"{what}: A registers written since the last wgmma.fence (missing "
                                         "wgmma.fence before the wgmma)")
                a_regs = np.ascontiguousarray(ap.mem.data[rows, a_idx]).view(np.uint32)
                a_src = (ap.mem, a_idx)
            else:
                a_op = self._operand(a[1], wg, not ta, 64, "A", kind[:4])
            b_op = self._operand(a[2], wg, not tb, n, "B", kind[4:] or kind, 32 if sparse else None)
            if a_op is not None:
                self._operand_issue(a_op, wg, what + " A")
            self._operand_issue(b_op, wg, what + " B")
            meta = None
            if sparse:
                meta = (np.broadcast_to(np.asarray(a[3]).astype(np.int64), (self.T,))[sl] & 0xFFFFFFFF).copy()
            op = _Wgmma(wg, kind, n, acc_p.mem, acc_idx[sl], a_regs, a_src, a_op, b_op, scale, meta)
            self._mark_registers(op)
            self.wg_inflight += 1
            self.wg_open.setdefault(wg, []).append(op)
        self.stats["wgmma"] = self.stats.get("wgmma", 0) + 1

    def _mark_registers(self, op: _Wgmma) -> None:
        """Mark the registers of an in-flight wgmma: A (no writes) and the accumulator (no accesses)."""
        rows = np.arange(128)[:, None] + op.wg * 128
        if op.a_reg_src is not None:
            mem, idx = op.a_reg_src
            mem.inflight[rows, idx] = np.maximum(mem.inflight[rows, idx], 1)
        op.acc.inflight[rows, op.acc_idx] = 2

    def _operand_values(self, op: _Operand, kind: str, wg: int) -> np.ndarray:
        mem, b = op.mem, (op.addr[..., None] + np.arange(op.elem))
        np.add.at(mem.wg_reading, b.reshape(-1), -1)
        bid = _buf_id(op.buf)
        wb = mem.w_buf[b]
        if bid >= 0 and ((wb >= 0) & (wb != bid)).any():
            raise EmulationError(f"wgmma reads {op.buf} bytes of {mem.name} last written through another buffer "
                                 "(two tiles overlap in the shared pool)")
        flat = b.reshape(-1)
        fresh = (mem.r_epoch[flat] != self.epoch) | mem.r_ord[flat]
        mem.r_ord[flat] = False
        mem.r_min[flat[fresh]] = 1 << 30
        mem.r_max[flat[fresh]] = -1
        mem.r_epoch[flat] = self.epoch
        mem.r_min[flat] = np.minimum(mem.r_min[flat], wg * 128)
        mem.r_max[flat] = np.maximum(mem.r_max[flat], wg * 128 + 127)
        if op.elem == 1:
            return _half_values(mem.data[b][..., 0], kind)
        raw = np.ascontiguousarray(mem.data[b]).view(np.uint16)[..., 0]
        return _half_values(raw, kind)

    def _wgmma_retire(self, op: _Wgmma) -> None:
        rows = np.arange(128)[:, None] + op.wg * 128
        self.wg_inflight -= 1
        op.acc.inflight[rows, op.acc_idx] = 0
        if op.a_reg_src is not None:
            op.a_reg_src[0].inflight[rows, op.a_reg_src[1]] = 0
        for later in self.wg_open.get(op.wg, []) + [o for g in self.wg_groups.get(op.wg, []) for o in g]:
            self._mark_registers(later)  # batches still in flight keep their registers (often the same ones)
        if op.scale and not op.acc.init[rows, op.acc_idx].all():
            raise EmulationError(f"wgmma accumulates into {op.acc.name} registers never written (scale-d is 1)")
        if op.a_regs is not None:
            A = np.zeros((64, 16))
            ar, ac = wgmma_a_layout()
            A[ar, ac] = _unpack(op.a_regs, op.kind)
        else:
            A = self._operand_values(op.a, op.kind[:4], op.wg)
        if op.e is not None:  # wgmma.sp: each warp's 16 rows decompressed by its mma.sp m16n8k32 metadata
            A = wgmma_sp_decompress(A, op.e)
        B = self._operand_values(op.b, op.kind[4:] or op.kind, op.wg).T  # (K, n); (32, n) for wgmma.sp
        dr, dc = wgmma_acc_layout(op.n)
        acc = np.ascontiguousarray(op.acc.data[rows, op.acc_idx]).view(np.float32)
        C = np.zeros((64, op.n))
        if op.scale:
            C[dr, dc] = acc
        D = (A @ B + C).astype(np.float32)
        op.acc.data[rows, op.acc_idx] = np.ascontiguousarray(D[dr, dc]).view(np.uint8)
        op.acc.init[rows, op.acc_idx] = True

    # ---------------------------------------------------------------- helpers: TMA + mbarrier (sm_90a)
    def _x_tl_tma_load_2d(self, a: list, dt: DType, e: Any) -> None:
        """``tl_tma_load_2d("A", box_rows, box_cols, dst, slot, bytes, col, row)`` by the active threads:
        arrive.expect_tx(bytes) on mbarrier `slot`, then the box of tensor A at (row, col) (row-major,
        out-of-bounds elements zero) copied to `dst`; the bytes land when a thread waits on the barrier."""
        name, rows, cols, dst = str(a[0]), int(a[1]), int(a[2]), a[3]
        if name not in self.tensors:
            raise EmulationError(f"tl_tma_load_2d: no kernel tensor {name!r} for its tensor map")
        gmem, shape, size = self.tensors[name]
        if len(shape) != 2:
            raise EmulationError(f"tl_tma_load_2d: tensor {name} has {len(shape)} dims; the maps are 2-D")
        if dst.mem.scope != "shared":
            raise EmulationError("tl_tma_load_2d destination is not shared memory")
        self._proxy_fence()
        full = [np.broadcast_to(np.asarray(x, np.int64), (self.T,)) for x in (a[4], a[5], a[6], a[7])]
        dst_off = np.broadcast_to(np.asarray(dst.off, np.int64), (self.T,))
        gview = gmem.data.reshape(shape[0], shape[1] * size)
        for t in np.nonzero(self.mask)[0]:
            slot, nbytes, col, row = (int(x[t]) for x in full)
            bar = self.tma[slot]
            if bar.arrived:
                raise EmulationError(f"tl_tma_load_2d: mbarrier {slot} gets a second arrive.expect_tx before its "
                                     "phase completed (arrival count 1)")
            if nbytes != rows * cols * size:
                raise EmulationError(f"tl_tma_load_2d: expect_tx of {nbytes} bytes for a {rows}x{cols} box of "
                                     f"{rows * cols * size} bytes (the barrier phase would never complete)")
            box = np.zeros((rows, cols * size), np.uint8)
            r0, r1 = max(row, 0), min(row + rows, shape[0])
            c0, c1 = max(col, 0), min(col + cols, shape[1])
            if r0 < r1 and c0 < c1:
                box[r0 - row:r1 - row, (c0 - col) * size:(c1 - col) * size] = gview[r0:r1, c0 * size:c1 * size]
            b = int(dst_off[t]) + np.arange(box.size)
            if b[0] < 0 or b[-1] >= dst.mem.data.shape[-1]:
                raise EmulationError(f"tl_tma_load_2d: box of {box.size} bytes out of bounds of {dst.mem.name}")
            if b[0] % 128:
                raise EmulationError(f"tl_tma_load_2d: shared destination not 128-byte aligned ({dst.mem.name})")
            self._check_write(dst.mem, b, np.ones(b.shape, np.bool_), "TMA copy", np.full(b.shape, t), dst.buf)
            dst.mem.pending[b] = True
            bar.arrived, bar.expected = True, nbytes
            bar.copies.append(_Copy(dst.mem, b, box.reshape(-1), np.full(b.shape, t, np.int32), _buf_id(dst.buf)))
        self.stats["tma"] = self.stats.get("tma", 0) + 1

    def _x_tl_tma_wait(self, a: list, dt: DType, e: Any) -> None:
        """``mbarrier.try_wait.parity`` loop on `slot` with each thread's own phase bit, then the bit flips."""
        slots = np.broadcast_to(np.asarray(a[0], np.int64), (self.T,))
        for slot in np.unique(slots[self.mask]):
            bar = self.tma[int(slot)]
            who = self.mask & (slots == slot)
            if bar.waits is None:
                bar.waits = np.zeros(self.T, np.int64)
            if (bar.waits[who] < bar.completed - 1).any():
                raise EmulationError(f"tl_tma_wait({slot}): the barrier completed two phases since this thread's last "
                                     "wait: its parity bit now names a completed phase as pending (phase aliasing)")
            if (bar.waits[who] > bar.completed).any():
                raise EmulationError(f"tl_tma_wait({slot}): this thread's parity names the phase that already "
                                     "completed: the wait returns before the copy lands (phase out of step)")
            if (bar.waits[who] >= bar.completed).any():  # the phase these threads wait for must complete now
                if not bar.arrived:
                    raise EmulationError(f"tl_tma_wait({slot}): no copy was issued on this barrier's phase: the wait "
                                         "never returns (deadlock)")
                for c in bar.copies:
                    c.mem.pending[c.idx] = False
                    c.mem.data[c.idx] = c.data
                    c.mem.w_epoch[c.idx] = self.epoch - 1  # ordered before the waiting threads by the barrier
                    c.mem.w_tid[c.idx] = c.tids
                    c.mem.w_ord[c.idx] = False
                    c.mem.w_buf[c.idx] = c.buf
                    c.mem.proxy_ok[c.idx] = True  # written by the async proxy
                bar.copies, bar.arrived, bar.expected = [], False, 0
                bar.completed += 1
            bar.waits[who] += 1

    def _x_tl_tma_init(self, a: list, dt: DType, e: Any) -> None:
        self.tma = [_MBarrier() for _ in range(TMA_SLOTS)]
        self._barrier()

    def _x_tl_bits32(self, a: list, dt: DType, e: Any) -> np.ndarray:
        return np.ascontiguousarray(np.asarray(a[0], np.float32)).view(np.uint32)

    def _x_tl_shfl_xor(self, a: list, dt: DType, e: Any) -> np.ndarray:
        return self.shfl_xor(a[0], int(a[1]))

    def _warp_reduce(self, a: list, op: Callable) -> np.ndarray:
        self._full_warps("warp reduction (shfl.sync)")
        return warp_butterfly(np.broadcast_to(np.asarray(a[0], np.float32), (self.T,)), int(a[1]), op)

    def _x_tl_warp_sum(self, a: list, dt: DType, e: Any) -> np.ndarray:
        return self._warp_reduce(a, np.add)

    def _x_tl_warp_max(self, a: list, dt: DType, e: Any) -> np.ndarray:
        return self._warp_reduce(a, np.maximum)  # NaN-propagating, as the header's tl_max_nan

    def _x_tl_warp_min(self, a: list, dt: DType, e: Any) -> np.ndarray:
        return self._warp_reduce(a, np.minimum)

    def _x_tl_max_nan(self, a: list, dt: DType, e: Any) -> np.ndarray:
        return np.maximum(np.asarray(a[0], dt.np), np.asarray(a[1], dt.np))  # NaN-propagating, like max.NaN

    def _x_tl_min_nan(self, a: list, dt: DType, e: Any) -> np.ndarray:
        return np.minimum(np.asarray(a[0], dt.np), np.asarray(a[1], dt.np))

    def _atomic(self, a: list, dt: DType, op: Any) -> np.ndarray:
        """Atomic read-modify-write, applied thread by thread in thread order; returns the old values."""
        p, v = a[0], np.broadcast_to(np.asarray(a[1]), (self.T,))
        size = np.dtype(p.elem.store_np).itemsize
        b, m = self._ptr_bytes(p, size, "atomic")
        view = p.mem.data.view(p.elem.store_np) if p.mem.scope != "local" else None
        if view is None:
            raise NotImplementedError("atomic on local memory")
        if p.mem.scope == "shared":
            self.stats["shared_atomics"] = self.stats.get("shared_atomics", 0) + 1
        idx = b[:, 0] // size
        old = np.zeros(self.T, p.elem.store_np)
        for t in np.nonzero(m)[0]:
            old[t] = view[idx[t]]
            view[idx[t]] = op(view[idx[t]], v[t].astype(p.elem.store_np))
        return old

    def _x_atomicAdd(self, a: list, dt: DType, e: Any) -> np.ndarray:
        return self._atomic(a, dt, lambda x, y: x + y)

    _x_tl_atomic_add = _x_atomicAdd

    def _x_tl_atomic_max(self, a: list, dt: DType, e: Any) -> np.ndarray:
        return self._atomic(a, dt, lambda x, y: max(x, y))

    def _x_tl_atomic_min(self, a: list, dt: DType, e: Any) -> np.ndarray:
        return self._atomic(a, dt, lambda x, y: min(x, y))

    _x_atomicMax = _x_tl_atomic_max
    _x_atomicMin = _x_tl_atomic_min


# ------------------------------------------------------------------------------------------- entry point
def _global_mem(name: str, t: Any) -> Mem:
    import torch

    if not t.is_contiguous():
        raise ValueError(f"{name}: emulate() needs contiguous tensors")
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    elif t.element_size() == 1 and t.is_floating_point():  # fp8: its bit patterns
        t = t.view(torch.uint8)
    return Mem(name, "global", t.detach().numpy().reshape(-1).view(np.uint8))


def _workspaces(artifact: Any) -> dict[str, Mem]:
    """The host's workspaces (``T.alloc_global``, the scratch tensor between a function's launches), zero-filled,
    by buffer name: the device kernels get them as ``<name>_ptr`` parameters."""
    import tvm

    from tilelang.transform import utils as C

    found: dict[str, Mem] = {}
    host = getattr(artifact, "host_mod", None)
    for func in (host.functions.values() if host is not None else ()):
        if not isinstance(func, tirx.PrimFunc):
            continue
        for decl in C.collect(func.body, tirx.DeclBuffer):
            calls = [c for c in C.collect(decl, tvm.ir.Call) if str(getattr(c.op, "name", "")).endswith(
                "TVMBackendAllocWorkspace")]
            if calls:
                nbytes = int(calls[0].args[2])
                found[str(decl.buffer.name)] = Mem(str(decl.buffer.name), "global", np.zeros(nbytes, np.uint8))
    return found


def emulate(artifact: Any, *tensors: Any, patch: dict[str, Callable] | None = None,
            deferred_cp_async: bool = True, check_proxy: bool = True, poison_locals: bool = False
            ) -> dict[str, int]:
    """Run `artifact`'s device kernels on `tensors` (torch CPU tensors / scalars in the kernel's parameter
    order), in place; the host's workspaces (``T.alloc_global``) are zero-filled scratch shared by the launches.
    Returns counters (barriers, mma ops, ...) for tests. ``check_proxy=False`` skips the
    fence.proxy.async check of wgmma shared operands (to check the numerics of a kernel that lacks one);
    ``poison_locals=True`` lets a thread read registers it never wrote (as all-ones bytes, NaN for floats) instead of
    failing: code whose idle lanes compute on unset registers and discard the result (TVM's allreduce)."""
    params = artifact.params() if callable(artifact.params) else artifact.params
    if len(params) != len(tensors):
        raise ValueError(f"expected {len(params)} arguments ({[p.name for p in params]}), got {len(tensors)}")
    by_name: dict[str, Any] = {}
    sizes: dict[str, int] = {}
    maps: dict[str, tuple[Mem, tuple[int, ...], int]] = {}
    for p, t in zip(params, tensors):
        if getattr(p, "is_tensor", True) and hasattr(t, "numpy"):
            by_name[p.name] = _global_mem(p.name, t)
            maps[p.name] = (by_name[p.name], tuple(t.shape), t.element_size())
            for d, n in zip(p.shape, t.shape):
                if not isinstance(d, int):
                    sizes[str(d)] = int(n)
        else:
            by_name[p.name] = t
    by_name.update((nm, m) for nm, m in _workspaces(artifact).items() if nm not in by_name)
    order = artifact.metadata.get("device_functions") or [gv.name_hint for gv in artifact.device_mod.functions]
    funcs = {gv.name_hint: f for gv, f in artifact.device_mod.functions.items()}
    stats: dict[str, int] = {}
    for fname in order:
        func = funcs[fname]
        args: dict[str, Any] = {}
        for v in func.params:
            nm = _name(v)
            key = nm[:-4] if nm.endswith("_ptr") and nm[:-4] in by_name else nm
            if key in by_name:
                args[nm] = by_name[key]
            elif nm in sizes:
                args[nm] = sizes[nm]
            else:
                raise NotImplementedError(f"device parameter {nm} of {fname}: no matching kernel argument")
        emu = Emulator(func, args, patch=patch, deferred_cp_async=deferred_cp_async, check_proxy=check_proxy,
                       tensors=maps, poison_locals=poison_locals)
        emu.run()
        for k, v in emu.stats.items():
            stats[k] = stats.get(k, 0) + v
    return stats
