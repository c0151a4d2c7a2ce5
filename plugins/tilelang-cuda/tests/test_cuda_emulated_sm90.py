"""sm_90a kernels executed without a GPU: the SIMT emulator (`cuda_emulator`) runs wgmma (SS and RS, operands
read through matrix descriptors from hardware-swizzled tiles), TMA copies with their mbarriers, and compares
the results with torch.

The wgmma models are first checked against per-lane statements of the PTX fragment layouts and against the
independent descriptor model of `test_wgmma_ss`; then broken kernels (a wrong descriptor, missing fences, a
write into an in-flight wgmma's operand, a missing TMA wait) are shown to fail.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
import torch
from cuda_emulator import (
    Descriptor,
    EmulationError,
    canonical_addresses,
    emulate,
    encode_descriptor,
    wgmma_a_layout,
    wgmma_acc_layout,
)

import tilelang
from tilelang.testing import corpus

SM90A = {"kind": "cuda", "arch": "sm_90a"}
# the paths these tests were written for, outside warp specialisation (emulated in test_warp_specialize.py)
WS_OFF = {"tl.disable_warp_specialized": True}
OLD_PATH = {"tl.cuda.enable_wgmma_ss": False, **WS_OFF}
TMA = {"tl.cuda.enable_tma": True, **WS_OFF}


@functools.cache
def _lowered(name: str, configs: tuple, kw: tuple):
    ck = getattr(corpus, name)(**dict(kw))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ck, tilelang.lower(ck.prim_func(), target=SM90A, pass_configs=dict(configs) or None)


def run(name: str, configs: dict | None = None, patch=None, check_proxy: bool = True, **kw):
    """Emulate corpus kernel `name` lowered for sm_90a; returns ``(outputs, references, kernel, stats, source)``
    (the kernel part of the CUDA source, after the intrinsics header)."""
    ck, art = _lowered(name, tuple(sorted((configs or {}).items())), tuple(sorted(kw.items())))
    ins = ck.make_inputs(0)
    outs = ck.make_outputs()
    stats = emulate(art, *ck.call_args(ins, outs), patch=patch, check_proxy=check_proxy)
    ref = ck.ref(*ins)
    src = art.kernel_source
    return outs, (ref if isinstance(ref, tuple) else (ref,)), ck, stats, src[src.index('extern "C" __global__'):]


def assert_matches(outs, refs, ck) -> None:
    for o, r in zip(outs, refs):
        assert r.float().abs().max() > 0.1  # a non-trivial result
        torch.testing.assert_close(o.float(), r.float(), atol=ck.atol, rtol=ck.rtol)


def mismatches(outs, refs, ck) -> int:
    return sum(int((~torch.isclose(o.float(), r.float(), atol=ck.atol, rtol=ck.rtol)).sum())
               for o, r in zip(outs, refs))


# ------------------------------------------------------------------------------------------- fragment models
def test_accumulator_fragment_layout():
    # per lane, from the m16n8 C layout repeated over N/8 column blocks, warp w on rows 16w..16w+15
    n = 24
    rows, cols = wgmma_acc_layout(n)
    for t in range(128):
        w, lane = t // 32, t % 32
        for i in range(n // 2):
            assert rows[t, i] == 16 * w + lane // 4 + (8 if i % 4 >= 2 else 0)
            assert cols[t, i] == 8 * (i // 4) + 2 * (lane % 4) + i % 2
    assert len({(r, c) for r, c in zip(rows.flat, cols.flat)}) == 64 * n


def test_register_a_fragment_layout():
    rows, cols = wgmma_a_layout()
    for t in range(128):
        w, g, tg = t // 32, (t % 32) // 4, t % 4
        for i in range(8):
            assert rows[t, i] == 16 * w + g + (8 if i in (2, 3, 6, 7) else 0)
            assert cols[t, i] == 2 * tg + i % 2 + (8 if i >= 4 else 0)


def test_descriptor_round_trip():
    d = encode_descriptor(np.array([0x12340]), 8192, 1024, 1)
    assert Descriptor.decode(int(d[0])) == Descriptor(0x12340, 8192, 1024, 0, 1)
    assert int(d[0]) >> 62 == 1 and (int(d[0]) >> 49) & 7 == 0


@pytest.mark.parametrize("mode", [1, 2, 3])
@pytest.mark.parametrize("k_major", [True, False])
def test_canonical_layouts_match_the_independent_model(mode, k_major):
    from test_wgmma_ss import _ptx_address

    for start, lbo, sbo in ((0, 16, 1024), (2048, 8192, 1024), (1024 + 32, 4096, 512)):
        desc = Descriptor(start, lbo, sbo, 0, mode)
        got = canonical_addresses(desc, k_major, 64)
        want = [[_ptx_address((start, lbo, sbo, mode), k_major, mn, k) for k in range(16)] for mn in range(64)]
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shape", [(64, 64), (128, 32), (64, 16), (16, 192)])
def test_canonical_layouts_read_the_swizzled_tiles(shape):
    from tilelang_cuda.wgmma_layout import tile_layout

    rows, cols = shape
    tile = tile_layout([rows, cols], 2)
    for ks in range(cols // 16):  # K-major: rows = MN
        start, lbo, sbo, mode = tile.descriptor(True, 0, ks)
        got = canonical_addresses(Descriptor(start, lbo, sbo, 0, mode), True, min(rows, 64))
        want = [[tile.offset(r, ks * 16 + k) * 2 for k in range(16)] for r in range(min(rows, 64))]
        np.testing.assert_array_equal(got, want)


# ------------------------------------------------------------------------------------------- kernels vs torch
GEMMS = {
    "128x128x64": dict(M=128, N=128, K=128, block_M=128, block_N=128, block_K=64, threads=256, num_stages=2),
    "128x256x64_3stages": dict(M=256, N=256, K=256, block_M=128, block_N=256, block_K=64, threads=256,
                               num_stages=3),
    "128x256x64_3stages_k512": dict(M=128, N=256, K=512, block_M=128, block_N=256, block_K=64, threads=256,
                                    num_stages=3),
    "128x256x128": dict(M=128, N=256, K=256, block_M=128, block_N=256, block_K=128, threads=256, num_stages=2),
    "bf16": dict(M=128, N=256, K=128, block_M=128, block_N=256, block_K=64, threads=256, num_stages=3,
                 dtype="bfloat16"),
    "trans_a": dict(M=128, N=128, K=128, block_M=128, block_N=128, block_K=64, threads=256, num_stages=2,
                    trans_A=True),
    "trans_b": dict(M=64, N=128, K=192, block_M=64, block_N=128, block_K=64, threads=128, num_stages=3,
                    trans_B=True),
    "w64_swizzle64": dict(M=128, N=64, K=128, block_M=128, block_N=64, block_K=32, threads=128, num_stages=2),
    "w32_swizzle32_tt": dict(M=128, N=128, K=64, block_M=128, block_N=128, block_K=16, threads=128, num_stages=2,
                             trans_A=True, trans_B=True),
    "ragged_edges": dict(M=100, N=120, K=72, block_M=64, block_N=64, block_K=32, threads=128, num_stages=2),
}


@pytest.mark.parametrize("case", list(GEMMS))
def test_ss_wgmma_gemm(case):
    outs, refs, ck, stats, src = run("gemm", **GEMMS[case])
    assert "tl_wgmma_ss_m64n" in src and "b_core" not in src
    assert stats["wgmma"] > 0
    assert_matches(outs, refs, ck)


@pytest.mark.parametrize("case,modes", [("128x128x64", {1}), ("w64_swizzle64", {1, 2}),
                                        ("w32_swizzle32_tt", {1, 3})])
def test_swizzle_modes_are_exercised(case, modes):
    seen = set()

    def record(emu, a):
        seen.add(int(np.asarray(a[3])))
        return emu.call_default("tl_wgmma_desc_sw", a)

    outs, refs, ck, _, _ = run("gemm", patch={"tl_wgmma_desc_sw": record}, **GEMMS[case])
    assert seen == modes
    assert_matches(outs, refs, ck)


def test_fragment_a_gemm_rs_with_a_swizzled_b():
    outs, refs, ck, _, src = run("gemm_fragment_a", M=128, N=128, K=128, block_M=64, block_N=64, block_K=32)
    assert "tl_wgmma_rs_m64n64k16_f16_t1(" in src and "b_core" not in src
    assert_matches(outs, refs, ck)


@pytest.mark.parametrize("stages", [1, 2])
@pytest.mark.parametrize("causal", [True, False])
def test_flash_attention(causal, stages):
    outs, refs, ck, _, src = run("flash_attention", batch=1, heads=1, seq_len=128, dim=64, is_causal=causal,
                                     block_M=64, block_N=64, num_stages=stages)
    assert "tl_wgmma_rs_m64n64k16_f16_t1(" in src and "tl_wgmma_ss_m64n64k16_f16_t00(" in src
    assert "tl_regs_copy16(" in src  # P (the softmax probabilities) enters the RS wgmma from registers
    assert_matches(outs, refs, ck)


OLD = {
    "gemm_fragment_a": dict(M=128, N=128, K=128, block_M=64, block_N=64, block_K=32),
    "gemm": dict(M=128, N=256, K=128, block_M=128, block_N=256, block_K=64, threads=256, num_stages=3),
}


@pytest.mark.parametrize("name", list(OLD))
def test_old_rs_b_core_path_numerics(name):
    outs, refs, ck, _, src = run(name, OLD_PATH, **OLD[name])
    assert "b_core" in src and "tl_wgmma_m64n" in src and "tl_wgmma_desc_sw" not in src
    assert_matches(outs, refs, ck)


@pytest.mark.parametrize("name", list(OLD))
def test_old_rs_b_core_path_fails_without_its_proxy_fence(name):
    # b_core is written with generic st.shared and read by wgmma through a descriptor (the async proxy): the
    # writers' fence.proxy.async before the barrier is what orders them (this was missing once)
    with pytest.raises(EmulationError, match="proxy"):
        run(name, OLD_PATH, patch={"tl_fence_proxy_async": lambda emu, a: None}, **OLD[name])


TMA_GEMMS = {
    "128x256x64": dict(M=256, N=256, K=256, block_M=128, block_N=256, block_K=64, threads=256, num_stages=3),
    "trans_b": dict(M=64, N=128, K=192, block_M=64, block_N=128, block_K=64, threads=128, num_stages=3,
                    trans_B=True),
    "ragged_edges": dict(M=100, N=120, K=72, block_M=64, block_N=64, block_K=32, threads=128, num_stages=2),
}


@pytest.mark.parametrize("case", list(TMA_GEMMS))
def test_tma_gemm_numerics(case):
    # TMA kernels take the b_core relayout path (test_wgmma_ss)
    outs, refs, ck, stats, _ = run("gemm", TMA, **TMA_GEMMS[case])
    assert stats["tma"] > 0 and stats["wgmma"] > 0
    assert_matches(outs, refs, ck)


# ------------------------------------------------------------------------------------------- broken kernels
BENCH = GEMMS["128x256x64_3stages"]


def _desc_sw(change):
    return {"tl_wgmma_desc_sw": lambda emu, a: emu.call_default("tl_wgmma_desc_sw", change(list(a)))}


def _on(operand: str, change):
    """Apply `change` to the descriptor arguments of one operand: A's are K-major with LBO 16 here."""
    def pick(a):
        is_a = int(np.asarray(a[1])) == 16
        return change(a) if is_a == (operand == "A") else a
    return pick


