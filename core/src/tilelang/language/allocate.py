"""Memory: ``alloc_shared``, ``alloc_fragment``, ``alloc_local``, ``alloc_var`` and the eager ``T.empty``."""

from __future__ import annotations

from typing import Any

from tilelang.errors import KernelSyntaxError
from tilelang.frontend import state as _state
from tilelang.language.dtypes import canonical, cast
from tilelang.language.proxy import normalize_shape


def _alloc(what: str, shape: Any, dtype: Any, scope: str) -> Any:
    """An ``AllocBuffer`` for the rest of the block; the buffer carries the source span of the allocation."""
    from tvm import tirx
    from tvm.script.ir_builder import tirx as B

    st = _state.require(what)
    buf = tirx.decl_buffer(normalize_shape(shape, f"{what} shape"), canonical(dtype), name="buf", scope=scope,
                           span=st.span)
    B.add_to_parent(tirx.AllocBuffer(buf))
    return st.fresh(buf)


def alloc_shared(shape: Any, dtype: Any = "float32", scope: str = "shared.dyn") -> Any:
    """A tile in the block's shared memory (scope ``shared.dyn``)."""
    return _alloc("T.alloc_shared", shape, dtype, scope)


def alloc_fragment(shape: Any, dtype: Any = "float32", scope: str = "local.fragment") -> Any:
    """A tile distributed over the block's threads (scope ``local.fragment``)."""
    return _alloc("T.alloc_fragment", shape, dtype, scope)


def alloc_local(shape: Any, dtype: Any = "float32", scope: str = "local") -> Any:
    """A per-thread array (scope ``local``)."""
    return _alloc("T.alloc_local", shape, dtype, scope)


def alloc_var(dtype: Any = "float32", init: Any = None, *, scope: str = "local.var") -> Any:
    """A mutable scalar (scope ``local.var``, shape ``(1,)``): ``x = v`` stores, reading ``x`` loads ``x[0]``."""
    from tvm.script.ir_builder import tirx as B

    st = _state.require("T.alloc_var")
    dt = canonical(dtype)
    buf = _alloc("T.alloc_var", (1,), dt, scope)
    st.register_var_buffer(buf)
    if init is not None:
        B.buffer_store(buf, cast(init, dt), [0])
    return buf


def empty(shape: Any, dtype: Any = "float32") -> Any:
    """An output tensor of an eager ``@tilelang.jit`` kernel (allocated by the JIT, returned with ``return``)."""
    st = _state.require("T.empty")
    if st.eager is None:
        raise KernelSyntaxError("T.empty is only valid in an eager @tilelang.jit kernel")
    if st.depth or st.launches:
        raise KernelSyntaxError("T.empty must be called at the top of the kernel function, outside T.Kernel")
    from tvm import tirx

    buf = tirx.decl_buffer(normalize_shape(shape, "T.empty shape"), canonical(dtype), name="out", span=st.span)
    st.eager.outputs.append(buf)
    return st.fresh(buf)
