"""A corpus of TileLang kernels written in the reference DSL, with torch references, for every test layer.

Each factory returns a :class:`CorpusKernel`: the kernel (a tirx PrimFunc, or the plain eager function for the
``@tilelang.jit`` form), a torch reference and one :class:`Arg` per kernel parameter. Convention: the harness
creates every ``"in"`` argument with :meth:`CorpusKernel.make_inputs`, allocates every ``"out"`` argument
zero-filled, calls the kernel with all parameters in order, and compares the outputs with
``ref(*inputs)`` (one tensor, or a tuple in ``"out"`` order). Eager kernels are called with the inputs only and
return their outputs.

``CORPUS`` maps a name to a zero-argument factory with small default sizes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import tilelang.language as T


@dataclass(frozen=True)
class Arg:
    """One kernel parameter: role ``"in"`` / ``"out"`` / ``"scalar"``, concrete shape, dtype, how to fill it."""

    name: str
    role: str
    shape: tuple[int, ...] = ()
    dtype: str = "float32"
    init: str = "randn"          # randn | rand | zeros | arange (inputs only)
    value: Any = None            # scalars


@dataclass
class CorpusKernel:
    name: str
    func: Any
    ref: Callable[..., Any]
    args: list[Arg]
    eager: bool = False
    atol: float = 1e-3
    rtol: float = 1e-3
    tags: frozenset[str] = field(default_factory=frozenset)

    @property
    def inputs(self) -> list[Arg]:
        return [a for a in self.args if a.role in ("in", "scalar")]

    @property
    def outputs(self) -> list[Arg]:
        return [a for a in self.args if a.role == "out"]

    @property
    def out_idx(self) -> list[int]:
        return [i for i, a in enumerate(self.args) if a.role == "out"]

    def prim_func(self) -> Any:
        """The kernel's PrimFunc (an eager kernel specialised to its declared input shapes and dtypes)."""
        if not self.eager:
            return self.func
        from tilelang.frontend import TensorArg, parse_eager

        return parse_eager(self.func, *[TensorArg(a.shape, a.dtype) for a in self.args if a.role == "in"]).func

    def make_inputs(self, seed: int = 0, device: str = "cpu") -> list[Any]:
        """Torch tensors (and scalar values) for the ``"in"``/``"scalar"`` arguments, in parameter order."""
        import torch

        g = torch.Generator().manual_seed(seed)
        out = []
        for a in self.inputs:
            if a.role == "scalar":
                out.append(a.value)
                continue
            dt = getattr(torch, a.dtype)
            if a.init == "zeros":
                t = torch.zeros(a.shape, dtype=dt)
            elif a.init == "arange":
                t = (torch.arange(_numel(a.shape)) % 17).reshape(a.shape).to(dt)
            elif a.init == "rand":
                t = torch.rand(a.shape, generator=g).to(dt)
            else:
                t = torch.randn(a.shape, generator=g).to(dt)
            out.append(t.to(device))
        return out

    def make_outputs(self, device: str = "cpu") -> list[Any]:
        import torch

        return [torch.zeros(a.shape, dtype=getattr(torch, a.dtype), device=device) for a in self.outputs]

    def call_args(self, inputs: list[Any], outputs: list[Any]) -> list[Any]:
        """`inputs` and `outputs` interleaved into parameter order (for kernels called without out_idx)."""
        ins, outs = iter(inputs), iter(outputs)
        return [next(outs) if a.role == "out" else next(ins) for a in self.args]


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


# ---------------------------------------------------------------------------------------------- element-wise
def elementwise_add(M: int = 256, N: int = 256, block_M: int = 32, block_N: int = 32, dtype: str = "float32",
                    threads: int = 128) -> CorpusKernel:
    """``C = A + B`` through a fragment, tiles loaded with ``T.copy``."""

    @T.prim_func
    def elementwise_add(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_N), dtype)
            B_local = T.alloc_fragment((block_M, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), dtype)
            T.copy(A[by * block_M, bx * block_N], A_shared)
            T.copy(B[by * block_M, bx * block_N], B_local)
            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] = A_shared[i, j] + B_local[i, j]
            T.copy(C_local, C[by * block_M, bx * block_N])

    return CorpusKernel("elementwise_add", elementwise_add, lambda a, b: a + b,
                        [Arg("A", "in", (M, N), dtype), Arg("B", "in", (M, N), dtype), Arg("C", "out", (M, N), dtype)],
                        tags=frozenset({"elementwise"}))


