"""The TileLang kernel language: ``import tilelang.language as T``.

Kernels are Python functions decorated with ``@T.prim_func`` (or eager ``@tilelang.jit`` functions); their
bodies are parsed by ``tilelang.frontend`` into tirx PrimFuncs (``docs/ir.md``).
"""

from tilelang.frontend.build import prim_func
from tilelang.frontend.macro import macro
from tilelang.ir.ops import GemmWarpPolicy
from tilelang.language.allocate import alloc_fragment, alloc_local, alloc_shared, alloc_var, empty
from tilelang.language.annotations import annotate_layout, use_swizzle
from tilelang.language.dtypes import (
    bfloat16,
    bool_,
    dtype,
    float4_e2m1fn,
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
    float8_e8m0fnu,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from tilelang.language.exprs import (
    Cast,
    abs,
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
from tilelang.language.tileops import (
    atomic_add,
    atomic_max,
    atomic_min,
    clear,
    copy,
    cumsum,
    fill,
    gemm,
    reduce,
    reduce_absmax,
    reduce_abssum,
    reduce_max,
    reduce_min,
    reduce_sum,
)
from tilelang.layout import Fragment, Layout

# reference spellings that shadow Python builtins: only attributes of this module
globals()["bool"] = bool_
globals()["float"] = float32
globals()["half"] = float16
globals()["double"] = float64
Serial = serial
Unroll = unroll
Vectorized = vectorized

__all__ = [
    "Buffer", "Cast", "Fragment", "FragmentBuffer", "GemmWarpPolicy", "Kernel", "Layout", "LocalBuffer", "Parallel",
    "Pipelined", "Serial", "SharedBuffer", "StridedTensor", "Tensor", "TensorSpec", "Unroll", "Vectorized",
    "abs", "alloc_fragment", "alloc_local", "alloc_shared", "alloc_var", "annotate_layout", "atomic_add",
    "atomic_max", "atomic_min", "bfloat16", "bool_", "cast", "ceil", "ceildiv", "clear", "const", "copy", "cos",
    "cumsum", "dtype", "dynamic", "empty", "erf", "exp", "exp2", "exp10", "fill", "float4_e2m1fn", "float8_e4m3fn",
    "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float16", "float32", "float64",
    "floor", "floordiv", "floormod", "gemm", "get_block_binding", "get_block_bindings", "get_thread_binding",
    "get_thread_bindings", "grid", "if_then_else", "infinity", "int8", "int16", "int32", "int64", "isfinite",
    "isinf", "isnan", "log", "log1p", "log2", "log10", "macro", "max", "max_value", "min", "min_value", "pow",
    "prim_func", "reduce", "reduce_absmax", "reduce_abssum", "reduce_max", "reduce_min", "reduce_sum", "round",
    "rsqrt", "serial", "sigmoid", "sin", "sqrt", "symbolic", "sync_threads", "tan", "tanh", "trunc", "truncdiv",
    "truncmod", "uint8", "uint16", "uint32", "uint64", "unroll", "use_swizzle", "vectorized",
]
