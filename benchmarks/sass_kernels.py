"""The kernels `sass_compare.py` builds, written once as DSL programs that this project and the reference TileLang
0.1.15 both accept (``@T.prim_func`` builders in the reference's example style; only ``tilelang.language`` is
used, so the same file is imported by either install in its own interpreter).

`KERNELS` maps a name to ``(builder, archs)``; ``builder(arch)`` returns ``(prim_func, pass_configs)``. The
tile configurations are those of the reference's examples: the GEMM heuristics of
``examples/gemm/example_gemm_autotune.py`` (sm_90: 128x256x64, 3 stages, 256 threads; sm_80: 128x256x32, 2
stages, 128 threads), ``gemm_fp8`` (128x128x64, 3 stages; fp16 output here), the tuned flash attention forward
configuration (128x128, 2 stages, 256 threads, fast math), ``deepseek_mla``'s decode defaults (128 heads, 8192
keys, dim 512 + 64, 64x64 blocks, no split), ``online_softmax`` (one 8192-wide fp16 row a block) and
``norm/rms_norm`` (one fp32 row a block); on sm_100a (``--archs sm_100a``) ``flash_attention_sm100``'s
forward (128x128 tiles, tcgen05 MMAs into tensor memory, one warpgroup or three warp roles).
"""

# no `from __future__ import annotations`: the reference's parser evaluates a parameter's annotation with the
# closure variables its body uses, so a shape named only in an annotation would be unknown to it
import tilelang.language as T

HOPPER, AMPERE, BLACKWELL = "sm_90a", "sm_80", "sm_100a"
BOTH = (HOPPER, AMPERE)
FAST_MATH = {"tl.enable_fast_math": True}


def _gemm_config(arch: str) -> tuple[int, int, int, int, int]:
    """(block_M, block_N, block_K, stages, threads) of the reference's heuristic for this architecture."""
    return (128, 256, 64, 3, 256) if arch == HOPPER else (128, 256, 32, 2, 128)


def gemm(arch: str, dtype: str = "float16", out_dtype: str | None = None, size: int = 4096,
         config: tuple[int, int, int, int, int] | None = None):
    """C = A @ B^T (A: M x K, B: N x K) with a shared-memory epilogue and block rasterisation."""
    M = N = K = size
    block_M, block_N, block_K, stages, threads = config or _gemm_config(arch)
    out_dtype = out_dtype or dtype
    accum = "float32"

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_N, block_K), dtype)
            C_f = T.alloc_fragment((block_M, block_N), accum)
            C_s = T.alloc_shared((block_M, block_N), out_dtype)
            T.use_swizzle(panel_size=10)
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=stages):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[bx * block_N, k * block_K], B_s)
                T.gemm(A_s, B_s, C_f, transpose_B=True)
            T.copy(C_f, C_s)
            T.copy(C_s, C[by * block_M, bx * block_N])

    return main, {}


def gemm_fp16(arch: str):
    return gemm(arch, "float16")


def gemm_bf16(arch: str):
    return gemm(arch, "bfloat16")


def gemm_fp8(arch: str):
    return gemm(arch, "float8_e4m3fn", out_dtype="float16", config=(128, 128, 64, 3, 128))


