"""``metal.simdgroup_accumulators`` (`SimdgroupAccumulators`): a ``T.gemm`` accumulator in simdgroup matrices.

A ``local.fragment`` that is the C operand of ``T.gemm`` and is otherwise only cleared (``T.clear`` /
``T.fill`` with a constant) and copied out whole (``T.copy(C_local, C[...])`` to device or threadgroup memory of
its dtype, provably in bounds) never needs a per-thread layout. This pass (run before layout inference) lowers
those three operators straight to 8x8 simdgroup matrices and re-scopes the fragment as ``metal.simdgroup``:

- the clear becomes ``make_filled_simdgroup_matrix`` on each matrix the simdgroup owns;
- each ``T.gemm`` walks K in steps of 8, loading A and B tiles from threadgroup memory (``simdgroup_load``,
  transposed for ``transpose_A`` / ``transpose_B``) into ``simdgroup_multiply_accumulate`` on the resident C;
- the copy out is one ``simdgroup_store`` per matrix, straight to the destination.

C never goes through threadgroup memory, across K iterations or at the end. The block's simdgroups split C into
a ``wm x wn`` grid (`tilelang_metal.tileops.gemm.warp_grid`); simdgroups beyond the grid repeat a busy one's work.
Accumulators used any other way (element-wise code, reductions, a partial copy) keep the fragment path of
`tilelang_metal.tileops.gemm`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import tvm

SIMDGROUP_SCOPE = "metal.simdgroup"
THREADGROUP_SCOPES = ("shared", "shared.dyn")
OUT_SCOPES = ("global", "shared", "shared.dyn")
MAX_MATRICES = 32  # 8x8 C matrices one simdgroup may keep resident


@dataclass(frozen=True)
class _Grid:
    """How one accumulator of shape (m, n) is split over the block's simdgroups."""

    m: int
    n: int
    wm: int
    wn: int
    warps: int

    @property
    def tm(self) -> int:
        return self.m // 8 // self.wm

    @property
    def tn(self) -> int:
        return self.n // 8 // self.wn


def _ints(values: Any) -> list[int] | None:
    from tilelang.transform import utils as C

    out = [C.as_int(v) for v in values]
    return None if any(v is None for v in out) else out  # type: ignore[return-value]


def _matrix_extents(region: Any) -> list[int] | None:
    """The constant (rows, cols) of a region whose leading dimensions have extent 1, else None."""
    ext = _ints([r.extent for r in region.region])
    if ext is None or len(ext) < 2 or any(e != 1 for e in ext[:-2]):
        return None
    return ext[-2:]


def _is_whole(region: Any) -> bool:
    from tilelang.transform import utils as C

    shape = _ints(region.source.ty.shape)
    return (shape is not None and all(C.is_const(r.min, 0) for r in region.region)
            and _ints([r.extent for r in region.region]) == shape)


def _unit_inner_stride(buf: Any) -> bool:
    from tilelang.transform import utils as C

    strides = list(buf.ty.strides) if getattr(buf.ty, "strides", None) else []
    return not strides or C.is_const(strides[-1], 1)


def _row_stride(buf: Any) -> Any:
    strides = list(buf.ty.strides) if getattr(buf.ty, "strides", None) else []
    return strides[-2] if strides else buf.ty.shape[-1]


def _gemm_fits(call: Any, acc: Any) -> bool:
    """A ``tl.gemm`` into `acc` that simdgroup matrices serve with A and B read from threadgroup memory."""
    from tilelang.transform import utils as C
    from tilelang_metal.tileops.gemm import ACCUM_DTYPES, OPERAND_DTYPES

    if len(call.args) < 7 or not all(C.as_int(call.args[i]) is not None for i in (3, 4, 5, 6)):
        return False
    a, b, c = call.args[0], call.args[1], call.args[2]
    if not all(hasattr(r, "source") and hasattr(r, "region") for r in (a, b, c)):
        return False
    if not c.source.same_as(acc) or not _is_whole(c):
        return False
    in_dt, acc_dt = str(a.source.ty.dtype), str(acc.ty.dtype)
    if in_dt != str(b.source.ty.dtype) or in_dt not in OPERAND_DTYPES or acc_dt not in ACCUM_DTYPES:
        return False
    if in_dt != "float16" and acc_dt != "float32":
        return False
    ta, tb = bool(C.as_int(call.args[3])), bool(C.as_int(call.args[4]))
    ea, eb = _matrix_extents(a), _matrix_extents(b)
    if ea is None or eb is None:
        return False
    k = ea[0] if ta else ea[1]
    if k % 8 or (eb[1] if tb else eb[0]) != k:
        return False
    return all(C.scope_of(r.source) in THREADGROUP_SCOPES and _unit_inner_stride(r.source) for r in (a, b))


