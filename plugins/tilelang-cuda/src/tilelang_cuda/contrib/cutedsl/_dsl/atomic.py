"""Atomic read-modify-write, vector atomic adds and ordered loads/stores (``tl::AtomicAdd`` ...) on the CuTe DSL.

`ptr` is a ``cute.Pointer`` (global or shared memory); its element type picks the instruction. Memory orders are
TileLang's ids: 0 relaxed, 1 consume, 2 acquire, 3 release, 4 acq_rel, 5 seq_cst.
"""

from __future__ import annotations

import cutlass
import cutlass.cute
from cutlass._mlir.dialects import llvm
from cutlass.cutlass_dsl import T

from tilelang_cuda.contrib.cutedsl._dsl._asm import asm

_RELAXED, _SEQ_CST = 0, 5


def _scalar(dtype):
    """(PTX type suffix, inline-asm constraint, MLIR type) of a 32/64-bit DSL scalar type."""
    table = {
        cutlass.Int32: ("s32", "r", T.i32), cutlass.Uint32: ("u32", "r", T.i32), cutlass.Int64: ("s64", "l", T.i64),
        cutlass.Uint64: ("u64", "l", T.i64), cutlass.Float32: ("f32", "f", T.f32),
        cutlass.Float64: ("f64", "d", T.f64),
    }
    if dtype not in table:
        raise TypeError(f"atomic helper: unsupported element type {dtype}; use a 32- or 64-bit integer or float")
    suffix, constraint, mlir = table[dtype]
    return suffix, constraint, mlir()


def _half_add(ptr, value, loc, ip):
    name = {cutlass.Float16: "f16", cutlass.BFloat16: "bf16"}[ptr.dtype]
    bits = llvm.bitcast(T.i16(), ptr.dtype(value).ir_value(loc=loc, ip=ip), loc=loc, ip=ip)
    old = asm(T.i16(), [ptr.llvm_ptr, bits], f"atom.add.noftz.{name} $0, [$1], $2;", "=h,l,h", loc=loc, ip=ip)
    return ptr.dtype(llvm.bitcast(ptr.dtype.mlir_type, old, loc=loc, ip=ip))


def AtomicAdd(ptr, value, *, loc=None, ip=None):
    """``*ptr += value`` atomically (relaxed, GPU scope); returns the previous value."""
    if ptr.dtype in (cutlass.Float16, cutlass.BFloat16):
        return _half_add(ptr, value, loc, ip)
    _scalar(ptr.dtype)
    return cutlass.cute.arch.atomic_add(ptr, ptr.dtype(value), sem="relaxed", scope="gpu", loc=loc, ip=ip)


def AtomicAddRet(ptr, value, *, loc=None, ip=None):
    """`AtomicAdd`, named for the callers that use the previous value."""
    return AtomicAdd(ptr, value, loc=loc, ip=ip)


def _vector_add(ptr, values, n, loc, ip):
    outs = ",".join(f"${i}" for i in range(n))
    ins = ",".join(f"${i}" for i in range(n + 1, 2 * n + 1))
    operands = [ptr.llvm_ptr] + [cutlass.Float32(values[i]).ir_value(loc=loc, ip=ip) for i in range(n)]
    asm(llvm.StructType.get_literal([T.f32()] * n), operands,
        f"atom.global.add.v{n}.f32 {{{outs}}}, [${n}], {{{ins}}};", ",".join(["=f"] * n + ["l"] + ["f"] * n),
        loc=loc, ip=ip)


def AtomicAddx2(dst_ptr, src_values, *, loc=None, ip=None):
    """Add ``src_values[0:2]`` to the two float32 at `dst_ptr` in one vector atomic (``atom.global.add.v2.f32``,
    sm_90+); `src_values` is anything indexable (a loaded ``TensorSSA``, a tensor, a tuple)."""
    _vector_add(dst_ptr, src_values, 2, loc, ip)


def AtomicAddx4(dst_ptr, src_values, *, loc=None, ip=None):
    """`AtomicAddx2` for four float32 (``atom.global.add.v4.f32``, sm_90+)."""
    _vector_add(dst_ptr, src_values, 4, loc, ip)


