"""Pass visualizer: a kernel's structure tree after every pass, browsable as one HTML page.

Where `tilelang.utils.pass_diff` diffs TVMScript text, this shows the statement nesting (launches, allocations,
loops and annotations) with tile operators expanded field by field, which is easier to follow through layout
inference, pipelining and tile-op lowering. The browser itself is `tilelang.tools.pass_visualizer.viewer`
(``python -m tilelang.tools.pass_visualizer.viewer kernel.py --set M=1024 ...`` or ``tilelang visualize``);
``examples/gemm_relu.py`` is a ready kernel to try it on.
"""

from tilelang.tools.pass_visualizer.core import (
    PassStructureRecord,
    StructureTreePassInstrument,
    StructureTreePassTool,
    build_module,
    capture_structure,
    discover_jit_kernels,
    inspect_structure,
    kernel_to_tir,
    load_user_module,
)

# The viewer is not imported here: `python -m tilelang.tools.pass_visualizer.viewer` would then warn that the
# module was imported before being run.

__all__ = [
    "PassStructureRecord", "StructureTreePassInstrument", "StructureTreePassTool", "build_module",
    "capture_structure", "discover_jit_kernels", "inspect_structure", "kernel_to_tir", "load_user_module",
]
