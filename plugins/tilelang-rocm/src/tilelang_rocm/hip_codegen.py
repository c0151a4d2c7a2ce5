"""HIP C++ source for device functions: TVM global function ``target.build.tilelang_hip_without_compile``.

The ROCm backend compiles kernels through LLVM (`tilelang_rocm.codegen`); this module prints the same device
IR as HIP C++ for inspection, for the reference's HIP source checks and for users who build with hipcc.
Vector expressions are printed lane by lane: a vector ``Select`` becomes one ternary per lane, so that the
loads of a branch stay inside it (no vector load that reads a masked-out lane), and every vector result is
written lane by lane into its carrier (`tilelang_rocm.hip_types`). The source includes
``tl_templates/hip/common.h``; `include_dir` is a folder holding a version of it for host-side checks
(``clang -x hip -fsyntax-only``).

Covered: kernels of buffer, scalar and vector parameters with thread bindings, serial / unrolled loops, ifs,
lets, local and shared allocations, buffer loads and stores (scalar and ``Ramp``-indexed), arithmetic,
comparisons, casts, selects, extern calls, ``reinterpret`` (also between lane counts), TVM math intrinsics and
the packed two-lane ops ``tl.add2`` ... ``tl.abs2``. Anything else is a `LoweringError` naming the construct.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tilelang.errors import LoweringError
from tilelang_rocm.hip_types import DType, read_lane, scalar_type, vector_type, write_lane

INCLUDE_DIR = Path(__file__).parent / "hip_include"

_BINARY = {"Add": "+", "Sub": "-", "Mul": "*", "Div": "/", "Mod": "%", "EQ": "==", "NE": "!=", "LT": "<",
           "LE": "<=", "GT": ">", "GE": ">=", "And": "&&", "Or": "||", "BitwiseAnd": "&", "BitwiseOr": "|",
           "BitwiseXor": "^", "LShift": "<<", "RShift": ">>"}
_MATH = {"exp": "exp", "exp2": "exp2", "exp10": "exp10", "log": "log", "log2": "log2", "log10": "log10",
         "sqrt": "sqrt", "rsqrt": "rsqrt", "sin": "sin", "cos": "cos", "tan": "tan", "tanh": "tanh",
         "sigmoid": None, "fabs": "fabs", "floor": "floor", "ceil": "ceil", "round": "round", "trunc": "trunc",
         "pow": "pow", "fmod": "fmod", "erf": "erf", "atan": "atan", "asin": "asin", "acos": "acos"}
_HALF_MATH = {"exp": "hexp", "exp2": "hexp2", "log": "hlog", "log2": "hlog2", "sqrt": "hsqrt", "rsqrt": "hrsqrt",
              "sin": "hsin", "cos": "hcos", "fabs": "__habs", "floor": "hfloor", "ceil": "hceil"}
_PACKED = {"tl.add2": "+", "tl.sub2": "-", "tl.mul2": "*"}
_THREAD_TAGS = ("blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z")


def _type_name(node: Any) -> str:
    return type(node).__name__


def _dtype(expr: Any) -> DType:
    return DType.of(expr.dtype)


def _float_literal(value: float, dt: DType) -> str:
    text = f"{value:.6e}"
    if dt.name == "float64":
        return text
    if dt.name == "float32":
        return text + "f"
    return f"({scalar_type(dt)}){text}f"


class HipPrinter:
    """Prints one PrimFunc as a HIP ``__global__`` function."""

    def __init__(self, name: str, func: Any):
        self.name = name
        self.func = func
        self.lines: list[str] = []
        self.indent = 1
        self.counter = 0
        self.bindings: dict[Any, Any] = {}  # Let-bound vars: inlined where used
        self.thread_vars: dict[Any, str] = {}
        self.block_threads = 1
        self.vector_vars: set[Any] = set()

    # ------------------------------------------------------------------ helpers
    def emit(self, text: str) -> None:
        self.lines.append("  " * self.indent + text)

    def fresh(self) -> str:
        name = f"__{self.counter}"
        self.counter += 1
        return name

    def fail(self, what: str) -> LoweringError:
        return LoweringError(f"HIP codegen of {self.name!r}: {what} is not supported by the HIP source printer")

    @staticmethod
    def _is_buffer(var: Any) -> bool:
        from tvm import tirx

        return bool(tirx.is_buffer_var(var))

    def _simplify(self, expr: Any) -> Any:
        import tvm

        return tvm.arith.Analyzer().simplify(expr)

    def _flat_index(self, buffer: Any, indices: Any) -> Any:
        element = DType.of(buffer.ty.dtype)
        if element.bits < 8 and element.name != "bool":
            raise self.fail(f"element access to the buffer {buffer.name} of sub-byte type {element.name}")
        shape = list(buffer.ty.shape)
        if len(indices) == 1:
            return indices[0]
        if len(indices) != len(shape):
            raise self.fail(f"an access of {len(indices)} indices to the {len(shape)}-d buffer {buffer.name}")
        flat = indices[0]
        for idx, extent in zip(indices[1:], shape[1:]):
            flat = flat * extent + idx
        return flat

    # ------------------------------------------------------------------ scalar expressions
    def expr(self, e: Any) -> str:
        """C++ for the scalar expression `e`."""
        from tvm import ir

        kind = _type_name(e)
        dt = _dtype(e) if hasattr(e, "dtype") and not self._is_var_buffer(e) else None
        if dt is not None and dt.lanes > 1:
            raise self.fail(f"a vector value ({e.dtype}) used where a scalar is needed")
        if kind == "IntImm":
            if dt.name == "bool":
                return "true" if int(e.value) else "false"
            return str(int(e.value)) if dt.name == "int32" else f"({scalar_type(dt)}){int(e.value)}"
        if kind == "FloatImm":
            return _float_literal(float(e.value), dt)
        if kind == "Var":
            if e in self.bindings:
                return self.expr(self.bindings[e])
            return self.thread_vars.get(e, e.name)
        if kind in _BINARY:
            return f"({self.expr(e.a)} {_BINARY[kind]} {self.expr(e.b)})"
        if kind in ("Min", "Max"):
            return f"{kind.lower()}({self.expr(e.a)}, {self.expr(e.b)})"
        if kind in ("FloorDiv", "FloorMod"):
            return f"tl_{kind.lower()}({self.expr(e.a)}, {self.expr(e.b)})"
        if kind == "Not":
            return f"(!{self.expr(e.a)})"
        if kind == "Cast":
            return f"(({scalar_type(dt)}){self.expr(e.value)})"
        if kind == "Select":
            return f"({self.expr(e.condition)} ? {self.expr(e.true_value)} : {self.expr(e.false_value)})"
        if kind == "Let":
            self.bindings[e.var] = e.value
            return self.expr(e.body)
        if kind == "TensorLoad":
            return f"{e.source.name}[{self.expr(self._flat_index(e.source, list(e.indices)))}]"
        if kind == "Call" and isinstance(e.op, ir.Op):
            return self.call(e, [self.expr(a) if not isinstance(a, ir.StringImm) else a.value for a in e.args],
                             [_dtype(a) if hasattr(a, "dtype") and not isinstance(a, ir.StringImm) else None
                              for a in e.args])
        if kind == "Shuffle" and len(e.indices) == 1:
            return self.lane(self._concat(e.vectors), int(e.indices[0]))
        if kind == "StringImm":
            return '"' + e.value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        raise self.fail(f"expression {kind}")

    def _is_var_buffer(self, e: Any) -> bool:
        return _type_name(e) == "Var" and self._is_buffer(e)

    def call(self, e: Any, args: list[str], arg_types: list[DType | None]) -> str:
        """C++ for the call `e` of scalar operands already printed as `args`."""
        op = e.op.name
        dt = _dtype(e)
        if op in ("tirx.call_extern", "tirx.call_pure_extern"):
            return f"{args[0]}({', '.join(args[1:])})"
        if op == "tirx.reinterpret":
            return f"__builtin_bit_cast({scalar_type(dt)}, {args[0]})"
        if op == "tirx.if_then_else":
            return f"({args[0]} ? {args[1]} : {args[2]})"
        if op == "tirx.tvm_storage_sync":
            return "__syncthreads()"
        if op in _PACKED:
            return f"({args[0]} {_PACKED[op]} {args[1]})"
        if op == "tl.fma2":
            return f"(({args[0]} * {args[1]}) + {args[2]})"
        if op in ("tl.max2", "tl.min2"):
            return f"{op[3:6]}({args[0]}, {args[1]})"
        if op == "tl.abs2":
            return f"__habs({args[0]})" if dt.name in ("float16", "bfloat16") else f"fabs({args[0]})"
        name = op.removeprefix("tirx.")
        if op.startswith("tirx.") and name in _MATH and _MATH[name] is not None:
            if dt.name in ("float16", "bfloat16") and name in _HALF_MATH:
                return f"{_HALF_MATH[name]}({', '.join(args)})"
            suffix = "f" if dt.name == "float32" else ""
            return f"{_MATH[name]}{suffix}({', '.join(args)})"
        raise self.fail(f"the call {op}")

    # ------------------------------------------------------------------ vector expressions, lane by lane
    def _concat(self, vectors: Any) -> list[tuple[Any, int]]:
        out = []
        for v in vectors:
            lanes = _dtype(v).lanes
            out += [(v, i) for i in range(lanes)]
        return out

    def lane(self, picked: Any, i: int | None = None) -> str:
        """Lane `i` of vector expression `picked` (or a ``(vector, lane)`` pair list from a concatenation)."""
        if isinstance(picked, list):
            vector, at = picked[i]
            return self.lane(vector, at)
        return self.lane_of(picked, i)

    def lane_of(self, e: Any, i: int) -> str:
        """C++ for lane `i` of `e` (a scalar `e` is the same in every lane)."""
        from tvm import ir

        kind = _type_name(e)
        dt = _dtype(e)
        if dt.lanes == 1:
            return self.expr(e)
        if kind == "Broadcast":
            return self.expr(e.value)
        if kind == "Ramp":
            return self.expr(self._simplify(e.base + e.stride * i))
        if kind == "Var":
            if e in self.bindings:
                return self.lane_of(self.bindings[e], i)
            return read_lane(e.name, dt, i)
        if kind == "TensorLoad":
            index = self._flat_index(e.source, list(e.indices))
            return f"{e.source.name}[{self.expr(self._simplify(self._index_lane(index, i)))}]"
        if kind in _BINARY:
            return f"({self.lane_of(e.a, i)} {_BINARY[kind]} {self.lane_of(e.b, i)})"
        if kind in ("Min", "Max"):
            return f"{kind.lower()}({self.lane_of(e.a, i)}, {self.lane_of(e.b, i)})"
        if kind == "Not":
            return f"(!{self.lane_of(e.a, i)})"
        if kind == "Cast":
            return f"(({scalar_type(dt.scalar())}){self.lane_of(e.value, i)})"
        if kind == "Select":
            return (f"({self.lane_of(e.condition, i)} ? {self.lane_of(e.true_value, i)} : "
                    f"{self.lane_of(e.false_value, i)})")
        if kind == "Let":
            self.bindings[e.var] = e.value
            return self.lane_of(e.body, i)
        if kind == "Shuffle":
            return self.lane(self._concat(e.vectors), int(e.indices[i]))
        if kind == "Call" and isinstance(e.op, ir.Op):
            if e.op.name == "tirx.reinterpret":
                return self._reinterpret_lane(e, i)
            args = [a.value if isinstance(a, ir.StringImm) else self.lane_of(a, i) for a in e.args]
            return self.call(e, args, [None] * len(args))
        raise self.fail(f"vector expression {kind}")

    def _index_lane(self, index: Any, i: int) -> Any:
        """Lane `i` of an index expression, as a scalar tirx expression (to be simplified)."""
        from tvm import tirx

        kind = _type_name(index)
        if kind == "Shuffle":
            vector, at = self._concat(index.vectors)[int(index.indices[i if _dtype(index).lanes > 1 else 0])]
            return self._index_lane(vector, at)
        if _dtype(index).lanes == 1:
            return index
        if kind == "Ramp":
            return self._index_lane(index.base, i) + self._index_lane(index.stride, i) * i
        if kind == "Broadcast":
            return index.value
        if kind in ("Add", "Sub", "Mul"):
            a, b = self._index_lane(index.a, i), self._index_lane(index.b, i)
            return {"Add": a + b, "Sub": a - b, "Mul": a * b}[kind]
        if kind in ("FloorDiv", "FloorMod"):
            fn = tirx.floordiv if kind == "FloorDiv" else tirx.floormod
            return fn(self._index_lane(index.a, i), self._index_lane(index.b, i))
        raise self.fail(f"vector index {kind}")

    def _reinterpret_lane(self, e: Any, i: int) -> str:
        """Lane `i` of ``reinterpret(value)``; lanes of a different width are combined or split bitwise."""
        src = e.args[0]
        sdt, ddt = _dtype(src), _dtype(e)
        dst_type = scalar_type(ddt.scalar())
        if sdt.bits == ddt.bits:
            return f"__builtin_bit_cast({dst_type}, {self.lane_of(src, i)})"

        def unsigned(bits: int) -> str:
            return {8: "unsigned char", 16: "unsigned short", 32: "uint", 64: "uint64_t"}[bits]

        def bits_of(text: str, dt: DType) -> str:
            if dt.is_float:
                return f"__builtin_bit_cast({unsigned(dt.bits)}, {text})"
            return f"(({unsigned(dt.bits)}){text})"

        def from_bits(text: str) -> str:
            return f"__builtin_bit_cast({dst_type}, ({unsigned(ddt.bits)})({text}))" if ddt.is_float \
                else f"(({dst_type})({text}))"

        if sdt.bits * sdt.lanes != ddt.bits * ddt.lanes or (ddt.bits % sdt.bits and sdt.bits % ddt.bits):
            raise self.fail(f"reinterpret from {src.dtype} to {e.dtype}")
        if ddt.bits > sdt.bits:  # several source lanes make one result lane (little endian)
            k = ddt.bits // sdt.bits
            parts = [f"(({unsigned(ddt.bits)}){bits_of(self.lane_of(src, i * k + m), sdt)} << {m * sdt.bits})"
                     for m in range(k)]
            return from_bits(" | ".join(parts))
        k = sdt.bits // ddt.bits
        whole = bits_of(self.lane_of(src, i // k), sdt)
        return from_bits(f"{whole} >> {(i % k) * ddt.bits}")

    def materialize(self, value: Any, name: str | None = None) -> str:
        """Declare a carrier for vector `value` (value-initialised) and write it lane by lane; returns its name."""
        dt = _dtype(value)
        target = name or self.fresh()
        self.emit(f"{vector_type(dt)} {target}{{}};")
        for i in range(dt.lanes):
            self.emit(write_lane(target, dt, i, self.lane_of(value, i)))
        return target

    # ------------------------------------------------------------------ statements
    def stmt(self, s: Any) -> None:
        from tvm import ir

        kind = _type_name(s)
        if kind == "SeqStmt":
            for child in s.seq:
                self.stmt(child)
        elif kind == "Evaluate":
            value = s.value
            if _type_name(value) == "IntImm":
                return
            if hasattr(value, "dtype") and _dtype(value).lanes > 1:
                carrier = self.materialize(value)
                self.emit(f"(void){carrier};")
            else:
                self.emit(f"{self.expr(value)};")
        elif kind == "BufferStore":
            self.store(s)
        elif kind in ("LetStmt", "Bind"):
            dt = _dtype(s.var)
            if dt.lanes > 1:
                self.materialize(s.value, s.var.name)
            else:
                self.emit(f"{scalar_type(dt)} {s.var.name} = {self.expr(s.value)};")
            if getattr(s, "body", None) is not None:  # 0.27's LetStmt binds until the end of its SeqStmt
                self.stmt(s.body)
        elif kind == "For":
            self.loop(s)
        elif kind == "IfThenElse":
            self.emit(f"if ({self.expr(s.condition)}) {{")
            self.block(s.then_case)
            if s.else_case is not None:
                self.emit("} else {")
                self.block(s.else_case)
            self.emit("}")
        elif kind == "AttrStmt":
            self.attr(s)
        elif kind == "AllocBuffer":
            self.alloc(s.buffer)
        elif kind == "DeclBuffer":
            buffer, data = s.buffer, getattr(s, "data", None)
            if data is not None and data.name != buffer.name:  # a typed view of a pointer parameter
                element = vector_type(DType.of(buffer.ty.dtype))
                self.emit(f"{element}* __restrict__ {buffer.name} = ({element}*){data.name};")
        elif isinstance(s, ir.Expr):
            self.emit(f"{self.expr(s)};")
        else:
            raise self.fail(f"statement {kind}")

    def block(self, s: Any) -> None:
        self.indent += 1
        self.stmt(s)
        self.indent -= 1

    def store(self, s: Any) -> None:
        buffer, value = s.buffer, s.value
        index = self._flat_index(buffer, list(s.indices))
        lanes = _dtype(value).lanes
        if _dtype(index).lanes == 1:
            if lanes > 1:
                raise self.fail(f"a {value.dtype} store at a scalar index of {buffer.name}")
            self.emit(f"{buffer.name}[{self.expr(index)}] = {self.expr(value)};")
            return
        for i in range(lanes):
            at = self.expr(self._simplify(self._index_lane(index, i)))
            self.emit(f"{buffer.name}[{at}] = {self.lane_of(value, i)};")

    def loop(self, s: Any) -> None:
        var = s.loop_var
        ctype = scalar_type(_dtype(var))
        begin, end = self.expr(s.min), self.expr(self._simplify(s.min + s.extent))
        if "unroll" in str(s.kind).lower():
            self.emit("#pragma unroll")
        self.emit(f"for ({ctype} {var.name} = {begin}; {var.name} < {end}; ++{var.name}) {{")
        self.block(s.body)
        self.emit("}")

    def attr(self, s: Any) -> None:
        if s.attr_key == "thread_extent":
            iv = s.node
            tag = str(iv.thread_tag)
            if tag not in _THREAD_TAGS:
                raise self.fail(f"thread binding {tag!r}")
            self.thread_vars[iv.var] = f"((int){tag})"
            if tag.startswith("threadIdx"):
                self.block_threads *= int(s.value) if _type_name(s.value) == "IntImm" else 1
        self.stmt(s.body)

    def alloc(self, buffer: Any) -> None:
        dt = DType.of(buffer.ty.dtype)
        size = 1
        for extent in buffer.ty.shape:
            if _type_name(extent) != "IntImm":
                raise self.fail(f"the allocation of {buffer.name} with a symbolic shape")
            size *= int(extent.value)
        scope = str(buffer.ty.storage_scope or "global")
        prefix = "__shared__ " if scope.startswith("shared") else ""
        self.emit(f"{prefix}{vector_type(dt)} {buffer.name}[{size}];")

    # ------------------------------------------------------------------ the kernel
    def params(self) -> list[str]:
        out = []
        for p in self.func.params:
            if self._is_buffer(p):
                out.append(f"{vector_type(DType.of(p.ty.dtype))}* __restrict__ {p.name}")
            elif _type_name(p.ty) == "PointerType":
                element = p.ty.element_type
                ctype = vector_type(DType.of(element.dtype)) if _type_name(element) == "PrimType" else "void"
                out.append(f"{ctype}* __restrict__ {p.name}")
            else:
                out.append(f"{vector_type(_dtype(p))} {p.name}")
        return out

    def print(self) -> str:
        self.stmt(self.func.body)
        body = self.lines
        bounds = f"__launch_bounds__({self.block_threads}) " if self.block_threads > 1 else ""
        header = f'extern "C" __global__ void {bounds}{self.name}({", ".join(self.params())}) {{'
        return "\n".join([header, *body, "}"])


def hip_source(mod: Any) -> str:
    """HIP C++ source for every device function of IRModule `mod` (one translation unit)."""
    parts = ["#include <hip/hip_runtime.h>", "#include <tl_templates/hip/common.h>", ""]
    for gvar, func in mod.functions.items():
        if _type_name(func) != "PrimFunc":
            continue
        attrs = func.attrs or {}
        name = str(attrs["global_symbol"]) if "global_symbol" in attrs else gvar.name_hint
        parts += [HipPrinter(name, func).print(), ""]
    return "\n".join(parts)


def build_hip_without_compile(mod: Any, target: Any = None) -> Any:
    """``target.build.tilelang_hip_without_compile``: a source module (``inspect_source()``) of HIP C++."""
    import tvm

    return tvm.get_global_func("runtime.SourceModuleCreate")(hip_source(mod), "hip")