@pytest.mark.parametrize("operand,field", [("A", "no_swizzle"), ("A", "swizzle_64b")])
def test_a_wrong_swizzle_mode_gives_a_wrong_result(operand, field):
    mode = {"no_swizzle": 0, "swizzle_64b": 2}[field]
    outs, refs, ck, _, _ = run("gemm", patch=_desc_sw(_on(operand, lambda a: [*a[:3], mode])),
                               **GEMMS["128x128x64"])
    assert mismatches(outs, refs, ck) > outs[0].numel() // 2


@pytest.mark.parametrize("operand", ["A", "B"])
def test_a_doubled_sbo_reads_outside_the_stage(operand):
    # twice the 8-row stride walks past the stage's tile into bytes no copy has written (or not yet landed)
    with pytest.raises(EmulationError, match=f"wgmma .*{operand}: reads .*(no thread of the block wrote|in-flight)"):
        run("gemm", WS_OFF, patch=_desc_sw(_on(operand, lambda a: [a[0], a[1], a[2] * 2, a[3]])), **BENCH)


def _no_fence(emu, a):
    return None


def _cp_wait_without_fence(emu, a):
    emu._wait_group(int(a[0]))


def test_dropping_the_proxy_fences_is_caught():
    patch = {"tl_fence_proxy_async": _no_fence, "tl_cp_async_wait_group": _cp_wait_without_fence}
    with pytest.raises(EmulationError, match="fence.proxy.async"):
        run("gemm", WS_OFF, patch=patch, **BENCH)


