"""Helpers of the reference's adapters: locating kernels in generated source, target predicates, and printing
tirx expressions as Python."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["match_global_kernel", "match_declare_kernel", "match_declare_kernel_cpu", "match_declare_kernel_cutedsl",
           "extract_python_func_declaration", "is_cuda_target", "is_hip_target", "is_cpu_target",
           "is_metal_target", "is_cutedsl_target", "pythonic_expr"]


def _index_of(source: str, pattern: str, what: str) -> int:
    match = re.search(pattern, source)
    if match is None:
        raise ValueError(f"no {what} found in the source")
    return match.start()


def match_global_kernel(source: str, annotation: str = "__global__") -> int:
    """Offset of the first ``__global__ void name(`` definition."""
    return _index_of(source, rf"{re.escape(annotation)}\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?\w+\s*\(",
                     f"{annotation} kernel")


def match_declare_kernel(source: str, annotation: str = "__global__") -> int:
    """Offset of the opening ``(`` of the first kernel's parameter list."""
    start = match_global_kernel(source, annotation)
    return source.index("(", source.index("void", start) + 4)


def match_declare_kernel_cutedsl(source: str, annotation: str = "@cute.kernel") -> int:
    start = _index_of(source, re.escape(annotation), annotation)
    return source.index("(", source.index("def ", start))


def match_declare_kernel_cpu(source: str, annotation: str = "int32_t") -> int:
    start = _index_of(source, rf"{re.escape(annotation)}\s+\w+\s*\(", f"{annotation} function")
    return source.index("(", start)


def extract_python_func_declaration(source: str, func_name: str) -> str:
    """The ``def func_name(...):`` line(s) of `source`."""
    match = re.search(rf"def\s+{re.escape(func_name)}\s*\((.*?)\)\s*(->\s*[^:]+)?:", source, re.S)
    if match is None:
        raise ValueError(f"function {func_name!r} not found")
    return match.group(0)


def _kind(target: Any) -> str:
    from tilelang.backend.target import kind_of

    return kind_of(target)


def _keys(target: Any) -> list[str]:
    return [str(k) for k in getattr(target, "keys", ())]


def is_cuda_target(target: Any) -> bool:
    return _kind(target) == "cuda" and "cutedsl" not in _keys(target)


def is_hip_target(target: Any) -> bool:
    return _kind(target) in ("rocm", "hip")


def is_cpu_target(target: Any) -> bool:
    return _kind(target) in ("c", "llvm", "cpu")


def is_metal_target(target: Any) -> bool:
    return _kind(target) == "metal"


def is_cutedsl_target(target: Any) -> bool:
    return _kind(target) == "cuda" and "cutedsl" in _keys(target)


_BINARY = {"Add": "+", "Sub": "-", "Mul": "*", "FloorDiv": "//", "FloorMod": "%", "Div": "/", "Mod": "%",
           "LT": "<", "LE": "<=", "GT": ">", "GE": ">=", "EQ": "==", "NE": "!=", "And": "and", "Or": "or"}


def pythonic_expr(expr: Any, dtype_map: dict[str, str] | None = None, ignore_cast: bool = False) -> str:
    """A tirx expression as Python source (vars by name, integer arithmetic, min/max, casts as calls)."""
    from tvm import tirx

    def go(e: Any) -> str:
        if isinstance(e, (int, float)):
            return str(e)
        if isinstance(e, tirx.IntImm):
            return str(int(e.value))
        if isinstance(e, tirx.FloatImm):
            return repr(float(e.value))
        if isinstance(e, tirx.Var):
            return str(e.name)
        name = type(e).__name__
        if name in _BINARY:
            return f"({go(e.a)} {_BINARY[name]} {go(e.b)})"
        if name in ("Min", "Max"):
            return f"{name.lower()}({go(e.a)}, {go(e.b)})"
        if name == "Not":
            return f"(not {go(e.a)})"
        if name == "Cast":
            inner = go(e.value)
            if ignore_cast:
                return inner
            dtype = str(e.ty.dtype) if hasattr(e, "ty") else str(e.dtype)
            return f"{(dtype_map or {}).get(dtype, dtype)}({inner})"
        if name == "Select":
            return f"({go(e.true_value)} if {go(e.condition)} else {go(e.false_value)})"
        return str(e)

    return go(expr)