_CAS_LOOP = """{{
.reg .pred p;
.reg .b32 seen, want, got;
.reg .f32 cur, next;
ld.relaxed.gpu.b32 seen, [$1];
retry_${{:uid}}:
mov.b32 cur, seen;
{op}.f32 next, cur, $2;
mov.b32 want, next;
atom.relaxed.gpu.cas.b32 got, [$1], seen, want;
setp.ne.b32 p, got, seen;
mov.b32 seen, got;
@p bra retry_${{:uid}};
mov.b32 $0, seen;
}}"""


def _minmax(ptr, value, op, loc, ip):
    if ptr.dtype is cutlass.Float32:  # no atom.max.f32 before sm_90: compare-and-swap loop
        old = asm(T.f32(), [ptr.llvm_ptr, cutlass.Float32(value).ir_value(loc=loc, ip=ip)],
                  _CAS_LOOP.format(op=op), "=f,l,f", loc=loc, ip=ip)
        return cutlass.Float32(old)
    if ptr.dtype not in (cutlass.Int32, cutlass.Uint32, cutlass.Int64, cutlass.Uint64):
        raise TypeError(f"Atomic{op.capitalize()}: unsupported element type {ptr.dtype}")
    fn = cutlass.cute.arch.atomic_max if op == "max" else cutlass.cute.arch.atomic_min
    return fn(ptr, ptr.dtype(value), sem="relaxed", scope="gpu", loc=loc, ip=ip)


def AtomicMax(ptr, value, *, loc=None, ip=None):
    """``*ptr = max(*ptr, value)`` atomically; returns the previous value (float32 by a CAS loop)."""
    return _minmax(ptr, value, "max", loc, ip)


def AtomicMaxRet(ptr, value, *, loc=None, ip=None):
    """`AtomicMax`, named for the callers that use the previous value."""
    return AtomicMax(ptr, value, loc=loc, ip=ip)


def AtomicMin(ptr, value, *, loc=None, ip=None):
    """``*ptr = min(*ptr, value)`` atomically; returns the previous value (float32 by a CAS loop)."""
    return _minmax(ptr, value, "min", loc, ip)


def AtomicMinRet(ptr, value, *, loc=None, ip=None):
    """`AtomicMin`, named for the callers that use the previous value."""
    return AtomicMin(ptr, value, loc=loc, ip=ip)


def _order(memory_order: int, kind: str) -> tuple[str, str]:
    """(fence prefix, ``.sem``) of a load (`kind` "acquire") or store ("release") with TileLang's `memory_order`."""
    if memory_order == _SEQ_CST:
        return "fence.sc.gpu; ", "relaxed"
    return "", "relaxed" if memory_order == _RELAXED else kind


def AtomicLoad(ptr, memory_order: int = _SEQ_CST, *, loc=None, ip=None):
    """``*ptr`` with `memory_order` at GPU scope (``ld.acquire.gpu`` ...; seq_cst: ``fence.sc`` then relaxed)."""
    suffix, constraint, mlir = _scalar(ptr.dtype)
    fence, sem = _order(memory_order, "acquire")
    value = asm(mlir, [ptr.llvm_ptr], f"{fence}ld.{sem}.gpu.{suffix} $0, [$1];", f"={constraint},l,~{{memory}}",
                loc=loc, ip=ip)
    return ptr.dtype(value)


def AtomicStore(ptr, value, memory_order: int = _SEQ_CST, *, loc=None, ip=None):
    """``*ptr = value`` with `memory_order` at GPU scope (``st.release.gpu`` ...)."""
    suffix, constraint, _ = _scalar(ptr.dtype)
    fence, sem = _order(memory_order, "release")
    asm(None, [ptr.llvm_ptr, ptr.dtype(value).ir_value(loc=loc, ip=ip)],
        f"{fence}st.{sem}.gpu.{suffix} [$0], $1;", f"l,{constraint},~{{memory}}", loc=loc, ip=ip)
