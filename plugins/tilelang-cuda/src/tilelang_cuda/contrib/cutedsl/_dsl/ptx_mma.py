"""Warp-level tensor-core MMAs (``mma.sync`` and the 2:4-sparse ``mma.sp.sync``) on register fragments.

Each ``ptx_mma_<shape>_<a>_<b>_<c>(a_ptr, a_offset, b_ptr, b_offset, c_ptr, c_offset, a_layout, b_layout)``
computes ``D = A @ B + C`` for one warp with A row-major and B column-major (the only layouts of these shapes),
reading this thread's A, B and C registers at ``ptr + offset`` (register or shared pointers, elements of the
pointer's type) and writing D over C. The sparse forms take the thread's 32-bit `metadata` (a value or a pointer)
and the `sparse_selector` (which threads supply it). ``ptx_mma`` / ``ptx_mma_sp`` pick the function from a shape
and dtype names.
"""

from __future__ import annotations

import cutlass.cute as cute
from cutlass._mlir.dialects import llvm
from cutlass.base_dsl.typing import Float32, Float64, Int32
from cutlass.cutlass_dsl import T

from tilelang_cuda.contrib.cutedsl._dsl._asm import asm

_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "s8": 8, "u8": 8, "e4m3": 8, "e5m2": 8, "s4": 4, "u4": 4, "f64": 64}
_ALIASES = {"fp16": "f16", "float16": "f16", "bfloat16": "bf16", "tensorfloat32": "tf32", "int8": "s8",
            "uint8": "u8", "int4": "s4", "uint4": "u4", "float8_e4m3": "e4m3", "fp8_e4m3": "e4m3",
            "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2", "fp8_e5m2": "e5m2", "fp32": "f32", "float32": "f32",
            "int32": "s32", "fp64": "f64", "float64": "f64"}


def _name(dtype: str) -> str:
    dtype = str(dtype).lower()
    return _ALIASES.get(dtype, dtype)


def _check_layouts(a_layout, b_layout):
    if (a_layout, b_layout) != ("row", "col"):
        raise ValueError(f"mma.sync of these shapes takes A row-major and B column-major, got {a_layout}/{b_layout}")


def _registers(ptr, offset, count, dtype):
    base = cute.recast_ptr(ptr + offset, dtype=dtype)
    regs = cute.make_tensor(base, cute.make_layout(count))
    return base, [dtype(regs[i]).ir_value() for i in range(count)]


def _mma(shape, ab, c, a_ptr, a_offset, b_ptr, b_offset, c_ptr, c_offset, sparse=None):
    """Issue one (sparse, with `sparse` = (metadata, selector)) ``mma`` of `shape` ("m16n8k16" ...) for A/B type
    `ab` and accumulator type `c`, reading and writing the fragments."""
    m, n, k = (int(x) for x in shape[1:].replace("n", " ").replace("k", " ").split())
    if ab == "f64":
        a_regs, b_regs, c_regs, ab_kind = 1, 1, 2, Float64
    else:
        a_regs, b_regs = m * k * _BITS[ab] // 1024, n * k * _BITS[ab] // 1024
        if sparse is not None:
            a_regs //= 2
        c_regs, ab_kind = (2 if c == "f16" else 4), Int32
    c_kind, c_con, c_mlir = {"f32": (Float32, "f", T.f32()), "s32": (Int32, "r", T.i32()),
                             "f16": (Int32, "r", T.i32()), "f64": (Float64, "d", T.f64())}[c]
    ab_con = "d" if ab == "f64" else "r"
    _, a_vals = _registers(a_ptr, a_offset, a_regs, ab_kind)
    _, b_vals = _registers(b_ptr, b_offset, b_regs, ab_kind)
    c_base, c_vals = _registers(c_ptr, c_offset, c_regs, c_kind)
    operands = [*a_vals, *b_vals, *c_vals]
    counts = (c_regs, a_regs, b_regs, c_regs)
    groups, first = [], 0
    for count in counts:
        groups.append("{" + ", ".join(f"${first + i}" for i in range(count)) + "}")
        first += count
    constraints = [f"={c_con}"] * c_regs + [ab_con] * (a_regs + b_regs) + [c_con] * c_regs
    opcode = "mma.sp.sync.aligned" if sparse is not None else "mma.sync.aligned"
    tail = ""
    if sparse is not None:
        metadata, selector = sparse
        if isinstance(metadata, cute.Pointer):
            metadata = cute.make_tensor(cute.recast_ptr(metadata, dtype=Int32), cute.make_layout(1))[0]
        operands.append(Int32(metadata).ir_value())
        constraints.append("r")
        tail = f", ${first}, {int(selector)}"
    text = f"{opcode}.{shape}.row.col.{c}.{ab}.{ab}.{c} {', '.join(groups)}{tail};"
    result = asm(llvm.StructType.get_literal([c_mlir] * c_regs), operands, text, ",".join(constraints))
    out = cute.make_tensor(c_base, cute.make_layout(c_regs))
    for i in range(c_regs):
        out[i] = c_kind(llvm.extractvalue(c_mlir, result, [i]))


