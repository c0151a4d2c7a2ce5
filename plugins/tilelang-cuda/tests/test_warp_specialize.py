"""Warp specialisation on sm_90a (`tilelang_cuda.passes.warp_specialize`): a plain pipelined GEMM becomes a TMA
producer warpgroup and consumer warpgroups handing stages through mbarriers, by default.

Checked without a GPU: the rewritten program (roles, thread count, stage versions, barriers); the SIMT emulator
running the lowered kernels (the producer's and the consumers' loops as concurrent warp roles, TMA boxes in the
128-byte swizzle the wgmma descriptors read, the mbarrier phases) against torch; nvcc builds whose PTX issues
``cp.async.bulk.tensor`` and ``setmaxnreg`` and no ``cp.async``; and the kernels the pass must leave alone.
"""

from __future__ import annotations

import pytest
import torch
import tvm
from cuda_emulator import EmulationError, emulate
from cuda_helpers import mla_decode, mla_decode_reference, needs_nvcc

import tilelang
import tilelang.language as T
from tilelang.transform import utils as C

HOPPER = {"kind": "cuda", "arch": "sm_90a"}
TORCH = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float8_e4m3fn": torch.float8_e4m3fn}


def gemm(M, N, K, block_M=128, block_N=256, block_K=64, stages=3, threads=256, dtype="float16", out="float16",
         swizzle=True, trans_b=True):
    """The reference's Hopper GEMM as users write it: C = A @ B^T (or A @ B), rasterised blocks."""
    b_shape = (N, K) if trans_b else (K, N)
    b_tile = (block_N, block_K) if trans_b else (block_K, block_N)

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor(b_shape, dtype), C: T.Tensor((M, N), out)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared(b_tile, dtype)
            C_f = T.alloc_fragment((block_M, block_N), "float32")
            if swizzle:
                T.use_swizzle(panel_size=4)
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=stages):
                T.copy(A[by * block_M, k * block_K], A_s)
                if trans_b:
                    T.copy(B[bx * block_N, k * block_K], B_s)
                else:
                    T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_f, transpose_B=trans_b)
            T.copy(C_f, C[by * block_M, bx * block_N])

    return main


def _specialised(func, target=HOPPER, configs=None):
    """The program after the pass (run in the CUDA pipeline's context)."""
    from tilelang_cuda.passes.warp_specialize import WarpSpecialize

    with tvm.transform.PassContext(config=configs or {}), tvm.target.Target(target):
        return WarpSpecialize(tvm.target.Target(target))(tvm.IRModule({"main": func}))["main"]


def _calls(node, name):
    return C.collect(node, tvm.ir.Call, lambda c: str(getattr(c.op, "name", "")) == name)


# ----------------------------------------------------------------------------------------- the rewrite
def test_pipelined_gemm_becomes_a_producer_and_two_consumer_warpgroups():
    func = _specialised(gemm(512, 512, 512))
    assert C.block_threads(func) == 384
    roles = C.collect(func.body, tvm.tirx.AttrStmt, lambda a: str(a.attr_key) == "tl.cuda.warp_group")
    assert sorted(str(r.node.value) for r in roles) == ["0,1", "2"]
    assert len(_calls(func.body, "tl.tma_copy")) == 2 and len(_calls(func.body, "tl.copy")) == 1
    assert [int(c.args[0].value) for c in _calls(func.body, "tl.set_max_nreg")] == [24, 240]
    barriers = [a for a in C.allocations(func.body) if C.scope_of(a.buffer) == "shared.barrier"]
    assert sorted([int(x) for x in a.annotations["tl.barrier_init"]] for a in barriers) == [[1, 1, 1], [256] * 3]
    versions = {a.buffer.name: [int(d) for d in a.buffer.ty.shape] for a in C.allocations(func.body)
                if a.annotations and "tl.cuda.async_written" in a.annotations}
    assert versions == {"A_s": [3, 128, 64], "B_s": [3, 256, 64]}
    # the rest of the kernel (clear, epilogue) runs on the consumers: one copy left, in their role
    consumer = next(r for r in roles if str(r.node.value) == "0,1")
    assert len(_calls(consumer.body, "tl.copy")) == 1 and len(_calls(consumer.body, "tl.fill")) == 1


@pytest.mark.parametrize("configs, target", [
    ({"tl.disable_warp_specialized": True}, HOPPER),
    ({"tl.disable_tma_lower": True}, HOPPER),
    ({}, {"kind": "cuda", "arch": "sm_90"}),  # no wgmma without the "a" features
    ({}, {"kind": "cuda", "arch": "sm_80"}),
])
def test_switched_off_or_not_hopper_keeps_the_cp_async_pipeline(configs, target):
    func = gemm(512, 512, 512)
    assert _specialised(func, target, configs).same_as(func)


