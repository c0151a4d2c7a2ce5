"""Threadgroup memory planned by liveness (`tilelang_metal.threadgroup_liveness`): tiles whose lifetimes never
overlap share storage, overlapping and loop-carried tiles do not, and a reuse comes after a barrier.

No Apple GPU runs here: the checks read the tiles' offsets in the generated MSL (the typed aliases into
``buf_shmem``) and the order of accesses and barriers in it, and the MSL passes the clang-22 check."""

from __future__ import annotations

import re

import tilelang
import tilelang.language as T
from tilelang_metal.mslcheck import check_msl
from tilelang_metal.threadgroup_memory import MAX_THREADGROUP_BYTES

_ALIAS = re.compile(r"threadgroup (\w+)\* (\w+) = .*&\(buf_shmem\[(\d+)\]\)")
_BARRIER = "threadgroup_barrier(mem_flags::mem_threadgroup)"


def _spans(msl: str, **nbytes: int) -> dict[str, tuple[int, int]]:
    """``{tile: (first byte, end byte)}`` of the aliases of `msl` whose sizes `nbytes` gives."""
    return {name: (int(off), int(off) + nbytes[name]) for _, name, off in _ALIAS.findall(msl) if name in nbytes}


def _disjoint(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[1] <= b[0] or b[1] <= a[0]


def _mha_fwd_p_shared(batch: int = 1, heads: int = 2, seq_len: int = 128, dim: int = 64, block_M: int = 64,
                      block_N: int = 64, num_stages: int = 1, threads: int = 128) -> T.PrimFunc:
    """The reference's ``example_mha_fwd`` (causal) with the fp16 P tile (``acc_s_cast``) in shared memory."""
    scale = (1.0 / dim) ** 0.5 * 1.44269504
    shape = [batch, seq_len, heads, dim]
    dtype, accum_dtype = "float16", "float"

    @T.prim_func
    def mha_fwd(Q: T.Tensor(shape, dtype), K: T.Tensor(shape, dtype), V: T.Tensor(shape, dtype),
                Output: T.Tensor(shape, dtype)):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (bx, by, bz):
            Q_shared = T.alloc_shared([block_M, dim], dtype)
            K_shared = T.alloc_shared([block_N, dim], dtype)
            V_shared = T.alloc_shared([block_N, dim], dtype)
            P_shared = T.alloc_shared([block_M, block_N], dtype)
            O_shared = T.alloc_shared([block_M, dim], dtype)
            acc_s = T.alloc_fragment([block_M, block_N], accum_dtype)
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
            loop_range = T.min(T.ceildiv(seq_len, block_N), T.ceildiv((bx + 1) * block_M, block_N))
            for k in T.Pipelined(loop_range, num_stages=num_stages):
                T.copy(K[bz, k * block_N:(k + 1) * block_N, by, :], K_shared)
                for i, j in T.Parallel(block_M, block_N):
                    acc_s[i, j] = T.if_then_else(bx * block_M + i >= k * block_N + j, 0, -T.infinity(acc_s.dtype))
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
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
                T.copy(acc_s, P_shared)
                for i, j in T.Parallel(block_M, dim):
                    acc_o[i, j] *= scores_scale[i]
                T.copy(V[bz, k * block_N:(k + 1) * block_N, by, :], V_shared)
                T.gemm(P_shared, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)
            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] /= logsum[i]
            T.copy(acc_o, O_shared)
            T.copy(O_shared, Output[bz, bx * block_M:(bx + 1) * block_M, by, :])

    return mha_fwd


def test_flash_attention_with_a_shared_p_tile_fits_by_sharing_k_and_p(clang22):
    """Q, K, V and P (8 KiB each) plus the score staging exceed 32 KiB side by side; K (read by the first GEMM)
    and P (written after the softmax) are never live together, so they share storage."""
    artifact = tilelang.lower(_mha_fwd_p_shared(), target="metal")
    (report,) = artifact.metadata["threadgroup_memory"].values()
    assert report["bytes"] <= MAX_THREADGROUP_BYTES, report
    spans = _spans(artifact.kernel_source, Q_shared=8192, K_shared=8192, V_shared=8192, P_shared=8192)
    assert spans["K_shared"] == spans["P_shared"]
    for a, b in [("Q_shared", "K_shared"), ("Q_shared", "V_shared"), ("V_shared", "P_shared")]:
        assert _disjoint(spans[a], spans[b]), (a, b, spans)
    assert any("K_shared" in name.split("/") and "P_shared" in name.split("/") for name in report["buffers"])
    result = check_msl(artifact.kernel_source, name="mha_fwd_p_shared.metal", clang=clang22)
    assert result.ok, result.diagnostics


