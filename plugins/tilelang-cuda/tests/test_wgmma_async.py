"""sm_90a SS wgmma GEMMs on the cp.async pipeline (``tl.disable_warp_specialized``) keep one wgmma batch in flight
across K stages (``tl.cuda.wgmma_async_depth``).

Per steady iteration: wait cp.async(k) -> barrier -> proxy fence -> wgmma.fence -> wgmmas(k) -> commit ->
``wgmma.wait_group 1`` (retires batch k - 1) -> barrier -> cp.async(k + S - 1) into the version batch k - 1
read -> commit; ``wgmma.wait_group 0`` after the loop. Checked without a GPU by `_Sim` (test_async_pipeline.py),
which keeps a wgmma's shared reads alive until the wait that retires its batch, and by nvcc's PTX.
"""

from __future__ import annotations

import re

import pytest
import tvm
import tvm_ffi
from cuda_helpers import needs_nvcc, wrapped_pass
from test_async_pipeline import _lower as _lower_any
from test_async_pipeline import _Sim
from tvm import tirx

from tilelang.testing import corpus

SERIAL = {"tl.cuda.wgmma_async_depth": 0}  # every batch awaited at once (the previous lowering)
# the cp.async pipeline this module checks; a pipelined GEMM on sm_90a is warp-specialised by default
# (test_warp_specialize.py)
WS_OFF = {"tl.disable_warp_specialized": True}


def _lower(kernel, arch: str = "sm_80", capture: list | None = None, configs: dict | None = None):
    return _lower_any(kernel, arch=arch, capture=capture, configs={**WS_OFF, **(configs or {})})


def _gemm(num_stages: int = 3, k_tiles: int = 8, **kwargs):
    return corpus.gemm(M=256, N=512, K=64 * k_tiles, block_M=128, block_N=256, block_K=64, threads=256,
                       num_stages=num_stages, **kwargs)


def _captured(kernel, configs: dict | None = None):
    captured: list = []
    art = _lower(kernel, arch="sm_90a", capture=captured, configs=configs)
    (mod,) = captured
    (func,) = mod.functions.values()
    return art.kernel_source, func


def _simulate(body) -> _Sim:
    sim = _Sim()
    sim.run(body)
    return sim


def _steady(src: str) -> str:
    start = src.index("for (int k = 0;")
    return src[start:src.index("\n  }\n", start)]


def _order(loop: str) -> list[str]:
    pattern = (r"tl_cp_async16|tl_cp_async_commit|tl_cp_async_wait_group\(\d\)|__syncthreads|tl_fence_proxy_async"
               r"|tl_wgmma_fence\b|tl_wgmma_ss_\w+|tl_wgmma_commit|tl_wgmma_wait_group\(\d\)|tl_wgmma_wait\b")
    out: list[str] = []
    for name in re.findall(pattern, loop):
        name = "wgmma" if name.startswith("tl_wgmma_ss_") else name
        if not out or out[-1] != name:
            out.append(name)
    return out


ASYNC_ORDER = ["tl_cp_async_wait_group(1)", "__syncthreads", "tl_fence_proxy_async", "tl_wgmma_fence", "wgmma",
               "tl_wgmma_commit", "tl_wgmma_wait_group(1)", "__syncthreads", "tl_cp_async16", "tl_cp_async_commit"]


def test_steady_loop_keeps_one_batch_in_flight():
    src, _ = _captured(_gemm())
    loop = _steady(src)
    assert _order(loop) == ASYNC_ORDER
    assert loop.count("__syncthreads()") == 2  # as many barriers per stage as before
    # every batch retired (and the accumulator pinned) before the epilogue's stages and the C store
    after = src[src.index(loop) + len(loop):]
    assert after.index("tl_wgmma_wait_group(0)") < after.index("tl_wgmma_fence_acc(") < after.index("tl_wgmma_fence()")
    assert "tl_wgmma_wait_group(1)" not in after


