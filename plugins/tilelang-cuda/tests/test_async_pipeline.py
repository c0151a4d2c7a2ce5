"""Software pipelining of cp.async copies (tilelang_cuda.passes.async_pipeline).

The staged waits are checked two ways without a GPU: the lowered program is executed symbolically for one
thread under the cp.async rules (a read of a shared tile version must follow the completion -- by a
``wait_group`` -- of the group that wrote it and a barrier after that; a copy into a version must follow a
barrier after its last read), and nvcc's PTX holds ``cp.async.wait_group s-1`` and one ``commit_group`` per stage.
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

NO_TMA = {"tl.disable_tma_lower": True}  # the cp.async pipeline on sm_90a
NO_SS = {**NO_TMA, "tl.cuda.enable_wgmma_ss": False}  # ... with the RS wgmma + b_core relayout (the fallback)


def _readme_gemm(num_stages: int, k_tiles: int = 16, block_k: int = 32):
    return corpus.gemm(M=256, N=256, K=k_tiles * block_k, block_M=128, block_N=128, block_K=block_k,
                       num_stages=num_stages)


def _dynamic_k_gemm(num_stages: int):
    """The README GEMM with a runtime K (``kdim``): guarded prologue/epilogue, A copied synchronously (its
    rows have a runtime length), B with cp.async."""
    import tilelang.language as T

    kdim = T.dynamic("kdim")

    @T.prim_func
    def gemm(A: T.Tensor((128, kdim), "float16"), B: T.Tensor((kdim, 128), "float16"),
             C: T.Tensor((128, 128), "float16")):
        with T.Kernel(1, 1, threads=128) as (_bx, _by):
            A_shared = T.alloc_shared((128, 32), "float16")
            B_shared = T.alloc_shared((32, 128), "float16")
            C_local = T.alloc_fragment((128, 128), "float32")
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(kdim, 32), num_stages=num_stages):
                T.copy(A[0, ko * 32], A_shared)
                T.copy(B[ko * 32, 0], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[0, 0])

    class _Kernel:
        def prim_func(self):
            return gemm

    return _Kernel()


def _lower(kernel, arch: str = "sm_80", capture: list | None = None, configs: dict | None = None):
    """Lower for `arch`; `capture` collects the module right after AsyncCopyPipeline."""
    import tilelang
    import tilelang_cuda.passes.async_pipeline as ap

    with warnings.catch_warnings(), wrapped_pass(ap, "AsyncCopyPipeline",
                                                 keep_output(capture if capture is not None else [])):
        warnings.simplefilter("ignore")
        return tilelang.lower(kernel.prim_func(), target={"kind": "cuda", "arch": arch}, pass_configs=configs)


class _Sim:
    """One thread (threadIdx = 0; blockIdx from `blocks`, else 0) of the lowered block, run in program order under
    cp.async rules."""

    def __init__(self, blocks: dict | None = None):
        self.blocks = blocks or {}         # launch tag ("blockIdx.x") -> index of the simulated block
        self.analyzer = tvm.sym.Analyzer()
        self.env: dict = {}
        self.time = 0
        self.groups: list[list] = []       # committed groups: list of (buffer, version)
        self.open: list = []               # issued, not yet committed
        self.done_at: dict = {}            # (buf, version) -> time its group completed
        self.writer: dict = {}             # (buf, version) -> group index (or "open")
        self.last_sync = -1
        self.last_read: dict = {}
        self.errors: list[str] = []
        self.completed = 0                 # groups [0, completed) are complete
        self.reads = 0
        # wgmma batches: a wgmma's shared reads last until the wgmma.wait_group that retires its batch
        self.wgmma_open: list = []         # (buf, version) read by wgmmas issued, not yet committed
        self.wgmma_batches: list[list] = []  # committed, not yet retired batches (oldest first)
        self.retired = 0                   # batches retired so far

    def value(self, e):
        import tvm_ffi

        e = tvm_ffi_subst(e, self.env)

        def fold_xor(x):  # the simplifier keeps XORs of constant operands
            a, b = self.analyzer.simplify(x.a), self.analyzer.simplify(x.b)
            if isinstance(a, tirx.IntImm) and isinstance(b, tirx.IntImm):
                return tirx.const(int(a.value) ^ int(b.value), "int32")
            return x

        def unwrap(x):  # a uniform pipeline guard: tvm_thread_invariant(cond) is cond
            if isinstance(x.op, tvm.ir.Op) and x.op.name == "tirx.tvm_thread_invariant":
                return x.args[0]
            return x

        e = tvm_ffi.structural_map(e, (tvm.ir.Call, unwrap))
        v = self.analyzer.simplify(tvm_ffi.structural_map(e, (tirx.BitwiseXor, fold_xor)))
        return int(v.value) if isinstance(v, tirx.IntImm) else None

    def version(self, buf, offset_or_lead, linear: bool):
        shape = [int(s) for s in buf.ty.shape]
        if len(shape) < 3:
            return (buf.name, 0)
        if linear:
            per = 1
            for s in shape[1:]:
                per *= s
            return (buf.name, self.value(offset_or_lead) // per)
        return (buf.name, self.value(offset_or_lead))

    def run(self, stmt):
        self.time += 1
        if isinstance(stmt, tirx.SeqStmt):
            for s in stmt.seq:
                self.run(s)
        elif isinstance(stmt, tirx.For):
            lo, ext = self.value(stmt.min), self.value(stmt.extent)
            if ext > 0 and _stores_only(stmt.body):
                ext = 1  # an element-wise nest (a synchronous copy, a wgmma's operand staging): its tile versions
                #          follow from the pipeline iteration alone, so one element stands for all of them
            for i in range(lo, lo + ext):
                self.env[stmt.loop_var] = tirx.const(i, "int32")
                self.run(stmt.body)
            self.env.pop(stmt.loop_var, None)
        elif isinstance(stmt, tirx.IfThenElse):
            cond = self.value(stmt.condition)
            if cond is None or cond:
                self.run(stmt.then_case)
            elif stmt.else_case is not None:
                self.run(stmt.else_case)
        elif isinstance(stmt, tirx.AttrStmt):
            if stmt.attr_key == "thread_extent":
                self.env[stmt.node.var] = tirx.const(self.blocks.get(str(stmt.node.thread_tag), 0), "int32")
            self.run(stmt.body)
        elif isinstance(stmt, tirx.Evaluate):
            self.evaluate(stmt.value)
        elif isinstance(stmt, tirx.BufferStore):
            loads: list = []
            tvm_ffi.structural_walk(stmt.value, [(tvm.ir.TensorLoad, loads.append)])
            for load in loads:
                self.read_version(load.source, load.indices[0])
            if len(stmt.buffer.ty.shape) >= 3:  # a synchronous store into a multi-buffered shared tile
                key = self.version(stmt.buffer, stmt.indices[0], linear=False)
                if self.wgmma_reading(key):
                    self.errors.append(f"store into {key} at {self.time} while an in-flight wgmma reads it")
                elif self.last_read.get(key, -1) > self.last_sync:
                    self.errors.append(f"store into {key} at {self.time} without a barrier after its last read")
                self.writer[key] = "sync"
                self.done_at[key] = self.time

    def read_version(self, buf, lead):
        """A read of the version of shared tile `buf` selected by the leading index `lead`."""
        if len(buf.ty.shape) >= 3:
            self.check_read(self.version(buf, lead, linear=False))

    def check_read(self, key):
        self.reads += 1
        w = self.writer.get(key)
        if w is not None:
            if w == "open" or (w != "sync" and w >= self.completed):
                self.errors.append(f"read of {key} at {self.time} before its copy group completed")
            elif self.done_at.get(key, 1 << 60) > self.last_sync:
                self.errors.append(f"read of {key} at {self.time} without a barrier after the wait")
        self.last_read[key] = self.time

    def wgmma_reading(self, key) -> bool:
        """Whether a wgmma not yet retired by a wait_group reads `key`."""
        return key in self.wgmma_open or any(key in batch for batch in self.wgmma_batches)

    def wgmma_wait(self, n: int):
        """``wgmma.wait_group n``: every committed batch but the newest `n` is complete; its reads end now."""
        keep = len(self.wgmma_batches) - n
        for batch in self.wgmma_batches[:max(keep, 0)]:
            for key in batch:
                self.last_read[key] = self.time
            self.retired += 1
        self.wgmma_batches = self.wgmma_batches[max(keep, 0):]

    def evaluate(self, call):
        if not isinstance(call, tvm.ir.Call) or not isinstance(call.op, tvm.ir.Op):
            return
        if call.op.name == "tirx.tvm_storage_sync":
            self.last_sync = self.time
            return
        if call.op.name != "tirx.call_extern":
            return
        name = str(call.args[0].value)
        if name == "tl_cp_async16":
            ptr = call.args[1]
            buf = next(v for v in _vars(ptr) if tirx.is_buffer_var(v))
            key = self.version(buf, ptr.args[2], linear=True)
            if self.wgmma_reading(key):
                self.errors.append(f"copy into {key} at {self.time} while an in-flight wgmma reads it")
            elif self.last_read.get(key, -1) > self.last_sync:
                self.errors.append(f"copy into {key} at {self.time} without a barrier after its last read")
            self.open.append(key)
            self.writer[key] = "open"
        elif name == "tl_cp_async_commit":
            for key in self.open:
                self.writer[key] = len(self.groups)
            self.groups.append(self.open)
            self.open = []
        elif name == "tl_cp_async_wait_group":
            n = int(call.args[1].value)
            upto = max(self.completed, len(self.groups) - n)
            for g in range(self.completed, upto):
                for key in self.groups[g]:
                    if self.writer.get(key) == g:
                        self.done_at[key] = self.time
            self.completed = upto
        elif name.startswith("tl_ldmatrix"):
            ptr = call.args[2]
            if ptr.op.name == "tirx.tvm_access_ptr":  # a user tile: tvm_access_ptr(dtype, tile, linear offset, ..)
                buf = next(v for v in _vars(ptr.args[1]) if tirx.is_buffer_var(v))
                if len(buf.ty.shape) >= 3:
                    self.check_read(self.version(buf, ptr.args[2], linear=True))
            else:  # a tile staged in the gemm: address_of(tile[...])
                load = ptr.args[0]
                self.read_version(load.source, load.indices[0])
        elif name == "tl_wgmma_commit":
            self.wgmma_batches.append(self.wgmma_open)
            self.wgmma_open = []
        elif name == "tl_wgmma_wait":  # wait_group 0
            self.wgmma_wait(0)
        elif name == "tl_wgmma_wait_group":
            self.wgmma_wait(int(call.args[1].value))
        elif name in ("tl_wgmma_fence", "tl_wgmma_fence_acc"):
            return
        elif name.startswith("tl_wgmma_"):  # shared operands read through descriptors of their addresses
            keys = []
            for load in _collect(call, tvm.ir.TensorLoad):  # address_of(tile[version, ...])
                if len(load.source.ty.shape) >= 3:
                    keys.append(self.version(load.source, load.indices[0], linear=False))
            for ptr in _collect(call, tvm.ir.Call):  # tvm_access_ptr(dtype, tile, linear offset, ...)
                if isinstance(ptr.op, tvm.ir.Op) and ptr.op.name == "tirx.tvm_access_ptr":
                    buf = next(v for v in _vars(ptr.args[1]) if tirx.is_buffer_var(v))
                    if len(buf.ty.shape) >= 3:
                        keys.append(self.version(buf, ptr.args[2], linear=True))
            for key in keys:
                self.check_read(key)
                self.wgmma_open.append(key)  # read until the wait that retires its batch


def _stores_only(stmt) -> bool:
    """Whether `stmt` is a nest of loops around buffer stores (no calls, barriers or branches)."""
    kinds: list = []
    tvm_ffi_walk_stmts(stmt, kinds)
    return bool(kinds) and all(k in (tirx.For, tirx.BufferStore, tirx.SeqStmt) for k in kinds)


def tvm_ffi_walk_stmts(node, kinds):
    import tvm_ffi

    tvm_ffi.structural_walk(node, [(tirx.Stmt, lambda s: kinds.append(type(s)))])


def _vars(node):
    found = []
    tvm_ffi_walk(node, found)
    return found


def tvm_ffi_walk(node, found):
    import tvm_ffi

    tvm_ffi.structural_walk(node, [(tvm.ir.Var, found.append)])


def tvm_ffi_subst(e, env):
    import tvm_ffi

    return tvm_ffi.structural_map(e, (tvm.ir.Var, lambda v: env.get(v, v))) if env else e


@pytest.mark.parametrize("num_stages,k_tiles", [(2, 1), (2, 5), (3, 1), (3, 2), (3, 16), (4, 3), (4, 9)])
def test_pipelined_gemm_waits_are_sufficient(num_stages, k_tiles):
    captured: list = []
    src = _lower(_readme_gemm(num_stages, k_tiles), capture=captured).kernel_source
    (mod,) = captured
    sim = _Sim()
    for _, func in mod.functions.items():
        sim.run(func.body)
    assert sim.errors == []
    assert sim.reads > 0 and len(sim.groups) == k_tiles  # one commit group per stage (A and B together)
    waits = [int(n) for n in re.findall(r"tl_cp_async_wait_group\((\d+)\)", src)]
    if k_tiles > num_stages:  # the steady loop keeps num_stages - 1 groups in flight
        assert waits[0] == num_stages - 1


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
@pytest.mark.parametrize("num_stages", [2, 3])
def test_dynamic_trip_counts_keep_the_waits_sufficient(num_stages, arch):
    # sm_90a: the guarded epilogue holds a wgmma, whose staged B operand needs barriers inside the guard
    captured: list = []
    src = _lower(_dynamic_k_gemm(num_stages), arch=arch, capture=captured, configs=NO_TMA).kernel_source
    (mod,) = captured
    assert f"tl_cp_async_wait_group({num_stages - 1})" in src
    assert ("tl_wgmma_" if arch == "sm_90a" else "tl_mma_") in src
    for _, func in mod.functions.items():
        kdim = [v for v in _vars(func.body) if v.name == "kdim" and not tirx.is_buffer_var(v)]
        assert kdim
        for k in (32, 64, 96, 160, 320):
            sim = _Sim()
            sim.env = {v: tirx.const(k, "int32") for v in kdim}
            sim.run(func.body)
            assert sim.errors == [], (k, sim.errors)
            assert sim.reads > 0


def _drop_barriers(ev):
    if isinstance(ev.value, tvm.ir.Call) and isinstance(ev.value.op, tvm.ir.Op) \
            and ev.value.op.name == "tirx.tvm_storage_sync":
        return tirx.Evaluate(tirx.const(0, "int32"))
    return ev


def test_runtime_k_wgmma_guards_are_uniform_and_checked():
    # the epilogue's guard (j < n) reads no thread index: it is marked thread-invariant so InsertBarriers may
    # keep the wgmma's barriers inside it; the simulation follows the guard and checks the staged B reads
    captured: list = []
    _lower(_dynamic_k_gemm(2), arch="sm_90a", capture=captured, configs=NO_TMA)
    (mod,) = captured
    (func,) = mod.functions.values()
    guards = [s.condition for s in _collect(func.body, tirx.IfThenElse)
              if isinstance(s.condition, tvm.ir.Call) and s.condition.op.name == "tirx.tvm_thread_invariant"]
    assert guards and all(v.name == "kdim" for g in guards for v in _vars(g))
    kdim = [v for v in _vars(func.body) if v.name == "kdim" and not tirx.is_buffer_var(v)]
    for k in (32, 96):
        sims = []
        for body in (func.body, tvm_ffi.structural_map(func.body, (tirx.Evaluate, _drop_barriers))):
            sim = _Sim()
            sim.env = {v: tirx.const(k, "int32") for v in kdim}
            sim.run(body)
            sims.append(sim)
        assert sims[0].errors == [] and sims[0].reads >= 2 * (k // 32)  # A and B of every stage
        assert any("without a barrier" in e for e in sims[1].errors)


@needs_nvcc
@pytest.mark.parametrize("configs", [NO_TMA, {"tl.cuda.enable_tma": True, "tl.disable_warp_specialized": True}],
                         ids=["cp_async", "tma"])
def test_runtime_k_wgmma_gemm_compiles_to_cubin(configs):
    from tilelang_cuda.compiler import compile_artifact

    binary = compile_artifact(_lower(_dynamic_k_gemm(3), arch="sm_90a", configs=configs))
    assert binary.cubin[:4] == b"\x7fELF"
    assert "wgmma.mma_async" in binary.ptx and "wgmma.wait_group" in binary.ptx


def _collect(node, kind):
    found: list = []
    tvm_ffi.structural_walk(node, [(kind, found.append)])
    return found


def test_a_wrong_wait_count_is_caught_by_the_simulation():
    captured: list = []
    _lower(_readme_gemm(3, 8), capture=captured)
    (mod,) = captured

    def loosen(ev):
        if (isinstance(ev.value, tvm.ir.Call) and isinstance(ev.value.op, tvm.ir.Op)
                and ev.value.op.name == "tirx.call_extern" and str(ev.value.args[0].value) == "tl_cp_async_wait_group"):
            return tirx.Evaluate(tirx.call_extern("void", "tl_cp_async_wait_group", int(ev.value.args[1].value) + 1))
        return ev

    import tvm_ffi

    sim = _Sim()
    for _, func in mod.functions.items():
        sim.run(tvm_ffi.structural_map(func.body, (tirx.Evaluate, loosen)))
    assert any("before its copy group completed" in e for e in sim.errors)


def test_loops_declaring_buffers_at_top_level_keep_their_declarations():
    # flash attention's loop body allocates a scratch tile at its top level: marking its statements must not
    # end that allocation's scope early, and core pipelines the loop (test_attention_pipeline.py)
    src = _lower(corpus.flash_attention(num_stages=2)).kernel_source
    assert "tl_cp_async_wait_group(2)" in src and "tl_mma_" in src


def test_serial_loops_keep_waiting_at_once():
    src = _lower(_readme_gemm(1, 4)).kernel_source
    assert re.findall(r"tl_cp_async_wait_group\((\d+)\)", src) == ["0"]


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_readme_gemm_ptx_overlaps_three_stages(arch):
    from tilelang_cuda.compiler import compile_artifact

    art = _lower(_readme_gemm(3, 16), arch=arch, configs=NO_TMA)  # sm_90a: TMA in test_tma.py
    ptx = compile_artifact(art).ptx
    assert ("wgmma.mma_async" if arch == "sm_90a" else "mma.sync.aligned") in ptx
    waits = re.findall(r"cp\.async\.wait_group (\d+)", ptx)
    # sm_90a: the stage-(k + 2) copies follow the in-flight wgmma batch (test_wgmma_async.py): one group pending
    assert ("1" if arch == "sm_90a" else "2") in waits and set(waits) <= {"0", "1", "2"}
    # two prologue stages + one per steady iteration (a loop in the PTX) : at least three commit sites
    assert ptx.count("cp.async.commit_group") >= 3


# ----------------------------------------------------------------------------- swizzled operand tiles
def _ldmatrix_slots(mod, threads: int = 32):
    """For each ldmatrix call (in program order) and each lane: the 16-byte bank slot (0..7) it reads."""
    per_call: list[list[int]] = []
    for tid in range(threads):
        sim = _Sim()
        calls: list = []

        def record(call, sim=sim, calls=calls):
            if (isinstance(call, tvm.ir.Call) and isinstance(call.op, tvm.ir.Op) and call.op.name == "tirx.call_extern"
                    and str(call.args[0].value).startswith("tl_ldmatrix")):
                ptr = call.args[2]
                if ptr.op.name == "tirx.tvm_access_ptr":  # tvm_access_ptr(dtype, tile, linear offset, ..)
                    offset = sim.value(ptr.args[2])
                else:  # address_of(tile[...])
                    load = ptr.args[0]
                    shape = [int(s) for s in load.source.ty.shape]
                    offset = 0
                    for i, s in zip(load.indices, shape):
                        offset = offset * s + sim.value(i)
                calls.append((offset * 2 // 16) % 8)

        sim.evaluate = record
        for _, func in mod.functions.items():
            sim.env = {}
            _run_with_tid(sim, func.body, tid)
        for n, slot in enumerate(calls):
            if tid == 0:
                per_call.append([])
            per_call[n].append(slot)
    return per_call


def _run_with_tid(sim, stmt, tid):
    if isinstance(stmt, tirx.AttrStmt) and stmt.attr_key == "thread_extent":
        sim.env[stmt.node.var] = tirx.const(tid if "threadIdx" in str(stmt.node.thread_tag) else 0, "int32")
        return _run_with_tid(sim, stmt.body, tid)
    if isinstance(stmt, tirx.SeqStmt):
        for s in stmt.seq:
            _run_with_tid(sim, s, tid)
        return None
    return sim.run(stmt)


def _capture_after_swizzle(kernel, swizzle: bool = True):
    import tilelang_cuda.passes.swizzle_shared_operands as sw

    captured: list = []

    def wrap(mod, inner):
        out = inner(mod) if swizzle else mod
        captured.append(out)
        return out

    with wrapped_pass(sw, "SwizzleSharedOperands", wrap):
        _lower(kernel)
    return captured[0]


def _conflicted_phases(per_call):
    # each group of 8 lanes (one 8x8 matrix) is one shared-memory phase: distinct slots = no bank conflict
    return sum(len(set(lanes[g:g + 8])) < 8 for lanes in per_call for g in range(0, 32, 8))


@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, True)])
def test_swizzled_operands_make_ldmatrix_conflict_free(trans_a, trans_b):
    kernel = corpus.gemm(M=128, N=128, K=64, block_M=128, block_N=128, block_K=32, num_stages=2,
                         trans_A=trans_a, trans_B=trans_b)
    plain = _ldmatrix_slots(_capture_after_swizzle(kernel, swizzle=False))
    swizzled = _ldmatrix_slots(_capture_after_swizzle(kernel))
    assert len(plain) == len(swizzled) > 0
    assert _conflicted_phases(plain) > 0  # the row-major tiles conflict (what the pass is for)
    assert _conflicted_phases(swizzled) == 0


@pytest.mark.parametrize("shape,dtype", [((128, 32), "float16"), ((32, 128), "float16"), ((64, 16), "float16"),
                                         ((3, 64, 64), "bfloat16"), ((64, 128), "int8")])
def test_swizzle_is_a_chunk_preserving_permutation_of_each_row(shape, dtype):
    from tilelang_cuda.passes.swizzle_shared_operands import _swizzle_col, swizzle_params

    params = swizzle_params(list(shape), dtype)
    assert params is not None
    vec = params[0]
    analyzer = tvm.sym.Analyzer()
    rows, cols = shape[-2], shape[-1]
    for r in range(rows):
        image = [int(analyzer.simplify(_swizzle_col(tirx.const(r, "int32"), tirx.const(c, "int32"), params)))
                 for c in range(cols)]
        assert sorted(image) == list(range(cols))
        assert all(image[c] // vec == image[c - c % vec] // vec and image[c] % vec == c % vec for c in range(cols))


def test_tiles_that_cannot_be_swizzled_are_left_alone():
    from tilelang_cuda.passes.swizzle_shared_operands import swizzle_params

    assert swizzle_params([128, 8], "float16") is None      # one 16-byte chunk per row
    assert swizzle_params([12, 64], "float16") is None      # rows not a multiple of 8
    assert swizzle_params([64, 96], "float16") is None      # 12 chunks: XOR would leave the row


# ----------------------------------------------------------------------------- shared scratch tiles
def test_pipelined_wgmma_gemm_fits_hopper_shared_memory():
    from tilelang_cuda.passes.share_scratch_tiles import max_shared_bytes

    kernel = corpus.gemm(M=512, N=512, K=512, block_M=128, block_N=256, block_K=64, threads=256, num_stages=3)
    art = _lower(kernel, arch="sm_90a", configs=NO_SS)
    src = art.kernel_source
    assert "tl_wgmma_m64n256k16" in src and "tl_cp_async_wait_group(2)" in src
    # 3 versions of A (16 KiB) and B (32 KiB) + ONE 32 KiB b_core, not one per pipelined gemm copy
    assert art.metadata["shared_bytes"] == 3 * (16 + 32) * 1024 + 32 * 1024 <= max_shared_bytes(90)
    # the SS path reads the tiles themselves: no b_core at all
    art = _lower(kernel, arch="sm_90a", configs=NO_TMA)
    assert "tl_wgmma_ss_m64n256k16" in art.kernel_source
    assert art.metadata["shared_bytes"] == 3 * (16 + 32) * 1024


def test_kernels_that_fit_keep_their_scratch_tiles():
    from tilelang_cuda.passes.share_scratch_tiles import ShareScratchTiles, shared_bytes

    captured: list = []
    _lower(_readme_gemm(3, 4), arch="sm_90a", capture=captured, configs=NO_SS)  # well under the limit
    out = ShareScratchTiles()(captured[0])
    # three A/B versions of 8 KiB each + one b_core scratch tile per pipelined gemm call (three), unmerged
    assert [shared_bytes(f.body) for f in out.functions.values()] == [3 * (8 + 8) * 1024 + 3 * 8 * 1024]


def _loop_bodies(src: str, needle: str) -> list[str]:
    """The bodies of the innermost ``for`` loops of `src` whose body matches regex `needle` (brace matching)."""
    bodies = []
    for m in re.finditer(r"for \(int [^)]*\) \{", src):
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(src[i], 0)
            i += 1
        body = src[m.end():i - 1]
        if re.search(needle, body) and "for (" not in body:
            bodies.append(body)
    return bodies


def _steady_loop(src: str) -> str:
    """The body of the pipelined K loop (the outermost loop holding a wgmma)."""
    for m in re.finditer(r"for \(int k = [^)]*\) \{", src):
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(src[i], 0)
            i += 1
        return src[m.end():i - 1]
    raise AssertionError("no K loop")


@pytest.mark.parametrize("configs", [NO_SS, {"tl.cuda.enable_tma": True, "tl.disable_warp_specialized": True}],
                         ids=["cp_async", "tma"])
def test_wgmma_b_copy_loop_has_no_block_barriers(configs):
    # b_core lives in static shared memory, so TVM's ThreadSync("shared.dyn") no longer sees the copy loop's
    # b_core writes clash with the next iteration's B-tile reads (it put a barrier in every iteration)
    kernel = corpus.gemm(M=512, N=512, K=512, block_M=128, block_N=256, block_K=64, threads=256, num_stages=3)
    src = _lower(kernel, arch="sm_90a", configs=configs).kernel_source
    # the B copy loop: a shared -> shared store (into b_core, or the dynamic pool where b_core once lived)
    pool = r"\(\(half\*\)buf_dyn_shmem_ptr\)"
    loops = _loop_bodies(src, rf"(b_core_ptr|{pool})\[[^;=]*\] = {pool}\[")
    assert len(loops) == 3  # the steady loop's gemm and two epilogue copies
    assert all("__syncthreads()" not in body for body in loops)
    steady = _steady_loop(src)
    # the barriers that are needed stay: before b_core is overwritten, between its writes and the wgmma
    # reading it, and after the wgmma's wait (before the next stage overwrites b_core / the B tile)
    copy = steady.index(loops[0])
    assert steady[:copy].rstrip().rsplit("\n", 1)[-1].strip().startswith("for (")
    before = steady[:copy].rsplit("for (", 1)[0].rstrip()
    assert before.endswith("__syncthreads();")
    after = steady[copy + len(loops[0]):]
    assert after.index("__syncthreads()") < after.index("tl_wgmma_fence()")
    assert after.rstrip().endswith("__syncthreads();")
    assert steady.count("__syncthreads()") <= 4  # was 64 (one per copy iteration) + 3


def test_static_scratch_tiles_are_merged_past_the_static_limit():
    from tilelang_cuda.passes.share_scratch_tiles import MAX_STATIC_SHARED_BYTES, ShareScratchTiles, shared_bytes

    kernel = corpus.gemm(M=512, N=512, K=512, block_M=128, block_N=256, block_K=64, threads=256, num_stages=2)
    captured: list = []
    _lower(kernel, arch="sm_90a", capture=captured, configs=NO_SS)
    func = next(iter(captured[0].functions.values()))
    # two 32 KiB b_core tiles (steady loop + epilogue): 64 KiB static, though all tiles fit the 227 KiB limit
    assert shared_bytes(func.body, ("shared",)) == 64 * 1024 > MAX_STATIC_SHARED_BYTES
    out = next(iter(ShareScratchTiles()(captured[0]).functions.values()))
    assert shared_bytes(out.body, ("shared",)) == 32 * 1024


@needs_nvcc
def test_static_b_core_gemm_compiles_to_cubin():
    from tilelang_cuda.compiler import compile_artifact
    from tilelang_cuda.execution_backend import _dynamic_shared_bytes

    for stages in (2, 3):
        kernel = corpus.gemm(M=512, N=512, K=512, block_M=128, block_N=256, block_K=64, threads=256,
                             num_stages=stages)
        art = _lower(kernel, arch="sm_90a", configs=NO_SS)
        binary = compile_artifact(art)
        assert "wgmma.mma_async" in binary.ptx
        assert binary.resources["static_shared_bytes"] == 32 * 1024  # one static b_core
        assert art.metadata["shared_bytes"] == stages * (16 + 32) * 1024 + 32 * 1024
        # the launch asks for the dynamic pool only: b_core is declared by the kernel itself
        assert _dynamic_shared_bytes(art) == stages * (16 + 32) * 1024


@pytest.mark.parametrize("pre_swizzled", [False, True])
def test_tiles_with_an_applied_layout_are_not_swizzled_again(pre_swizzled):
    from tilelang_cuda.passes.swizzle_shared_operands import _rewritable, swizzle_params

    buf = tirx.decl_buffer((32, 64), "float16", name="A_shared", scope="shared.dyn")
    i, j = tirx.Var("i", "int32"), tirx.Var("j", "int32")
    col = tirx.bitwise_xor(j, 8) if pre_swizzled else j
    store = tirx.BufferStore(buf, tirx.const(0, "float16"), [i, col])
    body = tirx.SeqStmt([tirx.AllocBuffer(buf), tirx.For(i, 0, 32, tirx.ForKind.SERIAL,
                                                         tirx.For(j, 0, 64, tirx.ForKind.SERIAL, store))])
    params = swizzle_params([32, 64], "float16")
    assert _rewritable(body, buf, params, tvm.sym.Analyzer()) is not pre_swizzled
