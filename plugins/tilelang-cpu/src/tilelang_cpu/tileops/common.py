"""Facts and IR pieces the CPU tile-op lowerings share."""

from __future__ import annotations

from typing import Any


def llvm_vectors(ctx: Any) -> bool:
    """Whether tile ops may emit vectors of any width: LLVM's. The ``c`` kind's vectors are the prelude's
    128-bit structs with arithmetic only, so its tile ops stay scalar (its ``T.Parallel`` loops still vectorise)."""
    from tilelang.backend.sdk import kind_of

    return bool(ctx.options.get("vectorize", True)) and str(kind_of(ctx.target)) == "llvm"


def loop(var: Any, extent: int, kind: Any, body: Any) -> Any:
    """``for var in range(extent)`` of `kind`."""
    from tvm import tirx

    return tirx.For(var, 0, extent, kind, body)


def scratch(name: str, size: int, dtype: str = "float32") -> Any:
    """A flat block-private tile: scope ``global`` inside the block loop is a stack array up to 1 KiB, else
    workspace."""
    from tvm import tirx

    return tirx.decl_buffer([size], dtype, name=name, scope="global", data_alignment=64)


def pointer(buf: Any, index: list[Any]) -> Any:
    """The address of ``buf[index]`` (a ``handle``)."""
    from tvm import tirx

    return tirx.call_intrin("handle", "tirx.address_of", tirx.BufferLoad(buf, index))


def row_stride(buf: Any) -> Any | None:
    """Elements between consecutive rows (the second-last dimension) of `buf`, or None when its last dimension
    is not contiguous."""
    from tilelang.transform import utils as C

    strides = list(buf.ty.strides)
    if strides:
        return strides[-2] if C.is_const(strides[-1], 1) and len(strides) >= 2 else None
    return buf.ty.shape[-1]


def bits_dtype(dtype: str) -> str:
    """The integer dtype that moves elements of `dtype` (``bfloat16`` -> ``uint16``; integers unchanged)."""
    from tvm import DataType

    return dtype if dtype.startswith(("int", "uint")) else f"uint{DataType(dtype).bits}"


def bits_view(buf: Any) -> tuple[Any, list[Any]]:
    """``(view, declarations)``: `buf` read as unsigned integers of its width (``bfloat16`` / ``float16`` ->
    ``uint16``; integer buffers as they are, no declaration), and the statements that declare the view. Moving
    half-precision elements through integer lanes keeps TVM's bf16 legalization from turning each copy into an
    fp32 round trip."""
    from tvm import tirx

    dtype = str(buf.ty.dtype)
    if bits_dtype(dtype) == dtype:
        return buf, []
    ty = buf.ty
    view = tirx.decl_buffer(list(ty.shape), bits_dtype(dtype), name=f"{buf.name}_bits",
                            strides=list(ty.strides) or None, elem_offset=ty.elem_offset,
                            scope=str(ty.storage_scope))
    return view, [tirx.DeclBuffer(view, data=buf.data)]