def test_depth_zero_is_the_serial_lowering():
    src, _ = _captured(_gemm(), SERIAL)
    assert _order(_steady(src)) == [
        "tl_cp_async16", "tl_cp_async_commit", "tl_cp_async_wait_group(2)", "__syncthreads", "tl_fence_proxy_async",
        "tl_wgmma_fence", "wgmma", "tl_wgmma_commit", "tl_wgmma_wait", "__syncthreads"]
    assert not _relaxed(src)


def _relaxed(src: str) -> list[str]:
    """The ``wgmma.wait_group N`` calls of `src` (the intrinsics header only defines them)."""
    return re.findall(r"tl_wgmma_wait_group\(\d\)", src)


@pytest.mark.parametrize("num_stages,k_tiles", [(2, 5), (3, 2), (3, 3), (3, 8), (4, 4), (4, 9)])
@pytest.mark.parametrize("trans", [(False, False), (True, True)], ids=["nn", "tt"])
def test_in_flight_reads_are_never_overwritten(num_stages, k_tiles, trans):
    src, func = _captured(_gemm(num_stages, k_tiles, trans_A=trans[0], trans_B=trans[1]))
    sim = _simulate(func.body)
    assert sim.errors == []
    assert sim.reads > 0 and sim.retired == k_tiles and not sim.wgmma_batches  # all retired at the end
    if k_tiles >= num_stages:  # a steady loop exists
        assert "tl_wgmma_wait_group(1)" in _steady(src)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_one_warpgroup_tiles_keep_a_batch_in_flight(dtype):
    kernel = corpus.gemm(M=128, N=256, K=256, block_M=64, block_N=128, block_K=32, threads=128, num_stages=3,
                         dtype=dtype)
    src, func = _captured(kernel)
    assert _order(_steady(src)) == ASYNC_ORDER
    sim = _simulate(func.body)
    assert sim.errors == [] and sim.retired == 8


def _rewrite_waits(body, old: str, new_args: tuple, inside_loops_only: bool = False):
    """`body` with every ``call_extern(old, ...)`` replaced by ``call_extern(WAIT_GROUP, *new_args)``."""

    def swap(ev):
        call = ev.value
        if (isinstance(call, tvm.ir.Call) and isinstance(call.op, tvm.ir.Op) and call.op.name == "tirx.call_extern"
                and str(call.args[0].value) == old):
            return tirx.Evaluate(tirx.call_extern("void", "tl_wgmma_wait_group", *new_args))
        return ev

    if not inside_loops_only:
        return tvm_ffi.structural_map(body, (tirx.Evaluate, swap))
    return tvm_ffi.structural_map(body, (tirx.For, lambda f: tirx.For(
        f.loop_var, f.min, f.extent, f.kind, tvm_ffi.structural_map(f.body, (tirx.Evaluate, swap)), f.thread_binding,
        f.annotations)))


def _is_call(stmt, name: str) -> bool:
    return (isinstance(stmt, tirx.Evaluate) and isinstance(stmt.value, tvm.ir.Call)
            and isinstance(stmt.value.op, tvm.ir.Op) and stmt.value.op.name == "tirx.call_extern"
            and str(stmt.value.args[0].value) == name)


def _drop_barrier_after_wait(body):
    def drop(seq):
        items = list(seq.seq)
        for i, s in enumerate(items[:-1]):
            if _is_call(s, "tl_wgmma_wait_group") and int(s.value.args[1].value) == 1:
                return tirx.SeqStmt(items[:i + 1] + items[i + 2:])
        return seq

    return tvm_ffi.structural_map(body, (tirx.SeqStmt, drop))