def _scaled_each_step(M=256, N=256, K=256):
    """A loop whose body does more than copy and multiply: the consumers run the rest in order."""

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(N // 128, M // 128, threads=128) as (bx, by):
            A_s = T.alloc_shared((128, 64), "float16")
            B_s = T.alloc_shared((128, 64), "float16")
            C_f = T.alloc_fragment((128, 128), "float32")
            T.clear(C_f)
            for k in T.Pipelined(K // 64, num_stages=2):
                for i, j in T.Parallel(128, 128):
                    C_f[i, j] = C_f[i, j] * 0.5
                T.copy(A[by * 128, k * 64], A_s)
                T.copy(B[bx * 128, k * 64], B_s)
                T.gemm(A_s, B_s, C_f, transpose_B=True)
            T.copy(C_f, C[by * 128, bx * 128])

    return main


def _tile_written_in_loop():
    @T.prim_func
    def main(A: T.Tensor((256, 256), "float16"), B: T.Tensor((256, 256), "float16"),
             C: T.Tensor((256, 256), "float32")):
        with T.Kernel(2, 2, threads=128) as (bx, by):
            A_s = T.alloc_shared((128, 64), "float16")
            B_s = T.alloc_shared((128, 64), "float16")
            C_f = T.alloc_fragment((128, 128), "float32")
            T.clear(C_f)
            for k in T.Pipelined(4, num_stages=2):
                T.copy(A[by * 128, k * 64], A_s)
                T.copy(B[bx * 128, k * 64], B_s)
                for i, j in T.Parallel(128, 64):
                    A_s[i, j] = A_s[i, j] * 2.0
                T.gemm(A_s, B_s, C_f, transpose_B=True)
            T.copy(C_f, C[by * 128, bx * 128])

    return main


def _tile_read_by_threads():
    """A dequantising GEMM's shape: the copied tile is read by the threads (into another tile the GEMM reads)."""

    @T.prim_func
    def main(A: T.Tensor((256, 256), "float16"), B: T.Tensor((256, 256), "int8"),
             C: T.Tensor((256, 256), "float32")):
        with T.Kernel(2, 2, threads=128) as (bx, by):
            A_s = T.alloc_shared((128, 64), "float16")
            B_packed = T.alloc_shared((128, 64), "int8")
            B_s = T.alloc_shared((128, 64), "float16")
            C_f = T.alloc_fragment((128, 128), "float32")
            T.clear(C_f)
            for k in T.Pipelined(4, num_stages=2):
                T.copy(A[by * 128, k * 64], A_s)
                T.copy(B[bx * 128, k * 64], B_packed)
                for i, j in T.Parallel(128, 64):
                    B_s[i, j] = T.cast(B_packed[i, j], "float16")
                T.gemm(A_s, B_s, C_f, transpose_B=True)
            T.copy(C_f, C[by * 128, bx * 128])

    return main


def _box_from_a_register():
    """A block-sparse kernel's shape: the K offset of each copy is a value the threads load into a register."""

    @T.prim_func
    def main(A: T.Tensor((256, 256), "float16"), B: T.Tensor((256, 256), "float16"),
             Blocks: T.Tensor((4,), "int32"), C: T.Tensor((256, 256), "float32")):
        with T.Kernel(2, 2, threads=128) as (bx, by):
            A_s = T.alloc_shared((128, 64), "float16")
            B_s = T.alloc_shared((128, 64), "float16")
            C_f = T.alloc_fragment((128, 128), "float32")
            blk = T.alloc_local((1,), "int32")
            T.clear(C_f)
            for k in T.Pipelined(4, num_stages=2):
                blk[0] = Blocks[k]
                T.copy(A[by * 128, blk[0] * 64], A_s)
                T.copy(B[bx * 128, blk[0] * 64], B_s)
                T.gemm(A_s, B_s, C_f, transpose_B=True)
            T.copy(C_f, C[by * 128, bx * 128])

    return main


def _no_stages():
    return gemm(512, 512, 512, stages=0)


def _unaligned_rows():
    return gemm(512, 520, 260, block_N=128, block_K=64, threads=128)  # K = 260 halves: rows of 520 bytes


@pytest.mark.parametrize("make", [_tile_written_in_loop, _tile_read_by_threads, _box_from_a_register, _no_stages,
                                  _unaligned_rows])
def test_loops_it_does_not_handle_stay_as_written(make):
    func = make()
    assert _specialised(func).same_as(func)


# ----------------------------------------------------------------------------------------- emulated
@pytest.mark.parametrize("M, N, K, dtype, out, config", [
    (512, 512, 512, "float16", "float16", dict()),  # two consumer warpgroups, 3 stages, 8 K steps
    (320, 192, 448, "bfloat16", "bfloat16", dict(block_N=128, stages=2, threads=128)),  # ragged M, N: TMA zeros
    (256, 256, 256, "float8_e4m3fn", "float16", dict(block_N=128, stages=3, threads=128)),
    (256, 512, 192, "float16", "float32", dict(stages=4, swizzle=False, trans_b=False)),  # B MN-major
])
def test_warp_specialised_gemm_emulated(M, N, K, dtype, out, config):
    art = tilelang.lower(gemm(M, N, K, dtype=dtype, out=out, **config), target=HOPPER)
    src = art.kernel_source
    assert "tl_tma_copy_load_2d" in src and "tl_set_max_nreg_dec(24)" in src and "tl_cp_async" not in src
    torch.manual_seed(0)
    a = torch.randn(M, K).to(TORCH[dtype])
    b = torch.randn(N, K).to(TORCH[dtype]) if config.get("trans_b", True) else torch.randn(K, N).to(TORCH[dtype])
    c = torch.zeros(M, N, dtype=getattr(torch, out))
    stats = emulate(art, a, b, c)
    ref = a.float() @ (b.float().T if config.get("trans_b", True) else b.float())
    torch.testing.assert_close(c.float(), ref, atol=0.5, rtol=2e-2)
    blocks = -(-M // 128) * -(-N // config.get("block_N", 256))
    steps = -(-K // 64)
    # every K step: the producer's stage (one TMA copy an operand, more for a swizzled tile wider than 128 bytes)
    # completes `full`, the consumers' release completes `empty`; each role sets its registers once a block
    assert stats["tma"] >= 2 * blocks * steps and stats["mbarrier_phases"] == 2 * blocks * steps
    assert stats["setmaxnreg"] == 2 * blocks


def test_the_rest_of_the_loop_runs_on_the_consumers_in_order():
    art = tilelang.lower(_scaled_each_step(), target=HOPPER)
    assert "tl_tma_copy_load_2d" in art.kernel_source
    torch.manual_seed(0)
    a, b = torch.randn(256, 256).half(), torch.randn(256, 256).half()
    c = torch.zeros(256, 256)
    emulate(art, a, b, c)
    ref = torch.zeros(256, 256)
    for k in range(4):
        ref = ref * 0.5 + a[:, k * 64:(k + 1) * 64].float() @ b[:, k * 64:(k + 1) * 64].float().T
    torch.testing.assert_close(c, ref, atol=1e-2, rtol=1e-3)


@pytest.mark.parametrize("causal", [False, True])
def test_flash_attention_producer_loads_k_and_v(causal):
    """The reference's attention program: K and V by TMA in the producer, the softmax and both GEMMs on the
    consumers (Q, loaded before the loop, stays theirs)."""
    from tilelang.testing import corpus

    ck = corpus.flash_attention(batch=1, heads=2, seq_len=256, dim=64, is_causal=causal, block_M=64, block_N=64,
                                num_stages=2, threads=128)
    art = tilelang.lower(ck.prim_func(), target=HOPPER)
    src = art.kernel_source
    assert src.count("tl_tma_copy_load_4d(") == 2 and "tl_set_max_nreg_inc(240)" in src
    assert art.launch_plan.kernels[0].block[0] == 256
    inputs = ck.make_inputs(seed=0)
    outputs = ck.make_outputs()
    emulate(art, *ck.call_args(inputs, outputs))
    want = ck.ref(*inputs)
    got = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    want = want if isinstance(want, (list, tuple)) else [want]
    for g, w in zip(got, want):
        torch.testing.assert_close(g.float(), w.float(), atol=ck.atol, rtol=ck.rtol)


def test_rows_wider_than_a_tma_box_load_in_swizzled_column_blocks():
    """MLA's 512-wide KV rows: one whole-tile box per stage in the program, eight 64-column boxes of the 128-byte
    swizzle in the kernel; the epilogue tile takes the stage buffers' bytes (the roles are planned in order)."""
    heads, seq, dim, pe_dim = 64, 64, 512, 64
    art = tilelang.lower(mla_decode(heads, seq, dim, pe_dim), target=HOPPER)
    src = art.kernel_source
    assert src.count("tl_tma_copy_load_2d(") == dim // 64 + 1 and "tl_set_max_nreg_dec(24)" in src
    assert "tl_tmap_KV_b32x64_s3" in src  # 32 rows x 64 columns, 128-byte swizzle
    tiles = 2 * (heads * dim + heads * pe_dim + heads * 32 + 2 * (32 * dim + 32 * pe_dim)) + 2 * heads * dim
    assert art.launch_plan.kernels[0].dynamic_shared_bytes <= tiles - 2 * heads * dim  # O_s reuses the stages
    torch.manual_seed(0)
    q, q_pe = torch.randn(heads, dim).half(), torch.randn(heads, pe_dim).half()
    kv, k_pe = torch.randn(seq, dim).half(), torch.randn(seq, pe_dim).half()
    out = torch.zeros(heads, dim).half()
    stats = emulate(art, q, q_pe, kv, k_pe, out)
    assert stats["tma"] == (seq // 32) * (dim // 64 + 1)
    torch.testing.assert_close(out.float(), mla_decode_reference(q, q_pe, kv, k_pe), atol=2e-2, rtol=2e-2)


def test_a_wide_box_into_a_tile_no_wgmma_swizzles_is_refused():
    """A T.tma_copy box wider than 256 elements is valid only split into a swizzled tile's column blocks: into a
    plain row-major tile it is a LoweringError naming the tensor, not a tensor map the driver rejects at launch."""
    from tilelang.errors import LoweringError

    @T.prim_func
    def wide(A: T.Tensor((64, 512), "float16"), B: T.Tensor((64, 512), "float16")):
        with T.Kernel(1, threads=128):
            A_s = T.alloc_shared((64, 512), "float16")
            bar = T.alloc_barrier(1)
            T.tma_copy(A[0:64, 0:512], A_s, barrier=bar[0])
            T.mbarrier_wait_parity(bar[0], 0)
            T.copy(A_s, B)

    with pytest.raises(LoweringError, match=r"TMA box of A is \[64, 512\].*wider than 256"):
        tilelang.lower(wide, target=HOPPER)


def test_a_missing_consumer_barrier_is_a_race_in_the_emulator():
    """The consumers synchronise among themselves with named barriers (the producer is not there): dropping them
    lets a warpgroup's wgmma read a tile the other warpgroup is still writing."""
    from tilelang.testing import corpus

    ck = corpus.flash_attention(batch=1, heads=1, seq_len=128, dim=64, is_causal=False, block_M=128, block_N=64,
                                num_stages=2, threads=256)
    art = tilelang.lower(ck.prim_func(), target=HOPPER)
    assert "tl_named_barrier_sync(" in art.kernel_source
    inputs = ck.make_inputs(seed=0)
    with pytest.raises(EmulationError, match="race|no thread of the block wrote"):
        emulate(art, *ck.call_args(inputs, ck.make_outputs()), patch={"tl_named_barrier_sync": lambda emu, a: None})


def test_a_consumer_that_never_frees_a_stage_deadlocks_in_the_emulator():
    """The emulator runs the roles concurrently and still sees a broken hand-over: consumers that never arrive on
    the `empty` barrier leave the producer waiting once it has filled every stage."""
    art = tilelang.lower(gemm(256, 256, 512), target=HOPPER)
    calls = {"n": 0}

    def skip_empty_arrivals(emu, args):
        calls["n"] += 1
        if int(emu.role) == 1:  # the consumers' role: their arrivals are lost
            return None
        return emu.call_default("tl_mbarrier_arrive", args)

    a, b = torch.randn(256, 512).half(), torch.randn(256, 512).half()
    with pytest.raises(EmulationError, match="deadlock"):
        emulate(art, a, b, torch.zeros(256, 256).half(), patch={"tl_mbarrier_arrive": skip_empty_arrivals})
    assert calls["n"] > 0


# ----------------------------------------------------------------------------------------- built
@needs_nvcc
def test_hopper_build_issues_tma_and_gives_the_producer_registers_away():
    kernel = tilelang.compile(gemm(4096, 4096, 4096), target=HOPPER)
    ptx = kernel.export_ptx()
    assert "cp.async.bulk.tensor.2d.shared::cluster.global" in ptx
    assert "setmaxnreg.dec.sync.aligned.u32 24" in ptx and "setmaxnreg.inc.sync.aligned.u32 240" in ptx
    assert "cp.async.cg" not in ptx and "wgmma.mma_async" in ptx
    assert kernel.artifact.launch_plan.kernels[0].block[0] == 384
