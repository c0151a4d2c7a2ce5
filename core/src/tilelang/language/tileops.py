"""Tile operators: ``copy``, ``transpose``, ``fill``, ``clear``, ``gemm``, ``reduce_*``, ``cumsum``, ``cummax``.

Atomics (``tl.atomic`` over regions and the element intrinsics) live in `tilelang.language.atomic`.

Each checks its operands (shapes, scopes, dtypes) and emits one ``Evaluate(tl.<op>(...))`` (see docs/ir.md).
"""

from __future__ import annotations

from typing import Any

from tilelang.errors import KernelTypeError
from tilelang.frontend import state as _state
from tilelang.ir import ops as _ops
from tilelang.ir import region as R
from tilelang.ir.ops import GemmWarpPolicy
from tilelang.language.dtypes import cast


def _emit(name: str, args: list[Any]) -> None:
    from tvm.script.ir_builder import tirx as B

    B.evaluate(_ops.tile_call(name, args))


def _i32(v: Any) -> Any:
    from tvm import tirx

    return tirx.IntImm("int32", int(v))


def _str(v: str) -> Any:
    import tvm

    return tvm.ir.StringImm(v)


def _operand(x: Any, what: str, op: str) -> Any:
    if R.is_buffer(x) or R.is_load(x) or R.is_region(x):
        if R.is_load(x) and len(x.indices) != len(R.buffer_shape(x.source)):
            raise KernelTypeError(f"{op}: {what} {R.describe(x)} has {len(x.indices)} indices for "
                                  f"{len(R.buffer_shape(x.source))} dimensions")
        return x
    raise KernelTypeError(f"{op}: {what} must be a buffer, a buffer element or a region, got {R.describe(x)}")


def _pair(src: Any, dst: Any, op: str) -> tuple[Any, Any]:
    """Regions for a (src, dst) pair where either side may be an element corner ``A[i, j]``."""
    try:
        if R.is_load(src) and not R.is_load(dst):
            dst_r = R.to_region(dst)
            src_r = R.to_region(src, R.region_extents(dst_r))
        else:
            src_r = R.to_region(src)
            dst_r = R.to_region(dst, R.region_extents(src_r))
    except ValueError as e:
        raise KernelTypeError(f"{op}: {e}") from None
    return src_r, dst_r


def copy(src: Any, dst: Any, *, coalesced_width: int | None = None, disable_tma: bool = False,
         eviction_policy: Any = None, loop_layout: Any = None, annotations: dict | None = None,
         **_ignored: Any) -> None:
    """Copy `src` to `dst` (buffers, regions ``A[a:b, c]`` or corners ``A[i, j]``), casting to dst's dtype."""
    _state.require("T.copy")
    src, dst = _operand(src, "src", "T.copy"), _operand(dst, "dst", "T.copy")
    src_r, dst_r = _pair(src, dst, "T.copy")
    # extents that differ are reported when the kernel is lowered (CheckSemantics, at this line), as in the reference
    _emit("tl.copy", [src_r, dst_r])


def fill(buffer: Any, value: Any) -> None:
    """Set every element of `buffer` (a buffer or region) to `value`."""
    _state.require("T.fill")
    region = R.to_region(_operand(buffer, "buffer", "T.fill"))
    _emit("tl.fill", [region, cast(value, R.buffer_dtype(region.source))])


def clear(buffer: Any) -> None:
    """``T.fill(buffer, 0)`` (a reducer: the identity of its op)."""
    from tilelang.language.reducer import reducer_of

    entry = reducer_of(buffer) if R.is_buffer(buffer) else None
    if entry is not None:
        from tilelang.tileop.reduce import identity_value

        fill(buffer, identity_value(entry[1], R.buffer_dtype(buffer)))
        return
    fill(buffer, 0)


def _matrix(r: Any, op: str, what: str) -> list[Any]:
    ext = R.region_extents(r)
    lead, last2 = ext[:-2], ext[-2:]
    if len(ext) < 2 or not all(R.is_one(e) for e in lead):
        raise KernelTypeError(f"{op}: {what} {R.describe(r)} must be a 2-D tile, has extents {R.format_extents(ext)}")
    return last2