def dynamic_add(M: int = 100, N: int = 64, block_M: int = 32, dtype: str = "float32") -> CorpusKernel:
    """``C = A + 1`` with a runtime number of rows ``m`` (``T.dynamic``) and a bounds check."""
    m = T.dynamic("m")

    @T.prim_func
    def dynamic_add(A: T.Tensor((m, N), dtype), C: T.Tensor((m, N), dtype)):
        with T.Kernel(T.ceildiv(m, block_M), threads=128) as bx:
            for i, j in T.Parallel(block_M, N):
                row = bx * block_M + i
                if row < m:
                    C[row, j] = A[row, j] + T.cast(1, dtype)

    return CorpusKernel("dynamic_add", dynamic_add, lambda a: a + 1,
                        [Arg("A", "in", (M, N), dtype), Arg("C", "out", (M, N), dtype)],
                        tags=frozenset({"elementwise", "dynamic"}))


# ---------------------------------------------------------------------------------------------- GEMM
def _gemm_ref(trans_A: bool, trans_B: bool, out_dtype: str, relu: bool = False) -> Callable[..., Any]:
    def ref(a: Any, b: Any) -> Any:
        import torch

        a = a.float().T if trans_A else a.float()
        b = b.float().T if trans_B else b.float()
        c = a @ b
        if relu:
            c = torch.relu(c)
        return c.to(getattr(torch, out_dtype))

    return ref