def _copy_fits(call: Any, acc: Any, analyzer: Any) -> bool:
    """A ``tl.copy`` of all of `acc` to a same-dtype, unit-stride tile that is provably in bounds."""
    from tilelang.transform import utils as C

    src, dst = call.args[0], call.args[1]
    if not (hasattr(src, "source") and hasattr(dst, "source")) or not src.source.same_as(acc) or not _is_whole(src):
        return False
    if (C.scope_of(dst.source) not in OUT_SCOPES or str(dst.source.ty.dtype) != str(acc.ty.dtype)
            or not _unit_inner_stride(dst.source) or _matrix_extents(dst) != _ints(acc.ty.shape)[-2:]):
        return False
    for r, dim in zip(dst.region, dst.source.ty.shape):
        if not analyzer.can_prove(r.min >= 0) or not analyzer.can_prove(r.min + r.extent <= dim):
            return False
    return True


def _fill_fits(call: Any, acc: Any) -> bool:
    region = call.args[0]
    return (hasattr(region, "source") and region.source.same_as(acc) and _is_whole(region)
            and isinstance(call.args[1], (tvm.tirx.IntImm, tvm.tirx.FloatImm)))


class _Lowering:
    """Emits the simdgroup statements of one accumulator (see the module docstring)."""

    def __init__(self, acc: Any, grid: _Grid, func: Any):
        from tvm import tirx

        from tilelang.transform import utils as C

        self.acc = acc
        self.grid = grid
        self.dtype = str(acc.ty.dtype)
        self.reg = tirx.decl_buffer((grid.tm * grid.tn * 64,), self.dtype, name=str(acc.name), scope=SIMDGROUP_SCOPE)
        warp = tirx.floordiv(C.linear_thread(func), 32)
        if grid.wm * grid.wn < grid.warps:  # spare simdgroups repeat a busy one's work (same values)
            warp = tirx.floormod(warp, grid.wm * grid.wn)
        self.row0 = tirx.floordiv(warp, grid.wn) * (grid.tm * 8)
        self.col0 = tirx.floormod(warp, grid.wn) * (grid.tn * 8)

    def _each(self, body: Any) -> Any:
        """``body(i, j, index)`` for every matrix (i, j) this simdgroup owns, unrolled."""
        from tilelang_metal.tileops.gemm import _unrolled

        tn = self.grid.tn
        return _unrolled(self.grid.tm, "i", lambda i: _unrolled(tn, "j", lambda j: body(i, j, i * tn + j)))

    def fill(self, value: Any) -> Any:
        from tvm import tirx

        from tilelang_metal.tileops.gemm import _intrin

        v = tirx.const(float(value.value), self.dtype)
        return self._each(lambda i, j, idx: _intrin("make_filled_simdgroup_matrix", self.reg, idx, v, 8, 8))

    def gemm(self, call: Any) -> Any:
        from tvm import tirx

        from tilelang.transform import utils as C
        from tilelang_metal._tile import barrier
        from tilelang_metal.tileops.gemm import _intrin, _ptr, _unrolled

        a, b = call.args[0], call.args[1]
        ta, tb, clear = (bool(C.as_int(call.args[i])) for i in (3, 4, 6))
        ea = _matrix_extents(a)
        k = ea[0] if ta else ea[1]  # type: ignore[index]
        in_dt = str(a.source.ty.dtype)
        tm, tn = self.grid.tm, self.grid.tn
        a_reg = tirx.decl_buffer((tm * 64,), in_dt, name=f"{a.source.name}_sg", scope=SIMDGROUP_SCOPE)
        b_reg = tirx.decl_buffer((tn * 64,), in_dt, name=f"{b.source.name}_sg", scope=SIMDGROUP_SCOPE)
        kk = tirx.Var("kk", "int32")

        def load_a(i: Any) -> Any:
            ptr, ld = _ptr(a, self.row0 + i * 8, kk * 8, ta)
            return _intrin("simdgroup_load", a_reg, i, ptr, ld, 8, 8, tirx.const(ta, "bool"))

        def load_b(j: Any) -> Any:
            ptr, ld = _ptr(b, kk * 8, self.col0 + j * 8, tb)
            return _intrin("simdgroup_load", b_reg, j, ptr, ld, 8, 8, tirx.const(tb, "bool"))

        mma = self._each(lambda i, j, idx: _intrin("simdgroup_multiply_accumulate", self.reg, idx, a_reg, i,
                                                   b_reg, j, self.reg, idx))
        step = C.seq([_unrolled(tm, "i", load_a), _unrolled(tn, "j", load_b), mma])
        # the loads read the operand tiles through pointers, which barrier analysis does not order against the
        # threads' writes of those tiles: the barriers are explicit
        stmts = [self.fill(tirx.FloatImm("float32", 0.0))] if clear else []
        stmts += [tirx.AllocBuffer(a_reg), tirx.AllocBuffer(b_reg), barrier(),
                  tirx.For(kk, 0, k // 8, tirx.ForKind.SERIAL, step), barrier()]
        return C.seq(stmts)

    def store(self, dst: Any) -> Any:
        from tvm import tirx

        from tilelang.transform import utils as C
        from tilelang_metal._tile import barrier
        from tilelang_metal.tileops.gemm import _intrin

        buf = dst.source
        ld = _row_stride(buf)
        no = tirx.const(False, "bool")

        def one(i: Any, j: Any, idx: Any) -> Any:
            index = [r.min for r in dst.region]
            index[-2] = C.add(index[-2], self.row0 + i * 8)
            index[-1] = C.add(index[-1], self.col0 + j * 8)
            ptr = tirx.address_of(tirx.BufferLoad(buf, index))
            return _intrin("simdgroup_store", self.reg, idx, ptr, ld, 8, 8, no)

        stmts = [self._each(one)]
        if C.scope_of(buf) in THREADGROUP_SCOPES:  # the threads read the tile next: order them after the stores
            stmts.append(barrier())
        return C.seq(stmts)


def _accumulator_grid(acc: Any, gemms: list[Any], threads: int) -> _Grid | None:
    from tilelang.transform import utils as C
    from tilelang_metal.tileops.gemm import warp_grid

    shape = _ints(acc.ty.shape)
    if shape is None or len(shape) != 2 or shape[0] % 8 or shape[1] % 8 or threads % 32:
        return None
    warps = threads // 32
    wm, wn = warp_grid(shape[0] // 8, shape[1] // 8, warps, C.as_int(gemms[0].args[5]) or 0)
    grid = _Grid(shape[0], shape[1], wm, wn, warps)
    return grid if grid.tm * grid.tn <= MAX_MATRICES else None


def _rewrite(func: Any, acc: Any, threads: int) -> Any | None:
    """`func`'s body with `acc` lowered to simdgroup matrices, or None when one of its uses does not fit."""
    import tvm_ffi
    from tvm import tirx

    from tilelang.transform import utils as C

    gemms = [call for _, call in _tile_ops(func.body, acc) if call.op.name == "tl.gemm"]
    if not gemms or not all(_gemm_fits(g, acc) for g in gemms):
        return None
    grid = _accumulator_grid(acc, gemms, threads)
    if grid is None:
        return None
    low = _Lowering(acc, grid, func)
    analyzer = tvm.sym.Analyzer()
    for var, extent in C.launch_extents(func).values():
        analyzer.bind(var, tvm.ir.Range.from_min_extent(0, extent))
    failed: list[str] = []

    def on_for(loop: Any, mutator: Any) -> Any:
        analyzer.bind(loop.loop_var, tvm.ir.Range.from_min_extent(loop.min, loop.extent))
        return mutator.default_mutate(loop)

    def on_eval(ev: Any, mutator: Any) -> Any:
        found = C.tile_op_of(ev)
        if found is None or not C.uses_var(ev, [acc]):
            return ev
        name, call = found
        if name == "tl.gemm" and _gemm_fits(call, acc):
            return low.gemm(call)
        if name == "tl.fill" and _fill_fits(call, acc):
            return low.fill(call.args[1])
        if name == "tl.copy" and _copy_fits(call, acc, analyzer):
            return low.store(call.args[1])
        failed.append(name)
        return ev

    def on_alloc(alloc: Any) -> Any:
        return tirx.AllocBuffer(low.reg) if alloc.buffer.same_as(acc) else alloc

    body = tvm_ffi.structural_mutate(func.body, [(tirx.For, on_for), (tirx.Evaluate, on_eval)])
    if failed:
        return None
    body = tvm_ffi.structural_map(body, (tirx.AllocBuffer, on_alloc))
    return None if C.uses_var(body, [acc]) else body  # element-wise uses remain: keep the fragment


def _tile_ops(body: Any, acc: Any) -> list[tuple[str, Any]]:
    from tvm import tirx

    from tilelang.transform import utils as C

    found = []
    for ev in C.collect(body, tirx.Evaluate):
        op = C.tile_op_of(ev)
        if op is not None and C.uses_var(ev, [acc]):
            found.append(op)
    return found


def gemm_accumulators(body: Any) -> list[Any]:
    """The ``local.fragment`` C operands of the ``tl.gemm`` calls in `body`, in order of first use."""
    from tilelang.transform import utils as C

    found: list[Any] = []
    for call in C.collect(body, tvm.ir.Call, lambda c: isinstance(c.op, tvm.ir.Op) and c.op.name == "tl.gemm"):
        c = call.args[2] if len(call.args) > 2 else None
        buf = getattr(c, "source", None)
        if buf is not None and C.scope_of(buf) == "local.fragment" and not any(buf.same_as(b) for b in found):
            found.append(buf)
    return found


def SimdgroupAccumulators(target: Any = None) -> tvm.transform.Pass:
    """Keep qualifying gemm accumulators in simdgroup matrices (see the module docstring)."""
    from tilelang.transform import utils as C

    @C.prim_func_pass("metal.simdgroup_accumulators")
    def simdgroup_accumulators(func: Any, mod: Any, ctx: Any) -> Any:
        accs = gemm_accumulators(func.body)
        if not accs:
            return func
        threads = C.block_threads(func)
        for acc in accs:
            body = _rewrite(func, acc, threads)
            if body is not None:
                func = C.with_body(func, body)
        return func

    return simdgroup_accumulators
