"""The ROCm dialect's TIR-level operators: matrix-core instructions on register fragments and LDS transpose reads.

- ``T.tvm_mfma(dtype, shape, A_layout, B_layout, A_dtype, B_dtype, C_dtype, a, a_index, b, b_index, c,
  c_index)``: one CDNA MFMA (``v_mfma_<shape>``, e.g. shape ``"f32_16x16x16f16"``) on register vectors:
  ``c[c_index] = mfma(a[a_index], b[b_index], c[c_index])``, indices in units of the operand vectors
  (``A_dtype`` ``"float16x4"``: four halves). gfx90a / gfx942 / gfx950 (gfx950-only shapes there only).
- ``T.tvm_rdna_wmma(...)``: the same for RDNA ``v_wmma`` (gfx11 / gfx12, wave32), shape
  ``"f32_16x16x16_f16_w32"``.
- ``T.tvm_mfma_store`` / ``T.tvm_rdna_wmma_store``: the reference's accumulator-store intrinsics (the emitters'
  ``stmatrix`` writes accumulators with plain stores instead; these are not lowered by this backend).
- ``T.ds_read_tr16_b64(smem[i])`` / ``T.ds_read_tr8_b64(smem[i])``: gfx950's LDS transpose reads (64 bits,
  ``uint32x2``).

Each is a ``tl.*`` intrinsic lowered by `tilelang_rocm.tileops.dialect` to the LLVM AMDGPU intrinsic; another target (or
an AMD GPU without the instruction) refuses it with a LoweringError naming the construct, the target and the
first GPU that has it.
"""

from __future__ import annotations

import functools
from typing import Any

# the PTX spellings more than one backend lowers (core's ``tilelang.language.barriers``), re-exported here as the
# reference's ROCm TIR module does: core lowers the asynchronous copies for every target (synchronously);
# barrier arrivals have no lowering on AMD GPUs (no mbarriers) and are refused there
SHARED_LEGACY = ("ptx_arrive_barrier", "ptx_arrive_barrier_expect_tx", "ptx_commit_group", "ptx_cp_async",
                 "ptx_cp_async_barrier", "ptx_init_barrier_thread_count", "ptx_wait_group")
__all__ = ["ds_read_tr16_b64", "ds_read_tr8_b64", "tvm_mfma", "tvm_mfma_store", "tvm_rdna_wmma",
           "tvm_rdna_wmma_store", *SHARED_LEGACY]

_PUBLIC = "tilelang.rocm.language.tir"


def _call(name: str, dtype: str, args: list[Any], doc: str) -> Any:
    from tilelang.ir import intrin_call, register_intrinsic

    register_intrinsic(f"tl.{name}", "opaque", doc)
    return intrin_call(f"tl.{name}", dtype, [_expr(a) for a in args])


def _expr(x: Any) -> Any:
    import tvm
    from tvm import tirx

    if isinstance(x, bool):
        return tirx.const(x, "bool")
    if isinstance(x, int):
        return tirx.const(x, "int32")
    if isinstance(x, str):
        return tvm.ir.StringImm(x)
    return x


def _public(fn: Any) -> Any:
    fn.__module__ = _PUBLIC
    return fn


def _dtype_first(fn: Any) -> Any:
    """Accept the result dtype as keyword ``dtype=`` too (the reference's TIR operator convention)."""

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if "dtype" in kwargs:
            args = (kwargs.pop("dtype"), *args)
        return fn(*args, **kwargs)

    return _public(wrapped)


def _lanes(dtype: str) -> int:
    dtype = str(dtype)
    return int(dtype.rsplit("x", 1)[1]) if "x" in dtype and dtype.rsplit("x", 1)[1].isdigit() else 1


def _register_buffer(x: Any) -> Any:
    """A register operand given as a buffer or its ``.data`` (``tirx.buffer_data(buf)``): the buffer."""
    import tvm

    from tilelang.errors import KernelTypeError
    from tilelang.ir import region as R

    if isinstance(x, tvm.ir.Call) and isinstance(x.op, tvm.ir.Op) and x.op.name == "tirx.buffer_data":
        return x.args[0]
    if R.is_buffer(x):
        return x
    raise KernelTypeError(f"a matrix-core operand must be a register buffer (T.alloc_local) or its .data, got {x!r}")


def _operand(x: Any, index: Any, vector_dtype: str) -> Any:
    """Element ``index * lanes`` of register buffer `x` (the operand vector's first element)."""
    from tvm import tirx

    return tirx.BufferLoad(_register_buffer(x), [_expr(index) * _lanes(vector_dtype)])


