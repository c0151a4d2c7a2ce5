"""`CheckDtypes` (``pre_layout``): the element types WGSL has no storage for, rejected with a clear error.

WGSL's scalar types are ``f32``, ``f16`` (emulated without ``shader-f16``, see `tilelang_webgpu.packed_f16``),
``i32``, ``u32`` and ``bool``; TVM's WebGPU codegen would print ``bfloat16`` (stored as 16-bit integers), 8/16-bit
integers as ``u16`` / ``i8`` ... and the 8-bit and narrower floats (fp8, fp6, fp4) as ``u8``, which every WebGPU
implementation rejects with a message about an unknown identifier. This pass names the kernel, the tensor or tile,
its dtype and what to use instead, at the kernel's source line, before any lowering work.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CheckDtypes", "UNSUPPORTED", "unsupported"]

# dtype -> what to do instead
UNSUPPORTED = {
    "bfloat16": "WGSL has no bfloat16: use float16 (or float32) tensors on WebGPU, and cast at the boundary",
    "float64": "WGSL has no 64-bit float: use float32",
    "int8": "WGSL has no 8-bit integer: use int32 (or pack four int8 into a uint32 and unpack them in the kernel)",
    "uint8": "WGSL has no 8-bit integer: use int32/uint32 (or pack four uint8 into a uint32)",
    "int16": "WGSL has no 16-bit integer: use int32",
    "uint16": "WGSL has no 16-bit integer: use int32/uint32",
}
NARROW_FLOAT = ("WGSL has no 8-bit or narrower float (fp8 / fp6 / fp4): use float16 (or float32) tensors on WebGPU "
                "and convert to the narrow format with torch outside the kernel")


def unsupported(dtype: str) -> str | None:
    """What to do instead of storing `dtype` on WebGPU, or None when WGSL can store it."""
    if dtype.startswith(("float8_", "float6_", "float4_")):  # not float64
        return NARROW_FLOAT
    return UNSUPPORTED.get(dtype)


def CheckDtypes(target: Any = None) -> Any:
    """Raise a `LoweringError` (at the kernel) naming each tensor or tile whose dtype WGSL cannot store."""
    from tvm import tirx

    from tilelang.transform import utils as C

    @C.prim_func_pass("webgpu.check_dtypes")
    def check(func: Any, mod: Any, ctx: Any) -> Any:
        named: dict[str, str] = {}
        for buf in func.buffer_map.values():
            named.setdefault(str(buf.name), str(buf.ty.dtype))
        for alloc in C.collect(func.body, tirx.AllocBuffer):
            named.setdefault(str(alloc.buffer.name), str(alloc.buffer.ty.dtype))
        bad = {name: dtype for name, dtype in named.items() if unsupported(dtype) is not None}
        if bad:
            listed = ", ".join(f"{name} ({dtype})" for name, dtype in bad.items())
            advice = "; ".join(dict.fromkeys(str(unsupported(d)) for d in bad.values()))
            raise C.lowering_error(func, f"target 'webgpu' cannot store {listed}: {advice}")
        return func

    return check
