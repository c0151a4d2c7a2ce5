"""For backends whose kernels are C built by TVM's C codegen (the CPU backend's ``c`` target, a third party's C
backend): that output made into C (C++) the system compiler accepts. `build(mod, target)` does all of it.

- Math intrinsics TVM lowers for LLVM but not for C (``fabs``, ``exp2``, ``fma``, ``popcount``) become calls of
  the C library (``fabsf`` / ``fabs``, ...; 16-bit floats compute in float) before codegen (`legalize_intrinsics`).
- A prelude (`PRELUDE`): ``<math.h>``, ``half`` as the compiler's ``_Float16``, and the vector types TVM prints
  for vectorised code (``float4``, ``half2``, ``int32_t4``, ...) as small structs with lane-wise operators.
- Non-finite constants: TVM prints ``inff`` / ``nanf``; they become the C99 macros ``INFINITY`` / ``NAN``.
"""

from __future__ import annotations

import re
from typing import Any

_LIBM = {"tirx.fabs": ("fabsf", "fabs"), "tirx.exp2": ("exp2f", "exp2"), "tirx.fma": ("fmaf", "fma")}

# C element type names TVM prints, and their vector widths used by the vectoriser
_VECTOR_ELEMENTS = ("float", "double", "half", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t",
                    "uint32_t", "uint64_t")
_VECTOR_LANES = (2, 4, 8, 16)


def _vector_types() -> str:
    """C++ vector types: ``N`` lanes of ``T`` in exactly ``N * sizeof(T)`` bytes, lanes readable as ``.s0`` ...
    (as TVM prints them), built from N values, broadcast from one or cast lane-wise from another vector of N
    lanes, with lane-wise operators."""
    lines = ["#ifdef __cplusplus", "template <typename T, int N> struct tl_vec_lanes;"]
    for lanes in _VECTOR_LANES:
        fields = ", ".join(f"s{i:x}" for i in range(lanes))
        lines.append(f"template <typename T> struct tl_vec_lanes<T, {lanes}> {{ union {{ T v[{lanes}]; "
                     f"struct {{ T {fields}; }}; }}; }};")
    lines += [
        "template <typename T, int N> struct tl_vec : tl_vec_lanes<T, N> {",
        "  tl_vec() = default;",
        "  tl_vec(T x) { for (int i = 0; i < N; ++i) this->v[i] = x; }",
        "  template <typename U> explicit tl_vec(const tl_vec<U, N>& o) {",
        "    for (int i = 0; i < N; ++i) this->v[i] = static_cast<T>(o.v[i]); }",
        "  template <typename... A, typename = typename std::enable_if<sizeof...(A) == N && (N > 1)>::type>",
        "  tl_vec(A... a) { T tmp[N] = {static_cast<T>(a)...}; for (int i = 0; i < N; ++i) this->v[i] = tmp[i]; }",
        "};",
    ]
    for op in ("+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"):
        lines.append(f"template <typename T, int N> tl_vec<T, N> operator{op}(const tl_vec<T, N>& a, "
                     f"const tl_vec<T, N>& b) {{ tl_vec<T, N> r; for (int i = 0; i < N; ++i) r.v[i] = "
                     f"a.v[i] {op} b.v[i]; return r; }}")
    for elem in _VECTOR_ELEMENTS:
        for lanes in _VECTOR_LANES:
            lines.append(f"typedef tl_vec<{elem}, {lanes}> {elem}{lanes};")
    lines.append("#endif")
    return "\n".join(lines)


PRELUDE = "\n".join([
    "// ---- tilelang-cpu: C prelude (math library, half, vector types)",
    "#include <math.h>",
    "#include <stdint.h>",
    "#ifdef __cplusplus",
    "#include <type_traits>",
    "#endif",
    "typedef _Float16 half;",
    _vector_types(),
    "// ---- end of prelude",
    "",
])

_NONFINITE = [(re.compile(r"(?<![\w.])inff?\b"), "INFINITY"), (re.compile(r"(?<![\w.])nanf?\b"), "NAN")]


def patch_source(code: str) -> str:
    """`code` with the prelude in front and C99 spellings of non-finite constants."""
    for pattern, macro in _NONFINITE:
        code = pattern.sub(macro, code)
    if PRELUDE in code:
        return code
    return PRELUDE + code


def legalize_intrinsics(mod: Any) -> Any:
    """Lower the math intrinsics TVM's C codegen cannot print to C library calls."""
    import tvm
    import tvm_ffi
    from tvm import tirx

    def on_call(call: Any) -> Any:
        op = call.op
        if not isinstance(op, tvm.ir.Op):
            return call
        name = op.name
        if name == "tirx.popcount":
            dtype = str(call.ty.dtype)
            fn = "__builtin_popcountll" if dtype.endswith("64") else "__builtin_popcount"
            return tirx.Cast(dtype, tirx.call_pure_extern("int32", fn, *call.args))
        if name not in _LIBM:
            return call
        dtype = str(call.ty.dtype)
        if dtype.startswith("float64"):
            return tirx.call_pure_extern(dtype, _LIBM[name][1], *call.args)
        if dtype.startswith("float32"):
            return tirx.call_pure_extern(dtype, _LIBM[name][0], *call.args)
        args = [tirx.Cast("float32", a) for a in call.args]  # 16-bit floats compute in float
        return tirx.Cast(dtype, tirx.call_pure_extern("float32", _LIBM[name][0], *args))

    out = {}
    for gv, func in mod.functions.items():
        if isinstance(func, tirx.PrimFunc):
            body = tvm_ffi.structural_map(func.body, (tvm.ir.Call, on_call))
            func = func if body.same_as(func.body) else tirx.PrimFunc(func.params, body, func.ret_type, func.attrs)
        out[gv] = func
    return tvm.IRModule(out, attrs=mod.attrs)


def build(mod: Any, target: Any) -> Any:
    """``target.build.c`` on the legalised module, returning a C source module of the patched source."""
    import tvm_ffi

    rt_mod = tvm_ffi.get_global_func("target.build.c")(legalize_intrinsics(mod), target)
    code = rt_mod.inspect_source()
    patched = patch_source(code)
    if patched == code:
        return rt_mod
    func_names = [str(gv.name_hint) for gv in mod.functions.keys()]
    return tvm_ffi.get_global_func("runtime.CSourceModuleCreate")(patched, "c", func_names, [])
