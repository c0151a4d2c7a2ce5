"""SS wgmma on sm_90a: both GEMM operands read straight from hardware-swizzled shared tiles via descriptors.

Checked without a GPU three ways: the layout module against the PTX canonical layouts (written out here from
the ISA's formulas, with the swizzle applied to byte addresses); a simulation of one thread block of the lowered
program that records which global element every cp.async puts at every shared address, then decodes each
wgmma's two descriptors with the PTX model and checks each (m, k) / (k, n) it reads; and nvcc builds (SS form in
the PTX, no ldmatrix, registers and spills).
"""

from __future__ import annotations

import re
import warnings

import pytest
import tvm
import tvm_ffi
from cuda_helpers import keep_output, needs_nvcc, wrapped_pass
from tvm import tirx

from tilelang.testing import corpus

NO_TMA = {"tl.disable_tma_lower": True}


# ----------------------------------------------------------------------------- the PTX model (independent)
def _swizzle(byte: int, width: int) -> int:
    """CuTe Swizzle<B, 4, 3> on a byte address: bits [4, 4+B) ^= bits [7, 7+B), B = log2(width / 16)."""
    mask = width // 16 - 1
    return byte ^ (((byte >> 7) & mask) << 4)


_WIDTH = {1: 128, 2: 64, 3: 32}


