"""Block and warp all-reductions, warp prefix sums and named barriers (``tl::AllReduce`` ...) on the CuTe DSL."""

from __future__ import annotations

import cutlass
import cutlass.cute as cute
from cutlass._mlir import ir as mlir_ir
from cutlass._mlir.dialects import arith
from cutlass.base_dsl.typing import Float32, Int32, Numeric

from tilelang_cuda.contrib.cutedsl._dsl._asm import asm
from tilelang_cuda.contrib.cutedsl._dsl.warp import FULL_MASK, WARP_SIZE
from tilelang_cuda.contrib.cutedsl._dsl.warp import __shfl_down_sync as _shfl_down
from tilelang_cuda.contrib.cutedsl._dsl.warp import __shfl_up_sync as _shfl_up
from tilelang_cuda.contrib.cutedsl._dsl.warp import __shfl_xor_sync as _shfl_xor


def _is_int(value) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    if isinstance(value, Numeric):
        return not type(value).is_float
    return isinstance(getattr(value, "type", None), mlir_ir.IntegerType)


def _int_op(op, a, b):
    dtype = type(a) if isinstance(a, Numeric) else type(b) if isinstance(b, Numeric) else Int32
    return dtype(op(dtype(a).ir_value(), dtype(b).ir_value()))


def min(a, b, c=None):
    """The smaller of `a` and `b` (and `c`): ``min.s32`` for integers, ``min.f32`` for floats."""
    if _is_int(a) and _is_int(b) and (c is None or _is_int(c)):
        out = _int_op(arith.minsi, a, b)
        return out if c is None else _int_op(arith.minsi, out, c)
    out = cute.arch.fmin(Float32(a), Float32(b))
    return out if c is None else cute.arch.fmin(out, Float32(c))


def max(a, b, c=None):
    """The larger of `a` and `b` (and `c`): ``max.s32`` for integers, ``max.f32`` for floats."""
    if _is_int(a) and _is_int(b) and (c is None or _is_int(c)):
        out = _int_op(arith.maxsi, a, b)
        return out if c is None else _int_op(arith.maxsi, out, c)
    out = cute.arch.fmax(Float32(a), Float32(b))
    return out if c is None else cute.arch.fmax(out, Float32(c))


class SumOp:
    """``x + y``; reducers are instantiated, then called: ``SumOp()(x, y)``."""

    @staticmethod
    def __call__(x, y):
        return x + y


class MaxOp:
    """``max(x, y)``."""

    @staticmethod
    def __call__(x, y):
        return max(x, y)


class MinOp:
    """``min(x, y)``."""

    @staticmethod
    def __call__(x, y):
        return min(x, y)


class BitAndOp:
    """``x & y``."""

    @staticmethod
    def __call__(x, y):
        return x & y


class BitOrOp:
    """``x | y``."""

    @staticmethod
    def __call__(x, y):
        return x | y


class BitXorOp:
    """``x ^ y``."""

    @staticmethod
    def __call__(x, y):
        return x ^ y


def bar_sync(barrier_id, number_of_threads):
    """Wait at hardware barrier `barrier_id` until `number_of_threads` threads arrive (``bar.sync``)."""
    cute.arch.barrier(barrier_id=barrier_id, number_of_threads=number_of_threads)


def bar_sync_ptx(barrier_id, number_of_threads):
    """`bar_sync` as an inline ``asm volatile`` statement, which the compiler does not move memory accesses across."""
    if isinstance(barrier_id, int) and isinstance(number_of_threads, int):  # immediates, as nvcc emits them
        asm(None, [], f"bar.sync {barrier_id}, {number_of_threads};", "~{memory}")
    else:
        asm(None, [Int32(barrier_id).ir_value(), Int32(number_of_threads).ir_value()], "bar.sync $0, $1;",
            "r,r,~{memory}")


class NamedBarrier:
    """A named barrier over `all_threads` threads: ``NamedBarrier(n).sync()`` is ``bar.sync barrier_id, n``.

    Barrier 0 is ``__syncthreads``'s, so `barrier_id` defaults to 1 (as ``tl::NamedBarrier`` of the CUDA templates).
    """

    def __init__(self, all_threads: int, barrier_id: int = 1):
        if isinstance(barrier_id, int) and not 0 <= barrier_id < 16:
            raise ValueError(f"NamedBarrier: barrier_id must be in [0, 15], got {barrier_id}")
        if isinstance(all_threads, int) and (all_threads <= 0 or all_threads % WARP_SIZE):
            raise ValueError(f"NamedBarrier: all_threads must be a positive multiple of 32, got {all_threads}")
        self.all_threads = all_threads
        self.barrier_id = barrier_id

    def sync(self):
        """Arrive and wait (``bar.sync``)."""
        bar_sync_ptx(self.barrier_id, self.all_threads)

    def arrive(self):
        """Arrive without waiting (``bar.arrive``)."""
        cute.arch.barrier_arrive(barrier_id=self.barrier_id, number_of_threads=self.all_threads)


def _prefix_sum(val, lane, reverse):
    for offset in (1, 2, 4, 8, 16):
        if reverse:
            other = _shfl_down(FULL_MASK, val, offset)
            val = cutlass.select_(lane < WARP_SIZE - offset, val + other, val)
        else:
            other = _shfl_up(FULL_MASK, val, offset)
            val = cutlass.select_(lane >= offset, val + other, val)
    return val


