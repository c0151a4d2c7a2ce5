"""``webgpu.hoist_gemm_accumulators`` (``post_storage``): the register-blocked GEMM (`tilelang_webgpu.tileops.gemm`)
moves C into its private accumulator before the product and back after it, marked ``tl.webgpu_gemm_in`` /
``_out``. In a serial loop whose body touches C (and the exchange tile) only there -- the K loop of every tiled
GEMM -- the two moves are hoisted out of the loop, so the accumulator stays in registers across all K tiles; the
marks are removed either way.
"""

from __future__ import annotations

from typing import Any

from tilelang.transform import utils as C

_GEMM_IN, _GEMM_OUT = "tl.webgpu_gemm_in", "tl.webgpu_gemm_out"  # == tilelang_webgpu.tileops.gemm.GEMM_IN / GEMM_OUT


def _flat(stmt: Any) -> list[Any]:
    from tvm import tirx

    if isinstance(stmt, tirx.SeqStmt):
        return [s for child in stmt.seq for s in _flat(child)]
    return [stmt]


def _key(var: Any) -> str:
    """A hashable identity for a buffer's data var (FFI wrappers of one var do not hash alike): its name, which
    the GEMM's own buffers make unique (``*_acc``, ``*_xchg``, core's ``*_local``)."""
    name = getattr(var, "name", None)
    return str(name) if name is not None else f"<expr {var}>"


def _touched(stmt: Any) -> set[str]:
    """The data vars (`_key`) of every buffer `stmt` loads or stores."""
    import tvm
    from tvm import tirx

    from tilelang.transform import utils as C

    return ({_key(ld.source.data) for ld in C.collect(stmt, tvm.ir.TensorLoad)}
            | {_key(st.buffer.data) for st in C.collect(stmt, tirx.BufferStore)})


def _is_mark(stmt: Any, key: str) -> bool:
    from tvm import tirx

    return isinstance(stmt, tirx.AttrStmt) and stmt.attr_key == key


def _hoist(loop: Any) -> Any:
    """`loop` with one GEMM's C -> accumulator -> C moves outside it, or None when that is not safe."""
    from tvm import tirx

    from tilelang.transform import utils as C

    if loop.kind != tirx.ForKind.SERIAL:
        return None
    body = _flat(loop.body)
    ins = [i for i, s in enumerate(body) if _is_mark(s, _GEMM_IN)]
    outs = [i for i, s in enumerate(body) if _is_mark(s, _GEMM_OUT)]
    if len(ins) != 1 or len(outs) != 1 or not ins[0] < outs[0] or _key(body[ins[0]].node) != _key(body[outs[0]].node):
        return None
    i_in, i_out = ins[0], outs[0]
    acc = _key(body[i_in].node)
    moved = _touched(body[i_in]) | _touched(body[i_out])  # C's registers, the exchange tile, the accumulator
    allocs = [i for i, s in enumerate(body) if isinstance(s, tirx.AllocBuffer) and _key(s.buffer.data) in moved]
    if any(i > i_in for i in allocs):
        return None
    for i, s in enumerate(body):
        if i in (i_in, i_out) or i in allocs:
            continue
        hit = _touched(s) & moved
        if hit and (hit != {acc} or not i_in < i < i_out):
            return None  # something else in the loop reads or writes C (or the exchange tile)
    if C.uses_var(body[i_in], [loop.loop_var]) or C.uses_var(body[i_out], [loop.loop_var]):
        return None
    rest = [s for i, s in enumerate(body) if i not in (i_in, i_out) and i not in allocs]
    inner = tirx.For(loop.loop_var, loop.min, loop.extent, loop.kind, C.seq(rest), loop.thread_binding,
                     loop.annotations, getattr(loop, "step", None))
    return C.seq([*[body[i] for i in allocs], body[i_in].body, inner, body[i_out].body])


def HoistGemmAccumulators(target: Any = None) -> Any:
    """Hoist the GEMM's accumulator moves out of the K loop (see the module docstring)."""
    import tvm_ffi
    from tvm import tirx

    def on_for(loop: Any) -> Any:
        hoisted = _hoist(loop)
        return loop if hoisted is None else hoisted

    def unmark(attr: Any) -> Any:
        return attr.body if attr.attr_key in (_GEMM_IN, _GEMM_OUT) else attr

    @tirx.transform.prim_func_pass(opt_level=0, name="webgpu.hoist_gemm_accumulators")
    def hoist(func: Any, mod: Any, ctx: Any) -> Any:
        body = tvm_ffi.structural_map(func.body, (tirx.For, on_for))
        return C.with_body(func, tvm_ffi.structural_map(body, (tirx.AttrStmt, unmark)))

    return hoist
