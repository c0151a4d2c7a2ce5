"""TMA + mbarrier copies on sm_90a (tilelang_cuda.tma, the ``cuda_tma`` copy lowering, AsyncCopyPipeline).

Without a GPU: the lowered program is run for thread 0 under mbarrier rules (a wait on parity P returns once the
barrier's phase of parity P completed; a read of a tile version must follow the completion of the copy that
wrote it; a copy into a version must follow a barrier after its last read; a barrier must not be re-armed before
every wait on it), nvcc's PTX holds the bulk tensor copies, and the host-side tensor-map arguments are checked
against a mocked driver.
"""

from __future__ import annotations

import ctypes
import re
import warnings

import pytest
import tvm
import tvm_ffi
from cuda_helpers import needs_nvcc
from test_async_pipeline import _dynamic_k_gemm, _lower, _readme_gemm, _Sim, _vars
from tvm import tirx

from tilelang.testing import corpus
from tilelang_cuda.tma import ENABLE_KEY as ENABLE

# these tests check tl.copy's own TMA lowering: the warp-specialised rewrite (test_warp_specialize.py) is off
WS_OFF = {"tl.disable_warp_specialized": True}


class _TmaSim(_Sim):
    """`_Sim` with mbarriers: one thread's phase bits, each barrier's completed phases and copies in flight."""

    def __init__(self):
        super().__init__()
        self.phase_bits: dict[int, int] = {}   # the thread's expected parity per slot
        self.completed_phases: dict[int, int] = {}
        self.in_flight: dict[int, list] = {}   # slot -> tile versions whose copy arrives on its current phase
        self.issued = 0
        self.waited = 0

    def evaluate(self, call):
        if not (isinstance(call, tvm.ir.Call) and isinstance(call.op, tvm.ir.Op)
                and call.op.name == "tirx.call_extern"):
            return super().evaluate(call)
        name = str(call.args[0].value)
        if name == "tl_tma_load_2d":
            ptr, slot = call.args[4], self.value(call.args[5])
            buf = ptr.args[1].args[0] if isinstance(ptr.args[1], tvm.ir.Call) else ptr.args[1]
            key = self.version(buf, ptr.args[2], linear=True)
            if self.last_read.get(key, -1) > self.last_sync:
                self.errors.append(f"TMA copy into {key} at {self.time} without a barrier after its last read")
            if self.in_flight.get(slot):
                self.errors.append(f"barrier {slot} re-armed at {self.time} before its phase was awaited")
            self.in_flight.setdefault(slot, []).append(key)
            self.writer[key] = ("tma", slot, self.completed_phases.get(slot, 0))
            self.issued += 1
        elif name == "tl_tma_wait":
            slot = self.value(call.args[1])
            parity = self.phase_bits.get(slot, 0)
            done = self.completed_phases.get(slot, 0)
            if done % 2 == parity:  # the phase of this parity is the current one: it completes when its copy lands
                if not self.in_flight.get(slot):
                    self.errors.append(f"wait on barrier {slot} at {self.time} that no copy arrives on (hang)")
                else:
                    for key in self.in_flight.pop(slot):
                        self.done_at[key] = self.time
                    self.completed_phases[slot] = done + 1
            self.phase_bits[slot] = parity ^ 1
            self.waited += 1
        else:
            return super().evaluate(call)
        return None

    def check_read(self, key):
        w = self.writer.get(key)
        if not isinstance(w, tuple):  # written by cp.async or plain stores (or not at all)
            return super().check_read(key)
        self.reads += 1
        if self.completed_phases.get(w[1], 0) <= w[2]:
            self.errors.append(f"read of {key} at {self.time} before its TMA copy arrived")
        self.last_read[key] = self.time
        return None

    def finish(self):
        for slot, keys in self.in_flight.items():
            if keys:
                self.errors.append(f"the block ends with TMA copies into {keys} in flight on barrier {slot}")