# C may be a shared tile too (the reference accepts it; a backend's gemm that needs a fragment C declines it in
# its `applies` and core's generic lowering serves it)
_GEMM_SCOPES = ("shared", "shared.dyn", "local.fragment", "local", "global")


def gemm(A: Any, B: Any, C: Any, transpose_A: bool = False, transpose_B: bool = False,
         policy: Any = GemmWarpPolicy.Square, clear_accum: bool = False, k_pack: int = 1, mbar: Any = None,
         annotations: dict | None = None, *, wg_wait: int = 0) -> None:
    """``C (+)= op(A) @ op(B)``: A (shared or fragment) is MxK, B KxN, C (fragment, local or shared) MxN."""
    _state.require("T.gemm")
    regions = []
    for name, x, scopes in (("A", A, _GEMM_SCOPES), ("B", B, _GEMM_SCOPES), ("C", C, _GEMM_SCOPES)):
        r = R.to_region(_operand(x, name, "T.gemm"))
        scope = R.buffer_scope(r.source)
        if scope not in scopes:
            raise KernelTypeError(f"T.gemm: {name} is {R.describe(r.source)}; it must be in scope "
                                  f"{' or '.join(scopes)} (copy it there first)")
        regions.append(r)
    a, b, c = (_matrix(r, "T.gemm", n) for r, n in zip(regions, "ABC"))
    m, k = (a[1], a[0]) if transpose_A else (a[0], a[1])
    k2, n = (b[1], b[0]) if transpose_B else (b[0], b[1])
    problems = []
    if R.provably_different(k, k2):
        problems.append(f"K differs: A gives {k}, B gives {k2}")
    if R.provably_different(m, c[0]):
        problems.append(f"M differs: A gives {m}, C has {c[0]} rows")
    if R.provably_different(n, c[1]):
        problems.append(f"N differs: B gives {n}, C has {c[1]} columns")
    if problems:
        raise KernelTypeError(
            f"T.gemm shape mismatch (transpose_A={bool(transpose_A)}, transpose_B={bool(transpose_B)}): "
            f"A {R.format_extents(a)}, B {R.format_extents(b)}, C {R.format_extents(c)}: " + "; ".join(problems)
        )
    da, db = R.buffer_dtype(regions[0].source), R.buffer_dtype(regions[1].source)
    if da != db:
        raise KernelTypeError(f"T.gemm: A is {da} but B is {db}; both operands must have the same dtype")
    pol = int(policy.value if hasattr(policy, "value") else policy)
    if pol not in tuple(int(p) for p in GemmWarpPolicy):
        raise KernelTypeError(f"T.gemm: unknown policy {policy!r}; use T.GemmWarpPolicy.Square/FullRow/FullCol")
    clear_now = clear_flag(regions[2], clear_accum, "T.gemm")
    _emit("tl.gemm", [*regions, _i32(bool(transpose_A)), _i32(bool(transpose_B)), _i32(pol), _i32(clear_now)])


def clear_flag(C: Any, clear_accum: Any, what: str) -> bool:
    """The compile-time ``clear_accum`` of a GEMM-like op on accumulator `C`. A condition known only at run time
    (``clear_accum=(j == 0)`` in a loop) emits ``if clear_accum: T.clear(C)`` in front of the op, which then
    accumulates: the same result, on every backend."""
    if isinstance(clear_accum, (bool, int)):
        return bool(clear_accum)
    if isinstance(getattr(clear_accum, "value", None), int):
        return bool(clear_accum.value)
    if hasattr(clear_accum, "asobject"):  # ``j == 0`` on a loop variable: TVM's deferred comparison
        clear_accum = clear_accum.asobject()
    from tvm import tirx

    if not isinstance(clear_accum, tirx.PrimExpr) or not str(clear_accum.ty).startswith(("bool", "int", "uint")):
        raise KernelTypeError(f"{what}: clear_accum must be a bool or a boolean expression, got {clear_accum!r}")
    from tvm.script.ir_builder import tirx as B

    with B.If(clear_accum):
        with B.Then():
            clear(C)
    return False


def _match(a: list[Any], b: list[Any]) -> bool:
    return len(a) == len(b) and not any(R.provably_different(x, y) for x, y in zip(a, b))


