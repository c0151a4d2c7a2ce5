"""The TileLang kernel language: ``import tilelang.language as T``.

Kernels are Python functions decorated with ``@T.prim_func`` (or eager ``@tilelang.jit`` functions); their
bodies are parsed by ``tilelang.frontend`` into tirx PrimFuncs (``docs/ir.md``).

Every name is resolved on first use (PEP 562): ``import tilelang.language as T`` imports none of the language's
modules, so a process that only loads cached kernels never pays for them (`benchmarks/startup.py`).
"""

from typing import Any

# name -> module of every name defined in a submodule, imported on first use (`__getattr__`): importing the
# language costs nothing until a kernel is built, so a process that only loads cached kernels never pays for it
_MODULES: dict[str, tuple[str, ...]] = {
    "tilelang.frontend.lazy": ("prim_func",),
    "tilelang.frontend.macro": ("macro",),
    "tilelang.ir.ops": ("GemmWarpPolicy",),
    "tilelang.language.allocate": ("alloc_fragment", "alloc_local", "alloc_shared", "alloc_var", "empty"),
    "tilelang.language.annotations": ("annotate_compile_flags", "annotate_layout", "annotate_pass_configs",
            "func_attr", "use_swizzle"),
    "tilelang.language.atomic": ("atomic_add", "atomic_addx2", "atomic_addx4", "atomic_load", "atomic_max",
            "atomic_min", "atomic_or", "atomic_store"),
    "tilelang.language.barriers": ("alloc_barrier", "barrier_arrive", "barrier_wait", "mbarrier_arrive",
            "mbarrier_arrive_expect_tx", "mbarrier_expect_tx", "mbarrier_wait_parity", "no_set_max_nreg",
            "ptx_arrive_barrier", "ptx_arrive_barrier_expect_tx", "ptx_commit_group", "ptx_cp_async",
            "ptx_init_barrier_thread_count", "ptx_wait_group"),
    "tilelang.language.debug": ("device_assert", "print"),
    "tilelang.language.exprs": ("Cast", "abs", "cast", "ceil", "ceildiv", "clamp", "cos", "erf", "exp", "exp2",
            "exp10", "extract_lane", "floor", "floordiv", "floormod", "if_then_else", "infinity", "isfinite", "isinf",
            "isnan", "log", "log1p", "log2", "log10", "max", "max_value", "min", "min_value", "pow", "reinterpret",
            "round", "rsqrt", "sigmoid", "sin", "sqrt", "tan", "tanh", "trunc", "truncdiv", "truncmod"),
    "tilelang.language.fastmath": ("__cos", "__exp", "__exp10", "__log", "__log2", "__log10", "__sin", "__tan",
            "abs2", "add2", "dp4a", "fast_rcp", "fma2", "ieee_add", "ieee_fdiv", "ieee_fmaf", "ieee_frcp",
            "ieee_frsqrt", "ieee_fsqrt", "ieee_mul", "ieee_sub", "max2", "min2", "mul2", "sub2"),
    "tilelang.language.kernel": ("Kernel", "get_block_binding", "get_block_bindings", "get_thread_binding",
            "get_thread_bindings", "sync_threads"),
    "tilelang.language.loops": ("Parallel", "Pipelined", "grid", "serial", "unroll", "vectorized"),
    "tilelang.language.misc": ("Persistent", "all_of", "alloc_global", "annotate_restrict_buffers",
            "annotate_safe_value", "any_of", "get_let_value", "has_let_value", "import_source",
            "index_to_coordinates", "loop_break"),
    "tilelang.language.proxy": ("Buffer", "FragmentBuffer", "LocalBuffer", "SharedBuffer", "StridedTensor", "Tensor",
            "TensorSpec"),
    "tilelang.language.reducer": ("alloc_reducer", "finalize_reducer", "reducer_init", "reducer_update"),
    "tilelang.language.symbolics": ("const", "dynamic", "symbolic"),
    "tilelang.language.tileops": ("async_copy", "c2d_im2col", "clear", "copy", "cummax", "cumsum", "fill", "gemm",
            "gemm_sp", "im2col", "reduce", "reduce_absmax", "reduce_abssum", "reduce_bitand", "reduce_bitor",
            "reduce_bitxor", "reduce_max", "reduce_min", "reduce_sum", "transpose"),
    "tilelang.language.views": ("access_ptr", "make_tensor", "make_tensor_from_addr", "ptr", "reshape", "view"),
    "tilelang.language.warp": ("activemask", "all_sync", "any_sync", "ballot", "ballot_sync", "get_lane_idx",
            "get_warp_idx", "get_warp_idx_sync", "match_all_sync", "match_any_sync", "shfl_down", "shfl_sync",
            "shfl_up", "shfl_xor", "sync_global", "sync_grid", "sync_warp", "syncthreads_and", "syncthreads_count",
            "syncthreads_or", "warp_reduce_bitand", "warp_reduce_bitor", "warp_reduce_max", "warp_reduce_min",
            "warp_reduce_sum"),
    "tilelang.layout": ("Fragment", "Layout"),
}
_ALIASES = {"Serial": "serial", "Unroll": "unroll", "Vectorized": "vectorized"}
_HOME = {name: module for module, names in _MODULES.items() for name in names}


