"""Function-scope WGSL arrays indexed only by constants become one scalar ``var`` per element.

TVM prints a thread's registers (a fragment's ``*_local`` tile, a GEMM's accumulator block) as
``var acc : array<f32, 32>;`` (``array<vec4<f32>, 8>`` for a vector fragment layout's registers). When every
access uses a literal index (``acc[3i]``, or ``acc[28i + 1]`` as TVM spells a lane of a vector store), the
elements are
independent scalars; spelling them as such lets every WebGPU compiler keep them in registers (llvmpipe keeps
an array that is indexed in a loop in memory and, apparently, some constant-indexed ones too).
"""

from __future__ import annotations

import re

__all__ = ["scalarize_local_arrays"]

_DECL = re.compile(r"^(\s*)var (\w+) : array<(\w+(?:<\w+>)?), (\d+)>;\n", re.M)
_INDEX = r"\[\s*(\d+)i?(?:\s*\+\s*(\d+)i?)?\s*\]"  # a literal index, or a literal plus a literal lane


def scalarize_local_arrays(src: str, max_elements: int = 256) -> str:
    """`src` with constant-indexed function-scope arrays split into scalars (see the module docstring)."""
    for m in list(_DECL.finditer(src)):
        indent, name, elem, count = m.group(1), m.group(2), m.group(3), int(m.group(4))
        if not indent or count > max_elements:  # module-scope (workgroup) declarations have no indent
            continue
        uses = re.findall(rf"\b{re.escape(name)}\b(\s*{_INDEX})?", src)
        # the declaration itself is one bare use; every other use must be a literal index
        if sum(1 for whole, *_ in uses if not whole) != 1:
            continue
        decl = "".join(f"{indent}var {name}_{i} : {elem};\n" for i in range(count))
        src = src.replace(m.group(0), decl, 1)
        src = re.sub(rf"\b{re.escape(name)}\s*{_INDEX}",
                     lambda u, n=name: f"{n}_{int(u.group(1)) + int(u.group(2) or 0)}", src)
    return src