def _norm_dim(dim: int, ndim: int, op: str) -> int:
    if isinstance(dim, bool) or not isinstance(dim, int) or not -ndim <= dim < ndim:
        raise KernelTypeError(f"{op}: dim={dim!r} is out of range for a {ndim}-D tile")
    return dim % ndim


def reduce(buffer: Any, out: Any, reduce_type: str, dim: int = -1, clear: bool = True, batch: int = 1,
           annotations: dict | None = None) -> None:
    """Reduce `buffer` along `dim` into `out` (`reduce_type` in sum max min abssum absmax bitand bitor bitxor)."""
    op = f"T.reduce_{reduce_type}"
    _state.require(op)
    if reduce_type not in _ops.REDUCE_KINDS:
        raise KernelTypeError(f"unknown reduction {reduce_type!r}; use one of {', '.join(_ops.REDUCE_KINDS)}")
    src = R.to_region(_operand(buffer, "src", op))
    dst = R.to_region(_operand(out, "dst", op))
    if reduce_type.startswith("bit"):
        for r, what in ((src, "src"), (dst, "dst")):
            if not R.buffer_dtype(r.source).startswith(("int", "uint", "bool")):
                raise KernelTypeError(f"{op}: bitwise reductions need integer tiles, {what} {R.describe(r.source)} "
                                      f"is {R.buffer_dtype(r.source)}")
    se, de = R.region_extents(src), R.region_extents(dst)
    d = _norm_dim(dim, len(se), op)
    dropped, kept = se[:d] + se[d + 1:], [*se[:d], 1, *se[d + 1:]]
    if not (_match(de, dropped) or _match(de, kept) or R.same_extents(de, dropped)):
        raise KernelTypeError(
            f"{op} shape mismatch: reducing {R.describe(src)} {R.format_extents(se)} along dim {d} gives "
            f"{R.format_extents(dropped)}, but dst {R.describe(dst)} has {R.format_extents(de)}"
        )
    _emit("tl.reduce", [src, dst, _str(reduce_type), _i32(d), _i32(bool(clear))])


def reduce_max(buffer: Any, out: Any, dim: int = -1, clear: bool = True, batch: int = 1,
               annotations: dict | None = None) -> None:
    """``out = max(buffer)`` along `dim` (``clear=False`` folds into `out`'s values).

    A NaN in a row (or in `out` under ``clear=False``) gives NaN, as ``torch.amax`` does.
    """
    reduce(buffer, out, "max", dim, clear)


def reduce_min(buffer: Any, out: Any, dim: int = -1, clear: bool = True, batch: int = 1,
               annotations: dict | None = None) -> None:
    """``out = min(buffer)`` along `dim`; a NaN in a row gives NaN, as ``torch.amin`` does."""
    reduce(buffer, out, "min", dim, clear)


def reduce_sum(buffer: Any, out: Any, dim: int = -1, clear: bool = True, batch: int = 1,
               annotations: dict | None = None) -> None:
    """``out = sum(buffer)`` along `dim` (a NaN in a row gives NaN)."""
    reduce(buffer, out, "sum", dim, clear)


def reduce_abssum(buffer: Any, out: Any, dim: int = -1, batch: int = 1, annotations: dict | None = None, *,
                  clear: bool = True) -> None:
    """``out = sum(|buffer|)`` along `dim` (a NaN in a row gives NaN)."""
    reduce(buffer, out, "abssum", dim, clear)


def reduce_absmax(buffer: Any, out: Any, dim: int = -1, clear: bool = True, batch: int = 1,
                  annotations: dict | None = None) -> None:
    """``out = max(|buffer|)`` along `dim`; a NaN in a row gives NaN, as ``torch.amax(abs(x))`` does."""
    reduce(buffer, out, "absmax", dim, clear)


def reduce_bitand(buffer: Any, out: Any, dim: int = -1, clear: bool = True, batch: int = 1,
                  annotations: dict | None = None) -> None:
    """``out = buffer[0] & buffer[1] & ...`` along `dim` (integer tiles)."""
    reduce(buffer, out, "bitand", dim, clear)