def test_broken_orderings_are_caught():
    _, func = _captured(_gemm(3, 8))
    assert _simulate(func.body).errors == []
    # two batches in flight: the copies of stage k + 2 land in the version batch k - 1 still reads
    deeper = _simulate(_rewrite_waits(func.body, "tl_wgmma_wait_group", (2,), inside_loops_only=True))
    assert any("while an in-flight wgmma reads it" in e for e in deeper.errors)
    # no barrier between the wait and the copies: the other warpgroup's batch k - 1 may still read that version
    unfenced = _simulate(_drop_barrier_after_wait(func.body))
    assert any("without a barrier after its last read" in e for e in unfenced.errors)
    # relaxing the wait without moving the copies behind it (copies at the top of the iteration)
    _, serial = _captured(_gemm(3, 8), SERIAL)
    assert _simulate(serial.body).errors == []
    relaxed = _simulate(_rewrite_waits(serial.body, "tl_wgmma_wait", (1,), inside_loops_only=True))
    assert any("while an in-flight wgmma reads it" in e for e in relaxed.errors)


def test_other_kernels_keep_waiting_at_once():
    kernel = corpus.gemm(M=512, N=512, K=512, block_M=128, block_N=256, block_K=64, threads=256, num_stages=3)
    for arch, configs in (("sm_80", None), ("sm_90a", {"tl.cuda.enable_tma": True}),
                          ("sm_90a", {"tl.cuda.enable_wgmma_ss": False})):
        src = _lower(kernel, arch=arch, configs=configs).kernel_source
        assert not _relaxed(src), (arch, configs)
    # flash attention reads its accumulators inside the loop; a loop that is not pipelined has no stages
    for kernel in (corpus.flash_attention(num_stages=2), _gemm(1, 4)):
        src = _lower(kernel, arch="sm_90a").kernel_source
        assert "tl_wgmma_" in src and not _relaxed(src)


def test_a_bad_depth_is_a_lowering_error():
    from tilelang.errors import LoweringError

    with pytest.raises(LoweringError, match="tl.cuda.wgmma_async_depth"):
        _lower(_gemm(), arch="sm_90a", configs={"tl.cuda.wgmma_async_depth": 3})


def _consumers(kernel) -> list:
    """The pipeline consumers of `kernel` as AsyncCopyPipeline receives them."""
    import tilelang_cuda.passes.async_pipeline as ap

    seen: list = []

    def wrap(mod, inner):
        seen.append(mod)
        return inner(mod)

    with wrapped_pass(ap, "AsyncCopyPipeline", wrap):
        _lower(kernel, arch="sm_90a")
    found: list = []
    for func in seen[0].functions.values():
        tvm_ffi.structural_walk(func.body, [(tirx.AttrStmt, lambda a: found.append(a)
                                             if str(a.attr_key) == ap.CONSUMER else None)])
    return found


def test_only_descriptor_gemms_without_stores_are_deferred():
    from tilelang_cuda.tileops.gemm import deferrable_wgmma

    consumers = _consumers(_gemm(3, 8))
    assert len(consumers) == 3 and all(deferrable_wgmma(c.body) is not None for c in consumers)
    body = consumers[0].body
    acc = deferrable_wgmma(body)
    assert acc.name.startswith("C_local")
    cleared = tirx.SeqStmt([tirx.BufferStore(acc, tirx.const(0, "float32"), [0]), body])
    assert deferrable_wgmma(cleared) is None  # a store while a batch may be in flight
    # the RS + b_core path (a relayout store, register A operands) is never deferred
    rs = _consumers(corpus.gemm_fragment_a())
    assert rs and all(deferrable_wgmma(c.body) is None for c in rs)


