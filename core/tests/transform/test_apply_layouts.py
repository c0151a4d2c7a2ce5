"""AttachLayouts / ApplyLayouts: ``T.annotate_layout`` on shared tiles is checked, applied to every access, and
leaves results unchanged on every target."""

import pytest
import torch
import tvm
import tvm_ffi
from transform_helpers import as_module

import tilelang
import tilelang.language as T
from tilelang.errors import KernelTypeError, LoweringError
from tilelang.layout import Layout, make_padded_layout, make_swizzled_layout
from tilelang.transform import ApplyLayouts, AttachLayouts, PlanSharedMemory
from tilelang.transform import utils as C


def shared_allocs(func):
    return {str(a.buffer.name): a for a in C.allocations(func.body) if C.scope_of(a.buffer).startswith("shared")}


def accesses(func, name):
    """Index lists of every load / store of buffer `name`."""
    found = []
    C.walk(func.body, [(tvm.ir.TensorLoad, lambda ld: found.append(list(ld.indices)) if str(ld.source.name) == name
                        else None),
                       (tvm.tirx.BufferStore, lambda st: found.append(list(st.indices))
                        if str(st.buffer.name) == name else None)])
    return found


def has_xor(exprs):
    return any(C.collect(e, tvm.ir.prim.expr.BitwiseXor) for e in exprs)


def transpose_kernel(layout_of, n=64, dtype="float32"):
    """B = (2 A)^T staged through a shared tile that carries ``layout_of(tile)``."""

    @T.prim_func
    def transpose(A: T.Tensor((n, n), dtype), B: T.Tensor((n, n), dtype)):
        with T.Kernel(1, threads=32):
            S = T.alloc_shared((n, n), dtype)
            T.annotate_layout({S: layout_of(S)})
            for i, j in T.Parallel(n, n):
                S[i, j] = A[i, j] * T.cast(2, dtype)
            for i, j in T.Parallel(n, n):
                B[i, j] = S[j, i]

    return transpose