def test_tiles_live_at_the_same_time_do_not_share():
    @T.prim_func
    def add(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float32"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128):
            A_shared = T.alloc_shared((64, 64), "float32")
            B_shared = T.alloc_shared((64, 64), "float32")
            T.copy(A, A_shared)
            T.copy(B, B_shared)
            for i, j in T.Parallel(64, 64):
                C[i, j] = A_shared[i, j] + B_shared[63 - i, j]

    msl = tilelang.lower(add, target="metal").kernel_source
    spans = _spans(msl, A_shared=16384, B_shared=16384)
    assert set(spans) == {"A_shared", "B_shared"} and _disjoint(spans["A_shared"], spans["B_shared"]), spans


def _two_tiles_in_a_loop(carried: bool) -> T.PrimFunc:
    """Per iteration: S is read (reversed), then written; T is written, then read (reversed). With `carried`, S
    is read before it is written: the next iteration reads what this one wrote (S is first cleared under ``if k
    == 0``), so S is live across the whole loop; otherwise S is written first."""

    @T.prim_func
    def two_tiles(A: T.Tensor((8, 64), "float32"), B: T.Tensor((8, 64), "float32")):
        with T.Kernel(1, threads=64):
            S_shared = T.alloc_shared((64,), "float32")
            T_shared = T.alloc_shared((64,), "float32")
            acc = T.alloc_fragment((64,), "float32")
            for k in T.serial(8):
                if carried:
                    if k == 0:
                        for i in T.Parallel(64):
                            S_shared[i] = 0
                else:
                    for i in T.Parallel(64):
                        S_shared[i] = A[k, i]
                for i in T.Parallel(64):
                    acc[i] = S_shared[63 - i]
                if carried:
                    for i in T.Parallel(64):
                        S_shared[i] = A[k, i]
                for i in T.Parallel(64):
                    T_shared[i] = A[k, i] * acc[i]
                for i in T.Parallel(64):
                    B[k, i] = T_shared[63 - i]

    return two_tiles


def test_a_loop_carried_tile_keeps_its_storage_across_the_loop():
    msl = tilelang.lower(_two_tiles_in_a_loop(carried=True), target="metal").kernel_source
    spans = _spans(msl, S_shared=256, T_shared=256)
    assert _disjoint(spans["S_shared"], spans["T_shared"]), spans


def test_reused_storage_is_written_after_a_barrier_behind_the_last_read(clang22):
    """S and T share bytes; T's first write waits for every thread's last read of S, and in the next iteration
    S's write waits for the reads of T."""
    msl = tilelang.lower(_two_tiles_in_a_loop(carried=False), target="metal").kernel_source
    spans = _spans(msl, S_shared=256, T_shared=256)
    assert spans["S_shared"] == spans["T_shared"], spans
    body = msl[msl.index("for (int k"):]
    lines = [line.strip() for line in body.splitlines()]

    def first(pattern: str, start: int = 0) -> int:
        return next(n for n in range(start, len(lines)) if re.search(pattern, lines[n]))

    read_s = first(r"= .*S_shared\[")
    write_t = first(r"T_shared\[.*\] =", read_s)
    assert any(_BARRIER in line for line in lines[read_s + 1:write_t]), "\n".join(lines[read_s:write_t + 1])
    read_t = first(r"= .*T_shared\[", write_t)
    write_s = first(r"S_shared\[.*\] =")  # the loop's first statement: reached again after this iteration's reads
    assert write_s < read_s < write_t < read_t
    assert any(_BARRIER in line for line in lines[:write_s]), "\n".join(lines[:write_s + 1])
    result = check_msl(msl, name="two_tiles.metal", clang=clang22)
    assert result.ok, result.diagnostics
