"""Kernels written in CUDA by the user (``T.CUDASourceCodeKernel``), put into the generated source.

The launch lowers to a kernel whose body is one marker call, ``tl_source_kernel_marker("<source as hex>",
"<entry>", <arguments>);``; `apply` replaces that kernel's definition (and its forward declaration) with the
user's source, the entry kernel renamed to the generated kernel's name (and given its ``__cluster_dims__``), so
the host launches it as any other kernel with the same arguments.
"""

from __future__ import annotations

import re

MARKER = "tl_source_kernel_marker("
_DEFINITION = re.compile(r'extern "C" __global__ void((?: __\w+__\([^)]*\))*) (\w+)\(')
_CLUSTER = re.compile(r"__cluster_dims__\([^)]*\)")
_MARKER_ARGS = re.compile(r'tl_source_kernel_marker\("([0-9a-f]*)", "([^"]*)"')
_GLOBAL_KERNEL = re.compile(r'__global__\s+void\s+(?:__\w+__\s*\([^)]*\)\s*)*(\w+)\s*\(')


class SourceKernelError(ValueError):
    """The source given to ``T.CUDASourceCodeKernel`` does not declare the kernel it names."""


def global_kernels(source: str) -> list[str]:
    """The names of the ``__global__`` functions `source` defines or declares, in order, once each."""
    return list(dict.fromkeys(m.group(1) for m in _GLOBAL_KERNEL.finditer(source)))


def _body_end(source: str, open_brace: int) -> int:
    depth = 0
    for i in range(open_brace, len(source)):
        if source[i] == "{":
            depth += 1
        elif source[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    raise ValueError("unbalanced braces in the generated CUDA source")


def apply(source: str) -> str:
    """`source` with each marked kernel replaced by the user's source (SourceKernelError when the source does not
    declare the entry it names)."""
    if MARKER not in source:
        return source
    for _ in range(source.count(MARKER)):
        marker = source.index(MARKER)
        definition = None
        for m in _DEFINITION.finditer(source, 0, marker):
            if source.find("{", m.end()) < marker:
                definition = m
        if definition is None:
            raise ValueError("a T.CUDASourceCodeKernel marker outside a kernel definition")
        args = _MARKER_ARGS.match(source, marker)
        if args is None:
            raise ValueError("malformed T.CUDASourceCodeKernel marker")
        user = bytes.fromhex(args.group(1)).decode()
        entry, name = args.group(2), definition.group(2)
        kernels = global_kernels(user)
        if entry not in kernels:
            available = ", ".join(kernels) if kernels else "none (the source declares no __global__ kernel)"
            raise SourceKernelError(f"T.CUDASourceCodeKernel: entry_name {entry!r} is not a __global__ kernel of the "
                                    f"given CUDA source. Available entries: {available}")
        if entry != name:
            user = re.sub(rf"\b{re.escape(entry)}\b", name, user)
        cluster = _CLUSTER.search(definition.group(1))
        if cluster is not None:  # the launch's clusters (T.CUDASourceCodeKernel(cluster_dims=...)) are compiled in
            user = re.sub(rf"__global__(\s+)void(\s+)(?={name}\s*\()", rf"__global__\1void {cluster.group(0)}\2",
                          user)
        end = _body_end(source, source.index("{", definition.end()))
        source = source[:definition.start()] + user.strip("\n") + "\n" + source[end:]
        # a forward declaration of the generated signature would clash with the user's parameter names/types
        source = re.sub(rf'extern "C" __global__ void(?: __\w+__\([^)]*\))* {name}\([^)]*\);\n', "", source)
    return source
