"""Software-pipelined flash attention (reference ``example_mha_fwd_bshd``, ``num_stages=2``) on sm_80 / sm_90a.

Core pipelines the K/V loop (K and V copies at stage 0, the rest at stage 1, K_shared / V_shared double
buffered; the accumulator scratch tiles the CUDA lowering declares in the body are declared per slot), and
AsyncCopyPipeline gives each copy its own commit group and waits only for the group a consumer reads: the
``_Sim`` of test_async_pipeline runs one thread of the lowered block under the cp.async rules.
"""

from __future__ import annotations

import re

import pytest
import tvm
import tvm_ffi
from cuda_helpers import needs_nvcc
from test_async_pipeline import _lower as _lower_any
from test_async_pipeline import _Sim
from tvm import tirx

from tilelang.testing import corpus

SEQ, BLOCK = 256, 64
TRIPS = SEQ // BLOCK


def _lower(kernel, arch: str = "sm_80", capture: list | None = None):
    """The cp.async pipeline this module checks (on sm_90a warp specialisation, the default, is switched off:
    its attention is emulated in test_cuda_emulated_sm90.py and test_warp_specialize.py)."""
    return _lower_any(kernel, arch=arch, capture=capture, configs={"tl.disable_warp_specialized": True})


def _attention(is_causal: bool, num_stages: int = 2, seq_len: int = SEQ):
    return corpus.flash_attention(batch=1, heads=2, seq_len=seq_len, dim=64, is_causal=is_causal,
                                  block_M=BLOCK, block_N=BLOCK, num_stages=num_stages, threads=128)


def _captured(arch: str, is_causal: bool, num_stages: int = 2):
    captured: list = []
    art = _lower(_attention(is_causal, num_stages), arch=arch, capture=captured)
    (mod,) = captured
    (func,) = mod.functions.values()
    return art, func


def _simulate(body, bx: int) -> _Sim:
    sim = _Sim({"blockIdx.x": bx})
    sim.run(body)
    return sim


