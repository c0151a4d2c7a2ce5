"""Metal 4 GEMM helpers in MSL: MetalPerformancePrimitives ``mpp::tensor_ops::matmul2d`` on cooperative tensors.

The cooperative-tensor lowering of ``T.gemm`` (`tilelang_metal.tileops.gemm_mpp`) calls one helper per call site,
``tl_mpp_gemm_<spec>(A, B, C)``, with pointers to the calling simdgroup's corner of each operand. The name spells
what the helper does (`MppGemmSpec`): operand address spaces and element types, the simdgroup's C tile, K, the row
strides and whether C starts at zero. `add_gemm_helpers` (run by the codegen's ``postprocess`` step) defines every
helper a kernel calls, after ``#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>``.

A helper walks K in steps of 16 with ``matmul2d_descriptor(16, 32, 16)`` on ``execution_simdgroup``: each
16x32 piece of the simdgroup's C tile lives in a destination cooperative tensor (fp32) for the whole walk, A and B
pieces are read straight from device or threadgroup memory into input cooperative tensors, and C is written back
once (cast to half on the store for an fp16 C). Element ``e`` of a lane's 16x32 tensor is row ``r + 8 * ((e >> 2) &
1)``, column ``c + 16 * (e >> 3) + (e & 3)`` with ``r, c`` from the lane id (`_LANE`); a 16x16 A piece holds
elements 0..7 of the same map.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MPP_INCLUDE = "#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>\n"
OP_M, OP_N, OP_K = 16, 32, 16  # the matmul2d shape every helper runs
HELPER_PREFIX = "tl_mpp_gemm_"

_SPACES = {"d": "device", "t": "threadgroup"}
_DTYPES = {"h": "half", "f": "float"}
_NAME = re.compile(HELPER_PREFIX + r"([dt][hf])([dt][hf])([dt][hf])_m(\d+)n(\d+)k(\d+)_l(\d+)x(\d+)x(\d+)(_z)?")
# a lane's first row and first column in a 16x16 piece of a cooperative tensor
_LANE = ("const ushort __lane = __metal_get_thread_index_in_simdgroup(ushort());\n"
         "  const ushort __row = ((__lane >> 2) & 4) | ((__lane >> 1) & 3);\n"
         "  const ushort __col = (((__lane >> 2) & 2) | (__lane & 1)) * 4;\n")


@dataclass(frozen=True)
class MppGemmSpec:
    """One simdgroup's ``C[tm x tn] (+)= A[tm x k] @ B[k x tn]`` with row strides ``lda, ldb, ldc``.

    Operands are ``(space, dtype)`` pairs: space ``"device"`` or ``"threadgroup"``, dtype ``"half"`` (A, B, C) or
    ``"float"`` (C). ``clear``: C starts at zero instead of being read.
    """

    a: tuple[str, str]
    b: tuple[str, str]
    c: tuple[str, str]
    tm: int
    tn: int
    k: int
    lda: int
    ldb: int
    ldc: int
    clear: bool

    @property
    def name(self) -> str:
        """The helper's MSL name (parsed back by `parse`)."""
        def code(operand: tuple[str, str]) -> str:
            return operand[0][0] + operand[1][0]

        return (f"{HELPER_PREFIX}{code(self.a)}{code(self.b)}{code(self.c)}_m{self.tm}n{self.tn}k{self.k}"
                f"_l{self.lda}x{self.ldb}x{self.ldc}{'_z' if self.clear else ''}")

    @classmethod
    def parse(cls, name: str) -> MppGemmSpec | None:
        """The spec a helper name spells, or None."""
        m = _NAME.fullmatch(name)
        if m is None:
            return None
        a, b, c = ((_SPACES[g[0]], _DTYPES[g[1]]) for g in m.groups()[:3])
        tm, tn, k, lda, ldb, ldc = (int(g) for g in m.groups()[3:9])
        return cls(a, b, c, tm, tn, k, lda, ldb, ldc, m.group(10) is not None)