def _dynamic_colsum(num_stages: int):
    """Column sums of a ``(kdim, 128)`` tensor in 32-row tiles: a pipelined TMA copy with a runtime trip count
    (guarded prologue and epilogue) and an elementwise consumer."""
    import tilelang.language as T

    kdim = T.dynamic("kdim")

    @T.prim_func
    def colsum(B: T.Tensor((kdim, 128), "float16"), C: T.Tensor((32, 128), "float32")):
        with T.Kernel(1, threads=128) as _bx:
            B_shared = T.alloc_shared((32, 128), "float16")
            acc = T.alloc_fragment((32, 128), "float32")
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(kdim, 32), num_stages=num_stages):
                T.copy(B[ko * 32, 0], B_shared)
                for i, j in T.Parallel(32, 128):
                    acc[i, j] += B_shared[i, j]
            T.copy(acc, C)

    class _Kernel:
        def prim_func(self):
            return colsum

    return _Kernel()


@pytest.mark.parametrize("num_stages", [2, 3])
def test_dynamic_trip_counts_await_every_bulk_copy(num_stages):
    captured: list = []
    src = _lower_tma(_dynamic_colsum(num_stages), capture=captured).kernel_source
    assert "tl_tma_load_2d(tl_tmap_B" in src and "tl_tma_wait(0)" not in src  # overlapped, not awaited at once
    (mod,) = captured
    for func in mod.functions.values():
        kdim = [v for v in _vars(func.body) if v.name == "kdim" and not tirx.is_buffer_var(v)]
        for k in (0, 32, 64, 96, 160, 320):
            sim = _TmaSim()
            sim.env = {v: tirx.const(k, "int32") for v in kdim}
            sim.run(func.body)
            sim.finish()
            assert sim.errors == [], (k, sim.errors)
            # (T.Parallel is not yet split over threads here: one element of each tile stands for the tile)
            assert sim.issued == sim.waited >= (k + 31) // 32 and sim.reads == (k + 31) // 32


@pytest.mark.parametrize("num_stages", [2, 3])
def test_runtime_k_wgmma_gemm_with_tma_keeps_its_waits(num_stages):
    # sm_90a with TMA on: B (fixed row length) arrives by bulk copy, A (runtime row length) by plain stores; the
    # guarded epilogue's wgmma keeps its barriers (the guard is uniform), and every read follows its copy
    captured: list = []
    src = _lower_tma(_dynamic_k_gemm(num_stages), capture=captured).kernel_source
    assert "tl_tma_load_2d(tl_tmap_B" in src and "tl_wgmma_" in src
    (mod,) = captured
    for func in mod.functions.values():
        kdim = [v for v in _vars(func.body) if v.name == "kdim" and not tirx.is_buffer_var(v)]
        for k in (32, 64, 96, 160):
            sim = _TmaSim()
            sim.env = {v: tirx.const(k, "int32") for v in kdim}
            sim.run(func.body)
            sim.finish()
            assert sim.errors == [], (k, sim.errors)
            assert sim.issued == sim.waited >= (k + 31) // 32 and sim.reads >= 2 * ((k + 31) // 32)


@needs_nvcc
def test_dynamic_trip_count_kernel_compiles():
    from tilelang_cuda.compiler import compile_artifact

    ptx = compile_artifact(_lower_tma(_dynamic_colsum(3))).ptx
    assert "cp.async.bulk.tensor.2d" in ptx and "mbarrier.try_wait.parity" in ptx


def _lower_tma(kernel, capture=None, **configs):
    configs = {ENABLE: True, **WS_OFF, **configs}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if capture is None:
            import tilelang

            return tilelang.lower(kernel.prim_func(), target={"kind": "cuda", "arch": "sm_90a"},
                                  pass_configs=configs)
        return _lower(kernel, arch="sm_90a", capture=capture, configs=configs)


def _simulate(mod, body_map=None):
    sim = _TmaSim()
    for _, func in mod.functions.items():
        sim.run(body_map(func.body) if body_map else func.body)
    sim.finish()
    return sim


