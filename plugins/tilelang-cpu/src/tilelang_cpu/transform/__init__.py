"""CPU-specific passes (``tilelang.cpu.transform``), the reference's names over this backend's lowering."""

from __future__ import annotations

from typing import Any

__all__ = ["LowerCPUAtomics"]


def LowerCPUAtomics(target: Any = None) -> Any:
    """Lower the scalar atomic intrinsics (``tl.atomic_*_elem_op``, from ``T.atomic_add(B[i], v)`` and friends)
    into plain read-modify-writes, as the CPU runs them.

    Each update becomes a ``BufferStore`` wrapped in ``AttrStmt("tl.atomic")`` (the mark that makes the CPU
    launcher run the kernel's blocks serially, so the updates cannot race); ``return_prev=True`` reads the old
    value into a register first. This is core's LowerIntrinsics for a CPU target, so every other scalar
    intrinsic of the function is lowered with the CPU implementations in the same walk, as the CPU pipeline
    does right after LowerTileOps. `target` defaults to each function's bound target, else ``llvm``.
    """
    import tvm

    from tilelang.transform import LowerIntrinsics
    from tilelang.transform import utils as C

    fixed = None if target is None else (target if isinstance(target, tvm.target.Target)
                                         else tvm.target.Target(target))

    @C.prim_func_pass("tl.cpu.LowerCPUAtomics")
    def lower_cpu_atomics(func: Any, mod: Any, ctx: Any) -> Any:
        tgt = fixed if fixed is not None else (func.attrs.get("target") if func.attrs else None)
        if tgt is None:
            tgt = tvm.target.Target({"kind": "llvm"})
        if str(tgt.kind.name) not in ("llvm", "c"):
            raise ValueError(f"LowerCPUAtomics lowers for CPU targets (llvm, c), not {tgt.kind.name!r}")
        single = tvm.IRModule({"main": func})
        return LowerIntrinsics(tgt)(single)["main"]

    return lower_cpu_atomics