def _pieces(spec: MppGemmSpec) -> list[tuple[int, int]]:
    return [(i, j) for i in range(spec.tm // OP_M) for j in range(spec.tn // OP_N)]


def _vec4(space: str, dtype: str, base: str, offset: str, *, const: bool) -> str:
    qual = f"const {space}" if const else space
    return f"*({qual} {dtype}4*)(&{base}[{offset}])"


def _c_moves(spec: MppGemmSpec, load: bool) -> list[str]:
    """Statements moving every destination tensor from (load) or to C memory."""
    space, dtype = spec.c
    out = []
    for n, (i, j) in enumerate(_pieces(spec)):
        ptr = "__src" if load else "__dst"
        qual = f"const {space}" if load else space
        lines = [f"{{ {qual} {dtype}* {ptr} = C + {i * OP_M * spec.ldc + j * OP_N};"]
        for e in range(0, 16, 4):
            row = "__row" if (e >> 2) & 1 == 0 else "(__row + 8)"
            offset = f"{row} * {spec.ldc} + __col + {16 * (e >> 3)}"
            mem = _vec4(space, dtype, ptr, offset, const=load)
            reg = f"*(thread float4*)(&__acc{n}[{e}])"
            if load:
                lines.append(f"{reg} = {mem if dtype == 'float' else f'float4({mem})'};")
            else:
                lines.append(f"{mem} = {reg if dtype == 'float' else f'{dtype}4({reg})'};")
        out.append(" ".join(lines) + " }")
    return out


def _input_load(name: str, role: str, space: str, base: str, ld: int, pieces16: int) -> str:
    """Fill cooperative tensor `name` from a 16 x (16 * `pieces16`) block at ``__src``."""
    lines = [f"auto {name} = __op.get_{role}_input_cooperative_tensor<half, half, float>();",
             f"{{ const {space} half* __src = {base};"]
    for e in range(0, 8 * pieces16, 4):
        row = "__row" if (e >> 2) & 1 == 0 else "(__row + 8)"
        offset = f"{row} * {ld} + __col + {16 * (e >> 3)}"
        lines.append(f"const half4 __v{e} = {_vec4(space, 'half', '__src', offset, const=True)}; "
                     f"for (ushort __e = 0; __e < 4; ++__e) {name}[{e} + __e] = __v{e}[__e];")
    return " ".join(lines) + " }"


def gemm_helper(spec: MppGemmSpec) -> str:
    """The MSL definition of the helper `spec` names."""
    (a_space, _), (b_space, _), (c_space, c_dtype) = spec.a, spec.b, spec.c
    pieces = _pieces(spec)
    rows, cols = spec.tm // OP_M, spec.tn // OP_N
    body = [
        f"constexpr auto __desc = mpp::tensor_ops::matmul2d_descriptor({OP_M}, {OP_N}, {OP_K}, false, false, true, "
        "mpp::tensor_ops::matmul2d_descriptor::mode::multiply_accumulate);",
        "mpp::tensor_ops::matmul2d<__desc, metal::execution_simdgroup> __op;",
        "using __lhs_t = decltype(__op.get_left_input_cooperative_tensor<half, half, float>());",
        "using __rhs_t = decltype(__op.get_right_input_cooperative_tensor<half, half, float>());",
        _LANE.strip(),
    ]
    body += [f"auto __acc{n} = __op.get_destination_cooperative_tensor<__lhs_t, __rhs_t, float>();"
             for n in range(len(pieces))]
    if spec.clear:
        body += [f"for (ushort __e = 0; __e < 16; ++__e) __acc{n}[__e] = 0.0f;" for n in range(len(pieces))]
    else:
        body += _c_moves(spec, load=True)
    body.append(f"for (int __k = 0; __k < {spec.k}; __k += {OP_K}) {{")
    body += ["  " + _input_load(f"__a{i}", "left", a_space, f"A + {i * OP_M * spec.lda} + __k", spec.lda, 1)
             for i in range(rows)]
    body += ["  " + _input_load(f"__b{j}", "right", b_space, f"B + __k * {spec.ldb} + {j * OP_N}", spec.ldb, 2)
             for j in range(cols)]
    body += [f"  __op.run(__a{i}, __b{j}, __acc{n});" for n, (i, j) in enumerate(pieces)]
    body.append("}")
    body += _c_moves(spec, load=False)
    head = (f"inline void {spec.name}(const {a_space} half* A, const {b_space} half* B, "
            f"{c_space} {c_dtype}* C) {{")
    return "\n".join([f"// tilelang: MPP GEMM, one simdgroup's {spec.tm}x{spec.tn} C tile over K={spec.k}",
                      head, *("  " + line for line in body), "}"]) + "\n"


CT_MMA_PREFIX = "tl_mpp_ct_mma_"
_CT_TYPES = {"h": "half", "b": "bfloat", "f": "float"}
_CT_CODES = {"float16": "h", "bfloat16": "b", "float32": "f"}
_CT_NAME = re.compile(CT_MMA_PREFIX + r"([hb])([hbf])")


def ct_mma_name(in_dtype: str, acc_dtype: str) -> str:
    """The helper of ``T.cooperative_tensor_multiply_accumulate`` for `in_dtype` A / B and `acc_dtype` C / D."""
    return f"{CT_MMA_PREFIX}{_CT_CODES[in_dtype]}{_CT_CODES[acc_dtype]}"


def ct_mma_helper(name: str) -> str | None:
    """The MSL definition of ``C = A @ B + D`` on one simdgroup's 16x32x16 cooperative tensors (each pointer the
    lane's elements in the lane map), or None when `name` is not such a helper."""
    m = _CT_NAME.fullmatch(name)
    if m is None:
        return None
    ab, acc = _CT_TYPES[m.group(1)], _CT_TYPES[m.group(2)]
    a_n, b_n, c_n = OP_M * OP_K // 32, OP_K * OP_N // 32, OP_M * OP_N // 32
    body = [
        f"constexpr auto __desc = mpp::tensor_ops::matmul2d_descriptor({OP_M}, {OP_N}, {OP_K}, false, false, true, "
        "mpp::tensor_ops::matmul2d_descriptor::mode::multiply_accumulate);",
        "mpp::tensor_ops::matmul2d<__desc, metal::execution_simdgroup> __op;",
        f"auto __a = __op.get_left_input_cooperative_tensor<{ab}, {ab}, {acc}>();",
        f"auto __b = __op.get_right_input_cooperative_tensor<{ab}, {ab}, {acc}>();",
        f"auto __c = __op.get_destination_cooperative_tensor<decltype(__a), decltype(__b), {acc}>();",
        f"for (ushort __i = 0; __i < {a_n}; ++__i) __a[__i] = A[__i];",
        f"for (ushort __i = 0; __i < {b_n}; ++__i) __b[__i] = B[__i];",
        f"for (ushort __i = 0; __i < {c_n}; ++__i) __c[__i] = D[__i];",
        "__op.run(__a, __b, __c);",
        f"for (ushort __i = 0; __i < {c_n}; ++__i) C[__i] = __c[__i];",
    ]
    head = (f"inline void {name}(thread {acc}* C, const thread {ab}* A, const thread {ab}* B, "
            f"const thread {acc}* D) {{")
    return "\n".join([f"// tilelang: T.cooperative_tensor_multiply_accumulate, matmul2d({OP_M}, {OP_N}, {OP_K}) "
                      f"{ab} x {ab} + {acc}", head, *("  " + line for line in body), "}"]) + "\n"


_CALL = re.compile(r"\b((?:" + HELPER_PREFIX + "|" + CT_MMA_PREFIX + r")\w+)\s*\(")
_ANCHOR = "using namespace metal;\n"
_STDLIB = "#include <metal_stdlib>\n"


def add_gemm_helpers(source: str) -> str:
    """`source` with the MPP include and the definition of every ``tl_mpp_gemm_*`` and ``tl_mpp_ct_mma_*`` helper it
    calls."""
    names = []
    for m in _CALL.finditer(source):
        if m.group(1) not in names and f"inline void {m.group(1)}(" not in source:
            names.append(m.group(1))
    specs = [s for s in (MppGemmSpec.parse(n) for n in names) if s is not None]
    mmas = [h for h in (ct_mma_helper(n) for n in names) if h is not None]
    if not specs and not mmas:
        return source
    helpers = "".join(gemm_helper(s) for s in specs) + "".join(mmas)
    if _ANCHOR not in source:
        source = _STDLIB + _ANCHOR + source
    source = source.replace(_ANCHOR, _ANCHOR + helpers, 1)
    if MPP_INCLUDE not in source:
        source = source.replace(_STDLIB, _STDLIB + MPP_INCLUDE, 1) if _STDLIB in source else MPP_INCLUDE + source
    return source
