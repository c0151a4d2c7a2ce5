"""Entry points from a PrimFunc or an operator graph to roller hints."""

from __future__ import annotations

import logging
from typing import Any

from tvm import IRModule, tirx

from tilelang.carver.arch import TileDevice
from tilelang.carver.matmul_analysis import get_tensorized_func_and_tags
from tilelang.carver.roller.hint import Hint
from tilelang.carver.roller.node import OutputNode
from tilelang.carver.roller.policy import DefaultPolicy, TensorCorePolicy

__all__ = [
    "get_rasterization_code", "get_roller_hints_from_func", "get_roller_hints_from_output_nodes",
    "retrieve_func_from_module", "get_tensorized_func_and_tags",
]

logger = logging.getLogger(__name__)


def get_rasterization_code(pannel_width: int = 8) -> str:
    """CUDA statements that remap ``blockIdx`` to a serpentine walk over panels of `pannel_width` rows."""
    from tilelang.carver.roller.rasterization import Rasterization2DColumn

    function, call = Rasterization2DColumn(pannel_width).get_code()
    return function + call


def _tensorized(func: tirx.PrimFunc, arch: TileDevice, allow_gemv: bool) -> tuple[Any, dict | None]:
    try:
        return get_tensorized_func_and_tags(func, arch.target, allow_gemv=allow_gemv)
    except Exception as exc:  # an unrecognised shape is not an error: the SIMT policy takes it
        logger.debug("matrix-unit analysis failed, using the default policy: %s", exc)
        return None, None


def get_roller_hints_from_func(func_or_module: tirx.PrimFunc | IRModule, arch: TileDevice, topk: int = 10,
                               tensorcore_only: bool = False, allow_gemv: bool = False) -> list[Hint] | None:
    """Hints for a PrimFunc (or a one-function IRModule) on `arch`: the tensor-core policy when the function is
    a GEMM the device's matrix units take, else (or when no tile fits the instruction) the default policy.
    With `tensorcore_only` the default policy is never used (None when matrix units do not apply)."""
    if isinstance(func_or_module, IRModule):
        func = retrieve_func_from_module(func_or_module)
    elif isinstance(func_or_module, tirx.PrimFunc):
        func = func_or_module
    else:
        raise ValueError(f"Not supported type: {type(func_or_module).__name__} (give a PrimFunc or an IRModule)")
    if arch is None:
        raise ValueError("get_roller_hints_from_func needs a device model (arch), e.g. auto_infer_current_arch()")
    tensorized, tags = _tensorized(func, arch, allow_gemv)
    if tags and tensorized is not None:
        hints = TensorCorePolicy.from_prim_func(func=tensorized, arch=arch, tags=tags).emit_config(topk)
        if hints or tensorcore_only:
            return hints
        # no tile fits the matrix instruction (e.g. an M of 98): CUDA-core tiles still run
    elif tensorcore_only:
        return None
    return DefaultPolicy.from_prim_func(func=func, arch=arch).emit_config(topk)


def get_roller_hints_from_output_nodes(output_nodes: list[OutputNode], arch: TileDevice, topk: int = 10,
                                       extra_tags: list[str] | None = None) -> list[Hint] | None:
    """Hints for an operator graph: the tensor-core policy first, the default policy when it gives none."""
    if not isinstance(output_nodes, list):
        raise TypeError("The input should be a list of output nodes.")
    hints: list[Hint] = []
    try:
        hints = TensorCorePolicy.from_output_nodes(output_nodes, arch=arch, tags=None).emit_config(topk)
    except Exception as exc:
        logger.debug("tensor-core hints for the graph failed, falling back to the default policy: %s", exc)
    if not hints:
        hints = DefaultPolicy.from_output_nodes(output_nodes, arch=arch, tags=None).emit_config(topk)
    return hints


def retrieve_func_from_module(ir_module: IRModule) -> tirx.PrimFunc:
    """The only function of `ir_module`."""
    if not isinstance(ir_module, IRModule):
        raise ValueError(f"Not supported type: {type(ir_module).__name__} (expected an IRModule)")
    functions = list(ir_module.functions.values())
    if len(functions) != 1:
        raise ValueError(f"expected a module with one function, got {len(functions)}")
    return functions[0]
