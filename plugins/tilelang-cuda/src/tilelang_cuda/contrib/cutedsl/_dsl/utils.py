"""Small helpers of the generated kernels (bit casts, register tensors, warp election, partial barriers, register
reallocation, half2 packing) on the CuTe DSL."""

from __future__ import annotations

import cutlass
import cutlass.cute as cute
from cutlass._mlir.dialects import llvm, nvvm
from cutlass.base_dsl.typing import BFloat16, Float16, Float32, Int8, Int16, Int32, Numeric, Uint8, Uint16, Uint32
from cutlass.cute.tensor import TensorSSA
from cutlass.cutlass_dsl import T

from tilelang_cuda.contrib.cutedsl._dsl._asm import asm

type_map = {  # TVM dtype name -> wgmma operand type
    "int8": nvvm.WGMMATypes.s8, "int32": nvvm.WGMMATypes.s32, "uint8": nvvm.WGMMATypes.u8,
    "float16": nvvm.WGMMATypes.f16, "fp16": nvvm.WGMMATypes.f16, "bfloat16": nvvm.WGMMATypes.bf16,
    "bf16": nvvm.WGMMATypes.bf16, "float32": nvvm.WGMMATypes.f32, "fp32": nvvm.WGMMATypes.f32,
    "tf32": nvvm.WGMMATypes.tf32, "float8_e4m3": nvvm.WGMMATypes.e4m3, "float8_e4m3fn": nvvm.WGMMATypes.e4m3,
    "e4m3": nvvm.WGMMATypes.e4m3, "float8_e5m2": nvvm.WGMMATypes.e5m2, "e5m2": nvvm.WGMMATypes.e5m2,
}

_BY_NAME = {"int8": Int8, "int16": Int16, "int32": Int32, "uint8": Uint8, "uint16": Uint16, "uint32": Uint32,
            "float16": Float16, "float32": Float32, "bfloat16": BFloat16}


def _dsl_type(dtype):
    if isinstance(dtype, type) and issubclass(dtype, Numeric):
        return dtype
    if str(dtype) in _BY_NAME:
        return _BY_NAME[str(dtype)]
    raise ValueError(f"unknown dtype {dtype!r}; use a CuTe DSL numeric type or one of {sorted(_BY_NAME)}")


def bitcast(value, target_dtype):
    """The bits of the scalar `value` read as `target_dtype` (same width), as ``*(T *)&value`` in C."""
    target = _dsl_type(target_dtype)
    source = value.ir_value() if hasattr(value, "ir_value") else value
    return target(llvm.bitcast(target.mlir_type, source))


def recast_ptr(ptr, dtype):
    """`ptr` as a pointer to `dtype` elements (same address)."""
    return cute.recast_ptr(ptr, dtype=_dsl_type(dtype))


def cast_tensor(value, dtype):
    """`value` (a loaded ``TensorSSA`` or a scalar) converted element-wise to `dtype`."""
    dtype = _dsl_type(dtype)
    if isinstance(value, TensorSSA):
        return value if value.dtype is dtype else value.to(dtype)
    if isinstance(value, Numeric):
        return value if type(value) is dtype else value.to(dtype)
    return dtype(value)


def as_tensor_ssa(value):
    """The values of `value` as a ``TensorSSA`` (loads a tensor; a ``TensorSSA`` is returned as is)."""
    if isinstance(value, TensorSSA):
        return value
    if isinstance(value, cute.Tensor):
        return value.load()
    raise TypeError(f"as_tensor_ssa: expected a cute.Tensor or TensorSSA, got {type(value).__name__}")


def as_rmem_tensor(value):
    """A register tensor holding `value` (a ``TensorSSA`` is stored into a new one; a tensor is returned as is)."""
    if isinstance(value, cute.Tensor):
        return value
    if isinstance(value, TensorSSA):
        out = cute.make_rmem_tensor(value.shape, value.dtype)
        out.store(value)
        return out
    raise TypeError(f"as_rmem_tensor: expected a cute.Tensor or TensorSSA, got {type(value).__name__}")


