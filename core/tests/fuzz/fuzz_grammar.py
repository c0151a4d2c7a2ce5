"""Hypothesis strategies generating valid TileLang tile programs from a small grammar of the DSL.

Each strategy draws a program class's parameters (shapes that are not multiples of the tiles, tiles of one row,
dtypes, staging through shared / fragment / registers, offsets, pipeline stages, warp policies, ...), renders
the kernel's DSL source and the torch expression computing the same result (`fuzz_programs.Program`).
Program classes: element-wise maps with broadcasting and casts, row / column reductions of every kind, cumsum,
GEMMs, transposes, softmax and attention chains, atomics. ``programs(classes, dtypes, max_dim)`` draws from
the chosen classes; `fuzz_profiles` decides their sizes per profile.
"""

from __future__ import annotations

import math

from fuzz_programs import Operand, Program
from hypothesis import strategies as st

DTYPES = ("float32", "float16", "bfloat16")
THREADS = (32, 64, 128, 256)
TILES = (1, 2, 4, 8, 16, 32, 64)
REDUCE_REF = {"sum": "{x}.sum(dim={d})", "max": "{x}.amax(dim={d})", "min": "{x}.amin(dim={d})",
              "abssum": "{x}.abs().sum(dim={d})", "absmax": "{x}.abs().amax(dim={d})"}
MAX_TILE_ELEMENTS = 8192  # one block's tile: keeps shared staging inside every target's limits


def _dims(max_dim: int) -> st.SearchStrategy[int]:
    """Sizes 1..max_dim, biased towards the awkward ones (1, primes, one off a power of two)."""
    odd = [n for n in (1, 3, 7, 17, 31, 33, 63, 65, 97, 127, 129, 255, 257, 300) if n <= max_dim]
    return st.one_of(st.sampled_from(odd), st.integers(1, max_dim))


def _tile(draw: st.DrawFn, full: int, cap: int = 64) -> int:
    return draw(st.sampled_from([t for t in TILES if t <= cap]))


def _src(lines: list[str]) -> str:
    return "@T.prim_func\n" + "\n".join(lines) + "\n"


def _torch_dtype(dtype: str) -> str:
    return f"torch.{dtype}"


# ---------------------------------------------------------------------------------------------- element-wise
_BINARY = {"+": ("({a} + {b})", "({a} + {b})"), "-": ("({a} - {b})", "({a} - {b})"),
           "*": ("({a} * {b})", "({a} * {b})"), "max": ("T.max({a}, {b})", "torch.maximum({a}, {b})"),
           "min": ("T.min({a}, {b})", "torch.minimum({a}, {b})")}
_UNARY = {"abs": ("T.abs({a})", "{a}.abs()"), "relu": ("T.max({a}, T.cast(0, 'float32'))", "{a}.clamp(min=0)"),
          "exp": ("T.exp(T.min({a}, T.cast(4, 'float32')))", "torch.exp({a}.clamp(max=4))"),
          "half": ("({a} * T.cast(0.5, 'float32'))", "({a} * 0.5)")}


@st.composite
def _expr(draw: st.DrawFn, leaves: list[tuple[str, str]], depth: int) -> tuple[str, str]:
    """A fp32 expression over `leaves` (pairs of DSL / torch text): ``(dsl, torch)``."""
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        return draw(st.sampled_from(leaves))
    if draw(st.booleans()):
        op = draw(st.sampled_from(sorted(_UNARY)))
        a = draw(_expr(leaves, depth - 1))
        return _UNARY[op][0].format(a=a[0]), _UNARY[op][1].format(a=a[1])
    op = draw(st.sampled_from(sorted(_BINARY)))
    a, b = draw(_expr(leaves, depth - 1)), draw(_expr(leaves, depth - 1))
    return _BINARY[op][0].format(a=a[0], b=b[0]), _BINARY[op][1].format(a=a[1], b=b[1])


