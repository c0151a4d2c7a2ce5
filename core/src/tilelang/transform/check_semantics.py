"""CheckSemantics: reject kernels the pipeline cannot lower, before any rewriting, with the kernel's location.

Checks: every ``tl.*`` call is a known tile operator (core's, or one a backend lowers for the target) with enough
arguments; its region operands are regions,
buffers or elements; a ``T.copy``'s two regions have the same extents, unit ones aside (reported at its line); a
``local.fragment`` tile has a constant shape; thread extents are constants; tile ops and fragments appear only
inside a ``T.Kernel`` launch; inside a ``T.Parallel`` loop a fragment is not stored at a fixed element other than
``[0]`` (every iteration would write the same element: the reference's "Only fragment[0] access is allowed",
reported at the fragment's allocation).
"""

from __future__ import annotations

from typing import Any

import tvm
from tvm import tirx

from tilelang.ir import region as R
from tilelang.transform import utils as C

_MIN_ARGS = {"tl.copy": 2, "tl.fill": 2, "tl.gemm": 3, "tl.reduce": 4, "tl.cumsum": 2, "tl.atomic": 2,
             "tl.transpose": 2, "tl.im2col": 8, "tl.gemm_sp": 4}


def _operand_ok(arg: Any) -> bool:
    return isinstance(arg, (tvm.ir.TensorRegion, tvm.ir.TensorLoad)) or (
        isinstance(arg, tvm.ir.Var) and tirx.is_buffer_var(arg))


def _backend_tile_op(name: str, target: Any) -> bool:
    """Whether a backend registered a lowering of tile operator `name` for `target` (its own tile ops, e.g. the
    CUDA backend's ``tl.mma_gemm_blockscaled``)."""
    if target is None:
        return False
    from tilelang.backend.tile_ops import tile_op_impls_for

    try:
        return bool(tile_op_impls_for(name, target))
    except Exception:  # an unknown target kind: no backend lowers the op there
        return False


def check(func: tirx.PrimFunc, target: Any = None) -> None:
    """Raise `LoweringError` for the first problem found."""
    if target is None and func.attrs is not None:
        target = func.attrs.get("target")
    launched = bool(C.launch_extents(func))
    C.block_threads(func)  # constant thread extents
    for ev in C.collect(func.body, tirx.Evaluate):
        found = C.tile_op_of(ev)
        if found is None:
            continue
        name, call = found
        if name not in _MIN_ARGS and not _backend_tile_op(name, target):
            raise C.lowering_error(func, f"unknown tile operator {name!r}; known: {', '.join(sorted(_MIN_ARGS))}")
        args = list(call.args)
        if len(args) < _MIN_ARGS.get(name, 1):
            raise C.lowering_error(func, f"{name} needs at least {_MIN_ARGS[name]} arguments, got {len(args)}")
        if not launched:
            raise C.lowering_error(func, f"{name} is used outside a T.Kernel launch")
        if not _operand_ok(args[0]):
            raise C.lowering_error(func, f"{name}: the first operand must be a buffer region, got {args[0]}")
        if name == "tl.copy" and all(isinstance(a, tvm.ir.TensorRegion) for a in args[:2]):
            mismatch = R.copy_mismatch(args[0], args[1])
            if mismatch is not None:
                raise C.lowering_error_at(func, ev.span, mismatch)
    _check_fixed_fragment_stores(func)
    for alloc in C.allocations(func.body):
        buf = alloc.buffer
        if C.scope_of(buf) == "local.fragment" and C.num_elements(buf.ty.shape) is None:
            raise C.lowering_error(func, f"fragment {buf.name} must have a constant shape, got "
                                         f"{[str(s) for s in buf.ty.shape]}")


def _check_fixed_fragment_stores(func: tirx.PrimFunc) -> None:
    """A store in a ``T.Parallel`` loop to one fixed element of a fragment other than ``[0]`` is an error."""
    allocs = {alloc.buffer.name: alloc for alloc in C.allocations(func.body)}
    for loop in C.collect(func.body, tirx.For, C.is_parallel):
        for store in C.collect(loop.body, tirx.BufferStore):
            buf = store.buffer
            if C.scope_of(buf) != "local.fragment":
                continue
            consts = [C.as_int(i) for i in store.indices]
            if None in consts or not any(consts):
                continue
            bad = next(c for c in consts if c)
            alloc = allocs.get(buf.name)
            span = getattr(buf, "span", None) or getattr(alloc, "span", None)
            raise C.lowering_error_at(
                func, span, f"Fragment buffer access with non-zero index [{bad}] is not supported. Only fragment[0] "
                f"access is allowed within T.Parallel loop: every iteration stores {buf.name}"
                f"[{', '.join(map(str, consts))}]; index the fragment with the loop variables, or keep one value "
                f"per thread in {buf.name}[0]")


def CheckSemantics(target: Any = None) -> tvm.transform.Pass:
    """Validate the tile IR (see the module docstring); the function is returned unchanged."""

    @C.prim_func_pass("tl.CheckSemantics")
    def check_semantics(func: tirx.PrimFunc, mod: Any, ctx: Any) -> tirx.PrimFunc:
        check(func, target)
        return func

    return check_semantics