@needs_nvcc
@pytest.mark.parametrize("num_stages", [2, 3, 4])
def test_bench_gemm_compiles_without_spills(num_stages):
    from tilelang_cuda.compiler import compile_artifact

    kernel = corpus.gemm(M=4096, N=4096, K=4096, block_M=128, block_N=256, block_K=64, threads=256,
                         num_stages=num_stages)
    binary = compile_artifact(_lower(kernel, arch="sm_90a"))
    assert binary.cubin[:4] == b"\x7fELF"
    assert binary.resources["spill_stores"] == 0 and binary.resources["spill_loads"] == 0
    assert binary.resources["registers"] < 170
    waits = re.findall(r"wgmma\.wait_group\.sync\.aligned (\d+)", binary.ptx)
    assert waits[0] == "1" and waits[1] == "0"  # in the loop, then right after it
    # inside the steady loop (up to its back branch): wgmma, wait 1, then the next stage's copies
    back = re.search(r"@%p\d+ bra\s+(\$L__BB\d+_\d+);", binary.ptx)
    loop = binary.ptx[binary.ptx.index(back.group(1) + ":"):back.start()]
    assert loop.count("bar.sync") == 2
    assert loop.index("wgmma.mma_async") < loop.index("wgmma.wait_group.sync.aligned 1") < loop.index("cp.async.cg")


# ----------------------------------------------------------------------------- SIMT emulator (cuda_emulator.py)
def _emulate(kernel, shapes: tuple, patch: dict | None = None, configs: dict | None = None):
    """Run `kernel` (C = A @ B, fp16) in the SIMT emulator; the result and torch's fp32 reference."""
    torch = pytest.importorskip("torch")
    from cuda_emulator import emulate

    (m, k), (_, n) = shapes
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(m, k, generator=gen).half()
    b = torch.randn(k, n, generator=gen).half()
    c = torch.zeros(m, n).half()
    try:
        emulate(_lower(kernel, arch="sm_90a", configs=configs), a, b, c, patch=patch)
    except NotImplementedError as exc:  # an emulator without wgmma
        pytest.skip(f"emulator: {exc}")
    return c.float(), a.float() @ b.float()


@pytest.mark.parametrize("num_stages,k_tiles", [(2, 4), (3, 5), (4, 6)])
def test_emulated_results_match_torch(num_stages, k_tiles):
    kernel = corpus.gemm(M=128, N=256, K=64 * k_tiles, block_M=128, block_N=256, block_K=64, threads=256,
                         num_stages=num_stages)
    out, ref = _emulate(kernel, ((128, 64 * k_tiles), (64 * k_tiles, 256)))
    assert (out - ref).abs().max().item() < 0.05 * max(1.0, ref.abs().max().item() / 32)


def _deeper(emu, args):  # two batches in flight: stage k + 2 overwrites what batch k - 1 still reads
    return emu.call_default("tl_wgmma_wait_group", [2] if int(args[0]) == 1 else args)


def test_emulator_catches_broken_orderings():
    from cuda_emulator import EmulationError

    kernel = corpus.gemm(M=128, N=256, K=320, block_M=128, block_N=256, block_K=64, threads=256, num_stages=3)
    shapes = ((128, 320), (320, 256))
    with pytest.raises(EmulationError, match="in-flight wgmma"):
        _emulate(kernel, shapes, patch={"tl_wgmma_wait_group": _deeper})
    after_wait = {"now": False}

    def wait(emu, args):
        after_wait["now"] = int(args[0]) == 1
        return emu.call_default("tl_wgmma_wait_group", args)

    def barrier(emu, args):  # the barrier after wgmma.wait_group 1 dropped: the other warpgroup may still read
        if after_wait["now"]:
            after_wait["now"] = False
            return None
        return emu._barrier()

    with pytest.raises(EmulationError, match="race"):
        _emulate(kernel, shapes, patch={"tl_wgmma_wait_group": wait, "tvm_storage_sync": barrier})


def test_copies_into_tiles_without_versions_stay_in_front(monkeypatch):
    # a producer writing a tile that is not multi-buffered could overwrite the in-flight batch's operand
    import tilelang_cuda.passes.async_pipeline as ap

    monkeypatch.setattr(ap, "_multi_buffered", lambda body: ({}, {}))
    src = _lower(_gemm(3, 8), arch="sm_90a").kernel_source
    assert not _relaxed(src) and _order(_steady(src))[0] == "tl_cp_async16"
