"""Generated CUDA kernels executed without a GPU: the lock-step SIMT emulator (`cuda_emulator`) runs the final
device TIR of sm_80 kernels on small torch inputs and the results are compared with torch.

The PTX helpers are checked first against direct per-lane statements of the PTX ISA fragment layouts, then
the emulator is shown to fail on deliberately broken kernels (so a passing corpus test means something).
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
import torch
from cuda_emulator import EmulationError, emulate, ldmatrix_x4, mma_sync, warp_butterfly

import tilelang
import tilelang.language as T
from tilelang.testing import corpus

SM80 = {"kind": "cuda", "arch": "sm_80"}


@functools.cache
def _lowered(name: str, arch: str, **kw):
    ck = corpus.CORPUS[name](**kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ck, tilelang.lower(ck.prim_func(), target={"kind": "cuda", "arch": arch})


def lowered(name: str, arch: str = "sm_80", **kw):
    """``(CorpusKernel, artifact)`` for corpus kernel `name` at the sizes `kw`, lowered for `arch` (cached)."""
    return _lowered(name, arch, **kw)


def run_corpus(name: str, seed: int = 0, patch=None, arch: str = "sm_80", **kw):
    """Emulate corpus kernel `name`; returns ``(outputs, references, kernel, stats)``."""
    ck, art = lowered(name, arch, **kw)
    ins = ck.make_inputs(seed)
    outs = ck.make_outputs()
    stats = emulate(art, *ck.call_args(ins, outs), patch=patch)
    ref = ck.ref(*ins)
    return outs, (ref if isinstance(ref, tuple) else (ref,)), ck, stats


def assert_matches(outs, refs, ck) -> None:
    for o, r in zip(outs, refs):
        torch.testing.assert_close(o.float(), r.float(), atol=ck.atol, rtol=ck.rtol)


# ------------------------------------------------------------------------------------------- PTX helper models
def _pack16(vals: list[float], dtype) -> np.ndarray:
    """Pairs of 16-bit values -> .b32 registers, first element in the low half."""
    return np.asarray(vals, dtype).view(np.uint32)


def _lane_fragments(kind: str, A: np.ndarray, B: np.ndarray):
    """Per-lane a/b registers written straight from the PTX ISA fragment text (one lane at a time)."""
    a_regs, b_regs = [], []
    for lane in range(32):
        g, t = lane >> 2, lane % 4
        if kind in ("f16", "bf16"):  # m16n8k16
            a = [A[g if (i < 2 or 4 <= i < 6) else g + 8, t * 2 + (i & 1) + (8 if i >= 4 else 0)] for i in range(8)]
            b = [B[t * 2 + (i & 1) + (8 if i >= 2 else 0), g] for i in range(4)]
            if kind == "f16":
                a_regs.append(_pack16(a, np.float16))
                b_regs.append(_pack16(b, np.float16))
            else:  # bf16: the upper half of the fp32 pattern (inputs are exact in bf16)
                a_regs.append((np.asarray(a, np.float32).view(np.uint32) >> 16).astype(np.uint16).view(np.uint32))
                b_regs.append((np.asarray(b, np.float32).view(np.uint32) >> 16).astype(np.uint16).view(np.uint32))
        elif kind == "tf32":  # m16n8k8
            a = [A[g if i in (0, 2) else g + 8, t if i < 2 else t + 4] for i in range(4)]
            b = [B[t if i == 0 else t + 4, g] for i in range(2)]
            a_regs.append(np.asarray(a, np.float32).view(np.uint32))
            b_regs.append(np.asarray(b, np.float32).view(np.uint32))
        else:  # s8 m16n8k32
            a = [A[g if (i < 4 or 8 <= i < 12) else g + 8, t * 4 + (i & 3) + (16 if i >= 8 else 0)] for i in range(16)]
            b = [B[t * 4 + (i & 3) + (16 if i >= 4 else 0), g] for i in range(8)]
            a_regs.append(np.asarray(a, np.int8).view(np.uint32))
            b_regs.append(np.asarray(b, np.int8).view(np.uint32))
    return np.stack(a_regs), np.stack(b_regs)


def _c_fragments(C: np.ndarray) -> np.ndarray:
    """Accumulator registers: c_i at row groupID (+8 for i >= 2), col threadID_in_group * 2 + (i & 1)."""
    return np.stack([[C[(lane >> 2) + (8 if i >= 2 else 0), (lane % 4) * 2 + (i & 1)] for i in range(4)]
                     for lane in range(32)])


@pytest.mark.parametrize("kind", ["f16", "bf16", "tf32", "s8"])
def test_mma_sync_matches_matrix_product(kind):
    rng = np.random.default_rng(1)
    K = {"f16": 16, "bf16": 16, "tf32": 8, "s8": 32}[kind]
    if kind == "s8":
        A, B = rng.integers(-128, 128, (16, K)), rng.integers(-128, 128, (K, 8))
        C = rng.integers(-1000, 1000, (16, 8)).astype(np.int32)
    else:
        A = rng.integers(-8, 8, (16, K)) / 4.0  # exact in every input format
        B = rng.integers(-8, 8, (K, 8)) / 4.0
        C = rng.standard_normal((16, 8)).astype(np.float32)
    a, b = _lane_fragments(kind, A, B)
    d = mma_sync(kind, np.tile(a, (2, 1)), np.tile(b, (2, 1)), np.tile(_c_fragments(C), (2, 1)))  # two warps
    expect = _c_fragments(A @ B + C)
    np.testing.assert_allclose(d[:32], expect, rtol=1e-6)
    np.testing.assert_allclose(d[32:], expect, rtol=1e-6)


def test_mma_tf32_ignores_low_mantissa_bits():
    A = np.full((16, 8), 1.0 + 2.0 ** -12, np.float32)  # not representable in tf32 (10 mantissa bits)
    B = np.eye(8, dtype=np.float32)
    a, b = _lane_fragments("tf32", A, B)
    d = mma_sync("tf32", a, b, np.zeros((32, 4), np.float32))
    assert (d == 1.0).all()


@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_x4_lane_fragments(trans):
    rng = np.random.default_rng(2)
    mats = rng.integers(0, 2**16, (4, 8, 8), dtype=np.uint16)
    rows = np.stack([mats[lane // 8, lane % 8] for lane in range(32)])  # lane 8j+r addresses row r of matrix j
    regs = ldmatrix_x4(rows, trans)
    for lane in range(32):
        for j in range(4):
            r, c = lane // 4, 2 * (lane % 4)
            lo, hi = (mats[j, c, r], mats[j, c + 1, r]) if trans else (mats[j, r, c], mats[j, r, c + 1])
            assert regs[lane, j] == int(lo) | (int(hi) << 16), (lane, j)


def test_ldmatrix_fragments_feed_mma():
    """A (16x16) and B^T (16 n x 16 k) loaded by ldmatrix.x4 with the usual lane addressing give the mma
    operands: two m16n8k16 atoms compute A @ B."""
    rng = np.random.default_rng(3)
    A = (rng.integers(-8, 8, (16, 16)) / 4).astype(np.float16)
    Bt = (rng.integers(-8, 8, (16, 16)) / 4).astype(np.float16)  # [n, k]
    lane = np.arange(32)
    a_rows = A[lane % 16].reshape(32, 2, 8)[np.arange(32), lane // 16]  # row l%16, k-chunk l/16
    b_rows = Bt[(lane // 16) * 8 + lane % 8].reshape(32, 2, 8)[np.arange(32), (lane // 8) % 2]
    a = ldmatrix_x4(a_rows.view(np.uint16), False)
    b = ldmatrix_x4(b_rows.view(np.uint16), False)
    c = np.zeros((32, 4), np.float32)
    d0 = mma_sync("f16", a, b[:, 0:2], c)
    d1 = mma_sync("f16", a, b[:, 2:4], c)
    full = A.astype(np.float32) @ Bt.astype(np.float32).T
    np.testing.assert_allclose(d0, _c_fragments(full[:, :8]), rtol=1e-6)
    np.testing.assert_allclose(d1, _c_fragments(full[:, 8:]), rtol=1e-6)


def test_warp_butterfly_reduces_each_warp():
    v = np.random.default_rng(4).standard_normal(128).astype(np.float32)
    s = warp_butterfly(v, 32, np.add)
    np.testing.assert_allclose(s, np.repeat(v.reshape(4, 32).sum(1), 32), rtol=1e-5)
    m = warp_butterfly(v, 8, np.fmax)  # width 8: groups of 8 lanes
    np.testing.assert_array_equal(m, np.repeat(v.reshape(16, 8).max(1), 8))


# ------------------------------------------------------------------------------------------- corpus kernels
CASES = {
    "elementwise_f32": ("elementwise_add", dict(M=64, N=64)),
    "elementwise_f16": ("elementwise_add", dict(M=64, N=64, dtype="float16")),
    "dynamic_add": ("dynamic_add", dict(M=40)),
    "gemm_f16": ("gemm_nn", dict(M=64, N=64, K=64)),
    "gemm_f16_4blocks": ("gemm_nn", dict(M=128, N=128, K=128)),
    "gemm_bf16": ("gemm_nn", dict(M=64, N=64, K=128, dtype="bfloat16")),
    "gemm_tf32": ("gemm_nn", dict(M=64, N=64, K=64, dtype="float32")),
    "gemm_tn": ("gemm_tn", dict(M=64, N=64, K=64)),
    "gemm_nt": ("gemm_nt", dict(M=64, N=64, K=64)),
    "gemm_relu": ("gemm_relu", dict(M=64, N=64, K=64)),
    "gemm_fragment_a": ("gemm_fragment_a", dict(M=64, N=64, K=64)),
    "quickstart_3_stages": ("quickstart_lazy", dict(M=128, N=128, K=128)),
    "softmax": ("softmax", dict(M=32, N=128)),
    "row_sum": ("row_sum", dict(M=64, N=128)),
    "row_max": ("row_max", dict(M=64, N=128)),
    "cumsum": ("cumsum", dict(M=16, N=128)),
    "gemv": ("gemv", dict(N=128, K=64)),
    "atomic_colsum": ("atomic_colsum", dict(M=64)),
    "atomic_scalar": ("atomic_scalar", dict(M=64)),
    "quickstart_eager": ("quickstart_eager", dict(M=128, N=128, K=64)),
}
TENSOR_CORE = {"gemm_f16", "gemm_f16_4blocks", "gemm_bf16", "gemm_tf32", "gemm_tn", "gemm_nt", "gemm_relu",
               "gemm_fragment_a", "quickstart_3_stages", "quickstart_eager"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_corpus_kernel_emulated(case):
    name, kw = CASES[case]
    outs, refs, ck, stats = run_corpus(name, **kw)
    assert_matches(outs, refs, ck)
    if case in TENSOR_CORE:
        assert stats.get("mma", 0) > 0  # the tensor-core path really ran


def test_vectorized_half8_loads_and_stores():
    """``T.vectorized`` over 8 halves: Ramp-indexed loads/stores and Broadcast constants (uint4-wide)."""

    @T.prim_func
    def axpy(A: T.Tensor((128, 64), "float16"), B: T.Tensor((128, 64), "float16"), C: T.Tensor((128, 64), "float16")):
        with T.Kernel(2, threads=128) as bx:
            tx = T.get_thread_binding(0)
            for i in T.serial(4):
                for v in T.vectorized(8):
                    row, col = bx * 64 + i * 16 + tx // 8, (tx % 8) * 8 + v
                    C[row, col] = A[row, col] * T.float16(2) + B[row, col]

    art = tilelang.lower(axpy, target=SM80)
    assert "T.Ramp" in art.device_mod.script()
    a, b, c = torch.randn(128, 64).half(), torch.randn(128, 64).half(), torch.zeros(128, 64).half()
    emulate(art, a, b, c)
    assert torch.equal(c, a * 2 + b)


# sm_90a kernels without wgmma (wgmma and TMA kernels: test_cuda_emulated_sm90.py)
SM90_CASES = ["elementwise_f32", "softmax", "row_sum", "cumsum", "atomic_colsum"]


@pytest.mark.parametrize("case", SM90_CASES)
def test_corpus_kernel_emulated_sm90a(case):
    name, kw = CASES[case]
    outs, refs, ck, _ = run_corpus(name, arch="sm_90a", **kw)
    assert_matches(outs, refs, ck)


def test_wgmma_gemm_is_modelled():
    outs, refs, ck, stats = run_corpus("gemm_nn", arch="sm_90a", M=64, N=64, K=64)
    assert stats["wgmma"] > 0 and "mma" not in stats
    assert_matches(outs, refs, ck)


FA_SMALL = dict(batch=1, heads=1, seq_len=128, dim=64, block_M=64, block_N=64)


@pytest.mark.slow
@pytest.mark.parametrize("causal", [True, False])
def test_flash_attention_emulated(causal):
    outs, refs, ck, stats = run_corpus("flash_attention", is_causal=causal, **FA_SMALL)
    assert stats["mma"] > 0
    assert_matches(outs, refs, ck)


def _qk_kernel():
    @T.prim_func
    def qk(Q: T.Tensor((64, 64), "float16"), K: T.Tensor((64, 64), "float16"), S: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128):
            Qs = T.alloc_shared((64, 64), "float16")
            Ks = T.alloc_shared((64, 64), "float16")
            s = T.alloc_fragment((64, 64), "float32")
            T.copy(Q, Qs)
            T.copy(K, Ks)
            T.clear(s)
            T.gemm(Qs, Ks, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
            T.copy(s, S)

    return tilelang.lower(qk, target=SM80)


def test_gemm_of_tiles_loaded_one_after_the_other():
    """Regression (found by this emulator): Q and K copied to shared one after the other and read only by
    T.gemm's ldmatrix were placed at the same offset of the merged pool (the planner did not see reads through
    ``address_of``), so K overwrote Q and the kernel computed K @ K^T."""
    q, k, out = torch.randn(64, 64).half(), torch.randn(64, 64).half(), torch.zeros(64, 64)
    emulate(_qk_kernel(), q, k, out)
    torch.testing.assert_close(out, q.float() @ k.float().T, atol=1e-2, rtol=1e-3)


def test_tiles_overlapping_in_the_pool_are_caught():
    """Re-create that bug: K's copies are redirected onto Q's half of the 2-tile pool."""
    art = _qk_kernel()
    assert "buf_dyn_shmem" in art.kernel_source

    def onto_q(emu, args):
        dst = args[0]
        if dst.buf == "Ks":
            assert dst.mem.data.size == 2 * 64 * 64 * 2  # Qs and Ks: two 8 KiB tiles
            dst = type(dst)(dst.mem, np.asarray(dst.off) ^ 8192, dst.elem, dst.buf)
        return emu.call_default("tl_cp_async16", [dst, *args[1:]])

    with pytest.raises(EmulationError, match="overlap in the shared pool"):
        emulate(art, torch.randn(64, 64).half(), torch.randn(64, 64).half(), torch.zeros(64, 64),
                patch={"tl_cp_async16": onto_q})


def test_int8_gemm_emulated():
    """mma.m16n8k32 s8 -> s32 through a T.gemm on int8 tiles: exact."""

    @T.prim_func
    def gemm_s8(A: T.Tensor((64, 64), "int8"), B: T.Tensor((64, 64), "int8"), C: T.Tensor((64, 64), "int32")):
        with T.Kernel(1, 1, threads=128):
            As = T.alloc_shared((64, 64), "int8")
            Bs = T.alloc_shared((64, 64), "int8")
            c = T.alloc_fragment((64, 64), "int32")
            T.clear(c)
            for _ in T.Pipelined(1, num_stages=1):
                T.copy(A, As)
                T.copy(B, Bs)
                T.gemm(As, Bs, c, transpose_B=True)
            T.copy(c, C)

    art = tilelang.lower(gemm_s8, target=SM80)
    assert "tl_mma_s8_s32" in art.kernel_source
    g = torch.Generator().manual_seed(0)
    a = torch.randint(-128, 128, (64, 64), dtype=torch.int8, generator=g)
    b = torch.randint(-128, 128, (64, 64), dtype=torch.int8, generator=g)
    c = torch.zeros(64, 64, dtype=torch.int32)
    assert emulate(art, a, b, c)["mma"] > 0
    assert torch.equal(c, a.int() @ b.int().T)


# ------------------------------------------------------------------------------------------- the emulator fails
def test_swapped_ldmatrix_addresses_give_a_wrong_result():
    def swapped(emu, args):
        regs, smem = args
        off = np.array(np.broadcast_to(smem.off, (emu.T,)))
        off[[0, 1]] = off[[1, 0]]  # lanes 0 and 1 of warp 0 swap their row addresses
        smem = type(smem)(smem.mem, off, smem.elem, smem.buf)
        return emu.call_default("tl_ldmatrix_x4", [regs, smem])

    outs, refs, ck, _ = run_corpus("gemm_nn", patch={"tl_ldmatrix_x4": swapped}, M=64, N=64, K=64)
    bad = ~torch.isclose(outs[0].float(), refs[0].float(), atol=ck.atol, rtol=ck.rtol)
    assert bad.any()
    assert bad.float().mean() < 0.1  # only the rows warp 0's lanes 0/1 address are hit


def test_missing_cp_async_wait_is_caught():
    with pytest.raises(EmulationError, match="in-flight cp.async"):
        run_corpus("gemm_nn", patch={"tl_cp_async_wait_group": lambda emu, a: None}, M=64, N=64, K=64)


def test_too_weak_cp_async_wait_is_caught():
    def weaker(emu, args):
        return emu.call_default("tl_cp_async_wait_group", [int(args[0]) + 1])

    with pytest.raises(EmulationError, match="in-flight cp.async"):
        run_corpus("gemm_nn", patch={"tl_cp_async_wait_group": weaker}, M=64, N=64, K=128)


def test_immediate_cp_async_model_cannot_see_a_missing_wait():
    """Contrast: with copies landing at issue time the same broken kernel looks right -- the deferred model
    is what makes the pipeline's waits checkable."""
    ck, art = lowered("gemm_nn", M=64, N=64, K=64)
    ins, outs = ck.make_inputs(), ck.make_outputs()
    emulate(art, *ck.call_args(ins, outs), patch={"tl_cp_async_wait_group": lambda emu, a: None},
            deferred_cp_async=False)
    assert_matches(outs, (ck.ref(*ins),), ck)