@pytest.mark.parametrize("kept", ["writer_side", "reader_side"])
def test_either_proxy_fence_suffices(kept):
    patch = {"tl_fence_proxy_async": _no_fence} if kept == "writer_side" else {
        "tl_cp_async_wait_group": _cp_wait_without_fence}
    outs, refs, ck, _, _ = run("gemm", patch=patch, **GEMMS["128x128x64"])
    assert_matches(outs, refs, ck)


def test_a_write_into_an_in_flight_operand_is_caught():
    def commit_then_write(emu, a):
        emu.call_default("tl_wgmma_commit", a)
        op = emu.wg_groups[0][-1][0]
        saved = emu.mask
        emu.mask = emu.tid == 200  # a thread of the other warpgroup stores into B
        try:
            from cuda_emulator import DType, Ptr
            emu.ptr_write(Ptr(op.b.mem, np.int64(int(op.b.addr[0, 0])), DType("uint8", 1)),
                          np.zeros((emu.T, 2), np.uint8), "st.shared")
        finally:
            emu.mask = saved

    with pytest.raises(EmulationError, match="in-flight wgmma"):
        run("gemm", patch={"tl_wgmma_commit": commit_then_write}, **BENCH)


def test_a_deeper_wait_without_moving_the_copies_is_caught():
    # keep one more wgmma batch in flight at every wait: the next stage's copies then overwrite its operands
    def wait(extra):
        return lambda emu, a: emu.call_default("tl_wgmma_wait", [int(np.asarray(a[0])) + extra if a else extra])

    patch = {"tl_wgmma_wait": wait(1), "tl_wgmma_wait_group": wait(1)}
    with pytest.raises(EmulationError, match="in-flight wgmma"):
        run("gemm", patch=patch, **BENCH)