@pytest.mark.parametrize("num_stages,k_tiles", [(2, 1), (2, 5), (3, 1), (3, 2), (3, 16), (4, 3), (4, 9)])
def test_tma_pipeline_waits_on_the_right_phases(num_stages, k_tiles):
    captured: list = []
    art = _lower_tma(_readme_gemm(num_stages, k_tiles), capture=captured)
    (mod,) = captured
    sim = _simulate(mod)
    assert sim.errors == []
    assert sim.reads > 0 and sim.issued == 2 * k_tiles and sim.waited == 2 * k_tiles
    src = art.kernel_source
    assert "tl_cp_async" not in src.split('extern "C"', 1)[1]
    if k_tiles > num_stages:  # copies of later iterations are issued before the wait of the current one
        loop = src[src.index("for (int k = 0;"):]
        assert loop.index("tl_tma_load_2d") < loop.index("tl_tma_wait")


def test_a_wrong_phase_or_missing_wait_is_caught_by_the_simulation():
    captured: list = []
    _lower_tma(_readme_gemm(3, 8), capture=captured)
    (mod,) = captured

    def drop_first_wait(body):
        seen = []

        def drop(ev):
            if (isinstance(ev.value, tvm.ir.Call) and isinstance(ev.value.op, tvm.ir.Op)
                    and ev.value.op.name == "tirx.call_extern" and str(ev.value.args[0].value) == "tl_tma_wait"
                    and not seen):
                seen.append(ev)
                return tirx.Evaluate(tirx.call_extern("void", "tl_cp_async_commit"))
            return ev

        return tvm_ffi.structural_map(body, (tirx.Evaluate, drop))

    def same_slot(body):  # every copy on barrier 1: re-armed before awaited
        def one(ev):
            if (isinstance(ev.value, tvm.ir.Call) and isinstance(ev.value.op, tvm.ir.Op)
                    and ev.value.op.name == "tirx.call_extern"):
                args = list(ev.value.args)
                if str(args[0].value) == "tl_tma_load_2d":
                    args[5] = tirx.const(1, "int32")
                elif str(args[0].value) == "tl_tma_wait":
                    args[1] = tirx.const(1, "int32")
                else:
                    return ev
                return tirx.Evaluate(tirx.call_extern("void", str(args[0].value), *args[1:]))
            return ev

        return tvm_ffi.structural_map(body, (tirx.Evaluate, one))

    assert _simulate(mod).errors == []
    assert any("before its TMA copy arrived" in e or "in flight" in e
               for e in _simulate(mod, drop_first_wait).errors)
    assert any("re-armed" in e for e in _simulate(mod, same_slot).errors)


def test_tma_is_sm90a_only_and_can_be_turned_off():
    kernel = _readme_gemm(3, 4)
    on = _lower_tma(kernel).kernel_source
    assert "tl_tma_load_2d(tl_tmap_A" in on and "__grid_constant__ tl_tensor_map_t tl_tmap_B" in on
    off = _lower_tma(kernel, **{"tl.disable_tma_lower": True}).kernel_source
    # the cp.async pipeline: wait_group 1, the copies follow the in-flight wgmma batch (test_wgmma_async.py)
    assert "tl_tma_load_2d(" not in off and "tl_cp_async_wait_group(1)" in off
    for arch in ("sm_80", "sm_90"):
        src = _lower(kernel, arch=arch).kernel_source
        assert "tl_tma_load_2d(" not in src and "tl_cp_async_wait_group(2)" in src