def reduce_bitor(buffer: Any, out: Any, dim: int = -1, clear: bool = True, batch: int = 1,
                 annotations: dict | None = None) -> None:
    """``out = buffer[0] | buffer[1] | ...`` along `dim` (integer tiles)."""
    reduce(buffer, out, "bitor", dim, clear)


def reduce_bitxor(buffer: Any, out: Any, dim: int = -1, clear: bool = True, batch: int = 1,
                  annotations: dict | None = None) -> None:
    """``out = buffer[0] ^ buffer[1] ^ ...`` along `dim` (integer tiles)."""
    reduce(buffer, out, "bitxor", dim, clear)


def _scan(kind: str, src: Any, dst: Any, dim: int, reverse: bool) -> None:
    op = f"T.cum{kind}"
    _state.require(op)
    s = R.to_region(_operand(src, "src", op))
    d = s if dst is None else R.to_region(_operand(dst, "dst", op))
    se, de = R.region_extents(s), R.region_extents(d)
    if not _match(se, de):
        raise KernelTypeError(f"{op} shape mismatch: src {R.format_extents(se)}, dst {R.format_extents(de)}")
    args = [s, d, _i32(_norm_dim(dim, len(se), op)), _i32(bool(reverse))]
    _emit("tl.cumsum", args if kind == "sum" else [*args, _str(kind)])


def cumsum(src: Any, dst: Any = None, dim: int = 0, reverse: bool = False, annotations: dict | None = None) -> None:
    """Inclusive prefix sum of `src` along `dim` into `dst` (default: in place)."""
    _scan("sum", src, dst, dim, reverse)


def cummax(src: Any, dst: Any = None, dim: int = 0, reverse: bool = False, annotations: dict | None = None) -> None:
    """Inclusive running maximum of `src` along `dim` into `dst` (default: in place)."""
    _scan("max", src, dst, dim, reverse)


def transpose(src: Any, dst: Any, annotations: dict | None = None) -> None:
    """``dst[..., j, i] = src[..., i, j]``: swap the last two axes of a region (``src`` (..., M, N), ``dst``
    (..., N, M)). Reads outside `src`'s buffer give 0; writes outside `dst`'s buffer are skipped."""
    _state.require("T.transpose")
    s = R.to_region(_operand(src, "src", "T.transpose"))
    d = R.to_region(_operand(dst, "dst", "T.transpose"))
    se, de = R.region_extents(s), R.region_extents(d)
    if len(se) < 2 or len(de) < 2:
        raise KernelTypeError(f"T.transpose needs regions of at least 2 dimensions, got src {R.format_extents(se)} "
                              f"and dst {R.format_extents(de)}")
    want = [*se[:-2], se[-1], se[-2]]
    if not _match(de, want):
        raise KernelTypeError(f"T.transpose shape mismatch: src {R.describe(s)} {R.format_extents(se)} transposes "
                              f"to {R.format_extents(want)}, but dst {R.describe(d)} has {R.format_extents(de)}")
    _emit("tl.transpose", [s, d])


def async_copy(src: Any, dst: Any, *, coalesced_width: int | None = None, eviction_policy: Any = None,
               annotations: dict | None = None, **_ignored: Any) -> None:
    """``T.copy`` that a backend may run asynchronously (``cp.async``); the data is in `dst` after the copy's
    wait (``T.ptx_wait_group`` / the next barrier). Backends without asynchronous copies copy at once."""
    copy(src, dst, coalesced_width=coalesced_width, eviction_policy=eviction_policy)


