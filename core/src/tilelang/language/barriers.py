"""Memory barriers and asynchronous copies: ``T.alloc_barrier``, ``T.mbarrier_*``, ``T.barrier_arrive`` /
``T.barrier_wait``, and the PTX spellings more than one backend lowers (``T.ptx_cp_async``,
``T.ptx_commit_group``, ``T.ptx_wait_group``, ``T.ptx_arrive_barrier``, ``T.ptx_init_barrier_thread_count``).

Each emits an intrinsic. Core lowers the asynchronous-copy trio for every target as a synchronous copy (the
copy is complete when ``ptx_cp_async`` returns, so commit and wait have nothing to do); transaction barriers
(``mbarrier``) need hardware arrive/wait counters: a backend without them rejects them at lowering.
"""

from __future__ import annotations

from typing import Any

from tilelang.errors import KernelTypeError
from tilelang.frontend import state as _state
from tilelang.ir import ops as _ops
from tilelang.ir import region as R

BARRIER_SCOPE = "shared.barrier"
BARRIER_INIT_ANN = "tl.barrier_init"


def _expr(v: Any) -> Any:
    from tvm import tirx

    if isinstance(v, bool):
        return tirx.const(v, "bool")
    if isinstance(v, int):
        return tirx.const(v, "int32")
    return v


def alloc_barrier(arrive_count: int | list[int]) -> Any:
    """``len(arrive_count)`` transaction barriers in shared memory (one uint64 each), barrier ``i`` completing a
    phase when ``arrive_count[i]`` threads arrived."""
    from tvm import tirx
    from tvm.script.ir_builder import tirx as B

    st = _state.require("T.alloc_barrier")
    counts = [arrive_count] if isinstance(arrive_count, int) else list(arrive_count)
    if not counts or not all(isinstance(c, int) and not isinstance(c, bool) and c > 0 for c in counts):
        raise KernelTypeError(f"T.alloc_barrier expects positive arrive counts, got {arrive_count!r}")
    buf = tirx.decl_buffer((len(counts),), "uint64", name="mbarrier", scope=BARRIER_SCOPE, span=st.span)
    B.add_to_parent(tirx.AllocBuffer(buf, {BARRIER_INIT_ANN: [tirx.IntImm("int32", c) for c in counts]}))
    return st.fresh(buf)


def _barrier(mbar: Any) -> Any:
    """A barrier element: ``mbars[i]``, or the first barrier of a barrier buffer."""
    from tvm import tirx

    if R.is_load(mbar):
        return mbar
    if R.is_buffer(mbar):
        return tirx.BufferLoad(mbar, [0])
    raise KernelTypeError(f"expected a barrier allocated with T.alloc_barrier (or one element of it), got "
                          f"{R.describe(mbar)}")


def mbarrier_wait_parity(mbarrier: Any, parity: Any) -> Any:
    """Wait until barrier `mbarrier` completed the phase of parity `parity`."""
    return _ops.intrin_call("tl.mbarrier_wait_parity", "handle", [_barrier(mbarrier), _expr(parity)])


def mbarrier_arrive(mbarrier: Any, cta_id: Any = None) -> Any:
    """Arrive at barrier `mbarrier` (of CTA `cta_id` of the cluster when given)."""
    args = [_barrier(mbarrier)] + ([] if cta_id is None else [_expr(cta_id)])
    return _ops.intrin_call("tl.mbarrier_arrive", "handle", args)


def mbarrier_expect_tx(mbarrier: Any, tx: Any) -> Any:
    """Tell barrier `mbarrier` to expect `tx` more bytes of asynchronous transactions this phase."""
    return _ops.intrin_call("tl.mbarrier_expect_tx", "handle", [_barrier(mbarrier), _expr(tx)])


def mbarrier_arrive_expect_tx(mbarrier: Any, tx: Any) -> Any:
    """`mbarrier_expect_tx` and `mbarrier_arrive` in one."""
    return _ops.intrin_call("tl.mbarrier_arrive_expect_tx", "handle", [_barrier(mbarrier), _expr(tx)])


def barrier_wait(mbarrier: Any, parity: Any) -> Any:
    """`mbarrier_wait_parity`."""
    return mbarrier_wait_parity(mbarrier, parity)


def barrier_arrive(mbarrier: Any) -> Any:
    """`mbarrier_arrive` on this CTA's barrier."""
    return mbarrier_arrive(mbarrier)


def ptx_arrive_barrier(mbarrier: Any) -> Any:
    """`mbarrier_arrive` (the PTX spelling)."""
    return mbarrier_arrive(mbarrier)


def ptx_arrive_barrier_expect_tx(mbarrier: Any, tx: Any) -> Any:
    """`mbarrier_arrive_expect_tx` (the PTX spelling)."""
    return mbarrier_arrive_expect_tx(mbarrier, tx)


def ptx_init_barrier_thread_count(mbarrier: Any, count: Any) -> Any:
    """Initialise barrier `mbarrier` for `count` arriving threads."""
    return _ops.intrin_call("tl.mbarrier_init", "handle", [_barrier(mbarrier), _expr(count)])


def ptx_cp_async(dst_access_ptr: Any, src_access_ptr: Any, num_elems: Any, predicate: Any = None) -> Any:
    """Copy `num_elems` elements between two ``T.access_ptr`` pointers, asynchronously where the backend can
    (``cp.async``): the data is there after ``T.ptx_wait_group``; with `predicate` false the destination gets 0."""
    args = [dst_access_ptr, src_access_ptr, _expr(num_elems)] + ([] if predicate is None else [_expr(predicate)])
    return _ops.intrin_call("tl.ptx_cp_async", "handle", args)


def ptx_commit_group() -> Any:
    """Close the current group of asynchronous copies."""
    return _ops.intrin_call("tl.ptx_commit_group", "handle", [])


def ptx_wait_group(num: Any) -> Any:
    """Wait until at most `num` groups of asynchronous copies are in flight."""
    return _ops.intrin_call("tl.ptx_wait_group", "handle", [_expr(num)])


def no_set_max_nreg() -> Any:
    """Keep the register budget of warp-specialised kernels as the compiler sets it (a hint)."""
    return _ops.intrin_call("tl.no_set_max_nreg", "handle", [])