def _copy_kernel(shape, tile):
    """Global -> shared -> global through one tile per block (``shape`` 2-D or 3-D, fp16)."""
    import tilelang.language as T

    lead = shape[:-2]

    @T.prim_func
    def copy(A: T.Tensor(shape, "float16"), B: T.Tensor(shape, "float16")):
        with T.Kernel(shape[-1] // tile[1], shape[-2] // tile[0], threads=128) as (bx, by):
            S = T.alloc_shared(tile, "float16")
            if lead:
                T.copy(A[0, by * tile[0], bx * tile[1]], S)
                T.copy(S, B[0, by * tile[0], bx * tile[1]])
            else:
                T.copy(A[by * tile[0], bx * tile[1]], S)
                T.copy(S, B[by * tile[0], bx * tile[1]])

    class _Kernel:
        def prim_func(self):
            return copy

    return _Kernel()


@pytest.mark.parametrize("shape,tile,tma", [((256, 512), (64, 64), True), ((2, 256, 512), (64, 64), False),
                                            ((256, 1024), (16, 512), False), ((256, 512), (64, 4), False)])
def test_copies_tma_cannot_serve_fall_back(shape, tile, tma):
    # 3-D tensors, boxes over 256 elements and rows under 16 bytes keep the cp.async / plain lowering
    src = _lower(_copy_kernel(shape, tile), arch="sm_90a", configs={ENABLE: True, **WS_OFF}).kernel_source
    assert ("tl_tma_load_2d(tl_tmap_A" in src) == tma
    assert ("tl_tma_wait(0)" in src) == tma  # a copy outside a pipeline waits at once


def test_pipelined_wgmma_gemm_with_tma_fits_hopper_shared_memory():
    from tilelang_cuda.passes.share_scratch_tiles import max_shared_bytes

    kernel = corpus.gemm(M=512, N=512, K=512, block_M=128, block_N=256, block_K=64, threads=256, num_stages=3)
    art = _lower_tma(kernel)
    assert "tl_tma_load_2d(tl_tmap_B, 64, 256," in art.kernel_source
    # the static barriers and the pool's 1024-byte alignment come on top of the planned tiles
    assert art.metadata["shared_bytes"] + 1024 + 8 * 16 <= max_shared_bytes(90)


def test_tensor_map_metadata_names_buffer_and_box():
    art = _lower_tma(_readme_gemm(3, 4))
    assert art.metadata["tma_maps"] == {"tl_tmap_A": {"buffer": "A", "box": [128, 32], "swizzle": 0},
                                        "tl_tmap_B": {"buffer": "B", "box": [32, 128], "swizzle": 0}}


@needs_nvcc
def test_readme_gemm_ptx_uses_bulk_tensor_copies_on_sm90a():
    from tilelang_cuda.compiler import compile_artifact

    art = _lower_tma(_readme_gemm(3, 16))
    binary = compile_artifact(art)
    assert binary.cubin[:4] == b"\x7fELF"
    ptx = binary.ptx
    assert "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes" in ptx
    assert "mbarrier.try_wait.parity" in ptx and "mbarrier.arrive.expect_tx" in ptx
    assert "cp.async.wait_group" not in ptx and "wgmma.mma_async" in ptx
    assert ".param .align 64 .b8" in ptx  # the tensor maps, by value


@needs_nvcc
def test_sm80_ptx_keeps_cp_async():
    from tilelang_cuda.compiler import compile_artifact

    ptx = compile_artifact(_lower(_readme_gemm(3, 16), arch="sm_80")).ptx
    assert "cp.async.wait_group 2" in ptx and "cp.async.bulk" not in ptx and "mbarrier" not in ptx


# ----------------------------------------------------------------------------- host side
def test_encode_arguments_for_row_major_tensors():
    from tilelang_cuda.tma import encode_arguments

    args = encode_arguments((1000, 4096), (4096, 1), "float16", 2, [128, 64])
    assert args == {"data_type": 6, "rank": 2, "global_dim": [4096, 1000], "global_strides": [8192],
                    "box_dim": [64, 128], "element_strides": [1, 1], "interleave": 0, "swizzle": 0,
                    "l2_promotion": 2, "oob_fill": 0}
    assert encode_arguments((64, 48), (64, 1), "bfloat16", 2, [32, 16])["global_strides"] == [128]


@pytest.mark.parametrize("shape,strides,dtype,box,match", [
    ((64, 100), (100, 1), "float16", [64, 64], "16-byte aligned row strides"),
    ((64, 64), (1, 64), "float16", [64, 64], "contiguous last dimension"),
    ((64, 512), (512, 1), "float16", [64, 512], "dims in 1..256"),
    ((64, 64), (64, 1), "float16", [64, 4], "multiple of 16 bytes"),
    ((4, 64, 64), (4096, 64, 1), "float16", [64, 64], "same rank"),
    ((64, 64), (64, 1), "complex64", [64, 64], "cannot copy dtype"),
])
def test_encode_arguments_reject_what_tma_cannot_copy(shape, strides, dtype, box, match):
    from tilelang.errors import TileLangError
    from tilelang_cuda.tma import encode_arguments

    with pytest.raises(TileLangError, match=match):
        encode_arguments(shape, strides, dtype, 2, box)


class _FakeDriver:
    def __init__(self):
        self.calls = []

    def cuTensorMapEncodeTiled(self, *args):
        self.calls.append(args)
        ctypes.cast(args[0], ctypes.POINTER(ctypes.c_uint64 * 16)).contents[0] = 0xABC
        return 0


def test_launcher_encodes_the_tensor_map_from_the_call_tensor(monkeypatch):
    import torch

    import tilelang_cuda.driver as driver
    from tilelang_cuda.execution_backend import _tensor_map

    fake = _FakeDriver()
    monkeypatch.setattr(driver, "libcuda", lambda: fake)
    a = torch.zeros((300, 256), dtype=torch.bfloat16)
    tmap = _tensor_map({"buffer": "A", "box": [128, 32], "swizzle": 0}, {"A": a})
    assert tmap.opaque[0] == 0xABC and ctypes.sizeof(tmap) == 128
    (call,) = fake.calls
    _, dtype, rank, address, dims, strides, box, elem_strides, interleave, swizzle, l2, oob = call
    assert (dtype.value, rank.value, address.value) == (9, 2, a.data_ptr())
    assert list(dims) == [256, 300] and list(strides) == [512] and list(box) == [32, 128]
    assert list(elem_strides) == [1, 1]
    assert (interleave.value, swizzle.value, l2.value, oob.value) == (0, 0, 2, 0)


class _FakeLaunchDriver(_FakeDriver):
    """Every driver call the launcher makes, recorded (no GPU): module load, function lookup, launch."""

    def __init__(self):
        super().__init__()
        self.launches = []
        self.param_sizes: list[int] = []

    def cuModuleLoadData(self, *args):
        return 0

    def cuCtxGetCurrent(self, ctx):  # the kernel keeps one module per (device, context)
        ctypes.cast(ctx, ctypes.POINTER(ctypes.c_void_p)).contents.value = 1
        return 0

    def cuCtxGetDevice(self, device):
        return 0

    def cuModuleGetFunction(self, *args):
        return 0

    def cuFuncSetAttribute(self, *args):
        return 0

    def cuTensorMapEncodeTiled(self, *args):
        super().cuTensorMapEncodeTiled(*args)
        ctypes.cast(args[0], ctypes.POINTER(ctypes.c_uint64 * 16)).contents[1] = args[3].value  # the address
        return 0

    def cuLaunchKernel(self, func, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        # the parameter values live only during the call: copy each (sizes: what the kernel declares)
        values = [ctypes.string_at(params[i], size) for i, size in enumerate(self.param_sizes)]
        self.launches.append(((gx.value, gy.value, gz.value), (bx.value, by.value, bz.value), values))
        return 0


@needs_nvcc
def test_launch_passes_a_tensor_map_per_tma_loaded_tensor(monkeypatch):
    import torch

    import tilelang_cuda.driver as driver
    from tilelang_cuda.execution_backend import _Launcher

    fake = _FakeLaunchDriver()
    fake.param_sizes = [8, 128, 128]  # C's pointer, A's and B's tensor maps
    monkeypatch.setattr(driver, "libcuda", lambda: fake)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda: type("S", (), {"cuda_stream": 0})())
    art = _lower_tma(_readme_gemm(3, 4))
    launcher = _Launcher(art)
    a, b = torch.zeros((256, 128), dtype=torch.float16), torch.zeros((128, 256), dtype=torch.float16)
    c = torch.zeros((256, 256), dtype=torch.float16)
    launcher(a, b, c)
    (launch,) = fake.launches
    assert launch[0] == (2, 2, 1) and launch[1] == (128, 1, 1)
    names = [n for n, _ in launcher.kernels[0].device_params]
    assert names == ["C_ptr", "tl_tmap_A", "tl_tmap_B"]
    params = launch[2]
    assert ctypes.c_void_p.from_buffer_copy(params[0][:8]).value == c.data_ptr()
    for slot, tensor in ((1, a), (2, b)):
        tmap = driver.TensorMap.from_buffer_copy(params[slot])
        assert tmap.opaque[0] == 0xABC and tmap.opaque[1] == tensor.data_ptr()
    assert [(list(call[4]), list(call[6])) for call in fake.calls] == [([128, 256], [32, 128]), ([256, 128], [128, 32])]


def test_launcher_rejects_misaligned_tensors(monkeypatch):
    import torch

    import tilelang_cuda.driver as driver
    from tilelang_cuda.execution_backend import _tensor_map

    monkeypatch.setattr(driver, "libcuda", lambda: _FakeDriver())
    a = torch.zeros((64, 68), dtype=torch.float16)[:, 4:]  # a row stride of 136 bytes
    with pytest.raises(driver.CudaDriverError, match="16-byte aligned"):
        _tensor_map({"buffer": "A", "box": [64, 64]}, {"A": torch.zeros(4100, dtype=torch.float16)[4:].view(64, 64)})
    from tilelang.errors import TileLangError

    with pytest.raises(TileLangError, match="16-byte aligned row strides"):
        _tensor_map({"buffer": "A", "box": [64, 64]}, {"A": a})


def test_source_rewrite_adds_parameters_to_declarations_and_definitions():
    from tilelang_cuda.tma import rewrite_source, tensor_maps_of

    src = ('extern "C" __global__ void __launch_bounds__(128) k(half* __restrict__ C);\n'
           'extern "C" __global__ void __launch_bounds__(128) k(half* __restrict__ C) {\n'
           '  extern __shared__ __align__(64) uchar buf[];\n'
           '  tl_tma_load_2d("A", 64, 32, buf, 1, 4096, 0, 0);\n}\n')
    out = rewrite_source(src)
    assert out.count("half* __restrict__ C, const __grid_constant__ tl_tensor_map_t tl_tmap_A)") == 2
    assert "tl_tma_init();" in out and "__align__(1024) uchar buf" in out
    assert re.search(r"tl_tma_load_2d\(tl_tmap_A, 64, 32, buf", out)
    assert rewrite_source(out) == out
    assert tensor_maps_of(out) == {"tl_tmap_A": {"buffer": "A", "box": [64, 32], "swizzle": 0}}


# ----------------------------------------------------------------------------- on a GPU
@pytest.mark.gpu
@pytest.mark.parametrize("num_stages", [1, 3])
def test_tma_gemm_matches_torch_on_the_gpu(num_stages):
    import torch

    import tilelang
    from tilelang_cuda.target import detect

    if detect()["arch"] != "sm_90a":
        pytest.skip("TMA needs sm_90a")
    kernel = corpus.gemm(M=512, N=384, K=544, block_M=128, block_N=128, block_K=32, num_stages=num_stages)
    jit = tilelang.compile(kernel.prim_func(), target={"kind": "cuda", "arch": "sm_90a"},
                           pass_configs={ENABLE: True, **WS_OFF})
    assert "tl_tma_load_2d(tl_tmap_" in jit.artifact.kernel_source
    inputs = kernel.make_inputs(device="cuda")
    outputs = kernel.make_outputs(device="cuda")
    jit(*kernel.call_args(inputs, outputs))
    got = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    want = kernel.ref(*[t.cpu() for t in inputs])
    want = want if isinstance(want, (list, tuple)) else [want]
    for g, w in zip(got, want):
        torch.testing.assert_close(g.cpu().float(), w.float(), atol=kernel.atol, rtol=kernel.rtol)


def test_tma_is_opt_in_until_validated_on_a_gpu():
    """Outside warp specialisation sm_90a keeps cp.async unless ``tl.cuda.enable_tma`` asks for TMA (a pipelined
    GEMM is warp-specialised by default: its producer issues TMA, test_warp_specialize.py)."""
    import tilelang

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        default = tilelang.lower(_readme_gemm(3, 4).prim_func(), target={"kind": "cuda", "arch": "sm_90a"},
                                 pass_configs=WS_OFF)
    assert "tl_tma_load_2d(tl_tmap_" not in default.kernel_source and "tl_cp_async_commit();" in default.kernel_source
    assert "tl_tma_load_2d(tl_tmap_" in _lower_tma(_readme_gemm(3, 4)).kernel_source
