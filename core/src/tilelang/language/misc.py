"""The rest of the reference's common surface: ``T.alloc_global``, ``T.Persistent``, ``T.any_of`` / ``T.all_of``,
``T.import_source``, ``T.loop_break``, ``T.annotate_safe_value`` / ``T.annotate_restrict_buffers``,
``T.has_let_value`` / ``T.get_let_value`` and ``T.index_to_coordinates``."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from tilelang.backend.device_codegen import IMPORT_SOURCE_ATTR
from tilelang.errors import KernelSyntaxError, KernelTypeError
from tilelang.frontend import state as _state
from tilelang.ir import region as R
from tilelang.language.utils import index_to_coordinates

SAFE_VALUE_ATTR = "tl.safe_value_map"
NON_RESTRICT_ATTR = "tl.non_restrict_params"
_MAX_FOLD = 4096  # elements T.any_of / T.all_of expand into one expression


def alloc_global(shape: Any, dtype: Any, scope: str = "global") -> Any:
    """A workspace tensor in global memory for the kernel's lifetime (allocated by the runtime, not by torch)."""
    from tilelang.language.allocate import _alloc

    return _alloc("T.alloc_global", shape, dtype, scope)


def _elements(buf_or_region: Any, what: str) -> list[Any]:
    from tvm import tirx

    region = R.to_region(buf_or_region)
    extents = [int(getattr(e, "value", e)) if isinstance(e, (int, tirx.IntImm)) else None
               for e in R.region_extents(region)]
    if any(e is None for e in extents):
        raise KernelTypeError(f"{what} needs a region of constant extents, got {R.describe(region)}")
    total = math.prod(extents)
    if total > _MAX_FOLD:
        raise KernelTypeError(f"{what}: {R.describe(region)} has {total} elements (at most {_MAX_FOLD})")
    out = []
    for flat in range(total):
        coords = index_to_coordinates(flat, extents)
        out.append(tirx.BufferLoad(region.source, [r.min + c for r, c in zip(region.region, coords)]))
    return out


def any_of(buffer: Any) -> Any:
    """True when any element of `buffer` (a buffer or region) is non-zero."""
    from tvm import tirx

    loads = _elements(buffer, "T.any_of")
    conds = [ld != tirx.const(0, str(ld.ty.dtype)) if str(ld.ty.dtype) != "bool" else ld for ld in loads]
    out = conds[0]
    for c in conds[1:]:
        out = tirx.Or(out, c)
    return out


def all_of(buffer: Any) -> Any:
    """True when every element of `buffer` (a buffer or region) is non-zero."""
    from tvm import tirx

    loads = _elements(buffer, "T.all_of")
    conds = [ld != tirx.const(0, str(ld.ty.dtype)) if str(ld.ty.dtype) != "bool" else ld for ld in loads]
    out = conds[0]
    for c in conds[1:]:
        out = tirx.And(out, c)
    return out


def import_source(source: str | None = None) -> None:
    """Compile C / CUDA source (helper functions a kernel calls with ``T.call_extern``) with the kernel: it comes
    before the kernels in the generated code of backends whose device codegen imports source (CUDA); elsewhere
    lowering refuses the program (`tilelang.backend.DeviceCodegen.imports_source`)."""
    if source is None:
        return
    if not isinstance(source, str):
        raise KernelTypeError(f"T.import_source expects a string of source code, got {type(source).__name__}")
    st = _state.require("T.import_source")
    st.func_attrs[IMPORT_SOURCE_ATTR] = st.func_attrs.get(IMPORT_SOURCE_ATTR, "") + source + "\n"


def loop_break() -> Any:
    """Leave the innermost loop (``break`` inside a device loop)."""
    from tvm.script.ir_builder import tirx as B

    _state.require("T.loop_break")
    B.Break()


def annotate_safe_value(safe_value_map: dict[Any, Any]) -> None:
    """The value out-of-bounds reads of a buffer give (instead of 0) where TileLang guards them."""
    import tvm_ffi
    from tvm.script.ir_builder import tirx as B

    from tilelang.language.dtypes import cast

    st = _state.require("T.annotate_safe_value")
    entries = {}
    for buf, value in safe_value_map.items():
        if not R.is_buffer(buf):
            raise KernelTypeError(f"T.annotate_safe_value keys must be buffers, got {R.describe(buf)}")
        entries[buf] = cast(value, R.buffer_dtype(buf))
    st.enter_block_frame(B.attr(tvm_ffi.convert(entries), SAFE_VALUE_ATTR, 0))


def annotate_restrict_buffers(*buffers: Any) -> None:
    """Parameters that may alias (the C-family codegens then drop ``__restrict__`` on them)."""
    st = _state.require("T.annotate_restrict_buffers")
    for buf in buffers:
        if not R.is_buffer(buf):
            raise TypeError(f"annotate_restrict_buffers expects Buffer arguments, got {type(buf)}")
    names = list(st.func_attrs.get(NON_RESTRICT_ATTR, []))
    st.func_attrs[NON_RESTRICT_ATTR] = names + [str(b.name) for b in buffers]


def _let_entry(var: Any) -> tuple[Any, Any] | None:
    st = _state.current()
    if st is None:
        return None
    return next(((v, value) for v, value in st.let_values.values() if v.same_as(var)), None)


def has_let_value(var: Any) -> bool:
    """Whether `var` is a name the kernel being parsed bound to a value (``x = expr`` that reads memory)."""
    return _let_entry(var) is not None


def get_let_value(var: Any) -> Any:
    """The value `var` was bound to (None when it is not such a name)."""
    entry = _let_entry(var)
    return None if entry is None else entry[1]


@dataclass
class PersistentLoop:
    """``for bx, by in T.Persistent(domain, wave_size, index, group_size)``: the tiles of `domain` this worker
    (`index` of `wave_size`) owns, grid-strided, grouped `group_size` rows at a time (see `Persistent`)."""

    domain: list[Any]
    wave_size: Any
    index: Any
    group_size: Any = 8

    def __iter__(self):
        raise KernelSyntaxError("T.Persistent can only be iterated by a `for` statement inside a kernel")

    def total(self) -> Any:
        out: Any = 1
        for d in self.domain:
            out = out * d
        return out

    def coords(self, tile_id: Any) -> list[Any]:
        """The domain coordinates of linear tile `tile_id`: for a 2-D domain, panels of `group_size` columns
        (a narrower last one) swept row by row, which keeps ``group_size`` columns of B hot in L2; else
        row-major."""
        from tilelang.language.exprs import max as tmax
        from tilelang.language.exprs import min as tmin

        if len(self.domain) == 2 and self.group_size:
            rows, cols, g = self.domain[0], self.domain[1], self.group_size
            panel = tile_id // (rows * g)
            base = panel * g
            width = tmax(1, tmin(g, cols - base))
            in_panel = tile_id - panel * (rows * g)
            return [in_panel // width, base + in_panel % width]
        return index_to_coordinates(tile_id, self.domain)


def Persistent(domain: list[Any], wave_size: Any, index: Any, group_size: Any = 8) -> PersistentLoop:
    """A persistent loop: worker `index` of `wave_size` visits tiles ``index, index + wave_size, ...`` of the
    grid `domain` (for a 2-D domain in panels of `group_size` columns for L2 reuse, see `PersistentLoop.coords`),
    each tile of the domain exactly once over all workers."""
    if not isinstance(domain, (list, tuple)) or not domain:
        raise KernelTypeError(f"T.Persistent expects a non-empty list of extents, got {domain!r}")
    return PersistentLoop(list(domain), wave_size, index, group_size)
