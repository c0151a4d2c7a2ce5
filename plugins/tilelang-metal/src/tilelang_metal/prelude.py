"""MSL helper functions the Metal lowering calls by name (atomics), and `add_prelude`, which the Metal codegen's
``postprocess`` step runs to add them to a kernel.

Core's ``tl.atomic`` emits ``call_extern(<name>, &dst, value)`` with the names of ``pipeline_options
["atomic_functions"]``; Metal spells atomics ``atomic_fetch_*_explicit`` on ``atomic_*`` types (no float max /
min), so each name is an overloaded inline function per address space and element type, defined here and put
after ``using namespace metal;`` in every kernel that calls it.
"""

from __future__ import annotations

import re

ATOMIC_FUNCTIONS = {"add": "tl_atomic_add", "max": "tl_atomic_max", "min": "tl_atomic_min"}
_SPACES = ("device", "threadgroup")
_INTS = (("int", "atomic_int"), ("uint", "atomic_uint"))


def _int_helpers(space: str) -> list[str]:
    out = []
    for ty, aty in _INTS:
        for op in ("add", "max", "min"):
            out.append(f"inline {ty} tl_atomic_{op}({space} {ty}* p, {ty} v) {{ return atomic_fetch_{op}_explicit("
                       f"({space} {aty}*)p, v, memory_order_relaxed); }}")
    return out


def _float_helpers(space: str) -> list[str]:
    cas = ("{{ {space} atomic_uint* a = ({space} atomic_uint*)p; uint old = atomic_load_explicit(a, "
           "memory_order_relaxed); while ({cond} && !atomic_compare_exchange_weak_explicit(a, &old, "
           "as_type<uint>(v), memory_order_relaxed, memory_order_relaxed)) {{}} return as_type<float>(old); }}")
    return [
        f"inline float tl_atomic_add({space} float* p, float v) {{ return atomic_fetch_add_explicit("
        f"({space} atomic_float*)p, v, memory_order_relaxed); }}",
        f"inline float tl_atomic_max({space} float* p, float v) "
        + cas.format(space=space, cond="as_type<float>(old) < v"),
        f"inline float tl_atomic_min({space} float* p, float v) "
        + cas.format(space=space, cond="as_type<float>(old) > v"),
    ]


def atomic_helpers() -> str:
    """The MSL definitions of every `ATOMIC_FUNCTIONS` overload."""
    lines = ["// tilelang: atomics (float max/min by compare-and-swap)"]
    for space in _SPACES:
        lines += _int_helpers(space) + _float_helpers(space)
    return "\n".join(lines) + "\n"


_USES = re.compile(r"\btl_atomic_(add|max|min)\s*\(")
_ANCHOR = "using namespace metal;\n"


def add_prelude(source: str) -> str:
    """`source` with the helper definitions after ``using namespace metal;`` when it calls one of them (atomics
    here, Metal 4 GEMM helpers from `tilelang_metal.mpp`)."""
    from tilelang_metal.mpp import add_gemm_helpers

    source = add_gemm_helpers(source)
    if not _USES.search(source) or "tilelang: atomics" in source:
        return source
    helpers = atomic_helpers()
    if _ANCHOR not in source:
        return "#include <metal_stdlib>\n" + _ANCHOR + helpers + source
    return source.replace(_ANCHOR, _ANCHOR + helpers, 1)