def im2col(img: Any, col: Any, nhw_step: Any, c_step: Any, kernel: int, stride: int, dilation: int, pad: int,
           eviction_policy: Any = None, annotations: dict | None = None) -> None:
    """Fill the tile `col` (``block_M x block_K``) with patch rows of the NHWC image `img` for a 2-D convolution:
    row ``nhw_step * block_M + i`` is output position ``(n, oh, ow)``, column ``c_step * block_K + j`` is kernel
    tap ``(kh, kw, c)`` (``kernel x kernel`` taps); taps outside the padded image read 0."""
    _state.require("T.im2col")
    img_r = R.to_region(_operand(img, "img", "T.im2col"))
    col_r = R.to_region(_operand(col, "col", "T.im2col"))
    if len(img_r.region) != 4:
        raise KernelTypeError(f"T.im2col: img {R.describe(img_r)} must be a 4-D NHWC tensor")
    if len(R.squeeze(R.region_extents(col_r))) > 2 or len(col_r.region) < 2:
        raise KernelTypeError(f"T.im2col: col {R.describe(col_r)} must be a 2-D tile")
    for name, v in (("kernel", kernel), ("stride", stride), ("dilation", dilation), ("pad", pad)):
        if isinstance(v, bool) or not isinstance(v, int) or v < (0 if name == "pad" else 1):
            raise KernelTypeError(f"T.im2col: {name} must be a {'non-negative' if name == 'pad' else 'positive'} "
                                  f"int, got {v!r}")
    _emit("tl.im2col", [img_r, col_r, _expr_i32(nhw_step), _expr_i32(c_step), _i32(kernel), _i32(stride),
                        _i32(dilation), _i32(pad)])


def c2d_im2col(img: Any, col: Any, nhw_step: Any, c_step: Any, kernel: int, stride: int, dilation: int, pad: int,
               eviction_policy: Any = None, annotations: dict | None = None) -> None:
    """The older name of `im2col`."""
    im2col(img, col, nhw_step, c_step, kernel, stride, dilation, pad, eviction_policy, annotations)


def _expr_i32(v: Any) -> Any:
    return _i32(v) if isinstance(v, int) else v


def gemm_sp(A_sparse: Any, E: Any, B: Any, C: Any, transpose_A: bool = False, transpose_E: bool = False,
            transpose_B: bool = False, policy: Any = GemmWarpPolicy.Square, clear_accum: bool = False,
            k_pack: int = 1, wg_wait: int = 0, annotations: dict | None = None) -> None:
    """``C (+)= op(A) @ op(B)`` with A 2:4-sparse: `A_sparse` holds its nonzeros (``M x K/2``; fp32: one per pair,
    ``M x K/2``) and `E` their positions as row-major metadata (each 4-bit chunk: the two 2-bit indices of a group
    of four; fp32: the index of the nonzero of a pair, times two), as ``tilelang``'s compressors write them."""
    _state.require("T.gemm_sp")
    _emit("tl.gemm_sp", gemm_sp_args(A_sparse, E, B, C, transpose_A, transpose_E, transpose_B, policy, clear_accum))


def gemm_sp_args(A_sparse: Any, E: Any, B: Any, C: Any, transpose_A: bool, transpose_E: bool, transpose_B: bool,
                 policy: Any, clear_accum: bool, what: str = "T.gemm_sp") -> list[Any]:
    """The checked ``tl.gemm_sp`` arguments ``(A_sparse, E, B, C, trans_A, trans_E, trans_B, policy, clear)`` (also
    of the backends' explicit sparse GEMMs, `what` naming them in errors)."""
    regions = [R.to_region(_operand(x, n, what)) for x, n in ((A_sparse, "A_sparse"), (E, "E"), (B, "B"), (C, "C"))]
    a, e, b, c = regions
    ae, be, ce = (_matrix(r, what, n) for r, n in ((a, "A_sparse"), (b, "B"), (c, "C")))
    m, k_half = (ae[1], ae[0]) if transpose_A else (ae[0], ae[1])
    k, n = (be[1], be[0]) if transpose_B else (be[0], be[1])
    if R.provably_different(m, ce[0]) or R.provably_different(n, ce[1]) or R.provably_different(k_half * 2, k):
        raise KernelTypeError(f"{what} shape mismatch: A_sparse {R.format_extents(ae)} (K/2), B "
                              f"{R.format_extents(be)}, C {R.format_extents(ce)}")
    if not R.buffer_dtype(e.source).startswith(("int", "uint")):
        raise KernelTypeError(f"{what}: the metadata E must be an integer tile, got {R.buffer_dtype(e.source)}")
    pol = int(policy.value if hasattr(policy, "value") else policy)
    return [a, e, b, c, _i32(bool(transpose_A)), _i32(bool(transpose_E)), _i32(bool(transpose_B)), _i32(pol),
            _i32(clear_flag(c, clear_accum, what))]