def _ptx_address(desc: tuple[int, int, int, int], k_major: bool, mn: int, k: int) -> int:
    """Byte address wgmma reads for element (mn, k) of a 16-bit operand from `desc` = (start, lbo, sbo, mode).

    K-major: ((8, m), (T, 2k)) : ((W/2, SBO), (1, T)) elements; MN-major: ((T, W/16, m), (8, k)) :
    ((1, T, LBO), (W/2, SBO)), T = 8 elements per 16 bytes; then the swizzle of the mode on the final address."""
    start, lbo, sbo, mode = desc
    width = _WIDTH[mode]
    row = width // 2  # elements per swizzled row
    if k_major:
        offset = (mn % 8) * row * 2 + (mn // 8) * sbo + k * 2
    else:
        offset = (mn % row) * 2 + (mn // row) * lbo + (k % 8) * row * 2 + (k // 8) * sbo
    return _swizzle(start + offset, width)


# ----------------------------------------------------------------------------- unit: the layout function
@pytest.mark.parametrize("shape", [(64, 64), (128, 64), (64, 256), (32, 128), (128, 32), (64, 16), (16, 192)])
def test_layout_matches_the_ptx_canonical_layouts(shape):
    from tilelang_cuda.wgmma_layout import tile_layout

    rows, cols = shape
    tile = tile_layout([rows, cols], 2)
    assert tile is not None and tile.width == (128 if cols * 2 % 128 == 0 else cols * 2)
    # a bijection onto the tile's storage
    image = {tile.offset(r, c) for r in range(rows) for c in range(cols)}
    assert image == set(range(rows * cols))
    # K-major (rows = MN, cols = K): every 8-row group x k16 step the descriptor names
    for r0 in range(0, rows - 7, 8):
        for ks in range(cols // 16):
            desc = tile.descriptor(True, r0, ks)
            for mn in range(min(64, rows - r0)):
                for k in range(16):
                    assert _ptx_address(desc, True, mn, k) == tile.offset(r0 + mn, ks * 16 + k) * 2
    # MN-major (rows = K, cols = MN): MN extents of whole column blocks
    for c0 in range(0, cols, tile.block):
        extent = cols - c0
        for ks in range(rows // 16):
            desc = tile.descriptor(False, c0, ks)
            for mn in range(extent):
                for k in range(16):
                    assert _ptx_address(desc, False, mn, k) == tile.offset(ks * 16 + k, c0 + mn) * 2


def test_layout_rejects_tiles_without_a_hardware_layout():
    from tilelang_cuda.wgmma_layout import tile_layout

    assert tile_layout([64, 64], 4) is None     # 32-bit elements
    assert tile_layout([64, 40], 2) is None     # 80-byte rows
    assert tile_layout([60, 64], 2) is None     # rows not a multiple of 8
    assert tile_layout([64, 8], 2) is None      # 16-byte rows
    assert tile_layout([3, 64, 64], 2).mode == 1 and tile_layout([64, 32], 2).mode == 2


def test_descriptor_bits():
    from tilelang_cuda.wgmma_layout import descriptor_fields

    d = descriptor_fields(0x12340, 8192, 1024, 1)
    assert d & 0x3FFF == 0x1234 and (d >> 16) & 0x3FFF == 8192 >> 4 and (d >> 32) & 0x3FFF == 1024 >> 4
    assert (d >> 49) & 7 == 0 and d >> 62 == 1


# ----------------------------------------------------------------------------- simulation of one block
def _lower(kernel, capture: list | None = None, configs: dict | None = None):
    """Lower for sm_90a; `capture` collects the module right after SwizzleSharedOperands."""
    import tilelang
    import tilelang_cuda.passes.swizzle_shared_operands as sw

    with warnings.catch_warnings(), wrapped_pass(sw, "SwizzleSharedOperands",
                                                 keep_output(capture if capture is not None else [])):
        warnings.simplefilter("ignore")
        return tilelang.lower(kernel.prim_func(), target={"kind": "cuda", "arch": "sm_90a"},
                              pass_configs=configs if configs is not None else NO_TMA)


_BIN = {tirx.Add: "+", tirx.Sub: "-", tirx.Mul: "*", tirx.FloorDiv: "//", tirx.FloorMod: "%",
        tirx.BitwiseXor: "^", tirx.LT: "<", tirx.LE: "<=", tirx.GT: ">", tirx.GE: ">=", tirx.EQ: "==",
        tirx.NE: "!=", tirx.And: "and", tirx.Or: "or"}


def _py(e, slot) -> str:
    """Python source for an integer TIR expression (variable `v` read from ``env[slot(v)]``)."""
    def py(x):
        return _py(x, slot)

    if isinstance(e, tirx.IntImm):
        return str(int(e.value))
    if isinstance(e, tvm.ir.Var):
        return f"env[{slot(e)}]"
    if type(e) in _BIN:
        return f"({py(e.a)} {_BIN[type(e)]} {py(e.b)})"
    if isinstance(e, tirx.Min):
        return f"min({py(e.a)}, {py(e.b)})"
    if isinstance(e, tirx.Max):
        return f"max({py(e.a)}, {py(e.b)})"
    if isinstance(e, tirx.Not):
        return f"(not {py(e.a)})"
    if isinstance(e, tirx.Cast):
        return py(e.value)
    if isinstance(e, tirx.Select):
        return f"({py(e.true_value)} if {py(e.condition)} else {py(e.false_value)})"
    if isinstance(e, tvm.ir.Call) and isinstance(e.op, tvm.ir.Op):
        name = e.op.name
        if name in ("tirx.if_then_else", "prim.if_then_else"):
            return f"({py(e.args[1])} if {py(e.args[0])} else {py(e.args[2])})"
        if name == "tirx.tvm_thread_invariant":
            return py(e.args[0])
        if name == "tirx.bitwise_xor":
            return f"({py(e.args[0])} ^ {py(e.args[1])})"
    raise NotImplementedError(f"{type(e).__name__}: {e}")


class _Block:
    """Runs one thread block (blockIdx = 0) in program order: every cp.async of all threads fills `memory`
    (shared (buffer, element) -> global (name, row, col)); every SS wgmma is decoded with the PTX model."""

    def __init__(self, trans_a: bool, trans_b: bool, block_k: int, wm: int, threads: int):
        self.ta, self.tb, self.block_k, self.wm, self.threads = trans_a, trans_b, block_k, wm, threads
        self.memory: dict = {}
        self.env: dict = {}
        self.vars: list = []
        self.tx_slots: list[int] = []
        self.cache: dict = {}
        self.group_calls: list = []
        self.stage = 0
        self.checked = 0
        self.errors: list[str] = []

    def slot(self, v) -> int:
        """The env slot of variable `v` (by identity: lowered code reuses names); blocks are block 0."""
        for n, known in enumerate(self.vars):
            if known.same_as(v):
                return n
        self.vars.append(v)
        n = len(self.vars) - 1
        if v.name in ("tx", "threadIdx.x"):
            self.tx_slots.append(n)
        elif v.name in ("bx", "by", "bz", "blockIdx.x", "blockIdx.y", "blockIdx.z"):
            self.env[n] = 0
        return n

    def ev(self, e, tx: int = 0) -> int:
        key = e.__hash__()
        fn = self.cache.get(key)
        if fn is None or not fn[0].same_as(e):
            fn = (e, eval(f"lambda env: {_py(e, self.slot)}"))  # test-only: generated source
            self.cache[key] = fn
        env = dict(self.env)
        for n in self.tx_slots:
            env[n] = tx
        return int(fn[1](env))

    @staticmethod
    def flat(buf, indices, ev) -> int:
        shape = [int(s) for s in buf.ty.shape]
        out = 0
        for dim, idx in zip(shape, indices):
            out = out * dim + ev(idx)
        return out

    def run(self, stmt) -> None:
        if isinstance(stmt, tirx.SeqStmt):
            for s in stmt.seq:
                self.run(s)
        elif isinstance(stmt, tirx.For):
            lo, ext = self.ev(stmt.min), self.ev(stmt.extent)
            for i in range(lo, lo + ext):
                self.env[self.slot(stmt.loop_var)] = i
                self.run(stmt.body)
        elif isinstance(stmt, tirx.IfThenElse):
            if self.ev(stmt.condition):
                self.run(stmt.then_case)
            elif stmt.else_case is not None:
                self.run(stmt.else_case)
        elif isinstance(stmt, tirx.AttrStmt):
            self.run(stmt.body)
        elif isinstance(stmt, tirx.Evaluate) and isinstance(stmt.value, tvm.ir.Call):
            self.call(stmt.value)

    def call(self, call) -> None:
        if not (isinstance(call.op, tvm.ir.Op) and call.op.name == "tirx.call_extern"):
            return
        name = str(call.args[0].value)
        if name == "tl_cp_async16":
            self.cp_async(call)
        elif name.startswith(("tl_wgmma_ss_", "tl_wgmma_rs_")):  # descriptors now (the loop variables change)
            rs = name.startswith("tl_wgmma_rs_")  # A from registers: only B comes through a descriptor
            descs = []
            for group in range(self.threads // 128):
                lanes = [group * 128 + t for t in (0, 37, 127)]
                per_lane = [(None if rs else self.descriptor(call.args[2], tx), self.descriptor(call.args[3], tx))
                            for tx in lanes]
                if any(d != per_lane[0] for d in per_lane):
                    self.errors.append("threads of one warpgroup disagree on a descriptor")
                descs.append(per_lane[0])
            self.group_calls.append((name, descs))
        elif name == "tl_wgmma_commit":
            self.check_group()
        elif name.startswith("tl_wgmma_m64n"):
            self.errors.append("a wgmma reading a b_core relayout where descriptors were expected")

    def cp_async(self, call) -> None:
        dst, src = call.args[1], call.args[2]
        assert dst.op.name == "tirx.tvm_access_ptr"
        buf = dst.args[1].args[0]
        ld = src.args[0]
        for tx in range(self.threads):
            if self.ev(call.args[3], tx) != 16:
                continue
            offset = self.ev(dst.args[2], tx)
            row, col = (self.ev(i, tx) for i in ld.indices)
            for e in range(8):
                self.memory[(buf.name, offset + e)] = (ld.source.name, row, col + e)

    def descriptor(self, desc, tx: int) -> tuple[str, tuple[int, int, int, int]]:
        step = 0  # the tile origin's descriptor plus the sub-matrix's offset in 16-byte units (the warpgroup's
        while isinstance(desc, tirx.Add):  # slice and the K step may be two additions)
            desc, step = desc.a, step + self.ev(desc.b, tx)
        assert str(desc.args[0].value) == "tl_wgmma_desc_sw"
        ptr = desc.args[1]
        assert ptr.op.name == "tirx.tvm_access_ptr" and int(ptr.args[4]) == 1  # a read TVM's planner sees
        start = self.ev(ptr.args[2], tx) * 2 + step * 16
        return ptr.args[1].args[0].name, (start, *(self.ev(a, tx) for a in desc.args[2:5]))

    def check_group(self) -> None:
        calls, self.group_calls = self.group_calls, []
        if not calls:
            return
        n = int(re.search(r"m64n(\d+)k16", calls[0][0]).group(1))
        mi_count = len(calls) // (self.block_k // 16)
        for idx, (_, descs) in enumerate(calls):
            ks, mi = divmod(idx, mi_count)
            for group, (a, (b_buf, b_desc)) in enumerate(descs):
                row0 = mi * 16 * self.wm + group * 64
                k0 = self.stage * self.block_k + ks * 16
                for m in range(64 if a is not None else 0):
                    a_buf, a_desc = a
                    for k in range(16):
                        want = ("A", k0 + k, row0 + m) if self.ta else ("A", row0 + m, k0 + k)
                        self.expect(a_buf, _ptx_address(a_desc, not self.ta, m, k), want)
                for k in range(16):
                    for col in range(n):
                        want = ("B", col, k0 + k) if self.tb else ("B", k0 + k, col)
                        self.expect(b_buf, _ptx_address(b_desc, self.tb, col, k), want)
        self.stage += 1

    def expect(self, buf: str, byte: int, want: tuple) -> None:
        got = self.memory.get((buf, byte // 2))
        self.checked += 1
        if got != want and len(self.errors) < 5:
            self.errors.append(f"{buf} byte {byte}: holds {got}, wgmma needs {want} (stage {self.stage})")


_VARIANTS = {  # name: (gemm kwargs, warps along M)
    "bench_128x256x64": (dict(block_M=128, block_N=256, block_K=64, threads=256, num_stages=3), 8),
    "trans_a": (dict(block_M=128, block_N=128, block_K=64, threads=256, num_stages=2, trans_A=True), 8),
    "trans_b": (dict(block_M=64, block_N=128, block_K=64, threads=128, num_stages=3, trans_B=True), 4),
    "bf16": (dict(block_M=128, block_N=256, block_K=64, threads=256, num_stages=3, dtype="bfloat16"), 8),
    "k32_w64": (dict(block_M=128, block_N=64, block_K=32, threads=128, num_stages=2), 4),
    "k16_w32_tt": (dict(block_M=128, block_N=128, block_K=16, threads=128, num_stages=2, trans_A=True,
                        trans_B=True), 4),
    "fragment_a": (dict(block_M=64, block_N=64, block_K=32, threads=128), 4),
}


def _simulate(name: str, mutate=None) -> _Block:
    kwargs, wm = _VARIANTS[name]
    block_k = kwargs["block_K"]
    if name == "fragment_a":
        kernel = corpus.gemm_fragment_a(M=kwargs["block_M"], N=kwargs["block_N"], K=4 * block_k, block_K=block_k)
    else:
        kernel = corpus.gemm(M=kwargs["block_M"], N=kwargs["block_N"], K=4 * block_k, **kwargs)
    captured: list = []
    src = _lower(kernel, capture=captured).kernel_source
    src = src[src.index('extern "C" __global__'):]
    if name == "fragment_a":  # RS: A (staged from the fragment) by ldmatrix, B through a swizzled descriptor
        assert "tl_wgmma_rs_m64n64k16_f16_t1(" in src and "tl_ldmatrix" in src and "b_core" not in src
    else:
        assert "tl_wgmma_ss_m64n" in src and "b_core" not in src and "tl_ldmatrix" not in src
    (mod,) = captured
    (func,) = mod.functions.values()
    body = func.body if mutate is None else mutate(func.body)
    sim = _Block(kwargs.get("trans_A", False), kwargs.get("trans_B", False), block_k, wm, kwargs["threads"])
    sim.run(body)
    assert sim.stage == 4  # one wgmma group per K tile
    return sim


@pytest.mark.parametrize("name", list(_VARIANTS))
def test_every_wgmma_reads_the_right_elements(name):
    sim = _simulate(name)
    assert sim.errors == []
    assert sim.checked > 0


def _tamper(field: int, delta):
    """Rewrite argument `field` (1 ptr, 2 lbo, 3 sbo, 4 mode) of the descriptors of one operand kind."""
    def on_call(call):
        if (isinstance(call.op, tvm.ir.Op) and call.op.name == "tirx.call_extern"
                and str(call.args[0].value) == "tl_wgmma_desc_sw"):
            args = list(call.args)
            args[field] = delta(args[field])
            if args is not None:
                return tirx.call_extern("uint64", *args)
        return call

    return lambda body: tvm_ffi.structural_map(body, (tvm.ir.Call, on_call))


@pytest.mark.parametrize("field,delta", [
    (3, lambda v: v * 2),                              # SBO
    (2, lambda v: v + 1024 if int(v) > 16 else v),     # LBO of the N-major B (A's K-major LBO is unused)
    (4, lambda v: tirx.const(2, "int32")),             # 64B swizzle on 128B tiles
])
def test_a_wrong_descriptor_is_caught(field, delta):
    sim = _simulate("bench_128x256x64", _tamper(field, delta))
    assert sim.errors


def test_an_unswizzled_tile_is_caught():
    # the tiles keep row-major storage when the swizzle pass does nothing: the descriptors then read wrong data
    import tilelang_cuda.passes.swizzle_shared_operands as sw

    original = sw._hw_indices
    sw._hw_indices = lambda tile, idx: list(idx)
    try:
        captured: list = []
        kwargs, wm = _VARIANTS["k32_w64"]
        kernel = corpus.gemm(M=128, N=64, K=128, **kwargs)
        original_flat = sw.SwizzledTile.flat_offset
        sw.SwizzledTile.flat_offset = lambda self, flat: flat
        try:
            _lower(kernel, capture=captured)
        finally:
            sw.SwizzledTile.flat_offset = original_flat
    finally:
        sw._hw_indices = original
    (func,) = captured[0].functions.values()
    sim = _Block(False, False, 32, wm, 128)
    sim.run(func.body)
    assert sim.errors


# ----------------------------------------------------------------------------- eligibility and fallback
def _src(kernel, configs=None) -> str:
    """The kernel part of the CUDA source (after the intrinsics header)."""
    src = _lower(kernel, configs=configs).kernel_source
    return src[src.index('extern "C" __global__'):]


_FP32 = dict(block_M=64, block_N=64, block_K=32, dtype="float32")
_INT8 = dict(block_M=64, block_N=64, block_K=64, dtype="int8", accum_dtype="int32", trans_B=True)


def test_fallback_keeps_the_other_paths():
    # with swizzled descriptors switched off, a fragment A takes the RS wgmma with the b_core relayout;
    # fp32 (tf32) and int8 use mma.sync
    src = _src(corpus.gemm_fragment_a(), {**NO_TMA, "tl.cuda.enable_wgmma_ss": False})
    assert "tl_wgmma_m64n64k16_f16(" in src and "b_core" in src and "tl_ldmatrix_x4" in src
    assert "tl_wgmma_ss_" not in src and "tl_wgmma_desc_sw" not in src
    assert src.index("b_core_ptr[") < src.index("tl_fence_proxy_async()") < src.index("tl_wgmma_m64n64k16_f16(")
    for kwargs, mma in ((_FP32, "tl_mma_tf32_f32("), (_INT8, "tl_mma_s8_s32(")):
        src = _src(corpus.gemm(**kwargs))
        assert mma in src and "tl_wgmma_" not in src


def test_flash_attention_reads_its_shared_operands_through_swizzled_descriptors():
    # Q K^T: SS (both K-major); P V: A (the probabilities, a fragment) by ldmatrix, V (N-major) via a descriptor
    src = _src(corpus.CORPUS["flash_attention"]())
    assert "tl_wgmma_ss_m64n64k16_f16_t00(" in src and "tl_wgmma_rs_m64n64k16_f16_t1(" in src
    assert "b_core" not in src


def test_tma_kernels_stay_on_the_relayout_path():
    kernel = corpus.gemm(M=256, N=256, K=256, block_M=128, block_N=256, block_K=64, threads=256, num_stages=3)
    src = _src(kernel, {"tl.cuda.enable_tma": True, "tl.disable_warp_specialized": True})
    assert "tl_tma_load_2d" in src and "tl_wgmma_ss_" not in src and "b_core" in src


def test_ss_main_loop_has_two_barriers_and_a_proxy_fence():
    kernel = corpus.gemm(M=512, N=512, K=512, block_M=128, block_N=256, block_K=64, threads=256, num_stages=3)
    src = _src(kernel)
    loop = src[src.index("for (int k = 0;"):]
    loop = loop[:loop.index("tl_wgmma_wait")]  # wait_group 1 in the steady loop (test_wgmma_async.py)
    assert loop.count("__syncthreads()") == 1  # the barrier after the cp.async wait (+1 after the wgmma wait)
    assert loop.index("__syncthreads()") < loop.index("tl_fence_proxy_async()") < loop.index("tl_wgmma_fence()")
    assert "extern __shared__ __align__(1024)" in src and "b_core" not in src


# ----------------------------------------------------------------------------- nvcc
@needs_nvcc
@pytest.mark.parametrize("name", ["bench_128x256x64", "trans_a", "k16_w32_tt"])
def test_ss_gemm_compiles_to_cubin(name):
    from tilelang_cuda.compiler import compile_artifact

    kwargs, _ = _VARIANTS[name]
    kernel = corpus.gemm(M=4 * kwargs["block_M"], N=2 * kwargs["block_N"], K=512, **kwargs)
    binary = compile_artifact(_lower(kernel))
    assert binary.cubin[:4] == b"\x7fELF"
    ss = re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n\d+k16\.f32\.f16\.f16\s+\{[^}]*\},\s*%rd\d+,\s*%rd\d+",
                    binary.ptx)
    assert ss and "ldmatrix" not in binary.ptx
    assert "fence.proxy.async.shared::cta" in binary.ptx
    assert binary.resources["spill_stores"] == 0 and binary.resources["spill_loads"] == 0
    if name == "bench_128x256x64":
        assert binary.resources["registers"] < 170
        assert "static_shared_bytes" not in binary.resources or binary.resources["static_shared_bytes"] == 0


@needs_nvcc
def test_fallback_gemms_still_compile():
    from tilelang_cuda.compiler import compile_artifact

    no_ss = {**NO_TMA, "tl.cuda.enable_wgmma_ss": False}
    for kernel, instr, configs in ((corpus.gemm_fragment_a(), "wgmma.mma_async", no_ss),
                                   (corpus.gemm(**_FP32), "mma.sync", NO_TMA),
                                   (corpus.gemm(**_INT8), "mma.sync", NO_TMA)):
        binary = compile_artifact(_lower(kernel, configs=configs))
        assert instr in binary.ptx and binary.cubin[:4] == b"\x7fELF"


def test_simulated_row_blocks_are_the_accumulator_rows():
    # the simulation expects warpgroup g's mi-th wgmma at rows mi * 16 * wm + 64 g: the accumulator layout's rows
    from tilelang_cuda.mma_layout import WGMMA, AccumulatorLayout

    for m, n, warps in ((128, 256, 8), (128, 64, 4), (256, 128, 8)):
        lay = AccumulatorLayout(m, n, warps, 1, WGMMA)
        for tid in range(0, warps * 32, 5):
            for r in range(lay.regs):
                mi = (r // 4) // lay.ni
                row0 = mi * 16 * lay.wm + (tid // 128) * 64
                assert row0 <= lay.position(tid, r)[0] < row0 + 64


def _gemm_with_a_small_tile():
    """A GEMM whose block also holds a 96-byte shared tile (allocated first, so it sits in front in the pool)."""
    import tilelang.language as T

    @T.prim_func
    def gemm(A: T.Tensor((256, 256), "float16"), B: T.Tensor((256, 256), "float16"),
             C: T.Tensor((256, 256), "float16"), D: T.Tensor((24,), "float32")):
        with T.Kernel(2, 2, threads=128) as (bx, by):
            S = T.alloc_shared((24,), "float32")
            A_shared = T.alloc_shared((128, 64), "float16")
            B_shared = T.alloc_shared((64, 128), "float16")
            C_local = T.alloc_fragment((128, 128), "float32")
            T.copy(D, S)
            T.clear(C_local)
            for ko in T.Pipelined(4, num_stages=2):
                T.copy(A[by * 128, ko * 64], A_shared)
                T.copy(B[ko * 64, bx * 128], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            for i, j in T.Parallel(128, 128):
                C_local[i, j] = C_local[i, j] + S[j % 24]
            T.copy(C_local, C[by * 128, bx * 128])

    class _Kernel:
        def prim_func(self):
            return gemm

    return _Kernel()


def test_swizzled_tiles_start_on_a_1024_byte_boundary():
    from tilelang_cuda.passes.share_scratch_tiles import shared_bytes

    captured: list = []
    src = _lower(_gemm_with_a_small_tile(), capture=captured).kernel_source
    (func,) = captured[0].functions.values()
    allocs = [a.buffer for a in _collect_allocs(func.body) if str(a.buffer.ty.storage_scope) == "shared.dyn"]
    assert len(allocs) == 3
    for buf in allocs:  # every pool tile padded to the swizzle repeat (the 96-byte tile to 1024 bytes)
        assert shared_bytes(tirx.SeqStmt([tirx.AllocBuffer(buf), tirx.Evaluate(0)])) % 1024 == 0
    offsets = re.findall(r"tl_wgmma_desc_sw\(\(&\(\(\(half\*\)buf_dyn_shmem_ptr\)\[(.*?)\]\)\)", src)
    assert offsets
    for expr in offsets:  # the tiles' pool offsets (elements): the constant term of the start address
        const = re.search(r"\+ (\d+)\)$", expr)
        assert int(const.group(1)) % 512 == 0 if const else True
    assert "extern __shared__ __align__(1024)" in src


def _collect_allocs(body):
    found: list = []
    tvm_ffi.structural_walk(body, [(tirx.AllocBuffer, found.append)])
    return found


@needs_nvcc
def test_rs_wgmma_with_a_swizzled_b_compiles_to_cubin():
    from tilelang_cuda.compiler import compile_artifact

    for kernel in (corpus.gemm_fragment_a(), corpus.CORPUS["flash_attention"]()):
        binary = compile_artifact(_lower(kernel))
        rs = re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.f16\.f16\s+\{[^}]*\},\s*\{[^}]*\},\s*%rd\d+,"
                        r"\s*p,\s*1,\s*1,\s*1;", binary.ptx)
        assert rs and "fence.proxy.async.shared::cta" in binary.ptx
        assert binary.resources["spill_stores"] == 0 and "static_shared_bytes" not in binary.resources


@pytest.mark.parametrize("arch,configs", [("sm_80", NO_TMA), ("sm_90a", NO_TMA),
                                          ("sm_90a", {**NO_TMA, "tl.cuda.enable_wgmma_ss": False})],
                         ids=["sm_80", "sm_90a_ss", "sm_90a_fallback"])
def test_tiles_read_only_by_tensor_core_ops_keep_their_own_storage(arch, configs):
    # Q_shared is written once before the loop and then read only by the gemm (ldmatrix or a descriptor): its
    # reads must be visible to TVM's shared-memory planner, else K_shared (written in the loop) reuses its storage
    import tilelang

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        src = tilelang.lower(corpus.CORPUS["flash_attention"]().prim_func(), target={"kind": "cuda", "arch": arch},
                             pass_configs=configs).kernel_source
    spans: dict = {}
    pattern = r"tl_cp_async16\(\(&\(\(\(half\*\)buf_dyn_shmem_ptr\)\[(.*?)\]\)\), \(&\((\w)_ptr"
    for expr, name in re.findall(pattern, src):
        const = re.search(r"\+ (\d+)\)$", expr)
        spans.setdefault(name, set()).add((int(const.group(1)) if const else 0) // 4096)
    assert set(spans) == {"Q", "K", "V"}
    assert all(len(v) == 1 for v in spans.values()) and len({min(v) for v in spans.values()}) == 3


def test_a_descriptor_tile_the_pass_cannot_rewrite_is_a_lowering_error(monkeypatch):
    # force the SS choice onto TMA copies (whole unswizzled boxes): the pass must refuse, not emit a wrong kernel
    import tilelang_cuda.tileops.gemm as gemm_impl
    from tilelang.errors import LoweringError

    monkeypatch.setattr(gemm_impl, "tma_enabled", lambda target: False)
    kernel = corpus.gemm(M=256, N=256, K=256, block_M=128, block_N=256, block_K=64, threads=256, num_stages=3)
    with pytest.raises(LoweringError, match="swizzled descriptor"):
        _lower(kernel, configs={"tl.cuda.enable_tma": True, "tl.disable_warp_specialized": True})