def test_missing_wgmma_fence_is_caught():
    with pytest.raises(EmulationError, match="missing wgmma.fence"):
        run("gemm", patch={"tl_wgmma_fence": _no_fence}, **GEMMS["128x128x64"])


def test_reading_accumulators_before_the_wait_is_caught():
    patch = {"tl_wgmma_wait": _no_fence, "tl_wgmma_wait_group": _no_fence}
    with pytest.raises(EmulationError, match="in-flight wgmma|in flight"):
        run("gemm", patch=patch, **GEMMS["128x128x64"])


def test_missing_tma_wait_is_caught():
    with pytest.raises(EmulationError, match="in-flight|never waited"):
        run("gemm", TMA, patch={"tl_tma_wait": _no_fence}, check_proxy=False, **TMA_GEMMS["trans_b"])


def test_wrong_tma_byte_count_is_caught():
    def load(emu, a):
        emu.call_default("tl_tma_load_2d", [*a[:5], int(np.asarray(a[5])) // 2, *a[6:]])

    with pytest.raises(EmulationError, match="expect_tx"):
        run("gemm", TMA, patch={"tl_tma_load_2d": load}, check_proxy=False, **TMA_GEMMS["trans_b"])


def test_a_second_wait_on_a_tma_phase_deadlocks():
    def twice(emu, a):
        emu.call_default("tl_tma_wait", a)
        emu.call_default("tl_tma_wait", a)

    with pytest.raises(EmulationError, match="deadlock"):
        run("gemm", TMA, patch={"tl_tma_wait": twice}, check_proxy=False, **TMA_GEMMS["trans_b"])


def test_wgmma_waits_of_the_pipelined_gemm():
    # the SS lowering waits with wait_group 0 per K stage, or keeps one batch in flight (wait_group 1)
    calls: list = []

    def tap(name):
        def f(emu, a):
            calls.append((name, [int(np.asarray(x)) for x in a]))
            return emu.call_default(name, a)
        return f

    names = ("tl_wgmma_wait", "tl_wgmma_wait_group", "tl_wgmma_commit")
    outs, refs, ck, _, _ = run("gemm", patch={n: tap(n) for n in names}, **BENCH)
    assert_matches(outs, refs, ck)
    assert calls.count(("tl_wgmma_commit", [])) == 2 * 4  # 2 blocks x 4 K tiles (one call per block)
    # each block ends by retiring everything; any deeper wait keeps at most one batch in flight
    assert calls[-1][0] in ("tl_wgmma_wait", "tl_wgmma_wait_group") and calls[-1][1] in ([], [0])
    assert {tuple(a) for n, a in calls if n != "tl_wgmma_commit"} <= {(), (0,), (1,)}


def test_a_missing_barrier_after_a_deeper_wait_is_caught():
    # a warpgroup's wgmma.wait_group covers only its own wgmmas: the copies that refill the stage the other
    # warpgroup's batch read need a barrier after the wait; dropping it is a race
    state = {"after_wait1": False, "dropped": 0}

    def wait_group(emu, a):
        emu.call_default("tl_wgmma_wait_group", a)
        state["after_wait1"] = int(np.asarray(a[0])) >= 1

    def barrier(emu, a):
        if state["after_wait1"]:
            state["after_wait1"] = False
            state["dropped"] += 1
            return None
        return emu._barrier()

    try:
        run("gemm", patch={"tl_wgmma_wait_group": wait_group, "tvm_storage_sync": barrier}, **BENCH)
    except EmulationError as err:
        assert state["dropped"] and "race" in str(err), err
        return
    assert not state["dropped"], "a barrier was dropped but nothing was caught"
    pytest.skip("the gemm lowering keeps no wgmma batch in flight (no wgmma.wait_group >= 1)")


def test_accumulators_stay_in_flight_until_their_last_batch_retires():
    # wait_group 1 retires the older of two batches; the newer one, accumulating into the same registers, is
    # still in flight: its accumulators stay unreadable
    seen = []

    def commit(emu, a):
        emu.call_default("tl_wgmma_commit", a)
        if len(emu.wg_groups.get(0, [])) == 2:
            emu.call_default("tl_wgmma_wait_group", [1])
            op = emu.wg_groups[0][0][0]
            seen.append(bool((op.acc.inflight[np.arange(128)[:, None], op.acc_idx] == 2).all()))

    outs, refs, ck, _, _ = run("gemm", patch={"tl_wgmma_commit": commit}, **BENCH)
    assert_matches(outs, refs, ck)
    if not seen:
        pytest.skip("the gemm lowering never has two wgmma batches in flight")
    assert all(seen)