def __getattr__(name: str) -> Any:
    """Names made on first use: dtypes (``T.float16``, ``T.int``, ``T.float32x4``), the TVMScript surface
    (``T.evaluate``, ``T.call_extern``, ...) and names an installed backend dialect contributes (``T.tma_copy``).

    ``__all__`` and ``__tilelang_dialect__`` describe the reference's compatibility facade: with the facade
    dialect installed (`dialects.FACADE_DIALECT`), this module answers as that dialect (its name, and the
    common names plus its names); otherwise as the common surface.
    """
    import importlib
    import importlib.util

    home = _HOME.get(_ALIASES.get(name, name))
    if home is not None:
        value = getattr(importlib.import_module(home), _ALIASES.get(name, name))
        globals()[name] = value
        return value
    if name in ("__all__", "__tilelang_dialect__"):
        from tilelang.language import dialects

        facade = dialects.facade_module()
        if name == "__tilelang_dialect__":
            return dialects.FACADE_DIALECT if facade is not None else "common"
        common_names = importlib.import_module(f"{__name__}.common").__all__
        return list(dict.fromkeys([*common_names, *(getattr(facade, "__all__", ()) if facade else ())]))
    if not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")  # a submodule (``from tilelang.language import x``)
    value = importlib.import_module("tilelang.language._lazy").resolve(name)
    if name not in ("bool", "int", "float"):
        globals()[name] = value
    return value


def __dir__() -> list[str]:
    import importlib

    return sorted(set(globals()) | set(_HOME) | set(_ALIASES) |
                  set(importlib.import_module("tilelang.language._lazy").names()))