@st.composite
def elementwise(draw: st.DrawFn, dtypes: tuple[str, ...], max_dim: int) -> Program:
    """``C = f(A[offset tile], B)``: B full, a row vector or a column vector (broadcast); A staged in shared,
    a fragment or read directly; C written through a fragment + ``T.copy`` or stored directly (guarded)."""
    M, N = draw(_dims(max_dim)), draw(_dims(max_dim))
    bm, bn = _tile(draw, M), _tile(draw, N)
    oM, oN = draw(st.sampled_from([0, 0, 1, 5])), draw(st.sampled_from([0, 0, 3]))
    da, db, dc = (draw(st.sampled_from(dtypes)) for _ in range(3))
    threads = draw(st.sampled_from(THREADS))
    bshape = draw(st.sampled_from(["full", "row", "col"]))
    stage = draw(st.sampled_from(["shared", "fragment", "direct"]))
    out = "direct" if stage == "direct" else draw(st.sampled_from(["fragment", "direct"]))
    a_leaf = {"shared": "A_s[i, j]", "fragment": "A_f[i, j]",
              "direct": f"A[by * {bm} + i + {oM}, bx * {bn} + j + {oN}]"}
    b_leaf = {"full": "B_f[i, j]", "row": "B_v[j]", "col": "B_v[i]"}[bshape]
    b_torch = {"full": "B.float()", "row": "B.float()[None, :]", "col": "B.float()[:, None]"}[bshape]
    leaves = [(f"T.cast({a_leaf[stage]}, 'float32')", f"A.float()[{oM}:{oM + M}, {oN}:{oN + N}]"),
              (f"T.cast({b_leaf}, 'float32')", b_torch)]
    dsl, ref = draw(_expr(leaves, 2))
    lines = [f"def kernel(A: T.Tensor(({M + oM}, {N + oN}), '{da}'), B: T.Tensor({_bshape(bshape, M, N)}, '{db}'),"
             f" C: T.Tensor(({M}, {N}), '{dc}')):",
             f"    with T.Kernel(T.ceildiv({N}, {bn}), T.ceildiv({M}, {bm}), threads={threads}) as (bx, by):"]
    if stage == "shared":
        lines += [f"        A_s = T.alloc_shared(({bm}, {bn}), '{da}')",
                  f"        T.copy(A[by * {bm} + {oM}, bx * {bn} + {oN}], A_s)"]
    elif stage == "fragment":
        lines += [f"        A_f = T.alloc_fragment(({bm}, {bn}), '{da}')",
                  f"        T.copy(A[by * {bm} + {oM}, bx * {bn} + {oN}], A_f)"]
    if bshape == "full":
        lines += [f"        B_f = T.alloc_fragment(({bm}, {bn}), '{db}')",
                  f"        T.copy(B[by * {bm}, bx * {bn}], B_f)"]
    else:
        n, at = (bn, f"bx * {bn}") if bshape == "row" else (bm, f"by * {bm}")
        scope = draw(st.sampled_from(["fragment", "shared"]))
        lines += [f"        B_v = T.alloc_{scope}(({n},), '{db}')", f"        T.copy(B[{at}], B_v)"]
    if out == "fragment":
        lines += [f"        C_f = T.alloc_fragment(({bm}, {bn}), '{dc}')",
                  f"        for i, j in T.Parallel({bm}, {bn}):",
                  f"            C_f[i, j] = T.cast({dsl}, '{dc}')",
                  f"        T.copy(C_f, C[by * {bm}, bx * {bn}])"]
    else:
        lines += [f"        for i, j in T.Parallel({bm}, {bn}):",
                  f"            if by * {bm} + i < {M} and bx * {bn} + j < {N}:",
                  f"                C[by * {bm} + i, bx * {bn} + j] = T.cast({dsl}, '{dc}')"]
    ops = (Operand("A", "in", (M + oM, N + oN), da), Operand("B", "in", _bshape(bshape, M, N), db),
           Operand("C", "out", (M, N), dc))
    return Program("elementwise", _src(lines), ops, f"torch.broadcast_to({ref}, ({M}, {N})).to({_torch_dtype(dc)})",
                   scale=4.0, elements=M * N)


def _bshape(kind: str, M: int, N: int) -> tuple[int, ...]:
    return {"full": (M, N), "row": (N,), "col": (M,)}[kind]