def _dense(shape, ab, c, ptx_shape=None):
    def mma(a_ptr, a_offset, b_ptr, b_offset, c_ptr, c_offset, a_layout="row", b_layout="col"):
        _check_layouts(a_layout, b_layout)
        _mma(ptx_shape or shape, ab, c, a_ptr, a_offset, b_ptr, b_offset, c_ptr, c_offset)

    mma.__name__ = mma.__qualname__ = f"ptx_mma_{shape}_{ab}_{ab}_{c}"
    mma.__doc__ = (f"``mma.sync.aligned.{ptx_shape or shape}.row.col.{c}.{ab}.{ab}.{c}``: D = A @ B + C for one "
                   "warp, D written over C.")
    return mma


def _sparse(shape, ab, c):
    def mma_sp(a_ptr, a_offset, b_ptr, b_offset, c_ptr, c_offset, metadata, sparse_selector=0, a_layout="row",
               b_layout="col"):
        _check_layouts(a_layout, b_layout)
        _mma(shape, ab, c, a_ptr, a_offset, b_ptr, b_offset, c_ptr, c_offset, sparse=(metadata, sparse_selector))

    mma_sp.__name__ = mma_sp.__qualname__ = f"ptx_mma_sp_{shape}_{ab}_{ab}_{c}"
    mma_sp.__doc__ = (f"``mma.sp.sync.aligned.{shape}.row.col.{c}.{ab}.{ab}.{c}``: 2:4-sparse A (half its K "
                      "stored) with `metadata`, D written over C.")
    return mma_sp


_DENSE = [("m16n8k16", "f16", "f32"), ("m16n8k16", "f16", "f16"), ("m16n8k16", "bf16", "f32"),
          ("m16n8k32", "s8", "s32"), ("m16n8k32", "u8", "s32"), ("m16n8k4", "tf32", "f32"),
          ("m16n8k8", "tf32", "f32"), ("m8n8k4", "f64", "f64"), ("m16n8k32", "e4m3", "f32"),
          ("m16n8k32", "e4m3", "f16"), ("m16n8k32", "e5m2", "f32")]
_SPARSE = [("m16n8k32", "f16", "f32"), ("m16n8k32", "f16", "f16"), ("m16n8k16", "f16", "f32"),
           ("m16n8k16", "f16", "f16"), ("m16n8k32", "bf16", "f32"), ("m16n8k16", "bf16", "f32"),
           ("m16n8k64", "s8", "s32"), ("m16n8k32", "s8", "s32"), ("m16n8k16", "tf32", "f32"),
           ("m16n8k8", "tf32", "f32")]

for _shape, _ab, _c in _DENSE:
    globals()[f"ptx_mma_{_shape}_{_ab}_{_ab}_{_c}"] = _dense(_shape, _ab, _c)
for _ab in ("s4", "u4"):  # TileLang's m16n8k32 of 4-bit integers is PTX's m16n8k64 (32 bytes of K)
    globals()[f"ptx_mma_m16n8k32_{_ab}_{_ab}_s32"] = _dense("m16n8k32", _ab, "s32", ptx_shape="m16n8k64")
for _shape, _ab, _c in _SPARSE:
    globals()[f"ptx_mma_sp_{_shape}_{_ab}_{_ab}_{_c}"] = _sparse(_shape, _ab, _c)


def _lookup(prefix, shape, a_dtype, b_dtype, c_dtype):
    a, b, c = _name(a_dtype), _name(b_dtype), _name(c_dtype)
    fn = globals().get(f"{prefix}_{str(shape).lower()}_{a}_{b}_{c}")
    if fn is None or a != b:
        raise ValueError(f"{prefix}: unsupported configuration shape={shape} A={a_dtype} B={b_dtype} C={c_dtype}")
    return fn


def ptx_mma(shape, a_layout, b_layout, a_dtype, b_dtype, c_dtype, a_ptr, a_offset, b_ptr, b_offset, c_ptr,
            c_offset, saturate=False):
    """The ``ptx_mma_<shape>_<a>_<b>_<c>`` of `shape` and the dtype names ("float16", "f16", "int8" ...)."""
    if saturate:
        raise ValueError("ptx_mma: saturate is not supported by these wrappers")
    fn = _lookup("ptx_mma", shape, a_dtype, b_dtype, c_dtype)
    fn(a_ptr, a_offset, b_ptr, b_offset, c_ptr, c_offset, a_layout, b_layout)


def ptx_mma_sp(shape, a_layout, b_layout, a_dtype, b_dtype, c_dtype, a_ptr, a_offset, b_ptr, b_offset, c_ptr,
               c_offset, metadata, sparse_selector=0):
    """The ``ptx_mma_sp_<shape>_<a>_<b>_<c>`` of `shape` and the dtype names."""
    fn = _lookup("ptx_mma_sp", shape, a_dtype, b_dtype, c_dtype)
    fn(a_ptr, a_offset, b_ptr, b_offset, c_ptr, c_offset, metadata, sparse_selector, a_layout, b_layout)