def copy_kernel(layout_of, m=64, n=32, bm=32):
    """B = A + 1 through a swizzled tile: T.copy in, element-wise update, T.copy out."""

    @T.prim_func
    def copy_add(A: T.Tensor((m, n), "float32"), B: T.Tensor((m, n), "float32")):
        with T.Kernel(m // bm, threads=32) as bx:
            S = T.alloc_shared((bm, n), "float32")
            T.annotate_layout({S: layout_of(S)})
            T.copy(A[bx * bm, 0], S)
            for i, j in T.Parallel(bm, n):
                S[i, j] = S[i, j] + 1.0
            T.copy(S, B[bx * bm, 0])

    return copy_add


def gemm_kernel(m=64, n=64, k=64, bk=16, stages=2):
    """C = relu(A) @ B with both shared operand tiles swizzled and a pipelined K loop (the A tile is computed,
    so no backend can read A in its place)."""

    @T.prim_func
    def gemm(A: T.Tensor((m, k), "float32"), B: T.Tensor((k, n), "float32"), C: T.Tensor((m, n), "float32")):
        with T.Kernel(1, threads=128):
            As = T.alloc_shared((m, bk), "float32")
            Bs = T.alloc_shared((bk, n), "float32")
            Cl = T.alloc_fragment((m, n), "float32")
            T.annotate_layout({As: make_swizzled_layout(As), Bs: make_swizzled_layout(Bs)})
            T.clear(Cl)
            for ko in T.Pipelined(k // bk, num_stages=stages):
                for i, kk in T.Parallel(m, bk):
                    As[i, kk] = T.max(A[i, ko * bk + kk], 0.0)
                T.copy(B[ko * bk, 0], Bs)
                T.gemm(As, Bs, Cl)
            T.copy(Cl, C)

    return gemm


def attach_apply(func):
    mod = AttachLayouts({"kind": "cuda"})(as_module(func))
    return mod, ApplyLayouts({"kind": "cuda"})(mod)


# ---------------------------------------------------------------------------------------------- the rewrite
def test_swizzle_becomes_an_xor_on_every_access():
    attached, applied = attach_apply(transpose_kernel(make_swizzled_layout, dtype="float16"))
    (alloc,) = shared_allocs(attached["main"]).values()
    assert str(alloc.annotations["tl.layout"]["kind"]) == "swizzle"
    assert not C.collect(attached["main"].body, tvm.tirx.AttrStmt, lambda s: str(s.attr_key) == "tl.layout_map")
    func = applied["main"]
    (alloc,) = shared_allocs(func).values()
    assert "tl.layout" not in (alloc.annotations or {})
    idx = accesses(func, "S")
    assert len(idx) == 2 and all(has_xor(i) for i in idx)
    # fp16 rows of 64: 16-byte units of 8 elements, XOR with row % 8
    layout = make_swizzled_layout((64, 64), dtype="float16")
    assert layout(3, 17) == [3, (2 ^ 3) * 8 + 1]


def test_padding_changes_the_storage_shape_not_the_indices():
    attached, applied = attach_apply(transpose_kernel(lambda s: make_padded_layout(s, 4)))
    func = applied["main"]
    (alloc,) = shared_allocs(func).values()
    assert [int(x) for x in alloc.buffer.ty.shape] == [64, 68]
    before = accesses(attached["main"], "S")
    after = accesses(func, "S")
    assert all(tvm_ffi.structural_equal(a, b, map_free_vars=True) for a, b in zip(before, after))
    planned = PlanSharedMemory({"kind": "cuda"})(applied)
    assert int(planned["main"].attrs["tl.shared_bytes"]) == 64 * 68 * 4


def test_lambda_layout_sets_storage_shape_from_its_image():
    @T.prim_func
    def kern(A: T.Tensor((16, 32), "float32"), B: T.Tensor((16, 32), "float32")):
        with T.Kernel(1, threads=32):
            S = T.alloc_shared((16, 32), "float32")
            T.annotate_layout({S: lambda i, j: (j, i)})
            for i, j in T.Parallel(16, 32):
                S[i, j] = A[i, j]
            for i, j in T.Parallel(16, 32):
                B[i, j] = S[i, j]

    _, applied = attach_apply(kern)
    func = applied["main"]
    (alloc,) = shared_allocs(func).values()
    assert [int(x) for x in alloc.buffer.ty.shape] == [32, 16]
    for store_idx in accesses(func, "S"):
        assert [str(v) for v in store_idx] == ["j", "i"]


@pytest.mark.backend("webgpu")
def test_multi_buffered_tile_keeps_its_stage_dimension(options):
    options({"software_pipeline": True, "has_threads": True})
    from tilelang.transform import InjectSoftwarePipeline, LayoutInference, LowerTileOps, PartitionParallel

    target = {"kind": "webgpu"}  # its tile ops read and write shared tiles with loads and stores
    pipelined = gemm_kernel(stages=2)
    mod = AttachLayouts(target)(as_module(pipelined))
    for p in (LayoutInference, InjectSoftwarePipeline, LowerTileOps, PartitionParallel, ApplyLayouts):
        mod = p(target)(mod)
    allocs = shared_allocs(mod["main"])
    # the copies and the gemm use loads and stores, so both swizzles apply, the stage index in front
    assert [int(x) for x in allocs["As"].buffer.ty.shape] == [2, 64, 16]
    idx = accesses(mod["main"], "Bs")
    assert idx and all(len(i) == 3 and has_xor(i[1:]) and not has_xor(i[:1]) for i in idx)


def test_pointer_uses_keep_row_major_storage():
    """A tile whose address a backend's tile op takes keeps its layout as a hint only."""
    attached, _ = attach_apply(transpose_kernel(make_swizzled_layout))

    def with_pointer(s):
        if isinstance(s, tvm.tirx.BufferStore) and str(s.buffer.name) == "B":
            ptr = tvm.tirx.address_of(tvm.tirx.BufferLoad(C.collect(s, tvm.ir.TensorLoad)[0].source, [0, 0]))
            return C.seq([s, tvm.tirx.Evaluate(tvm.tirx.call_extern("void", "use", ptr))])
        return s

    func = attached["main"]
    mod = as_module(C.with_body(func, tvm_ffi.structural_map(func.body, (tvm.tirx.BufferStore, with_pointer))))
    out = ApplyLayouts({"kind": "cuda"})(mod)["main"]
    (alloc,) = shared_allocs(out).values()
    assert [int(x) for x in alloc.buffer.ty.shape] == [64, 64] and "tl.layout" not in (alloc.annotations or {})
    assert not any(has_xor(i) for i in accesses(out, "S"))


def test_layout_round_trips_through_its_ir_form():
    for layout in (make_swizzled_layout((32, 64), dtype="float16", swizzle_bytes=64), make_padded_layout((8, 16), 2),
                   Layout((4, 8), lambda i, j: [j, i], storage_shape=(8, 4))):
        back = Layout.from_ir(tvm_ffi.convert(layout.to_ir()))
        assert back.storage_shape == layout.storage_shape
        for i in range(int(layout.shape[0])):
            for j in range(int(layout.shape[1])):
                assert [int(x) for x in back(i, j)] == [int(x) for x in layout(i, j)]


def test_verify_finds_out_of_range_and_colliding_maps():
    with pytest.raises(ValueError, match="outside"):
        Layout((4, 8), lambda i, j: [j, i], storage_shape=(4, 8)).verify()
    with pytest.raises(ValueError, match="not one-to-one"):
        Layout((4, 8), lambda i, j: [i, j % 4], storage_shape=(4, 8)).verify()
    Layout((4, 8), lambda i, j: [j, i]).verify()  # the storage shape defaults to the image: (8, 4)


def test_swizzle_is_a_permutation_for_odd_row_widths():
    for cols, dtype in ((24, "float16"), (48, "float16"), (12, "float32"), (8, "int8")):
        make_swizzled_layout((16, cols), dtype=dtype).verify()


# ---------------------------------------------------------------------------------------------- bad layouts
def test_layout_of_the_wrong_shape_names_the_buffer():
    with pytest.raises(KernelTypeError, match=r"bad layout for buffer S\(64, 64\).*shape \[32, 32\]") as err:
        transpose_kernel(lambda s: make_swizzled_layout((32, 32), dtype="float32"))
    assert "test_apply_layouts.py" in str(err.value)  # the kernel line


def test_non_bijective_lambda_is_rejected():
    with pytest.raises(KernelTypeError, match="buffer S.*not one-to-one"):
        transpose_kernel(lambda s: (lambda i, j: (i, j // 2)))


def test_layout_on_a_local_buffer_is_rejected():
    with pytest.raises(KernelTypeError, match="scope 'local'"):
        @T.prim_func
        def bad_local(A: T.Tensor((64,), "float32")):
            with T.Kernel(1, threads=32):
                L = T.alloc_local((8, 8), "float32")
                T.annotate_layout({L: lambda i, j: (j, i)})


def _blocked(X):
    return T.Layout(X.shape, lambda i, j: [j // 4, i, j % 4])


def test_global_layout_of_the_wrong_shape_names_the_buffer():
    with pytest.raises(KernelTypeError, match=r"buffer A\(64, 64\).*\[64, 32\]"):
        @T.prim_func
        def bad(A: T.Tensor((64, 64), "float32")):
            with T.Kernel(1, threads=32):
                T.annotate_layout({A: make_padded_layout((64, 32), 4)})


@pytest.mark.backend("cpu")
def test_global_layout_is_the_tensors_storage_order_on_cpu():
    """A global tensor's layout orders its elements in memory (the reference's dQ of the attention backward
    examples: one kernel accumulates in the layout, another reads it back through the same layout)."""
    M, N = 16, 8

    @T.prim_func
    def accumulate(A: T.Tensor((M, N), "float32"), X: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=32):
            T.annotate_layout({X: _blocked(X)})
            f = T.alloc_fragment((M, N), "float32")
            T.copy(A, f)
            T.atomic_add(X[0:M, :], f)

    @T.prim_func
    def read_back(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=32):
            T.annotate_layout({X: _blocked(X)})
            T.copy(X[0:M, :], Y[0:M, :])

    a = torch.randn(M, N)
    x = torch.zeros(M, N)
    tilelang.compile(accumulate, target="cpu")(a, x)
    # element (i, j) lives at (j // 4, i, j % 4) of a (2, 16, 4) array
    torch.testing.assert_close(x.reshape(2, M, 4), a.reshape(M, 2, 4).permute(1, 0, 2))
    y = torch.empty(M, N)
    tilelang.compile(read_back, target="cpu")(x, y)
    torch.testing.assert_close(y, a)


def test_pass_checks_layouts_that_bypass_the_front_end():
    func = transpose_kernel(make_swizzled_layout)

    def wrong(s):
        if str(s.attr_key) == "tl.layout_map":
            (buf,) = s.node.keys()
            value = tvm_ffi.convert({buf: tvm_ffi.convert(make_padded_layout((64, 32), 4).to_ir())})
            return tvm.tirx.AttrStmt(value, s.attr_key, s.value, s.body)
        return s

    mod = as_module(C.with_body(func, tvm_ffi.structural_map(func.body, (tvm.tirx.AttrStmt, wrong))))
    with pytest.raises(Exception) as err:
        AttachLayouts({"kind": "cuda"})(mod)
    pending = C.take_pending_error()
    assert isinstance(pending, LoweringError) and "buffer S" in str(pending) and "[64, 32]" in str(pending)
    assert err.value is not None


# ---------------------------------------------------------------------------------------------- end to end
@pytest.fixture
def cpu_layouts_applied(options):
    """The CPU's pipeline options with shared layouts applied (by default the CPU keeps them as hints), and no
    kernel cache (its key does not see monkeypatched options)."""
    from tilelang import cache

    was_enabled = cache.is_cache_enabled()
    options({"has_threads": False, "shared_layouts": True})
    cache.disable_cache()
    yield
    if was_enabled:
        cache.enable_cache()


@pytest.mark.backend("cpu")
@pytest.mark.parametrize("layout_of", [make_swizzled_layout, lambda s: make_padded_layout(s, 3),
                                       lambda s: (lambda i, j: (j, i))], ids=["swizzle", "padded", "lambda"])
def test_transpose_and_copy_kernels_match_torch_on_cpu(layout_of, cpu_layouts_applied):
    func = transpose_kernel(layout_of)
    attached = AttachLayouts({"kind": "cpu"})(as_module(func))
    assert "tl.layout" in shared_allocs(attached["main"])["S"].annotations
    applied = ApplyLayouts({"kind": "cpu"})(attached)["main"]
    def storage(f):
        return str((accesses(f, "S"), list(shared_allocs(f)["S"].buffer.ty.shape)))

    assert storage(applied) != storage(attached["main"])  # indices or storage shape rewritten
    kernel = tilelang.compile(func, target="cpu")
    a = torch.randn(64, 64)
    b = torch.empty(64, 64)
    kernel(a, b)
    torch.testing.assert_close(b, (2 * a).T)
    kernel = tilelang.compile(copy_kernel(layout_of), target="cpu")
    a = torch.randn(64, 32)
    b = torch.empty(64, 32)
    kernel(a, b)
    torch.testing.assert_close(b, a + 1)


@pytest.mark.backend("cpu")
def test_swizzled_gemm_matches_torch_on_cpu(cpu_layouts_applied):
    func = gemm_kernel()
    art = tilelang.lower(func, target="cpu")
    script = art.host_mod.script()
    assert script.count(" ^ ") >= 4  # both tiles, written and read
    kernel = tilelang.compile(func, target="cpu")
    a, b = torch.randn(64, 64), torch.randn(64, 64)
    c = torch.empty(64, 64)
    kernel(a, b, c)
    torch.testing.assert_close(c, a.relu() @ b, atol=1e-4, rtol=1e-4)


@pytest.mark.backend("cpu")
def test_cpu_keeps_row_major_storage_by_default():
    """On the CPU a swizzle only costs: by default the annotated tiles stay row-major, and results are unchanged."""
    func = gemm_kernel()
    script = tilelang.lower(func, target="cpu").host_mod.script()
    assert " ^ " not in script and "tl.layout" not in script
    a, b = torch.randn(64, 64), torch.randn(64, 64)
    c = torch.empty(64, 64)
    tilelang.compile(func, target="cpu")(a, b, c)
    torch.testing.assert_close(c, a.relu() @ b, atol=1e-4, rtol=1e-4)
    applied = ApplyLayouts({"kind": "cpu"})(AttachLayouts({"kind": "cpu"})(as_module(transpose_kernel(
        make_swizzled_layout))))["main"]
    assert not any(has_xor(i) for i in accesses(applied, "S"))
    a, b = torch.randn(64, 64), torch.empty(64, 64)
    tilelang.compile(transpose_kernel(make_swizzled_layout), target="cpu")(a, b)
    torch.testing.assert_close(b, (2 * a).T)


@pytest.mark.backend("cuda")
def test_swizzled_kernels_lower_for_cuda():
    for func in (transpose_kernel(make_swizzled_layout, dtype="float16"), copy_kernel(make_swizzled_layout),
                 gemm_kernel()):
        assert tilelang.lower(func, target={"kind": "cuda", "arch": "sm_80"}).kernel_source
    source = tilelang.lower(transpose_kernel(make_swizzled_layout, dtype="float16"),
                            target={"kind": "cuda", "arch": "sm_80"}).kernel_source
    assert " ^ " in source


@pytest.mark.backend("webgpu")
def test_swizzled_kernels_lower_for_webgpu():
    for func in (transpose_kernel(make_swizzled_layout), copy_kernel(make_swizzled_layout),
                 gemm_kernel(m=32, n=32, k=32, bk=8)):
        source = tilelang.lower(func, target="webgpu").kernel_source
        assert " ^ " in source


@pytest.mark.backend("cpu")
def test_fragment_layouts_are_accepted_and_performance_only():
    from tilelang.layout import Fragment

    @T.prim_func
    def scale(A: T.Tensor((32, 32), "float32"), B: T.Tensor((32, 32), "float32")):
        with T.Kernel(1, threads=32):
            F = T.alloc_fragment((32, 32), "float32")
            G = T.alloc_fragment((32, 32), "float32")
            T.annotate_layout({F: lambda i, j: (j, i), G: Fragment((32, 32), forward_thread_fn=lambda i, j: j)})
            T.copy(A, F)
            for i, j in T.Parallel(32, 32):
                G[i, j] = F[i, j] * 3.0
            T.copy(G, B)

    attached = AttachLayouts({"kind": "cpu"})(as_module(scale))["main"]
    assert not any("tl.layout" in (a.annotations or {}) for a in C.allocations(attached.body))
    a, b = torch.randn(32, 32), torch.empty(32, 32)
    tilelang.compile(scale, target="cpu")(a, b)
    torch.testing.assert_close(b, 3 * a)


def test_layouts_stay_hints_when_the_target_or_the_config_says_so(options):
    from tilelang.transform.config import tl_configs

    func = transpose_kernel(make_swizzled_layout)
    for opts, configs in (({"shared_layouts": False}, {}), ({}, {"tl.disable_shared_layouts": True})):
        options(opts)
        with tl_configs(configs):
            _, applied = attach_apply(func)
        (alloc,) = shared_allocs(applied["main"]).values()
        assert "tl.layout" not in (alloc.annotations or {})
        assert not any(has_xor(i) for i in accesses(applied["main"], "S"))
    options({})
    _, applied = attach_apply(func)
    assert all(has_xor(i) for i in accesses(applied["main"], "S"))


def test_tile_reshaped_by_a_backend_pass_keeps_row_major_storage():
    attached, _ = attach_apply(transpose_kernel(make_swizzled_layout))
    func = attached["main"]
    (alloc,) = shared_allocs(func).values()
    wider = C.buffer_with(alloc.buffer, shape=[64, 128])  # as a pre_layout pass might, annotation kept
    mod = as_module(C.with_body(func, C.substitute(func.body, {alloc.buffer: wider})))
    assert "tl.layout" in shared_allocs(mod["main"])["S"].annotations
    out = ApplyLayouts({"kind": "cuda"})(mod)["main"]
    (alloc,) = shared_allocs(out).values()
    assert [int(x) for x in alloc.buffer.ty.shape] == [64, 128] and "tl.layout" not in (alloc.annotations or {})
    assert not any(has_xor(i) for i in accesses(out, "S"))


# ---------------------------------------------------------------------------------------------- global tensors
def _transposed(buf):
    return Layout(buf.shape, lambda i, j: [j, i])


@pytest.mark.backend("cpu")
def test_layout_on_a_global_tensor_is_its_memory_format():
    # flash_attention's backward: dQ is accumulated in a fragment-friendly order, a second kernel reads it back
    # through the same layout; in between, the tensor holds its elements where the layout puts them
    @T.prim_func
    def write(A: T.Tensor((8, 16), "float32"), G: T.Tensor((8, 16), "float32")):
        with T.Kernel(1, threads=32):
            T.annotate_layout({G: _transposed(G)})
            for i, j in T.Parallel(8, 16):
                G[i, j] = A[i, j] * 2.0

    @T.prim_func
    def read(G: T.Tensor((8, 16), "float32"), B: T.Tensor((8, 16), "float32")):
        with T.Kernel(1, threads=32):
            T.annotate_layout({G: _transposed(G)})
            T.copy(G, B)

    a, g, b = torch.randn(8, 16), torch.zeros(8, 16), torch.empty(8, 16)
    tilelang.compile(write, target="cpu")(a, g)
    torch.testing.assert_close(g.flatten(), (a * 2).t().flatten())  # stored transposed
    tilelang.compile(read, target="cpu")(g, b)
    torch.testing.assert_close(b, a * 2)
