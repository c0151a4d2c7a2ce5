"""CUDA dialect kernels executed by the SIMT emulator (`cuda_emulator`, `cuda_emulator_dialect`) and compared with
torch / numpy: mbarrier phases between warpgroups, TMA loads and stores (plain and 128-byte swizzled), explicit
loads and stores, cp.async, ``T.shuffle_elect``, cluster ranks and the Philox generator; and the failures the
emulator must catch (a wait on a phase nobody completes, a TMA box no expect_tx announced)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from cuda_emulator import EmulationError, emulate
from cuda_emulator_dialect import philox4x32_10

import tilelang
import tilelang.language as T
from tilelang.errors import LoweringError
from tilelang.layout import make_full_bank_swizzled_layout


def _lower(func, arch: str = "sm_90a"):
    return tilelang.lower(func, target={"kind": "cuda", "arch": arch})


# ------------------------------------------------------------------------------------------------ mbarriers
def _ping_pong(M: int, rounds: int, consumer_parity_flip: int = 0):
    """Warpgroup 1 writes a stage of shared memory and arrives on `full`; warpgroup 0 waits, adds it into its
    registers and arrives on `empty`, over `rounds` rounds through two stages."""

    @T.prim_func
    def k(A: T.Tensor((rounds, M), "float32"), Out: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=256):
            S = T.alloc_shared((2, M), "float32", scope="shared")
            acc = T.alloc_local((1,), "float32")
            full = T.alloc_barrier([128, 128])
            empty = T.alloc_barrier([128, 128])
            tx = T.get_thread_binding()
            acc[0] = 0.0
            for r in T.serial(rounds):
                with T.ws(1):
                    T.mbarrier_wait_parity(empty[r % 2], ((r // 2) % 2) ^ 1)
                    S[r % 2, tx - 128] = A[r, tx - 128]
                    T.mbarrier_arrive(full[r % 2])
                with T.ws(0):
                    T.mbarrier_wait_parity(full[r % 2], ((r // 2) % 2) ^ consumer_parity_flip)
                    acc[0] = acc[0] + S[r % 2, tx]
                    T.mbarrier_arrive(empty[r % 2])
            with T.ws(0):
                Out[tx] = acc[0]
    return k


def test_mbarrier_phases_hand_stages_between_warpgroups():
    a = torch.randn(6, 128)
    out = torch.zeros(128)
    stats = emulate(_lower(_ping_pong(128, 6), "sm_80"), a, out)
    torch.testing.assert_close(out, a.sum(0))
    assert stats["mbarrier_phases"] == 12 and stats["mbarrier_waits"] == 12


def test_waiting_on_the_wrong_parity_is_a_deadlock():
    with pytest.raises(EmulationError, match="deadlock"):
        emulate(_lower(_ping_pong(128, 2, consumer_parity_flip=1), "sm_80"), torch.randn(2, 128), torch.zeros(128))


def test_arrivals_beyond_the_count_are_caught():
    @T.prim_func
    def k(Out: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            bar = T.alloc_barrier([64])
            T.mbarrier_arrive(bar[0])
            Out[T.get_thread_binding()] = 1.0

    with pytest.raises(EmulationError, match="overrun into the next phase"):
        emulate(_lower(k, "sm_80"), torch.zeros(128))


# ------------------------------------------------------------------------------------------------ TMA
def _tma_round_trip(rows: int, cols: int, swizzled: bool):
    @T.prim_func
    def k(A: T.Tensor((2 * rows, cols), "float16"), B: T.Tensor((2 * rows, cols), "float16")):
        with T.Kernel(2, threads=128) as bx:
            S = T.alloc_shared((rows, cols), "float16")
            bar = T.alloc_barrier([128])
            if swizzled:
                T.annotate_layout({S: make_full_bank_swizzled_layout(S)})
            T.tma_copy(A[bx * rows:(bx + 1) * rows, 0:cols], S, barrier=bar[0])
            T.mbarrier_arrive(bar[0])
            T.mbarrier_wait_parity(bar[0], 0)
            T.tma_copy(S, B[bx * rows:(bx + 1) * rows, 0:cols])
            T.tma_store_arrive()
            T.tma_store_wait(0)
    return k


@pytest.mark.parametrize("swizzled", [False, True])
def test_tma_load_and_store_round_trip(swizzled):
    a = torch.randn(128, 64, dtype=torch.float16)
    b = torch.zeros_like(a)
    art = _lower(_tma_round_trip(64, 64, swizzled))
    stats = emulate(art, a, b)
    assert torch.equal(a, b)
    assert stats["tma"] == 2 and stats["tma_store"] == 2
    swizzle = 3 if swizzled else 0
    assert art.metadata["tma_maps"][f"tl_tmap_A_b64x64_s{swizzle}"]["swizzle"] == swizzle


def test_tma_load_is_read_through_generic_loads():
    @T.prim_func
    def k(A: T.Tensor((64, 64), "float32"), Out: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128):
            S = T.alloc_shared((64, 64), "float32")
            bar = T.alloc_barrier([1])
            if T.get_thread_binding() == 0:
                T.tma_copy(A, S, barrier=bar[0])
                T.mbarrier_arrive(bar[0])
            T.mbarrier_wait_parity(bar[0], 0)
            for i, j in T.Parallel(64, 64):
                Out[i, j] = S[i, j] * 2.0

    a = torch.randn(64, 64)
    out = torch.zeros(64, 64)
    emulate(_lower(k), a, out)
    torch.testing.assert_close(out, a * 2)


def test_tma_bytes_nobody_expects_are_caught():
    art = _lower(_tma_round_trip(64, 64, False))

    def no_expect(emu, args):
        return None

    with pytest.raises(EmulationError, match="missing or short mbarrier.expect_tx"):
        emulate(art, torch.zeros(128, 64, dtype=torch.float16), torch.zeros(128, 64, dtype=torch.float16),
                patch={"tl_mbarrier_expect_tx": no_expect})


# ------------------------------------------------------------------------------------------ loads, stores, cp.async
def test_explicit_vector_loads_and_stores():
    @T.prim_func
    def k(A: T.Tensor((1024,), "float32"), B: T.Tensor((1024,), "float32")):
        with T.Kernel(1, threads=256):
            S = T.alloc_shared((1024,), "float32", scope="shared")
            tx = T.get_thread_binding()
            T.sts128(S[tx * 4:tx * 4 + 4], T.ldg128(A[tx * 4:tx * 4 + 4]))
            T.sync_threads()
            T.stg128(B[tx * 4:tx * 4 + 4], T.lds128(S[1020 - tx * 4:1024 - tx * 4]), pred=tx < 200)

    a = torch.randn(1024)
    b = torch.zeros(1024)
    emulate(_lower(k, "sm_80"), a, b)
    expect = torch.zeros(1024)
    for t in range(200):
        expect[t * 4:t * 4 + 4] = a[1020 - t * 4:1024 - t * 4]
    torch.testing.assert_close(b, expect)


def test_ptx_cp_async_copies_and_waits():
    @T.prim_func
    def k(A: T.Tensor((512,), "float16"), B: T.Tensor((512,), "float16")):
        with T.Kernel(1, threads=64):
            S = T.alloc_shared((512,), "float16")
            tx = T.get_thread_binding()
            T.ptx_cp_async(T.access_ptr(S[tx * 8], "w", 8), T.access_ptr(A[tx * 8], "r", 8), 8)
            T.ptx_commit_group()
            T.ptx_wait_group(0)
            T.sync_threads()
            for i in T.serial(8):
                B[tx * 8 + i] = S[(tx * 8 + i + 8) % 512]

    a = torch.randn(512, dtype=torch.float16)
    b = torch.zeros(512, dtype=torch.float16)
    emulate(_lower(k, "sm_80"), a, b)
    assert torch.equal(b, torch.roll(a, -8))


# ------------------------------------------------------------------------------------------------ warps, clusters
def test_shuffle_elect_picks_one_thread_per_group():
    @T.prim_func
    def k(Out: T.Tensor((256,), "int32")):
        with T.Kernel(1, threads=256):
            tx = T.get_thread_binding()
            Out[tx] = 0
            if T.shuffle_elect(64):
                Out[tx] = 1

    out = torch.zeros(256, dtype=torch.int32)
    emulate(_lower(k), out)
    assert out.nonzero().flatten().tolist() == [0, 64, 128, 192]


def test_cluster_ranks_follow_the_cluster_shape():
    @T.prim_func
    def k(Out: T.Tensor((4, 2), "int32")):
        with T.ClusterKernel(4, 2, cluster_dims=(2, 2), threads=32) as (bx, by):
            T.cluster_sync()
            if T.get_thread_binding() == 0:
                Out[bx, by] = T.block_rank_in_cluster()

    out = torch.full((4, 2), -1, dtype=torch.int32)
    emulate(_lower(k, "sm_90"), out)
    assert out.tolist() == [[0, 2], [1, 3], [0, 2], [1, 3]]


# ------------------------------------------------------------------------------------------------ random numbers
@pytest.mark.parametrize("ctr,key,expect", [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
])
def test_philox_model_matches_the_random123_answers(ctr, key, expect):
    out = philox4x32_10(np.array([ctr], np.uint32), np.array([key], np.uint32))
    assert tuple(int(x) for x in out[0]) == expect


def test_rng_streams_are_philox_words_per_thread():
    @T.prim_func
    def k(A: T.Tensor((64, 6), "uint32"), U: T.Tensor((64,), "float32")):
        with T.Kernel(2, threads=32) as bx:
            tx = T.get_thread_binding()
            T.rng_init(1234)
            for i in T.serial(6):
                A[bx * 32 + tx, i] = T.rng_rand()
            U[bx * 32 + tx] = T.rng_rand_float()

    a = torch.zeros(64, 6, dtype=torch.int64).to(torch.int32)
    u = torch.zeros(64)
    emulate(_lower(k, "sm_80"), a, u)
    words = a.numpy().view(np.uint32)
    for seq in (0, 5, 63):  # subsequence = the thread's global index; counters 0, 1, ... under key 1234
        ctr = np.array([[0, 0, seq, 0], [1, 0, seq, 0]], np.uint32)
        expect = philox4x32_10(ctr, np.array([[1234, 0]] * 2, np.uint32)).reshape(-1)[:6]
        assert words[seq].tolist() == expect.tolist()
    assert (u > 0).all() and (u <= 1).all() and len(set(u.tolist())) == 64


# ------------------------------------------------------------------------------------------------ tcgen05 / TMEM
def test_tcgen05_gemm_accumulates_in_tensor_memory():
    """TMA stages, tcgen05.mma (SS form, UMMA descriptors over 128-byte swizzled tiles, K-major A and N-major B)
    into a TMEM accumulator, tcgen05.commit arrivals on the stage barriers, tcgen05.ld back out."""
    from dialect_kernels import tcgen05_gemm

    torch.manual_seed(0)
    a = torch.randn(128, 256, dtype=torch.float16)
    b = torch.randn(256, 256, dtype=torch.float16)
    c = torch.zeros(128, 256, dtype=torch.float16)
    stats = emulate(_lower(tcgen05_gemm(128, 256, 256), "sm_100a"), a, b, c)
    torch.testing.assert_close(c.float(), a.float() @ b.float(), rtol=1e-2, atol=5e-2)
    assert stats["tcgen05_mma"] == 2 * 4 * 4 and stats["tmem_alloc"] == 2


# ------------------------------------------------------------------------------------------------ T.wgmma_gemm
def _sliced_wgmma(M: int, N: int, K: int, num_k_tiles: int):
    k_tile = K // num_k_tiles

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"), D: T.Tensor((M, N), "float16")):
        with T.Kernel(1, threads=128):
            A_shared = T.alloc_shared((M, K), "float16")
            B_shared = T.alloc_shared((N, K), "float16")
            C_local = T.alloc_fragment((M, N), "float32")
            T.copy(A, A_shared)
            T.copy(B, B_shared)
            T.clear(C_local)
            for j in T.serial(num_k_tiles):
                T.wgmma_gemm(A_shared[:, j * k_tile:(j + 1) * k_tile], B_shared[:, j * k_tile:(j + 1) * k_tile],
                             C_local, transpose_B=True)
            T.wait_wgmma(0)
            T.copy(C_local, D)
    return main


@pytest.mark.parametrize("M,N,K,num_k_tiles", [(64, 64, 64, 4), (128, 64, 64, 2), (64, 128, 128, 4)])
def test_wgmma_gemm_batches_stay_in_flight_until_wait_wgmma(M, N, K, num_k_tiles):
    """Each T.wgmma_gemm commits its batch without waiting (the emulator tracks the batches in flight and would
    catch a write to what they read); T.wait_wgmma(0) retires them all before C is read."""
    art = _lower(_sliced_wgmma(M, N, K, num_k_tiles))
    src = art.kernel_source[art.kernel_source.index('extern "C" __global__'):]
    assert "tl_wgmma_wait()" not in src and src.count("tl_warpgroup_wait_n(0)") == 1
    assert "tl_wgmma_fence_acc" in src.split("tl_warpgroup_wait_n(0)")[1]
    torch.manual_seed(0)
    a, b = torch.randn(M, K, dtype=torch.float16), torch.randn(N, K, dtype=torch.float16)
    d = torch.zeros(M, N, dtype=torch.float16)
    stats = emulate(art, a, b, d)
    torch.testing.assert_close(d.float(), a.float() @ b.float().T, rtol=1e-2, atol=5e-2)
    assert stats["wgmma"] == (M // 64) * num_k_tiles * (K // num_k_tiles // 16)


# ------------------------------------------------------------------------------------ TMA into column blocks
def _column_block_loads(M: int, N: int, K: int, k_tile: int, wgmma: bool = True):
    """A and B arrive in `k_tile`-wide column slices of 256-wide tiles (one barrier each, as the reference's
    warp-specialised FlashMLA loads KV), each slice's wgmma waiting for its own; the scaled result goes through
    a second fragment (`P`, written element for element from the accumulator) to D."""
    tiles = K // k_tile

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"), D: T.Tensor((M, N), "float16")):
        with T.Kernel(1, threads=128):
            A_s = T.alloc_shared((M, K), "float16")
            B_s = T.alloc_shared((N, K), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            P = T.alloc_fragment((M, N), "float16")
            ready = T.alloc_barrier(arrive_count=[128] * tiles)
            for j in T.unroll(tiles):
                T.tma_copy(A[0:M, j * k_tile:(j + 1) * k_tile], A_s[:, j * k_tile:(j + 1) * k_tile],
                           barrier=ready[j])
                T.tma_copy(B[0:N, j * k_tile:(j + 1) * k_tile], B_s[:, j * k_tile:(j + 1) * k_tile],
                           barrier=ready[j])
                T.barrier_arrive(ready[j])
            for j in T.unroll(tiles):
                T.barrier_wait(ready[j], 0)
                if wgmma:
                    T.wgmma_gemm(A_s[:, j * k_tile:(j + 1) * k_tile], B_s[:, j * k_tile:(j + 1) * k_tile], acc,
                                 transpose_B=True, clear_accum=(j == 0))
                else:
                    T.copy(A_s[0, j * k_tile], D[0, j * k_tile])  # a tile no wgmma descriptor reads
            if wgmma:
                T.wait_wgmma(0)
            for i, n in T.Parallel(M, N):
                P[i, n] = acc[i, n] * 0.5
            T.copy(P, D)
    return main


def test_tma_fills_column_blocks_of_a_wide_wgmma_operand():
    """A column slice of a 256-wide tile is strided row-major, but one contiguous run of the swizzled layout wgmma
    reads: each slice is one 64-column box in the tile's 128-byte swizzle (the emulator checks the boxes land
    where the descriptors read them), and the scaled copy of the accumulator stays in registers."""
    M, N, K, k_tile = 64, 64, 256, 64
    art = _lower(_column_block_loads(M, N, K, k_tile))
    src = art.kernel_source
    assert src.count("tl_tma_copy_load_2d(") == 2 * (K // k_tile) and "_b64x64_s3" in src
    assert "P_acc" in src  # the follower fragment: per-thread registers in the accumulator's layout
    torch.manual_seed(0)
    a, b = torch.randn(M, K, dtype=torch.float16), torch.randn(N, K, dtype=torch.float16)
    d = torch.zeros(M, N, dtype=torch.float16)
    emulate(art, a, b, d)
    torch.testing.assert_close(d.float(), 0.5 * (a.float() @ b.float().T), rtol=1e-2, atol=5e-2)


def test_tma_into_a_column_slice_of_a_linear_tile_is_refused():
    with pytest.raises(LoweringError, match="column slice of shared tile A_s"):
        _lower(_column_block_loads(64, 64, 256, 64, wgmma=False))
