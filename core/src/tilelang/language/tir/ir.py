"""TIR-script functions adapted to the TileLang front end, and the reference's ``tilelang.language.tir.ir`` names.

`ADAPTED` lists the names this module defines itself (buffers take the Python name they are assigned to, as
TileLang's own allocations do); every other name is `tilelang.language.tir.common`'s.
"""

from __future__ import annotations

from typing import Any

from tilelang.frontend import state as _state
from tilelang.language.dtypes import canonical
from tilelang.language.exprs import CAST_ROUNDING_MODES as _VALID_CAST_ROUNDING_MODES  # noqa: F401
from tilelang.language.exprs import cast as cast
from tilelang.language.exprs import extract_lane as extract_lane


def _named(buf: Any) -> Any:
    st = _state.current()
    return st.fresh(buf) if st is not None else buf


def alloc_buffer(shape: Any, dtype: Any = "float32", data: Any = None, strides: Any = None, elem_offset: Any = None,
                 scope: str = "global", align: int = -1, offset_factor: int = 0, buffer_type: str = "default",
                 axis_separators: Any = None, **kwargs: Any) -> Any:
    """A buffer allocated at this point for the rest of the enclosing block (``T.alloc_buffer``)."""
    from tvm.script.ir_builder import tirx as B

    from tilelang.language.proxy import normalize_shape

    _state.require("T.alloc_buffer")
    buf = B.alloc_buffer(normalize_shape(shape, "T.alloc_buffer shape"), canonical(dtype), data=data,
                         strides=strides, elem_offset=elem_offset, scope=scope, align=align,
                         offset_factor=offset_factor, **kwargs)
    return _named(buf)


def decl_buffer(shape: Any, dtype: Any = "float32", data: Any = None, strides: Any = None, elem_offset: Any = None,
                scope: str = "global", align: int = -1, offset_factor: int = 0, buffer_type: str = "default",
                axis_separators: Any = None, **kwargs: Any) -> Any:
    """A buffer over existing data (``data``: a pointer var, or a buffer whose storage it views)."""
    from tvm.script.ir_builder import tirx as B

    from tilelang.language.proxy import normalize_shape

    _state.require("T.decl_buffer")
    if data is not None and hasattr(data, "ty") and hasattr(data.ty, "shape"):  # a buffer: view its storage
        from tvm import tirx

        data = tirx.buffer_data(data) if hasattr(tirx, "buffer_data") else data
    buf = B.decl_buffer(normalize_shape(shape, "T.decl_buffer shape"), canonical(dtype), data=data,
                        strides=strides, elem_offset=elem_offset, scope=scope, align=max(align, 0),
                        offset_factor=offset_factor, **kwargs)
    return _named(buf)


def match_buffer(param: Any, shape: Any = None, dtype: Any = "float32", data: Any = None, strides: Any = None,
                 elem_offset: Any = None, scope: str = "global", align: int = -1, offset_factor: int = 0,
                 buffer_type: str = "default", axis_separators: Any = None, **kwargs: Any) -> Any:
    """The buffer a ``T.handle`` parameter points to (``A = T.match_buffer(a, (M, N), "float32")``): the kernel
    takes the buffer in the handle's place."""
    import tvm
    from tvm import tirx

    from tilelang.errors import KernelSyntaxError, KernelTypeError
    from tilelang.language.proxy import normalize_shape

    st = _state.require("T.match_buffer")
    if not isinstance(param, tvm.ir.Var) or tirx.is_buffer_var(param):
        raise KernelTypeError(f"T.match_buffer expects a T.handle parameter of the kernel, got {param!r}")
    if st.depth or st.launches:
        raise KernelSyntaxError("T.match_buffer must be at the top of the kernel, before T.Kernel")
    if param in st.matched:
        raise KernelSyntaxError(f"parameter {param.name} is already matched to buffer {st.matched[param].name}")
    buf = tirx.decl_buffer(normalize_shape(shape, "T.match_buffer shape"), canonical(dtype), name=str(param.name),
                           strides=strides, elem_offset=elem_offset, scope=scope, span=st.span)
    st.matched[param] = buf
    return _named(buf)


def align_up(x: Any, y: Any) -> Any:
    """`x` rounded up to a multiple of `y`."""
    from tilelang.language.exprs import ceildiv

    return ceildiv(x, y) * y


def _tvm_name(name: str) -> Any:
    import tvm
    from tvm import tirx

    return {"PrimExpr": tvm.ir.Expr, "IntImm": tirx.IntImm, "StringImm": tvm.ir.StringImm}[name]


ADAPTED = frozenset({"PrimExpr", "IntImm", "StringImm", "cast", "extract_lane", "alloc_buffer", "decl_buffer",
                     "match_buffer", "align_up"})


def __getattr__(name: str) -> Any:
    from tilelang.language.tir import common

    if name == "__all__":
        return tuple(sorted(ADAPTED | set(common.__all__)))
    if name in ("PrimExpr", "IntImm", "StringImm"):
        return _tvm_name(name)
    return getattr(common, name)