class CumSum1D:
    """Inclusive prefix sum of up to 32 float32 elements by one warp (`reverse`: from the end)."""

    def __init__(self, threads: int, reverse: bool = False):
        self.threads = threads
        self.reverse = reverse

    @cute.jit
    def run(self, src: cute.Pointer, dst: cute.Pointer, N: cutlass.Constexpr[int]):
        tidx, _, _ = cute.arch.thread_idx()
        src_t = cute.make_tensor(src, cute.make_layout(N))
        dst_t = cute.make_tensor(dst, cute.make_layout(N))
        val = Float32(0.0)
        if tidx < N:
            val = Float32(src_t[tidx])
        val = _prefix_sum(val, tidx % WARP_SIZE, self.reverse)
        if tidx < N:
            dst_t[tidx] = val


class CumMax1D(CumSum1D):
    """Inclusive running maximum of up to 32 float32 elements by one warp."""

    @cute.jit
    def run(self, src: cute.Pointer, dst: cute.Pointer, N: cutlass.Constexpr[int]):
        tidx, _, _ = cute.arch.thread_idx()
        src_t = cute.make_tensor(src, cute.make_layout(N))
        dst_t = cute.make_tensor(dst, cute.make_layout(N))
        val = Float32(float("-inf"))
        if tidx < N:
            val = Float32(src_t[tidx])
        lane = tidx % WARP_SIZE
        for offset in (1, 2, 4, 8, 16):
            if self.reverse:
                other = _shfl_down(FULL_MASK, val, offset)
                val = cutlass.select_(lane < WARP_SIZE - offset, max(val, other), val)
            else:
                other = _shfl_up(FULL_MASK, val, offset)
                val = cutlass.select_(lane >= offset, max(val, other), val)
        if tidx < N:
            dst_t[tidx] = val


class CumSum2D:
    """Prefix sums along `dim` of an ``H x W`` row-major float32 tile: one warp per row (dim 1) or per column
    (dim 0), so the scanned extent is at most 32 and the other at most ``threads // 32``."""

    def __init__(self, threads: int, dim: int, reverse: bool = False):
        if dim not in (0, 1):
            raise ValueError(f"CumSum2D: dim must be 0 or 1, got {dim}")
        self.threads = threads
        self.dim = dim
        self.reverse = reverse

    @cute.jit
    def run(self, src: cute.Pointer, dst: cute.Pointer, H: cutlass.Constexpr[int],
            W: cutlass.Constexpr[int]):
        tidx, _, _ = cute.arch.thread_idx()
        lane = tidx % WARP_SIZE
        warp = tidx // WARP_SIZE
        src_t = cute.make_tensor(src, cute.make_layout(H * W))
        dst_t = cute.make_tensor(dst, cute.make_layout(H * W))
        row = warp if self.dim == 1 else lane
        col = lane if self.dim == 1 else warp
        val = Float32(0.0)
        if row < H:
            if col < W:
                val = Float32(src_t[row * W + col])
        val = self._scan(val, lane)
        if row < H:
            if col < W:
                dst_t[row * W + col] = val

    def _scan(self, val, lane):
        return _prefix_sum(val, lane, self.reverse)


class CumMax2D(CumSum2D):
    """Running maxima along `dim` of an ``H x W`` tile (as `CumSum2D`)."""

    def _scan(self, val, lane):
        for offset in (1, 2, 4, 8, 16):
            if self.reverse:
                other = _shfl_down(FULL_MASK, val, offset)
                val = cutlass.select_(lane < WARP_SIZE - offset, max(val, other), val)
            else:
                other = _shfl_up(FULL_MASK, val, offset)
                val = cutlass.select_(lane >= offset, max(val, other), val)
        return val


class AllReduce:
    """``tl::AllReduce<Reducer, threads, scale, thread_offset, all_threads>``: reduce `x` over groups of `threads`
    threads spaced `scale` apart; ``run`` uses shuffles below 64 threads and `red_buf` (shared memory, one element
    per thread) with ``__syncthreads`` above, ``run_hopper`` named barriers 1 and 2 over `all_threads` instead."""

    def __init__(self, reducer, threads: int, scale: int, thread_offset: int = 0, all_threads: int | None = None):
        if threads < scale or threads % scale or threads & (threads - 1):
            raise ValueError(f"AllReduce: threads ({threads}) must be a power of two multiple of scale ({scale})")
        self.reducer = reducer
        self.threads = threads
        self.scale = scale
        self.thread_offset = thread_offset
        self.all_threads = all_threads if all_threads is not None else threads

    def _step(self, x, red_buf, hopper):
        offset = self.threads // 2
        op = self.reducer()
        if offset >= WARP_SIZE:
            tidx, _, _ = cute.arch.thread_idx()
            slot = tidx - self.thread_offset
            if hopper:
                bar_sync_ptx(1, self.all_threads)
            else:
                cute.arch.sync_threads()
            cute.make_tensor(red_buf + slot, cute.make_layout(1))[0] = x
            if hopper:
                bar_sync_ptx(2, self.all_threads)
            else:
                cute.arch.sync_threads()
            x = op(x, cute.make_tensor(red_buf + (slot ^ offset), cute.make_layout(1))[0])
        else:
            x = op(x, _shfl_xor(FULL_MASK, x, offset))
        if offset == self.scale:
            return x
        return AllReduce(self.reducer, offset, self.scale, self.thread_offset, self.all_threads)._step(
            x, red_buf, hopper)

    def run(self, x, red_buf: cute.Pointer | None = None):
        """The reduction of `x` (every participating thread gets it)."""
        return x if self.threads == self.scale else self._step(x, red_buf, hopper=False)

    def run_hopper(self, x, red_buf: cute.Pointer | None = None):
        """`run` with ``bar.sync 1/2, all_threads`` instead of ``__syncthreads`` (warp-specialized kernels)."""
        return x if self.threads == self.scale else self._step(x, red_buf, hopper=True)