def flash_attention(arch: str, dim: int, causal: bool, batch: int = 8, heads: int = 32, seq: int = 4096,
                    block_M: int = 128, block_N: int = 128, stages: int = 2, threads: int = 256):
    """Flash attention forward, layout (batch, heads, seq, dim), online softmax in base 2."""
    shape = (batch, heads, seq, dim)
    dtype, accum = "float16", "float32"
    scale = (1.0 / dim) ** 0.5 * 1.44269504

    @T.prim_func
    def main(Q: T.Tensor(shape, dtype), K: T.Tensor(shape, dtype), V: T.Tensor(shape, dtype),
             Out: T.Tensor(shape, dtype)):
        with T.Kernel(T.ceildiv(seq, block_M), heads, batch, threads=threads) as (bx, by, bz):
            Q_s = T.alloc_shared((block_M, dim), dtype)
            K_s = T.alloc_shared((block_N, dim), dtype)
            V_s = T.alloc_shared((block_N, dim), dtype)
            O_s = T.alloc_shared((block_M, dim), dtype)
            s = T.alloc_fragment((block_M, block_N), accum)
            p = T.alloc_fragment((block_M, block_N), dtype)
            acc = T.alloc_fragment((block_M, dim), accum)
            m = T.alloc_fragment((block_M,), accum)
            m_prev = T.alloc_fragment((block_M,), accum)
            alpha = T.alloc_fragment((block_M,), accum)
            row_sum = T.alloc_fragment((block_M,), accum)
            denom = T.alloc_fragment((block_M,), accum)

            T.copy(Q[bz, by, bx * block_M:(bx + 1) * block_M, :], Q_s)
            T.fill(acc, 0)
            T.fill(denom, 0)
            T.fill(m, -T.infinity(accum))
            steps = (T.min(T.ceildiv(seq, block_N), T.ceildiv((bx + 1) * block_M, block_N)) if causal
                     else T.ceildiv(seq, block_N))
            for k in T.Pipelined(steps, num_stages=stages):
                T.copy(K[bz, by, k * block_N:(k + 1) * block_N, :], K_s)
                if causal:
                    for i, j in T.Parallel(block_M, block_N):
                        s[i, j] = T.if_then_else(bx * block_M + i >= k * block_N + j, 0, -T.infinity(accum))
                else:
                    T.clear(s)
                T.gemm(Q_s, K_s, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.copy(m, m_prev)
                T.fill(m, -T.infinity(accum))
                T.reduce_max(s, m, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    m[i] = T.max(m[i], m_prev[i])
                for i in T.Parallel(block_M):
                    alpha[i] = T.exp2(m_prev[i] * scale - m[i] * scale)
                for i, j in T.Parallel(block_M, block_N):
                    s[i, j] = T.exp2(s[i, j] * scale - m[i] * scale)
                T.reduce_sum(s, row_sum, dim=1)
                for i in T.Parallel(block_M):
                    denom[i] = denom[i] * alpha[i] + row_sum[i]
                T.copy(s, p)
                for i, j in T.Parallel(block_M, dim):
                    acc[i, j] *= alpha[i]
                T.copy(V[bz, by, k * block_N:(k + 1) * block_N, :], V_s)
                T.gemm(p, V_s, acc, policy=T.GemmWarpPolicy.FullRow)
            for i, j in T.Parallel(block_M, dim):
                acc[i, j] /= denom[i]
            T.copy(acc, O_s)
            T.copy(O_s, Out[bz, by, bx * block_M:(bx + 1) * block_M, :])

    return main, dict(FAST_MATH)


def flash_attention_tmem(arch: str, dim: int, warp_roles: bool, batch: int = 8, heads: int = 32, seq: int = 4096):
    """Blackwell flash attention forward (sm_100a), as the reference's ``flash_attention_sm100`` examples write it:
    S = Q K^T and P V by ``T.tcgen05_gemm`` into tensor memory, awaited through mbarriers; the online softmax on
    fragments copied out of TMEM; P back into TMEM for the second MMA (A from TMEM). `warp_roles`: 256 threads,
    [128, 160) load K and V, one warp of [160, 192) issues the MMAs, the softmax warpgroup [0, 128) keeps the
    running output in TMEM; else one warpgroup (128 threads) does everything in program order."""
    shape = (batch, seq, heads, dim)
    dtype, accum = "bfloat16", "float32"
    scale = (1.0 / dim) ** 0.5 * 1.44269504
    blocks = seq // 128

    @T.prim_func
    def single(Q: T.Tensor(shape, dtype), K: T.Tensor(shape, dtype), V: T.Tensor(shape, dtype),
               Out: T.Tensor(shape, dtype)):
        with T.Kernel(seq // 128, heads, batch, threads=128) as (bx, by, bz):
            Q_s = T.alloc_shared((128, dim), dtype)
            K_s = T.alloc_shared((128, dim), dtype)
            V_s = T.alloc_shared((128, dim), dtype)
            O_s = T.alloc_shared((128, dim), dtype)
            S_t = T.alloc_tmem([128, 128], accum)
            P_t = T.alloc_tmem([128, 128], dtype)
            D_t = T.alloc_tmem([128, dim], accum)
            done = T.alloc_barrier(1)
            s = T.alloc_fragment((128, 128), accum)
            p = T.alloc_fragment((128, 128), dtype)
            d = T.alloc_fragment((128, dim), accum)
            acc = T.alloc_fragment((128, dim), accum)
            m = T.alloc_fragment((128,), accum)
            m_prev = T.alloc_fragment((128,), accum)
            alpha = T.alloc_fragment((128,), accum)
            row_sum = T.alloc_fragment((128,), accum)
            denom = T.alloc_fragment((128,), accum)
            T.copy(Q[bz, bx * 128:(bx + 1) * 128, by, :], Q_s)
            T.fill(acc, 0)
            T.fill(denom, 0)
            T.fill(m, -T.infinity(accum))
            for k in T.serial(blocks):
                T.copy(K[bz, k * 128:(k + 1) * 128, by, :], K_s)
                T.tcgen05_gemm(Q_s, K_s, S_t, transpose_B=True, mbar=done, clear_accum=True)
                T.mbarrier_wait_parity(done, 0)
                T.copy(S_t, s)
                T.copy(m, m_prev)
                T.reduce_max(s, m, dim=1, clear=False)
                for i in T.Parallel(128):
                    alpha[i] = T.exp2(m_prev[i] * scale - m[i] * scale)
                for i, j in T.Parallel(128, 128):
                    s[i, j] = T.exp2(s[i, j] * scale - m[i] * scale)
                T.reduce_sum(s, row_sum, dim=1)
                for i in T.Parallel(128):
                    denom[i] = denom[i] * alpha[i] + row_sum[i]
                T.copy(s, p)
                T.copy(p, P_t)
                T.copy(V[bz, k * 128:(k + 1) * 128, by, :], V_s)
                T.tcgen05_gemm(P_t, V_s, D_t, mbar=done, clear_accum=True)
                T.mbarrier_wait_parity(done, 1)
                T.copy(D_t, d)
                for i, j in T.Parallel(128, dim):
                    acc[i, j] = acc[i, j] * alpha[i] + d[i, j]
            for i, j in T.Parallel(128, dim):
                acc[i, j] /= denom[i]
            T.copy(acc, O_s)
            T.copy(O_s, Out[bz, bx * 128:(bx + 1) * 128, by, :])

    @T.prim_func
    def roles(Q: T.Tensor(shape, dtype), K: T.Tensor(shape, dtype), V: T.Tensor(shape, dtype),
              Out: T.Tensor(shape, dtype)):
        with T.Kernel(seq // 128, heads, batch, threads=256) as (bx, by, bz):
            Q_s = T.alloc_shared((128, dim), dtype)
            K_s = T.alloc_shared((128, dim), dtype)
            V_s = T.alloc_shared((128, dim), dtype)
            O_s = T.alloc_shared((128, dim), dtype)
            S_t = T.alloc_tmem([128, 128], accum)
            P_t = T.alloc_tmem([128, 128], dtype)
            O_t = T.alloc_tmem([128, dim], accum)
            loaded = T.alloc_barrier(32)
            scored = T.alloc_barrier(1)
            softmaxed = T.alloc_barrier(128)
            accumulated = T.alloc_barrier(1)
            s = T.alloc_fragment((128, 128), accum)
            p = T.alloc_fragment((128, 128), dtype)
            o = T.alloc_fragment((128, dim), accum)
            m = T.alloc_fragment((128,), accum)
            m_prev = T.alloc_fragment((128,), accum)
            alpha = T.alloc_fragment((128,), accum)
            row_sum = T.alloc_fragment((128,), accum)
            denom = T.alloc_fragment((128,), accum)
            tx = T.get_thread_binding()
            if tx < 128:
                T.fill(o, 0)
                T.fill(denom, 0)
                T.fill(m, -T.infinity(accum))
                T.copy(o, O_t)
            for k in T.serial(blocks):
                if 128 <= tx and tx < 160:
                    if k > 0:
                        T.mbarrier_wait_parity(accumulated, (k - 1) % 2)
                    if k == 0:
                        T.copy(Q[bz, bx * 128:(bx + 1) * 128, by, :], Q_s)
                    T.copy(K[bz, k * 128:(k + 1) * 128, by, :], K_s)
                    T.copy(V[bz, k * 128:(k + 1) * 128, by, :], V_s)
                    T.mbarrier_arrive(loaded)
                elif 160 <= tx and tx < 192:
                    T.mbarrier_wait_parity(loaded, k % 2)
                    T.tcgen05_gemm(Q_s, K_s, S_t, transpose_B=True, mbar=scored, clear_accum=True)
                    T.mbarrier_wait_parity(softmaxed, k % 2)
                    T.tcgen05_gemm(P_t, V_s, O_t, mbar=accumulated, clear_accum=False)
                elif tx < 128:
                    T.mbarrier_wait_parity(scored, k % 2)
                    if k > 0:
                        T.mbarrier_wait_parity(accumulated, (k - 1) % 2)
                    T.copy(S_t, s)
                    T.copy(O_t, o)
                    T.copy(m, m_prev)
                    T.reduce_max(s, m, dim=1, clear=False)
                    for i in T.Parallel(128):
                        alpha[i] = T.exp2(m_prev[i] * scale - m[i] * scale)
                    for i, j in T.Parallel(128, 128):
                        s[i, j] = T.exp2(s[i, j] * scale - m[i] * scale)
                    T.reduce_sum(s, row_sum, dim=1)
                    for i in T.Parallel(128):
                        denom[i] = denom[i] * alpha[i] + row_sum[i]
                    for i, j in T.Parallel(128, dim):
                        o[i, j] *= alpha[i]
                    T.copy(s, p)
                    T.copy(p, P_t)
                    T.copy(o, O_t)
                    T.mbarrier_arrive(softmaxed)
            if tx < 128:
                T.mbarrier_wait_parity(accumulated, (blocks - 1) % 2)
                T.copy(O_t, o)
                for i, j in T.Parallel(128, dim):
                    o[i, j] /= denom[i]
                T.copy(o, O_s)
                T.copy(O_s, Out[bz, bx * 128:(bx + 1) * 128, by, :])

    return (roles if warp_roles else single), dict(FAST_MATH)


def mla_decode(arch: str, batch: int = 1, heads: int = 128, seq_kv: int = 8192, dim: int = 512, pe_dim: int = 64,
               block_N: int = 64, block_H: int = 64):
    """DeepSeek MLA decode (one latent KV head shared by all query heads, no split over the keys)."""
    dtype, accum = "float16", "float32"
    scale = (dim + pe_dim) ** -0.5 * 1.44269504

    @T.prim_func
    def main(Q: T.Tensor((batch, heads, dim), dtype), Q_pe: T.Tensor((batch, heads, pe_dim), dtype),
             KV: T.Tensor((batch, seq_kv, 1, dim), dtype), K_pe: T.Tensor((batch, seq_kv, 1, pe_dim), dtype),
             Out: T.Tensor((batch, heads, dim), dtype)):
        with T.Kernel(heads // block_H, batch, threads=256) as (hid, bid):
            Q_s = T.alloc_shared((block_H, dim), dtype)
            Qpe_s = T.alloc_shared((block_H, pe_dim), dtype)
            KV_s = T.alloc_shared((block_N, dim), dtype)
            Kpe_s = T.alloc_shared((block_N, pe_dim), dtype)
            S_s = T.alloc_shared((block_H, block_N), dtype)
            O_s = T.alloc_shared((block_H, dim), dtype)
            s = T.alloc_fragment((block_H, block_N), accum)
            acc = T.alloc_fragment((block_H, dim), accum)
            m = T.alloc_fragment((block_H,), accum)
            m_prev = T.alloc_fragment((block_H,), accum)
            alpha = T.alloc_fragment((block_H,), accum)
            row_sum = T.alloc_fragment((block_H,), accum)
            denom = T.alloc_fragment((block_H,), accum)

            T.copy(Q[bid, hid * block_H:(hid + 1) * block_H, :], Q_s)
            T.copy(Q_pe[bid, hid * block_H:(hid + 1) * block_H, :], Qpe_s)
            T.fill(acc, 0)
            T.fill(denom, 0)
            T.fill(m, -T.infinity(accum))
            for k in T.Pipelined(T.ceildiv(seq_kv, block_N), num_stages=2):
                T.copy(KV[bid, k * block_N:(k + 1) * block_N, 0, :], KV_s)
                T.copy(K_pe[bid, k * block_N:(k + 1) * block_N, 0, :], Kpe_s)
                T.gemm(Q_s, KV_s, s, transpose_B=True, policy=T.GemmWarpPolicy.FullCol, clear_accum=True)
                T.gemm(Qpe_s, Kpe_s, s, transpose_B=True, policy=T.GemmWarpPolicy.FullCol)
                T.copy(m, m_prev)
                T.fill(m, -T.infinity(accum))
                T.reduce_max(s, m, dim=1, clear=False)
                for i in T.Parallel(block_H):
                    m[i] = T.max(m[i], m_prev[i])
                for i in T.Parallel(block_H):
                    alpha[i] = T.exp2(m_prev[i] * scale - m[i] * scale)
                for i, j in T.Parallel(block_H, block_N):
                    s[i, j] = T.exp2(s[i, j] * scale - m[i] * scale)
                T.reduce_sum(s, row_sum, dim=1)
                T.copy(s, S_s)
                for i in T.Parallel(block_H):
                    denom[i] = denom[i] * alpha[i] + row_sum[i]
                for i, j in T.Parallel(block_H, dim):
                    acc[i, j] *= alpha[i]
                T.gemm(S_s, KV_s, acc, policy=T.GemmWarpPolicy.FullCol)
            for i, j in T.Parallel(block_H, dim):
                acc[i, j] /= denom[i]
            T.copy(acc, O_s)
            T.copy(O_s, Out[bid, hid * block_H:(hid + 1) * block_H, :])

    return main, dict(FAST_MATH)


def softmax(arch: str, M: int = 8192, N: int = 8192, block_N: int = 8192):
    """Row softmax of an fp16 matrix, one row a block: a log-sum-exp pass, then the normalised exponentials."""
    dtype, accum = "float16", "float32"
    log2e = 1.44269504

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(M, threads=128) as row:
            x = T.alloc_fragment((1, block_N), dtype)
            y = T.alloc_fragment((1, block_N), dtype)
            e = T.alloc_fragment((1, block_N), accum)
            mx = T.alloc_fragment((1,), dtype)
            total = T.alloc_fragment((1,), accum)
            lse = T.alloc_fragment((1,), accum)
            T.fill(lse, -T.infinity(accum))
            for n in T.Pipelined(T.ceildiv(N, block_N)):
                T.copy(X[row, n * block_N], x)
                T.reduce_max(x, mx, dim=1, clear=True)
                for i, j in T.Parallel(1, block_N):
                    e[i, j] = T.exp2(x[i, j] * log2e - mx[i] * log2e)
                T.reduce_sum(e, total, dim=1, clear=True)
                for i in T.Parallel(1):
                    lse[i] = mx[i] * log2e + T.log2(T.exp2(lse[i] - mx[i] * log2e) + total[i])
            for n in T.Pipelined(T.ceildiv(N, block_N)):
                T.copy(X[row, n * block_N], x)
                for i, j in T.Parallel(1, block_N):
                    y[i, j] = T.exp2(x[i, j] * log2e - lse[i])
                T.copy(y, Y[row, n * block_N])

    return main, {}


def rms_norm(arch: str, M: int = 8192, N: int = 8192):
    """RMSNorm of an fp32 matrix without weight, one row a block (TMA lowering off, as in the reference's
    example)."""
    dtype = "float32"

    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype)):
        with T.Kernel(M, threads=128) as row:
            a = T.alloc_fragment((1, N), dtype)
            sq = T.alloc_fragment((1, N), dtype)
            inv = T.alloc_fragment((1,), dtype)
            T.copy(A[row:row + 1, :], a)
            for i, j in T.Parallel(1, N):
                sq[i, j] = a[i, j] * a[i, j]
            T.reduce_sum(sq, inv, dim=1)
            for i in T.Parallel(1):
                inv[i] = T.rsqrt(inv[i] / N + 1e-12)
            for i, j in T.Parallel(1, N):
                a[i, j] *= inv[i]
            T.copy(a, B[row:row + 1, :])

    return main, {"tl.disable_tma_lower": True}


KERNELS = {
    "gemm_fp16": (gemm_fp16, BOTH),
    "gemm_bf16": (gemm_bf16, BOTH),
    "gemm_fp8_e4m3": (gemm_fp8, (HOPPER,)),
    "fa_fwd_d64": (lambda arch: flash_attention(arch, 64, False), BOTH),
    "fa_fwd_d64_causal": (lambda arch: flash_attention(arch, 64, True), BOTH),
    "fa_fwd_d128": (lambda arch: flash_attention(arch, 128, False), BOTH),
    "fa_fwd_d128_causal": (lambda arch: flash_attention(arch, 128, True), BOTH),
    "mla_decode": (mla_decode, BOTH),
    "softmax": (softmax, BOTH),
    "rms_norm": (rms_norm, BOTH),
    "fa_fwd_tmem_d64": (lambda arch: flash_attention_tmem(arch, 64, False), (BLACKWELL,)),
    "fa_fwd_tmem_ws_d64": (lambda arch: flash_attention_tmem(arch, 64, True), (BLACKWELL,)),
    "fa_fwd_tmem_ws_d128": (lambda arch: flash_attention_tmem(arch, 128, True), (BLACKWELL,)),
}
