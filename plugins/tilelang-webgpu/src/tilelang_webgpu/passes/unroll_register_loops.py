"""``webgpu.unroll_register_loops`` (``post_storage``): a short serial loop that indexes a thread's registers (a
``local`` buffer, e.g. a partitioned fragment's ``*_local`` tile) with its loop variable is unrolled, so every
register index becomes a constant and `tilelang_webgpu.scalarize` can turn the array into scalars. Otherwise the
array is indexed dynamically and WebGPU compilers (llvmpipe among them) keep it in memory.

The size limits hold per loop, its body counted as written: an inner loop already marked for unrolling counts
once, so a nest of register loops unrolls whole (GEMM micro-tiles rely on that: only constant indices let the
register array become scalars, and a partly unrolled nest leaves TVM's vectorizer index forms it rejects).
"""

from __future__ import annotations

from typing import Any

from tilelang.transform import utils as C

UNROLL_MAX_EXTENT = 64  # iterations
UNROLL_MAX_STATEMENTS = 256  # statements of the unrolled loop (iterations x statements of the body)


def _indexes_registers(loop: Any) -> bool:
    """Whether `loop`'s body indexes a ``local`` buffer with an index that depends on the loop variable."""
    import tvm
    import tvm_ffi
    from tvm import tirx

    from tilelang.transform import utils as C

    var = loop.loop_var
    found = [False]

    def uses_var(indices: Any) -> bool:
        return any(C.uses_var(i, [var]) for i in indices)

    def on_load(ld: Any) -> None:
        if C.scope_of(ld.source) == "local" and uses_var(ld.indices):
            found[0] = True

    def on_store(st: Any) -> None:
        if C.scope_of(st.buffer) == "local" and uses_var(st.indices):
            found[0] = True

    tvm_ffi.structural_walk(loop.body, [(tvm.ir.TensorLoad, on_load), (tirx.BufferStore, on_store)])
    return found[0]


def _statements(stmt: Any) -> int:
    import tvm_ffi
    from tvm import tirx

    count = [0]

    def on_stmt(_: Any) -> None:
        count[0] += 1

    tvm_ffi.structural_walk(stmt, [(tirx.BufferStore, on_stmt), (tirx.Bind, on_stmt), (tirx.Evaluate, on_stmt)])
    return count[0]


def UnrollRegisterLoops(target: Any = None) -> Any:
    """Unroll short serial loops that index registers with their loop variable (see the module docstring)."""
    import tvm_ffi
    from tvm import tirx

    def on_for(loop: Any) -> Any:
        extent = getattr(loop.extent, "value", None)
        if (loop.kind != tirx.ForKind.SERIAL or extent is None or extent > UNROLL_MAX_EXTENT
                or not _indexes_registers(loop) or extent * _statements(loop.body) > UNROLL_MAX_STATEMENTS):
            return loop
        return tirx.For(loop.loop_var, loop.min, loop.extent, tirx.ForKind.UNROLLED, loop.body)

    @tirx.transform.prim_func_pass(opt_level=0, name="webgpu.unroll_register_loops")
    def unroll(func: Any, mod: Any, ctx: Any) -> Any:
        return C.with_body(func, tvm_ffi.structural_map(func.body, (tirx.For, on_for)))

    return unroll