def test_read_of_never_written_shared_memory_is_caught():
    with pytest.raises(EmulationError, match="no thread of the block wrote"):
        run_corpus("elementwise_add", patch={"tl_cp_async16": lambda emu, a: None}, M=64, N=64)


def test_missing_barriers_are_caught_as_races():
    with pytest.raises(EmulationError, match="shared race"):
        run_corpus("softmax", patch={"tvm_storage_sync": lambda emu, a: None}, M=32, N=128)


def _reverse_kernel(mode: str):
    @T.prim_func
    def reverse(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            tx = T.get_thread_binding(0)
            S = T.alloc_shared((128,), "float32")
            S[tx] = A[tx]
            if mode == "sync":
                T.sync_threads()
            elif mode == "divergent":
                if tx < 64:
                    T.sync_threads()
            B[tx] = S[127 - tx]

    return tilelang.lower(reverse, target=SM80)


@pytest.mark.parametrize("mode, drop_barriers, error", [
    ("sync", False, None),
    ("none", False, None),  # InsertBarriers adds the missing __syncthreads itself
    ("none", True, "shared race"),  # ... and without it thread t reads what thread 127 - t wrote
    # T.sync_threads() under `if tx < 64` synchronises those 64 threads only (a named barrier, as in the reference
    # TileLang): threads 0-63 then read what threads 64-127 wrote with nothing ordering it
    ("divergent", False, "shared race"),
])
def test_barriers_and_races(mode, drop_barriers, error):
    a, b = torch.randn(128), torch.zeros(128)
    art = _reverse_kernel(mode)
    patch = {"tvm_storage_sync": lambda emu, args: None} if drop_barriers else None
    if error is None:
        emulate(art, a, b, patch=patch)
        assert torch.equal(b, a.flip(0))
    else:
        with pytest.raises(EmulationError, match=error):
            emulate(art, a, b, patch=patch)


def test_out_of_bounds_access_is_caught():
    _, art = lowered("elementwise_add", M=64, N=64)
    a, b, c = torch.randn(32, 64), torch.randn(64, 64), torch.zeros(64, 64)  # A too small
    with pytest.raises(EmulationError, match="out-of-bounds"):
        emulate(art, a, b, c)


def test_unknown_helper_is_not_implemented():
    _, art = lowered("elementwise_add", M=64, N=64)
    from cuda_emulator import DType, Emulator

    emu = Emulator(next(iter(art.device_mod.functions.values())), {})
    with pytest.raises(NotImplementedError, match="tl_not_a_helper"):
        emu._extern("tl_not_a_helper", [], None, DType("void", 1))


def test_split_and_combine_launches_each_use_their_own_threads():
    """Regression (flash_decoding/example_gqa_decode.py): one function with a split launch and a combine launch
    of another thread count, through a global scratch tensor. The kernel-level passes asked the function for its
    thread index and count and got the last launch's, so the split launch's code read the combine launch's ``tx``
    (unbound there: the build failed, "variables (tx,) are used, but are not passed in as API arguments")."""

    @T.prim_func
    def split_combine(Q: T.Tensor((2, 64, 32), "float16"), K: T.Tensor((2, 64, 32), "float16"),
                      Out: T.Tensor((64,), "float32")):
        partial = T.alloc_global((2, 64), "float32")
        with T.Kernel(2, threads=128) as bz:
            Qs = T.alloc_shared((64, 32), "float16")
            Ks = T.alloc_shared((64, 32), "float16")
            s = T.alloc_fragment((64, 64), "float32")
            row = T.alloc_fragment((64,), "float32")
            T.copy(Q[bz, :, :], Qs)
            T.copy(K[bz, :, :], Ks)
            T.clear(s)
            T.gemm(Qs, Ks, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
            for i, j in T.Parallel(64, 64):
                s[i, j] = T.max(s[i, j], 0)
            T.reduce_sum(s, row, dim=1)
            for i in T.Parallel(64):
                if i < 48:
                    partial[bz, i] = row[i]
        with T.Kernel(1, threads=64):
            for i in T.Parallel(64):
                Out[i] = T.if_then_else(i < 48, partial[0, i] + partial[1, i], 0)

    art = tilelang.lower(split_combine, target=SM80)
    assert [k.block[0] for k in art.launch_plan.kernels] == [128, 64]
    q, k, out = torch.randn(2, 64, 32).half(), torch.randn(2, 64, 32).half(), torch.zeros(64)
    stats = emulate(art, q, k, out)  # the emulator gives the launches the host's workspace for `partial`
    assert stats["mma"] > 0
    ref = torch.relu(q.float() @ k.float().transpose(1, 2)).sum(2).sum(0)
    ref[48:] = 0
    torch.testing.assert_close(out, ref, atol=1e-2, rtol=1e-3)


def test_tile_reusing_the_bytes_of_a_dead_tile_of_another_dtype():
    """Regression (fuzz seed 20261451): a float16 tile placed in the bytes of a dead float32 tile (TVM's
    StorageRewrite) was written with no barrier after the float32 stores: thread 1's ``half`` element 1 is thread
    0's ``float`` element 0, and the barrier analysis took equal indices for one thread's element."""

    @T.prim_func
    def kernel(A: T.Tensor((1, 1), "float32"), B: T.Tensor((1,), "float16"), C: T.Tensor((1, 1), "float32")):
        with T.Kernel(1, 1, threads=32) as (bx, by):
            A_s = T.alloc_shared((1, 2), "float32")
            T.copy(A[by, bx * 2], A_s)
            B_v = T.alloc_shared((2,), "float16")
            T.copy(B[bx * 2], B_v)
            C_f = T.alloc_fragment((1, 2), "float32")
            for i, j in T.Parallel(1, 2):
                C_f[i, j] = T.cast(B_v[j], "float32")
            T.copy(C_f, C[by, bx * 2])

    art = tilelang.lower(kernel, target=SM80)
    a, b, c = torch.randn(1, 1), torch.randn(1).half(), torch.zeros(1, 1)
    emulate(art, a, b, c)
    torch.testing.assert_close(c, b.float()[None, :])
