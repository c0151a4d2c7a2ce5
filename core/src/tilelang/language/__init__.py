"""The TileLang kernel language: ``import tilelang.language as T``.

Kernels are Python functions decorated with ``@T.prim_func`` (or eager ``@tilelang.jit`` functions); their
bodies are parsed by ``tilelang.frontend`` into tirx PrimFuncs (``docs/ir.md``).
"""

from typing import Any

from tilelang.frontend.build import prim_func
from tilelang.frontend.macro import macro
from tilelang.ir.ops import GemmWarpPolicy
from tilelang.language.allocate import alloc_fragment, alloc_local, alloc_shared, alloc_var, empty
from tilelang.language.annotations import (
    annotate_compile_flags,
    annotate_layout,
    annotate_pass_configs,
    func_attr,
    use_swizzle,
)
from tilelang.language.debug import device_assert, print  # noqa: A004
from tilelang.language.exprs import (
    Cast,
    abs,
    clamp,
    extract_lane,
    cast,
    ceil,
    ceildiv,
    cos,
    erf,
    exp,
    exp2,
    exp10,
    floor,
    floordiv,
    floormod,
    if_then_else,
    infinity,
    isfinite,
    isinf,
    isnan,
    log,
    log1p,
    log2,
    log10,
    max,
    max_value,
    min,
    min_value,
    pow,
    round,
    rsqrt,
    sigmoid,
    sin,
    sqrt,
    tan,
    tanh,
    trunc,
    truncdiv,
    truncmod,
)
from tilelang.language.kernel import (
    Kernel,
    get_block_binding,
    get_block_bindings,
    get_thread_binding,
    get_thread_bindings,
    sync_threads,
)
from tilelang.language.loops import Parallel, Pipelined, grid, serial, unroll, vectorized
from tilelang.language.proxy import (
    Buffer,
    FragmentBuffer,
    LocalBuffer,
    SharedBuffer,
    StridedTensor,
    Tensor,
    TensorSpec,
)
from tilelang.language.symbolics import const, dynamic, symbolic
from tilelang.language.atomic import (
    atomic_add,
    atomic_addx2,
    atomic_addx4,
    atomic_load,
    atomic_max,
    atomic_min,
    atomic_or,
    atomic_store,
)
from tilelang.language.fastmath import (
    __cos,
    __exp,
    __exp10,
    __log,
    __log2,
    __log10,
    __sin,
    __tan,
    abs2,
    add2,
    dp4a,
    fast_rcp,
    fma2,
    ieee_add,
    ieee_fdiv,
    ieee_fmaf,
    ieee_frcp,
    ieee_frsqrt,
    ieee_fsqrt,
    ieee_mul,
    ieee_sub,
    max2,
    min2,
    mul2,
    sub2,
)
from tilelang.language.reducer import alloc_reducer, finalize_reducer, reducer_init, reducer_update
from tilelang.language.tileops import (
    clear,
    copy,
    cummax,
    cumsum,
    fill,
    gemm,
    reduce,
    reduce_absmax,
    reduce_abssum,
    reduce_bitand,
    reduce_bitor,
    reduce_bitxor,
    reduce_max,
    reduce_min,
    reduce_sum,
    transpose,
)
from tilelang.language.views import access_ptr, make_tensor, make_tensor_from_addr, ptr, reshape, view
from tilelang.language.warp import (
    activemask,
    all_sync,
    any_sync,
    ballot,
    ballot_sync,
    get_lane_idx,
    get_warp_idx,
    get_warp_idx_sync,
    match_all_sync,
    match_any_sync,
    shfl_down,
    shfl_sync,
    shfl_up,
    shfl_xor,
    sync_global,
    sync_grid,
    sync_warp,
    syncthreads_and,
    syncthreads_count,
    syncthreads_or,
    warp_reduce_bitand,
    warp_reduce_bitor,
    warp_reduce_max,
    warp_reduce_min,
    warp_reduce_sum,
)
from tilelang.layout import Fragment, Layout

Serial = serial
Unroll = unroll
Vectorized = vectorized

__tilelang_dialect__ = "common"


def __getattr__(name: str) -> Any:
    """Names made on first use: dtypes (``T.float16``, ``T.int``, ``T.float32x4``), the TVMScript surface
    (``T.evaluate``, ``T.call_extern``, ...) and names an installed backend dialect contributes (``T.tma_copy``)."""
    import importlib
    import importlib.util

    if not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")  # a submodule (``from tilelang.language import x``)
    value = importlib.import_module("tilelang.language._lazy").resolve(name)
    if name not in ("bool", "int", "float"):
        globals()[name] = value
    return value


def __dir__() -> list[str]:
    import importlib

    return sorted(set(globals()) | set(importlib.import_module("tilelang.language._lazy").names()))


def _public_names() -> list[str]:
    import importlib

    dtypes = importlib.import_module("tilelang.language.dtypes")
    fastmath = importlib.import_module("tilelang.language.fastmath")

    eager = {n for n, v in globals().items() if not n.startswith("_") and n not in ("Any", "annotations")
             and getattr(v, "__module__", "") != "typing"}
    return sorted(eager | set(fastmath.__all__) | set(dtypes._all_dtypes) | {"dtype"})


__all__ = _public_names()