@pytest.mark.parametrize("num_stages", [2, 3])
@pytest.mark.parametrize("is_causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_attention_waits_are_sufficient(arch, is_causal, num_stages):
    art, func = _captured(arch, is_causal, num_stages)
    # pipelined: a consumer leaves the groups of the next num_stages - 1 iterations (K and V each) in flight
    assert f"tl_cp_async_wait_group({2 * (num_stages - 1)})" in art.kernel_source
    for bx in range(SEQ // BLOCK):  # causal: block bx runs min(TRIPS, bx + 1) iterations (a runtime count)
        trips = min(TRIPS, bx + 1) if is_causal else TRIPS
        sim = _simulate(func.body, bx)
        assert sim.errors == [], (bx, sim.errors)
        # Q, then one group for K and one for V per iteration (commits of iterations past a runtime trip count
        # stay outside their guards: empty groups keep the counts static)
        assert len([g for g in sim.groups if g]) == 1 + 2 * trips
        # every K and V version read: sm_80 by ldmatrix, sm_90a by wgmma descriptors (K) and the B staging (V)
        read = {key[0] for key in sim.last_read}
        assert {"K_shared", "V_shared"} <= read and sim.reads >= 2 * trips


def _loosen(ev):
    call = ev.value
    if (isinstance(call, tvm.ir.Call) and isinstance(call.op, tvm.ir.Op) and call.op.name == "tirx.call_extern"
            and str(call.args[0].value) == "tl_cp_async_wait_group"):
        return tirx.Evaluate(tirx.call_extern("void", "tl_cp_async_wait_group", int(call.args[1].value) + 1))
    return ev


def _drop_barriers(ev):
    call = ev.value
    if isinstance(call, tvm.ir.Call) and isinstance(call.op, tvm.ir.Op) and call.op.name == "tirx.tvm_storage_sync":
        return tirx.Evaluate(tirx.const(0, "int32"))
    return ev


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_the_simulation_catches_a_loose_wait_or_a_missing_barrier(arch):
    _, func = _captured(arch, False)
    loose = _simulate(tvm_ffi.structural_map(func.body, (tirx.Evaluate, _loosen)), 0)
    assert any("before its copy group completed" in e for e in loose.errors)
    unfenced = _simulate(tvm_ffi.structural_map(func.body, (tirx.Evaluate, _drop_barriers)), 0)
    assert any("without a barrier" in e for e in unfenced.errors)


def _steady_loop(src: str) -> str:
    """The body of the steady K/V loop: the first loop over ``k`` (its extent is ``bx`` when causal)."""
    m = re.search(r"for \(int k = 0; k < [^{]*\) \{", src)
    assert m is not None, "no K/V loop"
    depth, i = 1, m.end()
    while depth:
        depth += {"{": 1, "}": -1}.get(src[i], 0)
        i += 1
    return src[m.end():i - 1]


def _first(body: str, pattern: str) -> int:
    m = re.search(pattern, body)
    assert m is not None, pattern
    return m.start()


@pytest.mark.parametrize("is_causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_steady_loop_issues_the_next_copies_before_the_mmas(arch, is_causal):
    src = _lower(_attention(is_causal, seq_len=2048), arch=arch).kernel_source
    body = _steady_loop(src)
    mma = r"tl_wgmma_\w+\(|tl_mma_\w+\(" if arch == "sm_90a" else r"tl_mma_\w+\("
    # two commit groups per iteration (K, then V of iteration k + 1), each wait leaves two in flight
    assert body.count("tl_cp_async_commit()") == 2
    assert re.findall(r"tl_cp_async_wait_group\((\d+)\)", body) == ["2", "2"]
    first_copy, first_mma = _first(body, r"tl_cp_async16\("), _first(body, mma)
    assert first_copy < first_mma  # K(k + 1) is issued before QK^T of iteration k
    copies = [m.start() for m in re.finditer(r"tl_cp_async16\(", body)]
    v_copy = next(p for p in copies if p > first_mma)  # V(k + 1): after QK^T ...
    last_mma = [m.start() for m in re.finditer(mma, body)][-1]
    assert v_copy < last_mma  # ... and before PV of iteration k
    # the V copy's own iteration is k + 1: its version index is (k + 1) % 2
    assert "((k + 1) & 1)" in body[v_copy:v_copy + 400]


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_pipelined_attention_compiles_to_cubin(arch):
    from tilelang_cuda.compiler import compile_artifact

    art = _lower(_attention(True, seq_len=2048), arch=arch)
    binary = compile_artifact(art)
    assert binary.cubin[:4] == b"\x7fELF"
    waits = set(re.findall(r"cp\.async\.wait_group (\d+)", binary.ptx))
    assert "2" in waits and waits <= {"0", "1", "2"}
    assert binary.ptx.count("cp.async.commit_group") >= 4  # prologue K, V + the steady loop's two
    res = binary.resources
    print(f"{arch}: registers={res.get('registers')} spill_stores={res.get('spill_stores')} "
          f"spill_loads={res.get('spill_loads')} shared_bytes={art.metadata.get('shared_bytes')}")
    assert res.get("registers") is not None
    # Q + O (8 KiB each) + two versions of K and of V + the fp32 scores scratch: within one SM's shared memory
    assert art.metadata["shared_bytes"] <= 100 * 1024


def _without_invariance_hints(art):
    """`art` with each ``tvm_thread_invariant(cond)`` (a hint on the runtime-trip-count guards) read as
    ``cond``, which the emulator evaluates per thread anyway."""
    from types import SimpleNamespace

    def unwrap(call):
        if isinstance(call.op, tvm.ir.Op) and call.op.name == "tirx.tvm_thread_invariant":
            return call.args[0]
        return call

    device = tvm.IRModule({gv: tvm_ffi.structural_map(f, (tvm.ir.Call, unwrap))
                           for gv, f in art.device_mod.functions.items()})
    return SimpleNamespace(params=art.params, metadata=art.metadata, device_mod=device)


@pytest.mark.parametrize("num_stages", [2, 3])
@pytest.mark.parametrize("is_causal", [False, True], ids=["full", "causal"])
def test_pipelined_attention_matches_the_reference_in_the_simt_emulator(is_causal, num_stages):
    # every thread of every block in lock step (cuda_emulator): cp.async lands only at the wait that retires
    # its group, shared-memory races between barriers raise; sm_80 (the emulator has no wgmma)
    import torch

    emulator = pytest.importorskip("cuda_emulator")
    ck = _attention(is_causal, num_stages, seq_len=192)
    art = _lower(ck, arch="sm_80")
    assert f"tl_cp_async_wait_group({2 * (num_stages - 1)})" in art.kernel_source
    inputs, outs = ck.make_inputs(), ck.make_outputs()
    stats = emulator.emulate(_without_invariance_hints(art), *ck.call_args(inputs, outs))
    assert stats["mma"] > 0
    torch.testing.assert_close(outs[0].float(), ck.ref(*inputs).float(), atol=ck.atol, rtol=ck.rtol)