# the reference's common names that this module defines (dtypes and names of `_lazy.LAZY` are made on first use);
# `tilelang.language.common.__all__` adds TVM's backend-neutral TIR-script names, ``__all__`` a facade dialect's
COMMON_NAMES = [
    "Buffer", "Cast", "Fragment", "FragmentBuffer", "GemmWarpPolicy", "Kernel", "Layout", "LocalBuffer", "Parallel",
    "Persistent", "Pipelined", "Serial", "SharedBuffer", "StridedTensor", "Tensor", "TensorSpec", "Unroll",
    "Vectorized", "__cos", "__exp", "__exp10", "__log", "__log10", "__log2", "__sin", "__tan", "abs", "abs2",
    "access_ptr", "activemask", "add2", "all_of", "all_sync", "alloc_barrier", "alloc_fragment", "alloc_global",
    "alloc_local", "alloc_reducer", "alloc_shared", "alloc_var", "allocate", "annotate_compile_flags",
    "annotate_layout", "annotate_pass_configs", "annotate_restrict_buffers", "annotate_safe_value", "any_of",
    "any_sync", "async_copy", "atomic", "atomic_add", "atomic_addx2", "atomic_addx4", "atomic_load", "atomic_max",
    "atomic_min", "atomic_or", "atomic_store", "ballot", "ballot_sync", "barrier_arrive", "barrier_wait",
    "barriers", "bfloat16", "bfloat16x2", "bool", "c2d_im2col", "cast", "ceil", "ceildiv", "clamp", "clear",
    "const", "copy", "cos", "cummax", "cumsum", "debug", "device_assert", "double", "dp4a", "dtype", "dtypes",
    "dynamic", "empty", "erf", "exp", "exp10", "exp2", "exprs", "extract_lane", "fast_rcp", "fastmath", "fill",
    "finalize_reducer", "float", "float16", "float16x16", "float16x2", "float16x32", "float16x4", "float16x64",
    "float16x8", "float32", "float32x16", "float32x2", "float32x32", "float32x4", "float32x64", "float32x8",
    "float4_e2m1_unpacked", "float4_e2m1fn", "float4_e2m1fnx16", "float4_e2m1fnx2", "float4_e2m1fnx32",
    "float4_e2m1fnx4", "float4_e2m1fnx64", "float4_e2m1fnx8", "float64", "float64x16", "float64x2", "float64x32",
    "float64x4", "float64x64", "float64x8", "float6_e2m3fn", "float6_e2m3fnx16", "float6_e2m3fnx2",
    "float6_e2m3fnx32", "float6_e2m3fnx4", "float6_e2m3fnx64", "float6_e2m3fnx8", "float6_e3m2fn",
    "float6_e3m2fnx16", "float6_e3m2fnx2", "float6_e3m2fnx32", "float6_e3m2fnx4", "float6_e3m2fnx64",
    "float6_e3m2fnx8", "float8_e3m4", "float8_e3m4x16", "float8_e3m4x2", "float8_e3m4x32", "float8_e3m4x4",
    "float8_e3m4x64", "float8_e3m4x8", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3b11fnuzx16",
    "float8_e4m3b11fnuzx2", "float8_e4m3b11fnuzx32", "float8_e4m3b11fnuzx4", "float8_e4m3b11fnuzx64",
    "float8_e4m3b11fnuzx8", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e4m3fnuzx16", "float8_e4m3fnuzx2",
    "float8_e4m3fnuzx32", "float8_e4m3fnuzx4", "float8_e4m3fnuzx64", "float8_e4m3fnuzx8", "float8_e4m3fnx16",
    "float8_e4m3fnx2", "float8_e4m3fnx32", "float8_e4m3fnx4", "float8_e4m3fnx64", "float8_e4m3fnx8",
    "float8_e4m3x16", "float8_e4m3x2", "float8_e4m3x32", "float8_e4m3x4", "float8_e4m3x64", "float8_e4m3x8",
    "float8_e5m2", "float8_e5m2fnuz", "float8_e5m2fnuzx16", "float8_e5m2fnuzx2", "float8_e5m2fnuzx32",
    "float8_e5m2fnuzx4", "float8_e5m2fnuzx64", "float8_e5m2fnuzx8", "float8_e5m2x16", "float8_e5m2x2",
    "float8_e5m2x32", "float8_e5m2x4", "float8_e5m2x64", "float8_e5m2x8", "float8_e8m0fnu", "float8_e8m0fnux16",
    "float8_e8m0fnux2", "float8_e8m0fnux32", "float8_e8m0fnux4", "float8_e8m0fnux64", "float8_e8m0fnux8", "floor",
    "floordiv", "floormod", "fma2", "func_attr", "gemm", "gemm_sp", "get_block_binding", "get_block_bindings",
    "get_lane_idx", "get_let_value", "get_thread_binding", "get_thread_bindings", "get_warp_idx",
    "get_warp_idx_sync", "grid", "half", "has_let_value", "ieee_add", "ieee_fdiv", "ieee_fmaf", "ieee_frcp",
    "ieee_frsqrt", "ieee_fsqrt", "ieee_mul", "ieee_sub", "if_then_else", "im2col", "import_source",
    "index_to_coordinates", "infinity", "int", "int16", "int16x16", "int16x2", "int16x32", "int16x4", "int16x64",
    "int16x8", "int32", "int32x16", "int32x2", "int32x32", "int32x4", "int32x64", "int32x8", "int4", "int64",
    "int64x16", "int64x2", "int64x32", "int64x4", "int64x64", "int64x8", "int8", "int8x16", "int8x2", "int8x32",
    "int8x4", "int8x64", "int8x8", "isfinite", "isinf", "isnan", "kernel", "log", "log10", "log1p", "log2", "long",
    "loop_break", "loops", "macro", "make_tensor", "make_tensor_from_addr", "match_all_sync", "match_any_sync",
    "max", "max2", "max_value", "mbarrier_arrive", "mbarrier_arrive_expect_tx", "mbarrier_expect_tx",
    "mbarrier_wait_parity", "min", "min2", "min_value", "misc", "mul2", "no_set_max_nreg", "pow", "prim_func",
    "print", "proxy", "ptr", "ptx_arrive_barrier", "ptx_arrive_barrier_expect_tx", "ptx_commit_group",
    "ptx_cp_async", "ptx_init_barrier_thread_count", "ptx_wait_group", "reduce", "reduce_absmax", "reduce_abssum",
    "reduce_bitand", "reduce_bitor", "reduce_bitxor", "reduce_max", "reduce_min", "reduce_sum", "reducer",
    "reducer_init", "reducer_update", "reshape", "round", "rsqrt", "serial", "shfl_down", "shfl_sync", "shfl_up",
    "shfl_xor", "short", "sigmoid", "sin", "sqrt", "sub2", "symbolic", "symbolics", "sync_global", "sync_grid",
    "sync_threads", "sync_warp", "syncthreads_and", "syncthreads_count", "syncthreads_or", "tan", "tanh",
    "tfloat32", "tfloat32x16", "tfloat32x2", "tfloat32x32", "tfloat32x4", "tfloat32x64", "tfloat32x8", "tileops",
    "transpose", "trunc", "truncdiv", "truncmod", "uint", "uint16", "uint16x16", "uint16x2", "uint16x32",
    "uint16x4", "uint16x64", "uint16x8", "uint32", "uint32x16", "uint32x2", "uint32x32", "uint32x4", "uint32x64",
    "uint32x8", "uint64", "uint64x16", "uint64x2", "uint64x32", "uint64x4", "uint64x64", "uint64x8", "uint8",
    "uint8x16", "uint8x2", "uint8x32", "uint8x4", "uint8x64", "uint8x8", "unroll", "use_swizzle", "utils",
    "vectorized", "view", "views", "warp", "warp_reduce_bitand", "warp_reduce_bitor", "warp_reduce_max",
    "warp_reduce_min", "warp_reduce_sum",
]
