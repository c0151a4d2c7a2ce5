"""Tile operators and intrinsics as tirx Ops.

Tile operators (``tl.copy``, ``tl.fill``, ``tl.gemm``, ``tl.reduce``, ``tl.cumsum``, ``tl.atomic``,
``tl.transpose``) are statements: ``tirx.Evaluate(tvm.ir.Call(Op.get(name), args, ret_ty="void"))`` over
regions. Intrinsics (`INTRINSICS`: element atomics, warp votes and shuffles, fast math, debug printing, ...)
are scalar calls that may appear inside any expression. The argument forms are fixed by ``docs/ir.md``.
Registration is idempotent and happens on first use (importing this module does not import TVM).
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Sequence
from typing import Any

from tilelang.ir._lazy_tvm import tirx, tvm

#: name -> one-line description (also the Op's description).
TILE_OPS: dict[str, str] = {
    "tl.copy": "tl.copy(src, dst): element-wise copy of a region with a cast to the dst dtype",
    "tl.fill": "tl.fill(dst, value): set every element of a region",
    "tl.gemm": "tl.gemm(A, B, C, trans_A, trans_B, policy, clear_accum): C (+)= op(A) @ op(B)",
    "tl.reduce": "tl.reduce(src, dst, kind, dim, clear): reduce src along dim into dst",
    "tl.cumsum": "tl.cumsum(src, dst, dim, reverse): inclusive prefix sum along dim",
    "tl.atomic": "tl.atomic(dst, value, kind): atomic read-modify-write of a region",
    "tl.transpose": "tl.transpose(src, dst): dst[..., j, i] = src[..., i, j] over a region",
    "tl.im2col": "tl.im2col(img, col, nhw_step, c_step, kernel, stride, dilation, pad): NHWC patches into a tile",
    "tl.gemm_sp": "tl.gemm_sp(A_sparse, E, B, C, trans_A, trans_E, trans_B, policy, clear_accum): 2:4-sparse gemm",
}

REDUCE_KINDS = ("sum", "max", "min", "abssum", "absmax", "bitand", "bitor", "bitxor")
ATOMIC_KINDS = ("add", "max", "min")

_PURE, _OPAQUE, _UPDATE = "pure", "opaque", "update_state"


def _atomic_intrinsics() -> dict[str, tuple[str, str]]:
    out = {}
    for kind in ("add", "max", "min"):
        out[f"tl.atomic_{kind}_elem_op"] = (_OPAQUE, f"(dst elem, value, memory_order): atomic {kind} into dst")
        out[f"tl.atomic_{kind}_ret_elem_op"] = (_OPAQUE, f"(dst elem, value, memory_order): atomic {kind}, "
                                                         "returns the previous value")
    for lanes in (2, 4):
        out[f"tl.atomic_addx{lanes}_elem_op"] = (_OPAQUE, f"(dst elem, src elem): atomic add of {lanes} lanes")
        out[f"tl.atomic_addx{lanes}_ret_elem_op"] = (_OPAQUE, f"(dst elem, src elem): atomic add of {lanes} "
                                                              "lanes, returns the previous vector")
    for kind in ("or", "and", "xor"):
        out[f"tl.atomic_{kind}_elem_op"] = (_OPAQUE, f"(dst elem, value, memory_order): atomic bitwise {kind}")
    out["tl.atomic_load_elem_op"] = (_OPAQUE, "(src elem, memory_order): atomic load")
    out["tl.atomic_store_elem_op"] = (_OPAQUE, "(dst elem, value, memory_order): atomic store")
    return out


#: scalar intrinsics: name -> (effect, argument description). Effects: ``pure`` (may be moved, deduplicated),
#: ``opaque`` (memory or cross-thread effects: kept in place, bound once when assigned to a name).
INTRINSICS: dict[str, tuple[str, str]] = {
    **_atomic_intrinsics(),
    # warp level: votes, shuffles, lane / warp indices, barriers with a predicate
    "tl.any_sync": (_OPAQUE, "(mask, predicate) -> int32: non-zero when any lane's predicate is"),
    "tl.all_sync": (_OPAQUE, "(mask, predicate) -> int32: non-zero when every lane's predicate is"),
    "tl.ballot_sync": (_OPAQUE, "(mask, predicate) -> uint64: bit n set when lane n's predicate is"),
    "tl.ballot": (_OPAQUE, "(predicate) -> uint64: ballot over the full warp"),
    "tl.activemask": (_OPAQUE, "() -> uint64: the active lanes"),
    "tl.syncthreads_count": (_OPAQUE, "(predicate) -> int32: block barrier, number of threads whose predicate is"),
    "tl.syncthreads_and": (_OPAQUE, "(predicate) -> int32: block barrier, every predicate"),
    "tl.syncthreads_or": (_OPAQUE, "(predicate) -> int32: block barrier, any predicate"),
    "tl.match_any_sync": (_OPAQUE, "(mask, value) -> uint32: lanes holding the same value"),
    "tl.match_all_sync": (_OPAQUE, "(mask, value) -> uint32: mask when every lane holds the same value, else 0"),
    "tl.shfl_sync": (_OPAQUE, "(mask, value, src_lane, width): value of lane src_lane"),
    "tl.shfl_xor_sync": (_OPAQUE, "(mask, value, lane_mask, width): value of lane (lane ^ lane_mask)"),
    "tl.shfl_down_sync": (_OPAQUE, "(mask, value, delta, width): value of lane (lane + delta)"),
    "tl.shfl_up_sync": (_OPAQUE, "(mask, value, delta, width): value of lane (lane - delta)"),
    "tl.warp_reduce": (_OPAQUE, "(value, kind) -> value folded over the warp (kind: sum max min bitand bitor)"),
    "tl.sync_warp": (_OPAQUE, "([mask]): barrier over a warp"),
    "tl.sync_grid": (_OPAQUE, "(): barrier over every thread of the grid"),
    "tl.get_lane_idx": (_PURE, "([warp_size]) -> int32: lane of the calling thread in its warp"),
    "tl.get_warp_idx": (_PURE, "([warp_size]) -> int32: warp of the calling thread"),
    "tl.get_warp_idx_sync": (_PURE, "([warp_size]) -> int32: warp of the calling thread (converged)"),
    # fast math and IEEE arithmetic with a rounding mode
    **{f"tl.__{f}": (_PURE, f"(x): fast approximate {f}") for f in ("exp", "exp10", "log", "log2", "log10", "tan",
                                                                   "cos", "sin")},
    "tl.fast_rcp": (_PURE, "(x): fast approximate 1 / x"),
    **{f"tl.ieee_{f}": (_PURE, f"(operands..., rounding_mode): IEEE {f}") for f in ("add", "sub", "mul", "fmaf",
                                                                                    "frcp", "fsqrt", "fdiv")},
    "tl.ieee_frsqrt": (_PURE, "(x): IEEE 1 / sqrt(x), round to nearest"),
    **{f"tl.{f}2": (_PURE, f"(x2 operands): packed {f} of two lanes") for f in ("add", "sub", "mul", "fma", "max",
                                                                               "min", "abs")},
    "tl.cast": (_PURE, "(value, round, sat, rbits): conversion with a rounding mode and saturation"),
    "tl.dp4a": (_OPAQUE, "(A elem, B elem, C elem): C += dot product of four consecutive int8 of A and B"),
    # debugging
    "tl.print": (_OPAQUE, "(msg[, value]): print a message and a scalar from the device"),
    "tl.print_buffer_value": (_OPAQUE, "(msg, buffer name, index, value): print one element of a buffer"),
    "tl.device_assert": (_OPAQUE, "(condition, message): abort the kernel when condition is false"),
    # transaction barriers and asynchronous copies
    "tl.mbarrier_init": (_OPAQUE, "(barrier elem, count): initialise a barrier for count arrivals"),
    "tl.named_barrier_sync": (_OPAQUE, "(barrier id, threads): wait until that many threads reached barrier id"),
    "tl.mbarrier_wait_parity": (_OPAQUE, "(barrier elem, parity): wait for the phase of that parity"),
    "tl.mbarrier_arrive": (_OPAQUE, "(barrier elem[, cta]): arrive at a barrier"),
    "tl.mbarrier_expect_tx": (_OPAQUE, "(barrier elem, bytes): expect bytes of transactions"),
    "tl.mbarrier_arrive_expect_tx": (_OPAQUE, "(barrier elem, bytes): expect bytes and arrive"),
    "tl.ptx_cp_async": (_OPAQUE, "(dst access_ptr, src access_ptr, elems[, predicate]): asynchronous copy"),
    "tl.ptx_commit_group": (_OPAQUE, "(): close a group of asynchronous copies"),
    "tl.ptx_wait_group": (_OPAQUE, "(n): wait until at most n groups are in flight"),
    "tl.no_set_max_nreg": (_OPAQUE, "(): keep the compiler's register budget (a hint)"),
    # memory and loops
    "tl.access_ptr": (_PURE, "(element, extent, rw_mask) -> handle: address of element, for extent elements"),
    "tl.loop_break": (_OPAQUE, "(): leave the innermost loop"),
}

_EFFECTS = {_PURE: "Pure", _OPAQUE: "Opaque", _UPDATE: "UpdateState"}


class GemmWarpPolicy(enum.IntEnum):
    """How ``T.gemm`` spreads the warps of a block over the output tile."""

    Square = 0
    FullRow = 1
    FullCol = 2

    def is_square(self) -> bool:
        return self == GemmWarpPolicy.Square

    def is_full_row(self) -> bool:
        return self == GemmWarpPolicy.FullRow

    def is_full_col(self) -> bool:
        return self == GemmWarpPolicy.FullCol

    @staticmethod
    def to_prime_factors(num: int) -> list[int]:
        """The prime factors of `num` in ascending order, with multiplicity (``12 -> [2, 2, 3]``)."""
        factors, p = [], 2
        while p * p <= num:
            while num % p == 0:
                factors.append(p)
                num //= p
            p += 1
        return [*factors, num] if num > 1 else factors

    def compute_warp_partition(self, M: int, N: int, num_warps: int) -> tuple[int, int]:
        """``(m_warp, n_warp)``: how `num_warps` warps tile an M x N output (a warp covers at least 16 rows and
        8 columns). FullRow puts every warp on rows (the rest on columns when M is too short), FullCol the
        converse; Square picks the exact factorisation whose per-warp tile is closest to M:N."""
        if self.is_full_row():
            m = num_warps
            if M % (16 * m):
                m = max(1, M // 16)
            return m, max(1, num_warps // m)
        if self.is_full_col():
            n = num_warps
            if N % (8 * n):
                n = max(1, N // 8)
            return max(1, num_warps // n), n
        ratio = M / N if N > 0 else 1.0
        best, best_score = (1, 1), float("inf")
        for m in range(1, min(M // 16, num_warps) + 1):
            n, rem = divmod(num_warps, m)
            if rem or n > N // 8:
                continue
            score = abs((M / (16 * m)) / (N / (8 * n)) - ratio)
            if score < best_score:
                best, best_score = (m, n), score
        return best

    @classmethod
    def from_warp_partition(cls, m_warp: int, n_warp: int) -> GemmWarpPolicy:
        """The policy a partition expresses: FullRow (all warps on rows), FullCol, else Square."""
        if n_warp == 1 and m_warp > 1:
            return cls.FullRow
        if m_warp == 1 and n_warp > 1:
            return cls.FullCol
        return cls.Square


def _op_registered(name: str) -> bool:
    try:
        tvm.ir.Op.get(name)
    except Exception:
        return False
    return True


def register_tile_op(name: str, description: str = "", *, printer_name: str | None = None,
                     effect: str = _OPAQUE) -> tvm.ir.Op:
    """Register ``name`` as a tirx Op (once per process) and return it.

    ``printer_name`` is how ``func.script()`` prints the call (``T.<printer_name>(...)``); default: ``name``.
    ``effect``: ``"opaque"`` (default), ``"pure"`` or ``"update_state"``.
    """
    with _register_lock:  # TVM refuses a second registration: threads compiling at once must not both register
        if not _op_registered(name):
            tvm.get_global_func("ir.RegisterOp")(name, description)
        op = tvm.ir.Op.get(name)
        # Both attributes must be plain Python values; get_attr() is the reliable per-op presence test.
        if op.get_attr("TCallEffectKind") is None:
            kind = getattr(tirx.CallEffectKind, _EFFECTS[effect])
            tvm.ir.register_op_attr(name, "TCallEffectKind", int(kind.value))
        if op.get_attr("TScriptPrinterName") is None:
            tvm.ir.register_op_attr(name, "TScriptPrinterName", printer_name or name)
    return op


def register_all() -> None:
    """Register every op of :data:`TILE_OPS` (idempotent)."""
    for name, description in TILE_OPS.items():
        register_tile_op(name, description)
    for name, (effect, description) in INTRINSICS.items():
        register_tile_op(name, description, effect=effect)


_registered = False
_register_lock = threading.RLock()  # re-entrant: a nested first import of TVM must not wait for itself


def ensure_registered() -> None:
    """Register the tile ops with TVM once per process (thread-safe: TVM rejects a second registration, and
    threads compiling at once would both register).

    TVM is imported before the lock is taken: its first import calls back here (`tilelang._tvm_compat` registers
    the ops as soon as TVM loads), which under the lock would wait for itself."""
    global _registered
    if _registered:
        return
    import tvm as _tvm  # noqa: F401  (the first import registers the ops through the callback)

    with _register_lock:
        if not _registered:
            register_all()
            _registered = True


def register_intrinsic(name: str, effect: str, description: str) -> tvm.ir.Op:
    """Add intrinsic ``name`` (a backend dialect's ``tl.*`` call, e.g. ``tl.mbarrier_wait_parity``) to
    `INTRINSICS` and register its Op: LowerIntrinsics then lowers it through the tile-op registry on every target
    (a target no implementation serves gets a `LoweringError` naming the construct). Idempotent; redeclaring a
    name with another effect is a ValueError."""
    if effect not in _EFFECTS:
        raise ValueError(f"intrinsic {name}: effect must be one of {', '.join(_EFFECTS)}, got {effect!r}")
    known = INTRINSICS.get(name)
    if known is not None and known[0] != effect:
        raise ValueError(f"intrinsic {name} is already registered with effect {known[0]!r}, not {effect!r}")
    INTRINSICS.setdefault(name, (effect, description))
    return register_tile_op(name, description, effect=effect)


def tile_call(name: str, args: Sequence[Any]) -> tvm.ir.Call:
    """The ``tvm.ir.Call`` of tile op ``name`` (void result) with ``args``."""
    ensure_registered()
    return tvm.ir.Call(tvm.ir.Op.get(name), list(args), ret_ty="void")


def tile_stmt(name: str, args: Sequence[Any]) -> tirx.Stmt:
    """``Evaluate(tile_call(name, args))``."""
    return tirx.Evaluate(tile_call(name, args))


def intrin_call(name: str, dtype: str, args: Sequence[Any]) -> tvm.ir.Call:
    """The ``tvm.ir.Call`` of intrinsic ``name`` returning `dtype` (``"void"`` or ``"handle"`` for none)."""
    ensure_registered()
    return tvm.ir.Call(tvm.ir.Op.get(name), list(args), ret_ty=dtype)


def intrinsic_name(node: Any) -> str | None:
    """The ``tl.*`` name when ``node`` is an intrinsic Call (or an Evaluate of one), else None."""
    if isinstance(node, tirx.Evaluate):
        node = node.value
    if isinstance(node, tvm.ir.Call) and isinstance(node.op, tvm.ir.Op) and node.op.name in INTRINSICS:
        return node.op.name
    return None


def tile_op_name(node: Any) -> str | None:
    """The ``tl.*`` name when ``node`` is a tile-op Call or an Evaluate of one, else None."""
    if isinstance(node, tirx.Evaluate):
        node = node.value
    if isinstance(node, tvm.ir.Call) and isinstance(node.op, tvm.ir.Op) and node.op.name in TILE_OPS:
        return node.op.name
    return None