# ---------------------------------------------------------------------------------------------- reductions
@st.composite
def reduction(draw: st.DrawFn, dtypes: tuple[str, ...], max_dim: int) -> Program:
    """Row (``dim=1``, tiles of ``block_M`` rows, block_M = 1 included) or column (``dim=0``) reductions of
    every kind, from a fragment or a shared tile, accumulating in fp32 or the input dtype, ``clear=False``."""
    kind = draw(st.sampled_from(sorted(REDUCE_REF)))
    dim = draw(st.sampled_from([1, 1, 0]))
    M, N = draw(_dims(max_dim)), draw(_dims(max_dim))
    full = N if dim == 1 else M
    b = _tile(draw, M if dim == 1 else N, cap=max(1, min(64, MAX_TILE_ELEMENTS // full)))
    da = draw(st.sampled_from(dtypes))
    acc = draw(st.sampled_from(sorted({"float32", da})))
    threads = draw(st.sampled_from(THREADS))
    scope = draw(st.sampled_from(["fragment", "fragment", "shared"]))
    clear = kind in ("sum", "max", "min") and draw(st.booleans())
    init = {"sum": 1.0, "max": 0.0, "min": 0.0}.get(kind)
    tile, at, grid, count = ((b, N), f"A[bx * {b}, 0]", f"T.ceildiv({M}, {b})", M) if dim == 1 else \
        ((M, b), f"A[0, bx * {b}]", f"T.ceildiv({N}, {b})", N)
    lines = [f"def kernel(A: T.Tensor(({M}, {N}), '{da}'), O: T.Tensor(({count},), '{acc}')):",
             f"    with T.Kernel({grid}, threads={threads}) as bx:",
             f"        t = T.alloc_{scope}({tile}, '{acc}')",
             f"        r = T.alloc_fragment(({b},), '{acc}')",
             f"        T.copy({at}, t)"]
    if not clear:
        lines.append(f"        T.reduce_{kind}(t, r, dim={dim})")
        ref = REDUCE_REF[kind].format(x="A.float()", d=dim)
    else:
        lines += [f"        T.fill(r, {init})", f"        T.reduce_{kind}(t, r, dim={dim}, clear=False)"]
        base = REDUCE_REF[kind].format(x="A.float()", d=dim)
        ref = {"sum": f"({base} + 1)", "max": f"{base}.clamp(min=0)", "min": f"{base}.clamp(max=0)"}[kind]
    lines.append(f"        T.copy(r, O[bx * {b}])")
    scale = math.sqrt(full) * (4 if acc != "float32" else 1) if "sum" in kind else 1.0
    ops = (Operand("A", "in", (M, N), da), Operand("O", "out", (count,), acc))
    return Program(f"reduce_{kind}", _src(lines), ops, f"{ref}.to({_torch_dtype(acc)})", scale=scale,
                   tags=frozenset({"reduce"}), elements=M * N)


@st.composite
def cumsum(draw: st.DrawFn, dtypes: tuple[str, ...], max_dim: int) -> Program:
    """``T.cumsum`` along rows or columns of a shared or fragment tile, in place or into another tile, reversed
    or not."""
    dim = draw(st.sampled_from([1, 0]))
    M, N = draw(_dims(max_dim)), draw(_dims(max_dim))
    full = N if dim == 1 else M
    scope = draw(st.sampled_from(["shared", "shared", "fragment"]))
    # a scanned fragment is replicated (whole in every thread): WebGPU on lavapipe takes minutes over a tile of
    # a few thousand elements per thread (e.g. (16, 152) with 256 threads), so fragment tiles stay small
    limit = 1024 if scope == "fragment" else MAX_TILE_ELEMENTS
    b = _tile(draw, M if dim == 1 else N, cap=max(1, min(64, limit // full)))
    dtype = draw(st.sampled_from([d for d in dtypes if d == "float32"] or ["float32"]))
    threads = draw(st.sampled_from(THREADS))
    reverse = draw(st.booleans())
    into = draw(st.booleans())
    tile, at = ((b, N), ("bx * {b}, 0")) if dim == 1 else ((M, b), "0, bx * {b}")
    at = at.format(b=b)
    grid = f"T.ceildiv({M}, {b})" if dim == 1 else f"T.ceildiv({N}, {b})"
    lines = [f"def kernel(A: T.Tensor(({M}, {N}), '{dtype}'), B: T.Tensor(({M}, {N}), '{dtype}')):",
             f"    with T.Kernel({grid}, threads={threads}) as bx:",
             f"        s = T.alloc_{scope}({tile}, '{dtype}')",
             f"        T.copy(A[{at}], s)"]
    if into:
        lines += [f"        d = T.alloc_{scope}({tile}, '{dtype}')",
                  f"        T.cumsum(s, d, dim={dim}, reverse={reverse})", f"        T.copy(d, B[{at}])"]
    else:
        lines += [f"        T.cumsum(s, dim={dim}, reverse={reverse})", f"        T.copy(s, B[{at}])"]
    ref = f"A.flip({dim}).cumsum({dim}).flip({dim})" if reverse else f"A.cumsum({dim})"
    ops = (Operand("A", "in", (M, N), dtype), Operand("B", "out", (M, N), dtype))
    return Program("cumsum", _src(lines), ops, ref, scale=math.sqrt(full) * 4,
                   tags=frozenset({"scan"}), elements=M * N)


# ---------------------------------------------------------------------------------------------- GEMM
@st.composite
def gemm(draw: st.DrawFn, dtypes: tuple[str, ...], max_dim: int) -> Program:
    """``C = op(A) @ op(B)`` with every transpose combination, odd shapes, 1-4 stages, every warp policy,
    fp32 / fp16 / bf16 operands, an fp32 accumulator, an optional epilogue and the A operand optionally
    scaled in a fragment."""
    M, N, K = draw(_dims(max_dim)), draw(_dims(max_dim)), draw(_dims(max_dim))
    bm, bn = draw(st.sampled_from([16, 32, 64, 128])), draw(st.sampled_from([16, 32, 64, 128]))
    bk = draw(st.sampled_from([16, 32, 64]))
    ta, tb = draw(st.booleans()), draw(st.booleans())
    dtype = draw(st.sampled_from(dtypes))
    dc = draw(st.sampled_from(sorted({"float32", dtype})))
    stages = draw(st.integers(1, 4))
    threads = draw(st.sampled_from([128, 256]))
    policy = draw(st.sampled_from(["Square", "FullRow", "FullCol"]))
    epilogue = draw(st.sampled_from(["none", "relu", "scale"]))
    a_frag = not ta and draw(st.integers(0, 3)) == 0
    a_shape, b_shape = ((K, M) if ta else (M, K)), ((N, K) if tb else (K, N))
    a_tile, b_tile = ((bk, bm) if ta else (bm, bk)), ((bn, bk) if tb else (bk, bn))
    a_at = "k * {bk}, by * {bm}" if ta else "by * {bm}, k * {bk}"
    b_at = "bx * {bn}, k * {bk}" if tb else "k * {bk}, bx * {bn}"
    lines = [f"def kernel(A: T.Tensor({a_shape}, '{dtype}'), B: T.Tensor({b_shape}, '{dtype}'),"
             f" C: T.Tensor(({M}, {N}), '{dc}')):",
             f"    with T.Kernel(T.ceildiv({N}, {bn}), T.ceildiv({M}, {bm}), threads={threads}) as (bx, by):",
             f"        A_s = T.alloc_shared({a_tile}, '{dtype}')",
             f"        B_s = T.alloc_shared({b_tile}, '{dtype}')",
             f"        C_f = T.alloc_fragment(({bm}, {bn}), 'float32')"]
    if a_frag:
        lines.append(f"        A_f = T.alloc_fragment({a_tile}, '{dtype}')")
    lines += ["        T.clear(C_f)",
              f"        for k in T.Pipelined(T.ceildiv({K}, {bk}), num_stages={stages}):",
              f"            T.copy(A[{a_at.format(bk=bk, bm=bm)}], A_s)",
              f"            T.copy(B[{b_at.format(bk=bk, bn=bn)}], B_s)"]
    operand = "A_s"
    if a_frag:
        lines += ["            T.copy(A_s, A_f)", f"            for i, j in T.Parallel({bm}, {bk}):",
                  f"                A_f[i, j] = A_f[i, j] * T.cast(2, '{dtype}')"]
        operand = "A_f"
    lines.append(f"            T.gemm({operand}, B_s, C_f, transpose_A={ta}, transpose_B={tb}, "
                 f"policy=T.GemmWarpPolicy.{policy})")
    ref = f"({'A.float().T' if ta else 'A.float()'}{' * 2' if a_frag else ''}) @ {'B.float().T' if tb else 'B.float()'}"
    if epilogue != "none":
        body = "T.max(C_f[i, j], 0)" if epilogue == "relu" else "C_f[i, j] * T.cast(0.25, 'float32')"
        lines += [f"        for i, j in T.Parallel({bm}, {bn}):", f"            C_f[i, j] = {body}"]
        ref = f"torch.relu({ref})" if epilogue == "relu" else f"(({ref}) * 0.25)"
    lines.append(f"        T.copy(C_f, C[by * {bm}, bx * {bn}])")
    ops = (Operand("A", "in", a_shape, dtype), Operand("B", "in", b_shape, dtype), Operand("C", "out", (M, N), dc))
    scale = math.sqrt(K) * (1 if dtype == "float32" else 2)
    return Program("gemm", _src(lines), ops, f"({ref}).to({_torch_dtype(dc)})", scale=scale,
                   tags=frozenset({"gemm"}), elements=M * N * K)


# ---------------------------------------------------------------------------------------------- transpose
@st.composite
def transpose(draw: st.DrawFn, dtypes: tuple[str, ...], max_dim: int) -> Program:
    """``B = A.T`` tile by tile: ``T.transpose`` between shared / fragment tiles, or a ``T.Parallel`` with
    swapped indices, cast to another dtype on the way."""
    M, N = draw(_dims(max_dim)), draw(_dims(max_dim))
    bm, bn = _tile(draw, M), _tile(draw, N)
    da, db = draw(st.sampled_from(dtypes)), draw(st.sampled_from(dtypes))
    threads = draw(st.sampled_from(THREADS))
    how = draw(st.sampled_from(["transpose", "parallel"]))
    # a T.Parallel reading a fragment transposed makes it replicated (the whole tile in every thread): valid,
    # but a 64x64 tile then takes lavapipe minutes to compile, so that form reads a shared tile
    src = "shared" if how == "parallel" else draw(st.sampled_from(["shared", "fragment"]))
    dst = draw(st.sampled_from(["shared", "fragment"]))
    lines = [f"def kernel(A: T.Tensor(({M}, {N}), '{da}'), B: T.Tensor(({N}, {M}), '{db}')):",
             f"    with T.Kernel(T.ceildiv({N}, {bn}), T.ceildiv({M}, {bm}), threads={threads}) as (bx, by):",
             f"        s = T.alloc_{src}(({bm}, {bn}), '{da}')",
             f"        d = T.alloc_{dst}(({bn}, {bm}), '{db}')",
             f"        T.copy(A[by * {bm}, bx * {bn}], s)"]
    if how == "transpose":
        lines.append("        T.transpose(s, d)")
    else:
        lines += [f"        for j, i in T.Parallel({bn}, {bm}):", f"            d[j, i] = T.cast(s[i, j], '{db}')"]
    lines.append(f"        T.copy(d, B[bx * {bn}, by * {bm}])")
    ops = (Operand("A", "in", (M, N), da), Operand("B", "out", (N, M), db))
    return Program("transpose", _src(lines), ops, f"A.T.to({_torch_dtype(db)})",
                   tags=frozenset({"copy"}), elements=M * N)


# ---------------------------------------------------------------------------------------------- softmax chains
@st.composite
def softmax(draw: st.DrawFn, dtypes: tuple[str, ...], max_dim: int) -> Program:
    """Row softmax (max, exp / exp2, sum, normalise) over tiles of block_M rows, optionally log-softmax."""
    M, N = draw(_dims(max_dim)), draw(_dims(max_dim))
    bm = _tile(draw, M, cap=max(1, min(64, MAX_TILE_ELEMENTS // N)))
    da, dy = draw(st.sampled_from(dtypes)), draw(st.sampled_from(dtypes))
    threads = draw(st.sampled_from(THREADS))
    scale = draw(st.sampled_from([1.0, 0.5, 0.125]))
    exp2 = draw(st.booleans())
    log = draw(st.integers(0, 3)) == 0
    e = f"T.exp2(x[i, j] * {scale * 1.4426950408889634!r} - m[i] * {scale * 1.4426950408889634!r})" if exp2 else \
        f"T.exp(x[i, j] * {scale!r} - m[i] * {scale!r})"
    lines = [f"def kernel(X: T.Tensor(({M}, {N}), '{da}'), Y: T.Tensor(({M}, {N}), '{dy}')):",
             f"    with T.Kernel(T.ceildiv({M}, {bm}), threads={threads}) as bx:",
             f"        x = T.alloc_fragment(({bm}, {N}), 'float32')",
             f"        p = T.alloc_fragment(({bm}, {N}), 'float32')",
             f"        m = T.alloc_fragment(({bm},), 'float32')",
             f"        s = T.alloc_fragment(({bm},), 'float32')",
             f"        T.copy(X[bx * {bm}, 0], x)",
             "        T.reduce_max(x, m, dim=1)",
             f"        for i, j in T.Parallel({bm}, {N}):",
             f"            p[i, j] = {e}",
             "        T.reduce_sum(p, s, dim=1)",
             f"        for i, j in T.Parallel({bm}, {N}):"]
    if log:
        lines.append(f"            p[i, j] = x[i, j] * {scale!r} - m[i] * {scale!r} - T.log(s[i])")
        ref = f"torch.log_softmax(X.float() * {scale!r}, dim=1)"
    else:
        lines.append("            p[i, j] = p[i, j] / s[i]")
        ref = f"torch.softmax(X.float() * {scale!r}, dim=1)"
    lines.append(f"        T.copy(p, Y[bx * {bm}, 0])")
    ops = (Operand("X", "in", (M, N), da), Operand("Y", "out", (M, N), dy))
    return Program("log_softmax" if log else "softmax", _src(lines), ops,
                   f"{ref}.to({_torch_dtype(dy)})", scale=4.0, tags=frozenset({"reduce"}), elements=M * N)


@st.composite
def attention(draw: st.DrawFn, dtypes: tuple[str, ...], max_dim: int) -> Program:
    """One attention head: ``S = Q K^T`` (GEMM into a fragment), row softmax, ``O = P V`` (P cast to the
    operand dtype in a fragment), over blocks of query rows; all keys in one tile."""
    L, S = draw(_dims(min(max_dim, 64))), draw(_dims(min(max_dim, 64)))
    D = draw(st.sampled_from([16, 32, 64]))
    bm = draw(st.sampled_from([16, 32, 64]))
    sn = max(16, 1 << (S - 1).bit_length())  # key tile: S rounded up to a power of two (>= 16)
    dtype = draw(st.sampled_from([d for d in dtypes if d != "float32"] or ["float16"]))
    threads = draw(st.sampled_from([128, 256]))
    policy = draw(st.sampled_from(["Square", "FullRow"]))
    scale = 1.0 / math.sqrt(D)
    lines = [f"def kernel(Q: T.Tensor(({L}, {D}), '{dtype}'), K: T.Tensor(({S}, {D}), '{dtype}'),"
             f" V: T.Tensor(({S}, {D}), '{dtype}'), O: T.Tensor(({L}, {D}), '{dtype}')):",
             f"    with T.Kernel(T.ceildiv({L}, {bm}), threads={threads}) as bx:",
             f"        q = T.alloc_shared(({bm}, {D}), '{dtype}')",
             f"        k = T.alloc_shared(({sn}, {D}), '{dtype}')",
             f"        v = T.alloc_shared(({sn}, {D}), '{dtype}')",
             f"        s = T.alloc_fragment(({bm}, {sn}), 'float32')",
             f"        p = T.alloc_fragment(({bm}, {sn}), '{dtype}')",
             f"        o = T.alloc_fragment(({bm}, {D}), 'float32')",
             f"        m = T.alloc_fragment(({bm},), 'float32')",
             f"        l = T.alloc_fragment(({bm},), 'float32')",
             f"        T.copy(Q[bx * {bm}, 0], q)",
             "        T.copy(K[0, 0], k)",
             "        T.copy(V[0, 0], v)",
             "        T.clear(s)",
             f"        T.gemm(q, k, s, transpose_B=True, policy=T.GemmWarpPolicy.{policy})",
             f"        for i, j in T.Parallel({bm}, {sn}):",
             f"            s[i, j] = T.if_then_else(j < {S}, s[i, j] * {scale!r}, -T.infinity('float32'))",
             "        T.reduce_max(s, m, dim=1)",
             f"        for i, j in T.Parallel({bm}, {sn}):",
             "            s[i, j] = T.exp(s[i, j] - m[i])",
             "        T.reduce_sum(s, l, dim=1)",
             "        T.copy(s, p)",
             "        T.clear(o)",
             f"        T.gemm(p, v, o, policy=T.GemmWarpPolicy.{policy})",
             f"        for i, j in T.Parallel({bm}, {D}):",
             "            o[i, j] = o[i, j] / l[i]",
             f"        T.copy(o, O[bx * {bm}, 0])"]
    ref = (f"(torch.softmax(Q.float() @ K.float().T * {scale!r}, dim=1) @ V.float()).to({_torch_dtype(dtype)})")
    ops = (Operand("Q", "in", (L, D), dtype), Operand("K", "in", (S, D), dtype), Operand("V", "in", (S, D), dtype),
           Operand("O", "out", (L, D), dtype))
    return Program("attention", _src(lines), ops, ref, scale=3.0, tags=frozenset({"gemm", "reduce"}),
                   elements=L * sn * D * 2)


# ---------------------------------------------------------------------------------------------- atomics
@st.composite
def atomic(draw: st.DrawFn, dtypes: tuple[str, ...], max_dim: int) -> Program:
    """Column sums / maxima accumulated across blocks with atomics: a reduced partial row ``T.atomic_add``-ed
    as a region, or element-wise ``T.atomic_add`` / ``T.atomic_max`` inside a guarded ``T.Parallel``."""
    M, N = draw(_dims(max_dim)), draw(_dims(min(max_dim, 128)))
    bm = _tile(draw, M, cap=max(1, min(64, MAX_TILE_ELEMENTS // N)))
    threads = draw(st.sampled_from(THREADS))
    form = draw(st.sampled_from(["region", "element"]))
    op = "add" if form == "region" else draw(st.sampled_from(["add", "max", "min"]))
    lines = [f"def kernel(A: T.Tensor(({M}, {N}), 'float32'), S: T.Tensor(({N},), 'float32')):",
             f"    with T.Kernel(T.ceildiv({M}, {bm}), threads={threads}) as bx:"]
    if form == "region":
        lines += [f"        t = T.alloc_fragment(({bm}, {N}), 'float32')",
                  f"        part = T.alloc_fragment(({N},), 'float32')",
                  f"        T.copy(A[bx * {bm}, 0], t)",
                  "        T.reduce_sum(t, part, dim=0)",
                  "        T.atomic_add(S[0], part)"]
    else:
        lines += [f"        for i, j in T.Parallel({bm}, {N}):",
                  f"            if bx * {bm} + i < {M}:",
                  f"                T.atomic_{op}(S[j], A[bx * {bm} + i, j])"]
    ref = {"add": "A.sum(dim=0)", "max": "A.amax(dim=0).clamp(min=0)", "min": "A.amin(dim=0).clamp(max=0)"}[op]
    ops = (Operand("A", "in", (M, N), "float32"), Operand("S", "out", (N,), "float32"))
    return Program(f"atomic_{op}", _src(lines), ops, ref, scale=math.sqrt(M) * 4,
                   tags=frozenset({"atomic"}), elements=M * N)


CLASSES = {"elementwise": elementwise, "reduction": reduction, "cumsum": cumsum, "gemm": gemm,
           "transpose": transpose, "softmax": softmax, "attention": attention, "atomic": atomic}


def programs(classes: tuple[str, ...] = tuple(CLASSES), dtypes: tuple[str, ...] = DTYPES,
             max_dim: int = 300) -> st.SearchStrategy[Program]:
    """Programs of the named classes over `dtypes`, sizes 1..`max_dim`."""
    return st.one_of(*(CLASSES[c](dtypes, max_dim) for c in classes))