def make_filled_tensor(shape, value, dtype=None):
    """A register tensor of `shape` with every element `value` (of `dtype`, default the type of `value`)."""
    dtype = _dsl_type(dtype) if dtype is not None else type(value) if isinstance(value, Numeric) else Float32
    out = cute.make_rmem_tensor(shape, dtype)
    out.fill(dtype(value))
    return out


def make_tensor_at_offset(ptr, offset, shape, div_by=1):
    """A tensor of `shape` starting `offset` elements after `ptr`; `div_by` promises `offset` % `div_by` == 0
    (for vectorised accesses)."""
    if not isinstance(offset, int) and not isinstance(offset, cutlass.Integer):
        offset = cutlass.Int64(offset)
    if div_by != 1:
        offset = cute.assume(cutlass.as_numeric(offset), divby=div_by)
    return cute.make_tensor(ptr + offset, shape)


def handle_add_byte_offset(handle, byte_offset):
    """A one-byte tensor `byte_offset` bytes after the pointer (or tensor start) `handle`."""
    ptr = handle.iterator if isinstance(handle, cute.Tensor) else handle
    return make_tensor_at_offset(cute.recast_ptr(ptr, dtype=Uint8), byte_offset, (1,))


def shuffle_elect(thread_extent):
    """True in the first warp of each group of `thread_extent` threads (0: of the whole block), warp-uniform."""
    warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
    if thread_extent == 0:
        return warp == 0
    if thread_extent % 32:
        raise ValueError(f"shuffle_elect: thread_extent must be a multiple of 32, got {thread_extent}")
    return warp % (thread_extent // 32) == 0


def sync_thread_partial(barrier_id, thread_count):
    """Barrier `barrier_id` over `thread_count` threads (``bar.sync``)."""
    from tilelang_cuda.contrib.cutedsl._dsl.reduce import bar_sync_ptx

    bar_sync_ptx(barrier_id, thread_count)


def warpgroup_reg_alloc(reg_count: int):
    """Raise this warpgroup's register budget to `reg_count` per thread (``setmaxnreg.inc``, sm_90a)."""
    cute.arch.setmaxregister_increase(reg_count)


def warpgroup_reg_dealloc(reg_count: int):
    """Lower this warpgroup's register budget to `reg_count` per thread (``setmaxnreg.dec``, sm_90a)."""
    cute.arch.setmaxregister_decrease(reg_count)


def pack_half2(x, y) -> Int32:
    """The 16-bit values `x` (low half) and `y` (high half) packed into 32 bits (``mov.b32 d, {x, y}``)."""
    halves = [llvm.bitcast(T.i16(), v.ir_value() if hasattr(v, "ir_value") else Float16(v).ir_value())
              for v in (x, y)]
    return Int32(asm(T.i32(), halves, "mov.b32 $0, {$1, $2};", "=r,h,h", side_effects=False))


def runtime_assert(condition, message: str = "") -> None:
    """Abort the kernel (``trap``: the launch fails with an illegal-instruction error) where `condition` is false;
    `message` documents the check in the source only (PTX has no message for a trap)."""
    asm(None, [Int32(condition).ir_value()], "{ .reg .pred p; setp.eq.b32 p, $0, 0; @p trap; }", "r")


try:  # the DSL's float-type machinery (nvidia-cutlass-dsl 4.7 / 4.8)
    from cutlass.base_dsl.typing import Float, FloatMeta

    class Float4E2M1FN_unpack(Float, metaclass=FloatMeta, width=8, mlir_type=T.f4E2M1FN):
        """fp4 e2m1 values stored unpacked, one per byte (the element type of unpacked fp4 buffers)."""

except (ImportError, AttributeError, TypeError):  # pragma: no cover - an older DSL: stays a stand-in
    pass
