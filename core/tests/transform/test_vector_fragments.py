"""Vector fragment layouts (pipeline option ``fragment_vector_lanes``): ownership map, partitioned nests, fallback
to the cyclic layout, and that the option left unset changes nothing."""

import engine_kernels as K
import numpy as np
import pytest
import tvm
from transform_helpers import as_module

import tilelang.language as T
from tilelang.errors import LoweringError
from tilelang.layout import CyclicFragment, evaluate_index, fragment_vector_lanes, make_swizzled_layout, unravel
from tilelang.transform import AttachLayouts, LayoutInference, LowerTileOps, PartitionParallel
from tilelang.transform import utils as C

VEC = {"has_threads": True, "fragment_vector_lanes": 4}


def lower(func, target=None):
    target = target or {"kind": "cuda"}
    mod = as_module(func)
    for factory in (LayoutInference, LowerTileOps, PartitionParallel):
        mod = factory(target)(mod)
    return mod


def test_vector_fragment_ownership_map():
    frag = CyclicFragment((8, 16), 4, vector_lanes=4)
    thread, local = frag.ownership()
    flat_t, flat_l = thread.reshape(-1), local.reshape(-1)
    f = np.arange(128)
    assert (flat_t == (f // 4) % 4).all() and (flat_l == (f // 16) * 4 + f % 4).all()
    assert flat_t[:8].tolist() == [0, 0, 0, 0, 1, 1, 1, 1]  # runs of 4 consecutive elements per thread
    assert flat_l[16:20].tolist() == [4, 5, 6, 7]  # thread 0's second run
    assert frag.local_size == 32
    pairs = set(zip(flat_t.tolist(), flat_l.tolist()))  # every (thread, register) holds exactly one element
    assert len(pairs) == 128 and all(0 <= r < frag.local_size for _, r in pairs)
    # one lane is the cyclic layout
    cyclic_t, cyclic_l = CyclicFragment((8, 16), 4).ownership()
    assert (cyclic_t.reshape(-1) == f % 4).all() and (cyclic_l.reshape(-1) == f // 4).all()


def test_vector_fragment_rejects_bad_lanes():
    with pytest.raises(ValueError, match="innermost extent"):
        CyclicFragment((8, 6), 4, vector_lanes=4)
    with pytest.raises(ValueError, match="positive int"):
        CyclicFragment((8, 8), 4, vector_lanes=0)
    assert CyclicFragment((8, 6), 4, "replicated", vector_lanes=4).vector_lanes == 1


def test_lane_decision():
    assert fragment_vector_lanes([32, 32], 128, 4) == 4
    assert fragment_vector_lanes([32, 1], 8, 4) == 4  # unit dims are skipped
    assert fragment_vector_lanes([32, 6], 4, 4) == 1  # innermost extent not a multiple of the lanes
    assert fragment_vector_lanes([4, 8], 128, 4) == 1  # fewer elements than lanes * threads: threads would idle
    assert fragment_vector_lanes([32, 32], 128, 1) == 1


def _simulate(body, local_buf_name, threads, frag):
    """Run every (thread, k, lane) of the one partitioned store into `local_buf_name`; returns the global flat
    offsets each thread register was loaded from."""
    store = C.collect(body, tvm.tirx.BufferStore, lambda st: str(st.buffer.name) == local_buf_name)[0]
    loops = C.collect(body, tvm.tirx.For)
    tx = next(v for v in C.collect(body, tvm.tirx.Var) if str(v.name) == "tx" or "threadIdx" in str(v.name))
    k = next(lp for lp in loops if str(lp.loop_var.name) == "k")
    v = next(lp for lp in loops if str(lp.loop_var.name) == "v")
    assert v.kind == tvm.tirx.ForKind.VECTORIZED and int(v.extent) == frag.vector_lanes
    seen = {}
    for t in range(threads):
        for kk in range(int(k.extent)):
            for vv in range(int(v.extent)):
                env = {tx: t, k.loop_var: kk, v.loop_var: vv}
                reg = int(evaluate_index(store.indices[0], env))
                src = store.value
                flat = int(evaluate_index(src.indices[0], env))
                seen[flat] = (t, reg)
    return seen


def test_partition_parallel_splits_in_vector_runs(options):
    options(VEC)

    @T.prim_func
    def before(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=4):
            F = T.alloc_fragment((64,), "float32")
            for i in T.Parallel(64):
                F[i] = A[i]
            for i in T.Parallel(64):
                B[i] = F[i] * 2.0

    after = LayoutInference({"kind": "cuda"})(as_module(before))
    ann = next(a.annotations for a in C.allocations(after["main"].body) if str(a.buffer.name) == "F")
    assert str(ann["tl.fragment"]) == "partitioned" and int(ann["tl.vector_lanes"]) == 4
    body = lower(before)["main"].body
    sizes = {str(a.buffer.name): int(a.buffer.ty.shape[0]) for a in C.allocations(body)}
    assert sizes["F_local"] == 16
    frag = CyclicFragment((64,), 4, vector_lanes=4)
    seen = _simulate(body, "F_local", 4, frag)
    assert sorted(seen) == list(range(64))  # every element loaded exactly once
    for flat, (t, reg) in seen.items():
        idx = unravel(flat, [64])
        assert (frag.thread(idx), frag.local(idx)) == (t, reg), flat
    vec = [lp for lp in C.collect(body, tvm.tirx.For) if lp.kind == tvm.tirx.ForKind.VECTORIZED]
    assert len(vec) == 2  # both nests, with the same split


def test_partition_parallel_2d_guarded(options):
    options(VEC)

    @T.prim_func
    def before(A: T.Tensor((5, 8), "float32")):
        with T.Kernel(1, threads=4):
            F = T.alloc_fragment((5, 8), "float32")
            for i, j in T.Parallel(5, 8):
                F[i, j] = A[i, j]
            for i, j in T.Parallel(5, 8):
                A[i, j] = F[i, j] + 1.0

    body = lower(before)["main"].body
    frag = CyclicFragment((5, 8), 4, vector_lanes=4)
    store = C.collect(body, tvm.tirx.BufferStore, lambda st: str(st.buffer.name) == "F_local")[0]
    tx = next(v for v in C.collect(body, tvm.tirx.Var) if str(v.name) == "tx" or "threadIdx" in str(v.name))
    k = next(lp for lp in C.collect(body, tvm.tirx.For) if str(lp.loop_var.name) == "k")
    v = next(lp for lp in C.collect(body, tvm.tirx.For) if str(lp.loop_var.name) == "v")
    guard = C.collect(body, tvm.tirx.IfThenElse)[0].condition  # 40 elements: not a multiple of 4 lanes x 4 threads
    seen = {}
    for t in range(4):
        for kk in range(int(k.extent)):
            for vv in range(4):
                env = {tx: t, k.loop_var: kk, v.loop_var: vv}
                if not bool(evaluate_index(guard, env)):
                    continue
                i, j = (int(evaluate_index(x, env)) for x in store.value.indices)
                assert (frag.thread([i, j]), frag.local([i, j])) == (t, int(evaluate_index(store.indices[0], env)))
                seen[i, j] = t
    assert len(seen) == 40


def test_fallback_to_cyclic_when_inner_extent_does_not_divide(options):
    options(VEC)

    @T.prim_func
    def before(A: T.Tensor((16, 6), "float32"), B: T.Tensor((16, 8), "float32")):
        with T.Kernel(1, threads=4):
            F = T.alloc_fragment((16, 6), "float32")
            G = T.alloc_fragment((16, 8), "float32")
            for i, j in T.Parallel(16, 6):
                F[i, j] = A[i, j]
            for i, j in T.Parallel(16, 6):
                A[i, j] = F[i, j] + 1.0
            for i, j in T.Parallel(16, 8):
                G[i, j] = B[i, j]
            for i, j in T.Parallel(16, 8):
                B[i, j] = G[i, j] + 1.0

    after = LayoutInference({"kind": "cuda"})(as_module(before))
    anns = {str(a.buffer.name): dict(a.annotations) for a in C.allocations(after["main"].body)}
    assert "tl.vector_lanes" not in anns["F"] and str(anns["F"]["tl.fragment"]) == "partitioned"
    assert int(anns["G"]["tl.vector_lanes"]) == 4
    body = lower(before)["main"].body
    sizes = {str(a.buffer.name): int(a.buffer.ty.shape[0]) for a in C.allocations(body)}
    assert sizes["F_local"] == 16 * 6 // 4 and sizes["G_local"] == 16 * 8 // 4
    vec = [lp for lp in C.collect(body, tvm.tirx.For) if lp.kind == tvm.tirx.ForKind.VECTORIZED]
    assert len(vec) == 2  # G's two nests only


def test_impure_bodies_run_lanes_serially(options):
    options(VEC)
    from tilelang.testing.corpus import atomic_scalar

    body = lower(atomic_scalar().func)["main"].body
    lanes = [lp for lp in C.collect(body, tvm.tirx.For) if str(lp.loop_var.name) == "v"]
    assert lanes  # the T.Parallel(block_M, N) nest is split in runs of 4 ...
    for lp in lanes:  # ... whose lanes calling atomics run one after the other
        calls = [str(getattr(c.op, "name", "")) for c in C.collect(lp.body, tvm.ir.Call)]
        assert any("extern" in c or "atomic" in c for c in calls) and lp.kind == tvm.tirx.ForKind.SERIAL, calls


@pytest.mark.parametrize("lanes", [3, 0, "4", True, 32])
def test_bad_option_is_a_lowering_error(options, lanes):
    options({"has_threads": True, "fragment_vector_lanes": lanes})
    # TVM re-raises a pass's exception as a RuntimeError; the engine reports the LoweringError the pass recorded
    with pytest.raises((LoweringError, RuntimeError), match="'fragment_vector_lanes' must be a power-of-two int"):
        LayoutInference({"kind": "cuda"})(as_module(K.elementwise_add()))
    from tilelang.transform.layout_inference import requested_lanes

    with pytest.raises(LoweringError, match="fragment_vector_lanes"):
        requested_lanes({"fragment_vector_lanes": lanes})


@pytest.mark.parametrize("kernel", ["elementwise_add", "softmax", "flash_attention", "gemm", "reduce_rows"])
@pytest.mark.parametrize("kind", ["cuda", "webgpu"])
def test_option_unset_changes_nothing(options, kernel, kind):
    opts = {"has_threads": True, **({"static_shared_memory": True} if kind == "webgpu" else {})}
    func = getattr(K, kernel)()
    options(opts)
    default = lower(func, {"kind": kind})["main"].script()
    options({**opts, "fragment_vector_lanes": 1})
    assert lower(func, {"kind": kind})["main"].script() == default
    assert "tl.vector_lanes" not in default and "vectorized" not in default
    options({**opts, "fragment_vector_lanes": 4})
    assert lower(func, {"kind": kind})["main"].script() != default  # the option does reach these passes


@pytest.mark.parametrize("kernel", ["elementwise_add", "softmax", "flash_attention", "gemm", "reduce_rows",
                                    "cumsum"])
def test_every_partitioned_access_is_the_threads_own(options, kernel):
    """With the option on, each partitioned fragment register a nest touches is the one `Fragment` assigns:
    the nests agree with the layout (checked by PartitionParallel raising on a mismatch of widths) and the
    kernel lowers."""
    options(VEC)
    body = lower(getattr(K, kernel)())["main"].body
    assert not [lp for lp in C.collect(body, tvm.tirx.For) if C.is_parallel(lp)]


@pytest.mark.parametrize("name", ["elementwise_add", "softmax", "gemm_nn", "row_sum", "cumsum", "flash_attention"])
def test_corpus_correct_on_cpu_with_the_option_on(options, name):
    """Thread-less targets hold every fragment whole, so the option must leave them correct (and unchanged)."""
    import torch

    import tilelang
    from tilelang.testing.corpus import CORPUS

    options({"has_threads": False, "vectorize": True, "fragment_vector_lanes": 4})
    ck = CORPUS[name]()
    art = tilelang.lower(ck.func, target="cpu")
    inputs, outs = ck.make_inputs(), ck.make_outputs()
    art.rt_mod[art.name](*ck.call_args(inputs, outs))
    refs = ck.ref(*inputs)
    for out, expected in zip(outs, refs if isinstance(refs, tuple) else (refs,)):
        torch.testing.assert_close(out.float(), expected.float(), atol=ck.atol, rtol=ck.rtol)


def test_gemm_scope_vectorises_only_what_meets_a_gemm_accumulator(options):
    options({**VEC, "fragment_vector_scope": "gemm"})

    @T.prim_func
    def before(A: T.Tensor((32, 32), "float32"), B: T.Tensor((32, 32), "float32"), C: T.Tensor((32, 32), "float32")):
        with T.Kernel(1, threads=32):
            A_s = T.alloc_shared((32, 32), "float32")
            B_s = T.alloc_shared((32, 32), "float32")
            acc = T.alloc_fragment((32, 32), "float32")
            out = T.alloc_fragment((32, 32), "float32")  # tied to acc through the nest below
            other = T.alloc_fragment((32, 32), "float32")  # no gemm in reach
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.gemm(A_s, B_s, acc, clear_accum=True)
            for i, j in T.Parallel(32, 32):
                out[i, j] = acc[i, j] * 2.0
            T.copy(out, C)
            T.copy(A, other)
            for i, j in T.Parallel(32, 32):
                B[i, j] = other[i, j] + 1.0

    after = LayoutInference({"kind": "cuda"})(as_module(before))
    anns = {str(a.buffer.name): dict(a.annotations) for a in C.allocations(after["main"].body)
            if C.scope_of(a.buffer) == "local.fragment"}
    assert int(anns["acc"]["tl.vector_lanes"]) == int(anns["out"]["tl.vector_lanes"]) == 4
    assert "tl.vector_lanes" not in anns["other"] and str(anns["other"]["tl.fragment"]) == "partitioned"
    body = lower(before)["main"].body
    sizes = {str(a.buffer.name): int(a.buffer.ty.shape[0]) for a in C.allocations(body)}
    assert sizes["acc_local"] == sizes["other_local"] == 32  # 1024 elements over 32 threads either way
    # nests over no vector fragment (the shared-tile copies, `other`'s) stay cyclic: only acc/out nests vectorise
    lanes = C.collect(body, tvm.tirx.For, lambda lp: str(lp.loop_var.name) == "v")
    assert lanes
    for lp in lanes:
        touched = {str(st.buffer.name) for st in C.collect(lp.body, tvm.tirx.BufferStore)}
        touched |= {str(ld.source.name) for ld in C.collect(lp.body, tvm.ir.TensorLoad)}
        assert touched & {"acc_local", "out_local"} and "other_local" not in touched, touched


def test_bad_scope_is_a_lowering_error(options):
    options({**VEC, "fragment_vector_scope": "some"})
    with pytest.raises((LoweringError, RuntimeError), match="'fragment_vector_scope' must be one of"):
        LayoutInference({"kind": "cuda"})(as_module(K.gemm()))


def _bits_program(offset=0, n=1024):
    @T.prim_func
    def main(A: T.Tensor((8, n + 8), "float16"), B: T.Tensor((8, n), "float32"), S: T.Tensor((8,), "float32")):
        with T.Kernel(8, threads=128) as row:
            a = T.alloc_fragment((1, n), "float16")
            b = T.alloc_fragment((1, n), "float32")
            s = T.alloc_fragment((1,), "float32")
            T.copy(A[row, offset], a)
            for i, j in T.Parallel(1, n):
                b[i, j] = T.cast(a[i, j], "float32") * 2.0
            T.copy(b, B[row, 0])
            T.reduce_sum(b, s, dim=1)
            T.copy(s, S[row])

    return main


def _loops(mod):
    return C.collect(mod["main"].body, tvm.tirx.For)


def test_vector_bits_split_runs_into_128_bit_vectors(options):
    options({"has_threads": True, "fragment_vector_bits": 128})
    mod = lower(_bits_program())
    # the loops that move the row (a reduction's own staging differs between backends' reduce lowerings)
    vec = [lp for lp in _loops(mod) if lp.kind == tvm.tirx.ForKind.VECTORIZED and C.collect(
        lp.body, tvm.tirx.BufferStore, lambda st: str(st.buffer.name) in ("a_local", "b_local", "B"))]
    # fp16 copy: one 8-lane vector; the fp16 -> fp32 nest and the fp32 copy: two 4-lane vectors per 8-lane run
    assert sorted(int(lp.extent) for lp in vec) == [4, 4, 8]
    split = [lp for lp in _loops(mod) if str(lp.loop_var.name) == "vo"]
    assert split and all(int(lp.extent) == 2 for lp in split)


def test_vector_bits_misaligned_global_runs_stay_scalar(options):
    # A[row, 3:]: every 8-lane run starts 3 elements past a 16-byte boundary: no vector access may be emitted
    options({"has_threads": True, "fragment_vector_bits": 128})
    mod = lower(_bits_program(offset=3))
    copy_a = [lp for lp in _loops(mod) if C.collect(lp.body, tvm.tirx.BufferStore,
                                                    lambda st: str(st.buffer.name) == "a_local")]
    lane_loops = [lp for lp in copy_a if str(lp.loop_var.name) == "v"]
    assert lane_loops and all(lp.kind == tvm.tirx.ForKind.SERIAL for lp in lane_loops)


def test_fold_over_lanes_is_never_vectorised(options):
    # a nest folding a tile into one per-thread register (a reduction's partial) stores every lane into that one
    # register: as a vector only the last lane would land
    @T.prim_func
    def fold(A: T.Tensor((4, 256), "float32"), S: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128):
            x = T.alloc_fragment((4, 256), "float32")
            acc = T.alloc_local((1,), "float32")
            T.copy(A, x)
            acc[0] = 0.0
            for i, j in T.Parallel(4, 256):
                acc[0] += x[i, j]
            S[T.get_thread_binding()] = acc[0]

    options({"has_threads": True, "fragment_vector_lanes": 4})
    mod = lower(fold)
    folds = [lp for lp in _loops(mod) if C.collect(lp.body, tvm.tirx.BufferStore,
                                                   lambda st: str(st.buffer.name) == "acc")]
    assert folds and all(lp.kind != tvm.tirx.ForKind.VECTORIZED for lp in folds)
    copies = [lp for lp in _loops(mod) if lp.kind == tvm.tirx.ForKind.VECTORIZED]
    assert copies  # the copy into the tile still moves 4-lane vectors


def _staged_copy(offset=0, swizzle=False):
    """An epilogue's shape: a tile through shared memory to global, no fragment in the copy out."""

    @T.prim_func
    def main(A: T.Tensor((64, 256), "float16"), B: T.Tensor((64, 264), "float16")):
        with T.Kernel(1, threads=128):
            S = T.alloc_shared((64, 256), "float16")
            if swizzle:
                T.annotate_layout({S: make_swizzled_layout(S)})
            T.copy(A, S)
            T.copy(S, B[0, offset])

    return main


def _lower_laid_out(func):
    mod = AttachLayouts({"kind": "cuda"})(as_module(func))
    for factory in (LayoutInference, LowerTileOps, PartitionParallel):
        mod = factory({"kind": "cuda"})(mod)
    return mod


def _copy_out_loops(mod):
    return [lp for lp in _loops(mod) if C.collect(lp.body, tvm.tirx.BufferStore, lambda st: str(st.buffer.name) == "B")]


def test_vector_bits_give_a_nest_without_fragments_aligned_vectors(options):
    options({"has_threads": True, "fragment_vector_bits": 128})
    loops = _copy_out_loops(lower(_staged_copy()))
    # one 8-lane fp16 vector (16 bytes) a thread and run, not one element a thread
    assert [int(lp.extent) for lp in loops if lp.kind == tvm.tirx.ForKind.VECTORIZED] == [8]


@pytest.mark.parametrize("offset,swizzle", [(3, False), (0, True)])
def test_a_nest_without_fragments_stays_cyclic_where_no_vector_is_provable(options, offset, swizzle):
    # B[:, 3:] starts 3 elements past a 16-byte boundary; a swizzled tile's vector index would become a gather
    options({"has_threads": True, "fragment_vector_bits": 128})
    loops = _copy_out_loops(_lower_laid_out(_staged_copy(offset, swizzle)))
    assert loops and not any(lp.kind == tvm.tirx.ForKind.VECTORIZED for lp in loops)
    assert not any(str(lp.loop_var.name) == "v" for lp in loops)  # the one-element-a-thread distribution kept


def test_a_nest_without_fragments_whose_lanes_may_cross_the_edge_stays_cyclic(options):
    # columns bx * 256 + j of a 320-wide tensor: the second block's runs cross the edge, tested lane by lane --
    # which the vectoriser would run one lane at a time in each thread (uncoalesced), so no runs are formed
    @T.prim_func
    def edge(A: T.Tensor((64, 512), "float16"), B: T.Tensor((64, 320), "float16")):
        with T.Kernel(2, threads=128) as bx:
            S = T.alloc_shared((64, 256), "float16")
            T.copy(A[0, bx * 256], S)
            T.copy(S, B[0, bx * 256])

    options({"has_threads": True, "fragment_vector_bits": 128})
    loops = _copy_out_loops(lower(edge))
    assert loops and not any(str(lp.loop_var.name) == "v" for lp in loops)