def _matrix(name: str, doc: str) -> Any:
    def op(dtype: Any, shape: Any, A_layout: Any, B_layout: Any, A_dtype: Any, B_dtype: Any,
           C_dtype: Any, multiplicand_a: Any, a_index: Any, multiplicand_b: Any, b_index: Any,
           accumulator: Any, c_index: Any) -> Any:
        a_t, b_t, c_t = str(A_dtype), str(B_dtype), str(C_dtype)
        return _call(name, "handle", [str(shape), str(A_layout), str(B_layout), a_t, b_t, c_t,
                                      _operand(multiplicand_a, a_index, a_t), _operand(multiplicand_b, b_index, b_t),
                                      _operand(accumulator, c_index, c_t)], doc)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return _dtype_first(op)


tvm_mfma = _matrix("tvm_mfma", "One CDNA MFMA on register vectors: c[c_index] = mfma_<shape>(a[a_index], "
                               "b[b_index], c[c_index]) (indices in operand vectors).")
tvm_rdna_wmma = _matrix("tvm_rdna_wmma", "One RDNA WMMA on register vectors: c[c_index] = wmma_<shape>(a[a_index], "
                                         "b[b_index], c[c_index]) (indices in operand vectors).")


def _store(name: str) -> Any:
    def op(dtype: Any, m: Any, n: Any, dst_ptr: Any, src_ptr: Any, src_offset: Any, dst_stride: Any) -> Any:
        return _call(name, "handle", [str(dtype), m, n, dst_ptr, _register_buffer(src_ptr).data, src_offset,
                                      dst_stride], f"T.{name}: store an m x n accumulator tile")

    op.__name__ = op.__qualname__ = name
    op.__doc__ = ("Store an ``m x n`` accumulator tile from registers (`src_ptr` + `src_offset`) to `dst_ptr` with "
                  "row stride `dst_stride` (the reference's intrinsic; not lowered by the tilelang-rocm backend, "
                  "whose emitters store accumulators with `stmatrix`).")
    return _dtype_first(op)


tvm_mfma_store = _store("tvm_mfma_store")
tvm_rdna_wmma_store = _store("tvm_rdna_wmma_store")


def _lds_pointer(src: Any, what: str) -> Any:
    from tvm import tirx

    from tilelang.errors import KernelTypeError
    from tilelang.ir import region as R

    if R.is_region(src):
        src = tirx.BufferLoad(src.source, [r.min for r in src.region])
    elif R.is_buffer(src):
        src = tirx.BufferLoad(src, [tirx.IntImm("int32", 0)] * len(R.buffer_shape(src)))
    if not R.is_load(src):
        raise KernelTypeError(f"{what} expects a Buffer, BufferRegion or BufferLoad in shared memory, got {src!r}")
    return src


@_public
def ds_read_tr16_b64(src: Any) -> Any:
    """LDS transpose read of 64 bits with a 16-bit element transpose (gfx950): ``uint32x2``."""
    return _call("ds_read_tr16_b64", "uint32x2", [_lds_pointer(src, "T.ds_read_tr16_b64")],
                 "T.ds_read_tr16_b64: gfx950 LDS transpose read (16-bit elements)")


@_public
def ds_read_tr8_b64(src: Any) -> Any:
    """LDS transpose read of 64 bits with an 8-bit element transpose (gfx950): ``uint32x2``."""
    return _call("ds_read_tr8_b64", "uint32x2", [_lds_pointer(src, "T.ds_read_tr8_b64")],
                 "T.ds_read_tr8_b64: gfx950 LDS transpose read (8-bit elements)")


def ptx_cp_async_barrier(barrier: Any) -> Any:
    """Arrive on `barrier` when this thread's asynchronous copies complete (``cp.async.mbarrier.arrive``; refused
    on AMD GPUs, which have no mbarriers)."""
    from tvm import tirx

    from tilelang.ir import region as R

    load = barrier if R.is_load(barrier) else tirx.BufferLoad(barrier, [tirx.IntImm("int32", 0)])
    return _call("ptx_cp_async_barrier", "handle", [load], "T.ptx_cp_async_barrier: cp.async.mbarrier.arrive")


_public(ptx_cp_async_barrier)


def __getattr__(name: str) -> Any:
    if name in SHARED_LEGACY:
        import importlib

        return getattr(importlib.import_module("tilelang.language.barriers"), name)
    raise AttributeError(f"module 'tilelang.rocm.language.tir' has no attribute {name!r}")
