"""Kernel launch attributes the CUDA dialect asks for, applied to the generated source.

``T.ClusterKernel`` and ``T.annotate_min_blocks_per_sm`` lower to marker calls at the start of the kernel body
(``tl_cluster_dims_marker(x, y, z);``, ``tl_min_blocks_per_sm_marker(n);``); `apply` removes each marker and
writes its attribute on that kernel's declaration: ``__cluster_dims__(x, y, z)`` (the cluster shape is part of
the compiled kernel, so a plain launch forms the clusters) and ``__launch_bounds__(threads, n)``. A kernel calling
``tl_sync_grid`` (``T.sync_grid``) is launched cooperatively (`uses_grid_sync`).
"""

from __future__ import annotations

import re

_KERNEL = re.compile(r'extern "C" __global__ void(?: __launch_bounds__\((\d+)\))? (\w+)\(')
_CLUSTER = re.compile(r"[ \t]*tl_cluster_dims_marker\((\d+), (\d+), (\d+)\);\n")
_MIN_BLOCKS = re.compile(r"[ \t]*tl_min_blocks_per_sm_marker\((\d+)\);\n")


def apply(source: str) -> str:
    """`source` with the launch markers of each kernel turned into declaration attributes."""
    if "tl_cluster_dims_marker(" not in source and "tl_min_blocks_per_sm_marker(" not in source:
        return source
    kernels = list(_KERNEL.finditer(source))
    attrs: dict[str, tuple[str, str]] = {}
    out, pos = [], 0
    for i, m in enumerate(kernels):
        end = kernels[i + 1].start() if i + 1 < len(kernels) else len(source)
        body = source[m.end():end]
        cluster = _CLUSTER.search(body)
        blocks = _MIN_BLOCKS.search(body)
        body = _MIN_BLOCKS.sub("", _CLUSTER.sub("", body))
        cl = f" __cluster_dims__({cluster.group(1)}, {cluster.group(2)}, {cluster.group(3)})" if cluster else ""
        threads = m.group(1)
        lb = f" __launch_bounds__({threads})" if threads else ""
        if blocks is not None:
            lb = f" __launch_bounds__({threads or 1024}, {blocks.group(1)})"
        attrs[m.group(2)] = (cl, lb)
        out.append(source[pos:m.start()])
        out.append(f'extern "C" __global__ void{cl}{lb} {m.group(2)}(' + body)
        pos = end
    out.append(source[pos:])
    text = "".join(out)
    for name, (cl, lb) in attrs.items():  # forward declarations (end with ");")
        text = re.sub(rf'extern "C" __global__ void(?: __launch_bounds__\(\d+\))? {name}\(([^)]*)\);',
                      lambda d, cl=cl, lb=lb, name=name: f'extern "C" __global__ void{cl}{lb} {name}({d.group(1)});',
                      text)
    return text


def uses_grid_sync(source: str, name: str) -> bool:
    """Whether kernel `name` of `source` calls ``tl_sync_grid``: its launch must be cooperative (every block
    resident at once), or the grid barrier waits forever."""
    kernels = list(_KERNEL.finditer(source))
    for i, m in enumerate(kernels):
        end = kernels[i + 1].start() if i + 1 < len(kernels) else len(source)
        if m.group(2) == name and "tl_sync_grid(" in source[m.end():end]:
            return True
    return False