def gemm(M: int = 256, N: int = 256, K: int = 256, block_M: int = 64, block_N: int = 64, block_K: int = 32,
         trans_A: bool = False, trans_B: bool = False, dtype: str = "float16", accum_dtype: str = "float32",
         num_stages: int = 2, threads: int = 128, relu: bool = False, out_dtype: str | None = None) -> CorpusKernel:
    """Tiled GEMM ``C = op(A) @ op(B)`` (optionally with a fused ReLU epilogue); C is `out_dtype` (default: the
    inputs' dtype; e.g. ``int32`` for int8 inputs)."""
    out_dtype = out_dtype or dtype
    A_shape = (K, M) if trans_A else (M, K)
    B_shape = (N, K) if trans_B else (K, N)
    A_tile = (block_K, block_M) if trans_A else (block_M, block_K)
    B_tile = (block_N, block_K) if trans_B else (block_K, block_N)

    @T.prim_func
    def gemm(A: T.Tensor(A_shape, dtype), B: T.Tensor(B_shape, dtype), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared(A_tile, dtype)
            B_shared = T.alloc_shared(B_tile, dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                if trans_A:
                    T.copy(A[k * block_K, by * block_M], A_shared)
                else:
                    T.copy(A[by * block_M, k * block_K], A_shared)
                if trans_B:
                    T.copy(B[bx * block_N, k * block_K], B_shared)
                else:
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_A=trans_A, transpose_B=trans_B)
            if relu:
                for i, j in T.Parallel(block_M, block_N):
                    C_local[i, j] = T.max(C_local[i, j], 0)
            T.copy(C_local, C[by * block_M, bx * block_N])

    name = "gemm_" + ("t" if trans_A else "n") + ("t" if trans_B else "n") + ("_relu" if relu else "")
    args = [Arg("A", "in", A_shape, dtype), Arg("B", "in", B_shape, dtype), Arg("C", "out", (M, N), out_dtype)]
    return CorpusKernel(name, gemm, _gemm_ref(trans_A, trans_B, out_dtype, relu), args,
                        atol=1e-2, rtol=1e-2, tags=frozenset({"gemm"}))


def gemm_nn(**kw: Any) -> CorpusKernel:
    return gemm(**kw)


def gemm_nt(**kw: Any) -> CorpusKernel:
    return gemm(trans_B=True, **kw)


def gemm_tn(**kw: Any) -> CorpusKernel:
    return gemm(trans_A=True, **kw)


def gemm_relu(**kw: Any) -> CorpusKernel:
    return gemm(relu=True, **kw)


def gemm_fragment_a(M: int = 128, N: int = 128, K: int = 128, block_M: int = 64, block_N: int = 64,
                    block_K: int = 32, dtype: str = "float16", accum_dtype: str = "float32") -> CorpusKernel:
    """GEMM whose A operand is scaled in registers (a fragment) before ``T.gemm``."""

    @T.prim_func
    def gemm_fragment_a(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            A_frag = T.alloc_fragment((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.copy(A_shared, A_frag)
                for i, j in T.Parallel(block_M, block_K):
                    A_frag[i, j] = A_frag[i, j] * T.cast(2.0, dtype)
                T.gemm(A_frag, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    def ref(a: Any, b: Any) -> Any:
        return ((a.float() * 2) @ b.float()).to(a.dtype)

    return CorpusKernel("gemm_fragment_a", gemm_fragment_a, ref,
                        [Arg("A", "in", (M, K), dtype), Arg("B", "in", (K, N), dtype), Arg("C", "out", (M, N), dtype)],
                        atol=2e-2, rtol=2e-2, tags=frozenset({"gemm"}))


def quickstart_lazy(M: int = 256, N: int = 256, K: int = 256, block_M: int = 128, block_N: int = 128,
                    block_K: int = 32, dtype: str = "float16", accum_dtype: str = "float") -> CorpusKernel:
    """The reference README quickstart (GEMM + ReLU) in the lazy ``T.prim_func`` form."""

    @T.prim_func
    def matmul_relu_kernel(
            A: T.Tensor((M, K), dtype),
            B: T.Tensor((K, N), dtype),
            C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] = T.max(C_local[i, j], 0)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return CorpusKernel("quickstart_lazy", matmul_relu_kernel, _gemm_ref(False, False, dtype, relu=True),
                        [Arg("A", "in", (M, K), dtype), Arg("B", "in", (K, N), dtype), Arg("C", "out", (M, N), dtype)],
                        atol=1e-2, rtol=1e-2, tags=frozenset({"gemm", "quickstart"}))


def matmul_relu(A, B, block_M: int = 128, block_N: int = 128, block_K: int = 32,
                dtype: T.dtype = T.float16, accum_dtype: T.dtype = T.float32):
    """The reference README quickstart in the eager ``@tilelang.jit`` form (undecorated here)."""
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), dtype)
    B: T.Tensor((K, N), dtype)
    C = T.empty((M, N), dtype)

    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), dtype)
        B_shared = T.alloc_shared((block_K, block_N), dtype)
        C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
        T.clear(C_local)
        for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
            T.copy(A[by * block_M, ko * block_K], A_shared)
            T.copy(B[ko * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)
        for i, j in T.Parallel(block_M, block_N):
            C_local[i, j] = T.max(C_local[i, j], 0)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C


def quickstart_eager(M: int = 256, N: int = 256, K: int = 256, dtype: str = "float16") -> CorpusKernel:
    """:func:`matmul_relu` with input specs; call it (through the JIT) with the two input tensors."""
    return CorpusKernel("quickstart_eager", matmul_relu, _gemm_ref(False, False, dtype, relu=True),
                        [Arg("A", "in", (M, K), dtype), Arg("B", "in", (K, N), dtype), Arg("C", "out", (M, N), dtype)],
                        eager=True, atol=1e-2, rtol=1e-2, tags=frozenset({"gemm", "quickstart", "eager"}))


# ---------------------------------------------------------------------------------------------- reductions
def row_reduce(kind: str = "sum", M: int = 256, N: int = 128, block_M: int = 32, dtype: str = "float32"
               ) -> CorpusKernel:
    """``B[i] = sum_j A[i, j]`` (or max) with ``T.reduce_sum`` / ``T.reduce_max`` over a fragment."""
    reducer = T.reduce_sum if kind == "sum" else T.reduce_max

    @T.prim_func
    def row_reduce(A: T.Tensor((M, N), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            A_local = T.alloc_fragment((block_M, N), dtype)
            B_local = T.alloc_fragment((block_M,), dtype)
            T.copy(A[bx * block_M, 0], A_local)
            reducer(A_local, B_local, dim=1)
            T.copy(B_local, B[bx * block_M])

    def ref(a: Any) -> Any:
        return a.sum(dim=1) if kind == "sum" else a.amax(dim=1)

    return CorpusKernel(f"row_{kind}", row_reduce, ref,
                        [Arg("A", "in", (M, N), dtype), Arg("B", "out", (M,), dtype)], tags=frozenset({"reduce"}))


def row_sum(**kw: Any) -> CorpusKernel:
    return row_reduce("sum", **kw)


def row_max(**kw: Any) -> CorpusKernel:
    return row_reduce("max", **kw)


def softmax(M: int = 256, N: int = 128, block_M: int = 16, dtype: str = "float32") -> CorpusKernel:
    """Row softmax: max, exp, sum, normalise."""
    scale = 1.44269504  # log2(e)

    @T.prim_func
    def softmax(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            x = T.alloc_fragment((block_M, N), "float32")
            row_max = T.alloc_fragment((block_M,), "float32")
            row_sum = T.alloc_fragment((block_M,), "float32")
            T.copy(X[bx * block_M, 0], x)
            T.reduce_max(x, row_max, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = T.exp2(x[i, j] * scale - row_max[i] * scale)
            T.reduce_sum(x, row_sum, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] / row_sum[i]
            T.copy(x, Y[bx * block_M, 0])

    def ref(x: Any) -> Any:
        import torch

        return torch.softmax(x.float(), dim=1).to(x.dtype)

    return CorpusKernel("softmax", softmax, ref, [Arg("X", "in", (M, N), dtype), Arg("Y", "out", (M, N), dtype)],
                        atol=1e-4, rtol=1e-3, tags=frozenset({"reduce"}))


def cumsum(M: int = 64, N: int = 128, block_M: int = 16, dtype: str = "float32", reverse: bool = False
           ) -> CorpusKernel:
    """Row-wise inclusive prefix sums with ``T.cumsum`` on a shared tile."""

    @T.prim_func
    def cumsum(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            A_shared = T.alloc_shared((block_M, N), dtype)
            T.copy(A[bx * block_M, 0], A_shared)
            T.cumsum(A_shared, dim=1, reverse=reverse)
            T.copy(A_shared, B[bx * block_M, 0])

    def ref(a: Any) -> Any:
        return a.flip(1).cumsum(1).flip(1) if reverse else a.cumsum(1)

    return CorpusKernel("cumsum", cumsum, ref, [Arg("A", "in", (M, N), dtype), Arg("B", "out", (M, N), dtype)],
                        atol=1e-3, rtol=1e-3, tags=frozenset({"scan"}))


# ---------------------------------------------------------------------------------------------- per-thread code
def gemv(N: int = 256, K: int = 512, block_N: int = 128, dtype: str = "float16", accum_dtype: str = "float32"
         ) -> CorpusKernel:
    """``C = B @ A`` (B is N x K) with one output per thread: explicit ``T.get_thread_binding`` code."""

    @T.prim_func
    def gemv(A: T.Tensor((K,), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), threads=block_N) as bn:
            tn = T.get_thread_binding(0)
            acc = T.alloc_local((1,), accum_dtype)
            acc[0] = 0
            for k in T.serial(K):
                acc[0] += T.cast(A[k], accum_dtype) * T.cast(B[bn * block_N + tn, k], accum_dtype)
            C[bn * block_N + tn] = T.cast(acc[0], dtype)

    def ref(a: Any, b: Any) -> Any:
        return (b.float() @ a.float()).to(a.dtype)

    return CorpusKernel("gemv", gemv, ref,
                        [Arg("A", "in", (K,), dtype), Arg("B", "in", (N, K), dtype), Arg("C", "out", (N,), dtype)],
                        atol=5e-2, rtol=1e-2, tags=frozenset({"per_thread"}))


# ---------------------------------------------------------------------------------------------- atomics
def atomic_colsum(M: int = 256, N: int = 64, block_M: int = 32, dtype: str = "float32") -> CorpusKernel:
    """Column sums: each block reduces its rows and adds the partial row (``T.atomic_add``) into the output."""

    @T.prim_func
    def atomic_colsum(A: T.Tensor((M, N), dtype), S: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            tile = T.alloc_fragment((block_M, N), dtype)
            part = T.alloc_fragment((N,), dtype)
            T.copy(A[bx * block_M, 0], tile)
            T.reduce_sum(tile, part, dim=0)
            T.atomic_add(S[0], part)

    return CorpusKernel("atomic_colsum", atomic_colsum, lambda a: a.sum(dim=0),
                        [Arg("A", "in", (M, N), dtype), Arg("S", "out", (N,), dtype)],
                        atol=1e-3, rtol=1e-3, tags=frozenset({"atomic"}))


def atomic_scalar(M: int = 128, N: int = 64, block_M: int = 32, dtype: str = "float32") -> CorpusKernel:
    """Element-wise ``T.atomic_add(S[j], A[i, j])`` inside a ``T.Parallel`` loop, and an atomic max."""

    @T.prim_func
    def atomic_scalar(A: T.Tensor((M, N), dtype), S: T.Tensor((N,), dtype), Mx: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            for i, j in T.Parallel(block_M, N):
                T.atomic_add(S[j], A[bx * block_M + i, j])
                T.atomic_max(Mx[j], A[bx * block_M + i, j])

    def ref(a: Any) -> Any:
        return a.sum(dim=0), a.amax(dim=0).clamp(min=0)

    return CorpusKernel("atomic_scalar", atomic_scalar, ref,
                        [Arg("A", "in", (M, N), dtype), Arg("S", "out", (N,), dtype), Arg("Mx", "out", (N,), dtype)],
                        atol=1e-3, rtol=1e-3, tags=frozenset({"atomic"}))


# ---------------------------------------------------------------------------------------------- attention
def flash_attention(batch: int = 1, heads: int = 2, seq_len: int = 128, dim: int = 64, is_causal: bool = True,
                    block_M: int = 64, block_N: int = 64, num_stages: int = 1, threads: int = 128) -> CorpusKernel:
    """Flash-attention forward (reference ``example_mha_fwd_bshd``): Q/K/V [batch, seq, heads, dim], online softmax."""
    scale = (1.0 / dim) ** 0.5 * 1.44269504  # log2(e)
    shape = [batch, seq_len, heads, dim]
    dtype = "float16"
    accum_dtype = "float"

    @T.macro
    def MMA0(K: T.Tensor(shape, dtype), Q_shared: T.SharedBuffer([block_M, dim], dtype),
             K_shared: T.SharedBuffer([block_N, dim], dtype), acc_s: T.FragmentBuffer([block_M, block_N], accum_dtype),
             k: T.int32, bx: T.int32, by: T.int32, bz: T.int32):
        T.copy(K[bz, k * block_N:(k + 1) * block_N, by, :], K_shared)
        if is_causal:
            for i, j in T.Parallel(block_M, block_N):
                acc_s[i, j] = T.if_then_else(bx * block_M + i >= k * block_N + j, 0, -T.infinity(acc_s.dtype))
        else:
            T.clear(acc_s)
        T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)

    @T.macro
    def MMA1(V: T.Tensor(shape, dtype), V_shared: T.SharedBuffer([block_N, dim], dtype),
             acc_s_cast: T.FragmentBuffer([block_M, block_N], dtype),
             acc_o: T.FragmentBuffer([block_M, dim], accum_dtype), k: T.int32, by: T.int32, bz: T.int32):
        T.copy(V[bz, k * block_N:(k + 1) * block_N, by, :], V_shared)
        T.gemm(acc_s_cast, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)

    @T.macro
    def Softmax(acc_s: T.FragmentBuffer([block_M, block_N], accum_dtype),
                acc_s_cast: T.FragmentBuffer([block_M, block_N], dtype),
                scores_max: T.FragmentBuffer([block_M], accum_dtype),
                scores_max_prev: T.FragmentBuffer([block_M], accum_dtype),
                scores_scale: T.FragmentBuffer([block_M], accum_dtype),
                scores_sum: T.FragmentBuffer([block_M], accum_dtype),
                logsum: T.FragmentBuffer([block_M], accum_dtype)):
        T.copy(scores_max, scores_max_prev)
        T.fill(scores_max, -T.infinity(accum_dtype))
        T.reduce_max(acc_s, scores_max, dim=1, clear=False)
        for i in T.Parallel(block_M):
            scores_scale[i] = T.exp2(scores_max_prev[i] * scale - scores_max[i] * scale)
        for i, j in T.Parallel(block_M, block_N):
            acc_s[i, j] = T.exp2(acc_s[i, j] * scale - scores_max[i] * scale)
        T.reduce_sum(acc_s, scores_sum, dim=1)
        for i in T.Parallel(block_M):
            logsum[i] = logsum[i] * scores_scale[i] + scores_sum[i]
        T.copy(acc_s, acc_s_cast)

    @T.macro
    def Rescale(acc_o: T.FragmentBuffer([block_M, dim], accum_dtype),
                scores_scale: T.FragmentBuffer([block_M], accum_dtype)):
        for i, j in T.Parallel(block_M, dim):
            acc_o[i, j] *= scores_scale[i]

    @T.prim_func
    def flash_attention(
            Q: T.Tensor(shape, dtype),
            K: T.Tensor(shape, dtype),
            V: T.Tensor(shape, dtype),
            Output: T.Tensor(shape, dtype),
    ):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (bx, by, bz):
            Q_shared = T.alloc_shared([block_M, dim], dtype)
            K_shared = T.alloc_shared([block_N, dim], dtype)
            V_shared = T.alloc_shared([block_N, dim], dtype)
            O_shared = T.alloc_shared([block_M, dim], dtype)
            acc_s = T.alloc_fragment([block_M, block_N], accum_dtype)
            acc_s_cast = T.alloc_fragment([block_M, block_N], dtype)
            acc_o = T.alloc_fragment([block_M, dim], accum_dtype)
            scores_max = T.alloc_fragment([block_M], accum_dtype)
            scores_max_prev = T.alloc_fragment([block_M], accum_dtype)
            scores_scale = T.alloc_fragment([block_M], accum_dtype)
            scores_sum = T.alloc_fragment([block_M], accum_dtype)
            logsum = T.alloc_fragment([block_M], accum_dtype)

            T.copy(Q[bz, bx * block_M:(bx + 1) * block_M, by, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(logsum, 0)
            T.fill(scores_max, -T.infinity(accum_dtype))

            loop_range = (
                T.min(T.ceildiv(seq_len, block_N), T.ceildiv((bx + 1) * block_M, block_N))
                if is_causal else T.ceildiv(seq_len, block_N))

            for k in T.Pipelined(loop_range, num_stages=num_stages):
                MMA0(K, Q_shared, K_shared, acc_s, k, bx, by, bz)
                Softmax(acc_s, acc_s_cast, scores_max, scores_max_prev, scores_scale, scores_sum, logsum)
                Rescale(acc_o, scores_scale)
                MMA1(V, V_shared, acc_s_cast, acc_o, k, by, bz)
            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] /= logsum[i]
            T.copy(acc_o, O_shared)
            T.copy(O_shared, Output[bz, bx * block_M:(bx + 1) * block_M, by, :])

    def ref(q: Any, k: Any, v: Any) -> Any:
        import torch

        scores = torch.einsum("bqhd,bkhd->bhqk", q.float(), k.float()) / dim ** 0.5
        if is_causal:
            mask = torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool))
            scores = scores.masked_fill(~mask, float("-inf"))
        return torch.einsum("bhqk,bkhd->bqhd", torch.softmax(scores, dim=-1), v.float()).to(q.dtype)

    qkv = tuple(shape)
    return CorpusKernel("flash_attention", flash_attention, ref,
                        [Arg("Q", "in", qkv, dtype), Arg("K", "in", qkv, dtype), Arg("V", "in", qkv, dtype),
                         Arg("Output", "out", qkv, dtype)],
                        atol=2e-2, rtol=2e-2, tags=frozenset({"gemm", "attention", "macro"}))


# ---------------------------------------------------------------------------------------------- CPU forms
def cpu_gemm(M: int = 128, N: int = 128, K: int = 128, block_M: int = 32, block_N: int = 32, block_K: int = 32,
             dtype: str = "float32", accum_dtype: str = "float32") -> CorpusKernel:
    """The reference CPU-test GEMM: ``alloc_local`` tiles, ``T.grid`` loops, ``is_cpu=True``."""

    @T.prim_func
    def cpu_gemm(A: T.Buffer((M, K), dtype), B: T.Buffer((K, N), dtype), C: T.Buffer((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), is_cpu=True) as (bx, by):
            A_local = T.alloc_local((block_M, block_K), dtype)
            B_local = T.alloc_local((block_K, block_N), dtype)
            C_local = T.alloc_local((block_M, block_N), accum_dtype)
            for p, w in T.grid(block_M, block_N):
                C_local[p, w] = 0
            for ko in T.serial(K // block_K):
                for i, k in T.grid(block_M, block_K):
                    A_local[i, k] = A[by * block_M + i, ko * block_K + k]
                for k, j in T.grid(block_K, block_N):
                    B_local[k, j] = B[ko * block_K + k, bx * block_N + j]
                for i, j, k in T.grid(block_M, block_N, block_K):
                    C_local[i, j] += A_local[i, k] * B_local[k, j]
            for i, j in T.grid(block_M, block_N):
                C[by * block_M + i, bx * block_N + j] = C_local[i, j]

    return CorpusKernel("cpu_gemm", cpu_gemm, _gemm_ref(False, False, dtype),
                        [Arg("A", "in", (M, K), dtype), Arg("B", "in", (K, N), dtype), Arg("C", "out", (M, N), dtype)],
                        atol=1e-3, rtol=1e-3, tags=frozenset({"gemm", "cpu"}))


def cpu_gemm_tileops(M: int = 128, N: int = 128, K: int = 128, block_M: int = 32, block_N: int = 32,
                     block_K: int = 32, dtype: str = "float32") -> CorpusKernel:
    """The reference CPU GEMM with tile ops on local tiles: ``T.clear``, ``T.copy`` corners, ``T.Parallel``."""

    @T.prim_func
    def cpu_gemm_tileops(A: T.Buffer((M, K), dtype), B: T.Buffer((K, N), dtype), C: T.Buffer((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), is_cpu=True) as (bx, by):
            A_local = T.alloc_local((block_M, block_K), dtype)
            B_local = T.alloc_local((block_K, block_N), dtype)
            C_local = T.alloc_local((block_M, block_N), dtype)
            T.clear(C_local)
            for ko in T.Pipelined(K // block_K, num_stages=0):
                T.copy(A[by * block_M, ko * block_K], A_local)
                for k, j in T.Parallel(block_K, block_N):
                    B_local[k, j] = B[ko * block_K + k, bx * block_N + j]
                for i, j, k in T.grid(block_M, block_N, block_K):
                    C_local[i, j] += A_local[i, k] * B_local[k, j]
            T.copy(C_local, C[by * block_M, bx * block_N])

    return CorpusKernel("cpu_gemm_tileops", cpu_gemm_tileops, _gemm_ref(False, False, dtype),
                        [Arg("A", "in", (M, K), dtype), Arg("B", "in", (K, N), dtype), Arg("C", "out", (M, N), dtype)],
                        atol=1e-3, rtol=1e-3, tags=frozenset({"gemm", "cpu"}))


def cpu_elementwise(M: int = 64, N: int = 64, block: int = 16, dtype: str = "float32") -> CorpusKernel:
    """``C = relu(A) * 2 + B`` on local tiles with ``T.grid`` (CPU form)."""

    @T.prim_func
    def cpu_elementwise(A: T.Buffer((M, N), dtype), B: T.Buffer((M, N), dtype), C: T.Buffer((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), is_cpu=True) as (bx, by):
            tile = T.alloc_local((block, block), dtype)
            for i, j in T.grid(block, block):
                tile[i, j] = T.max(A[by * block + i, bx * block + j], 0) * 2
            for i, j in T.grid(block, block):
                C[by * block + i, bx * block + j] = tile[i, j] + B[by * block + i, bx * block + j]

    def ref(a: Any, b: Any) -> Any:
        return a.clamp(min=0) * 2 + b

    return CorpusKernel("cpu_elementwise", cpu_elementwise, ref,
                        [Arg("A", "in", (M, N), dtype), Arg("B", "in", (M, N), dtype), Arg("C", "out", (M, N), dtype)],
                        tags=frozenset({"elementwise", "cpu"}))


CORPUS: dict[str, Callable[[], CorpusKernel]] = {
    "elementwise_add": elementwise_add,
    "dynamic_add": dynamic_add,
    "gemm_nn": gemm_nn,
    "gemm_nt": gemm_nt,
    "gemm_tn": gemm_tn,
    "gemm_relu": gemm_relu,
    "gemm_fragment_a": gemm_fragment_a,
    "quickstart_lazy": quickstart_lazy,
    "quickstart_eager": quickstart_eager,
    "row_sum": row_sum,
    "row_max": row_max,
    "softmax": softmax,
    "cumsum": cumsum,
    "gemv": gemv,
    "atomic_colsum": atomic_colsum,
    "atomic_scalar": atomic_scalar,
    "flash_attention": flash_attention,
    "cpu_gemm": cpu_gemm,
    "cpu_gemm_tileops": cpu_gemm_tileops,
    "cpu_elementwise": cpu_elementwise,
}
