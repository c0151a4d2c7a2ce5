"""Each DSL construct parses into the IR form documented in docs/ir.md."""

from __future__ import annotations

import tvm
import tvm_ffi
from irwalk import collect, ints, tile_calls
from tvm import tirx

import tilelang.language as T

M = N = 64


def fors(func):
    return collect(func.body, tirx.For)


def attrs(func, key):
    return [a for a in collect(func.body, tirx.AttrStmt) if a.attr_key == key]


def allocs(func):
    return {str(a.buffer.name): a.buffer for a in collect(func.body, tirx.AllocBuffer)}


# ---------------------------------------------------------------------------------------------- function
def test_prim_func_params_and_attrs():
    @T.prim_func
    def kern(A: T.Tensor((M, N), T.float16), B: T.Buffer((N,), "float32"), n: T.int32, s: T.float32):
        with T.Kernel(1) as _:
            B[0] = T.cast(A[0, 0], "float32") * s + n

    assert isinstance(kern, tirx.PrimFunc)
    a, b, n, s = kern.params
    assert tirx.is_buffer_var(a) and ints(a.ty.shape) == [M, N] and str(a.ty.dtype) == "float16"
    assert str(a.ty.storage_scope) == "global" and str(a.name) == "A"
    assert ints(b.ty.shape) == [N] and str(b.ty.dtype) == "float32"
    assert not tirx.is_buffer_var(n) and str(n.ty.dtype) == "int32" and str(s.ty.dtype) == "float32"
    assert kern.attrs["global_symbol"] == "kern"
    src = str(kern.attrs["tl.source"])
    assert src.endswith(":" + str(test_prim_func_params_and_attrs.__code__.co_firstlineno + 2))  # the `def` line
    assert src.split(":")[0].endswith("test_constructs.py")


def test_dynamic_shape_is_a_var():
    m = T.dynamic("m")
    k = T.symbolic("k")

    @T.prim_func
    def kern(A: T.Tensor((m, k), T.float32), B: T.Tensor((m,), T.float32)):
        with T.Kernel(T.ceildiv(m, 32)) as bx:
            for i in T.Parallel(32):
                if bx * 32 + i < m:
                    B[bx * 32 + i] = A[bx * 32 + i, 0]

    a, b = kern.params
    assert a.ty.shape[0].same_as(m) and a.ty.shape[1].same_as(k) and b.ty.shape[0].same_as(m)
    assert str(m.ty.dtype) == "int32"
    assert len(collect(kern.body, tirx.IfThenElse)) == 1


def test_reinterpret_takes_the_value_first():
    """``T.reinterpret(x, T.uint32)`` (the reference's order, deepseek_v32's top-k selector); TVM's
    ``T.reinterpret(T.uint32, x)`` gives the same."""
    x = tirx.Var("x", "float32")
    for call in (T.reinterpret(x, T.uint32), T.reinterpret("uint32", x)):
        assert str(call.ty.dtype) == "uint32" and call.args[0].same_as(x)


def test_dynamic_of_several_names_is_a_tuple():
    """``batch, seq_len = T.dynamic("batch, seq_len")`` (the reference's deepseek_v32 pipelined sparse MLA)."""
    batch, seq_len, kv = T.dynamic("batch, seq_len, seq_len_kv", "int64")
    assert [str(v.name) for v in (batch, seq_len, kv)] == ["batch", "seq_len", "seq_len_kv"]
    assert all(str(v.ty.dtype) == "int64" for v in (batch, seq_len, kv))
    assert [str(v.name) for v in T.dynamic("a b")] == ["a", "b"]


def test_dtypes_as_objects_and_strings():
    assert T.float16 == "float16" and T.bfloat16 == "bfloat16" and T.int8 == "int8"
    assert T.float == "float32" and T.bool == "bool" and T.dtype("float") == "float32"
    c = T.float32(1.0)
    assert isinstance(c, tirx.FloatImm) and str(c.ty.dtype) == "float32" and c.value == 1.0
    x = tirx.Var("x", "int32")
    assert str(T.float16(x).ty.dtype) == "float16"


# ---------------------------------------------------------------------------------------------- launch
def test_kernel_launch_nesting_and_defaults():
    @T.prim_func
    def kern(A: T.Tensor((8, 4, 2), T.float32)):
        with T.Kernel(8, 4, 2) as (bx, by, bz):
            A[bx, by, bz] = 1.0

    tags = [(str(a.node.thread_tag), int(a.value)) for a in attrs(kern, "thread_extent")]
    assert tags == [("blockIdx.x", 8), ("blockIdx.y", 4), ("blockIdx.z", 2), ("threadIdx.x", 128)]
    names = [str(a.node.var.name) for a in attrs(kern, "thread_extent")]
    assert names == ["bx", "by", "bz", "tx"]


def test_kernel_threads_tuple_and_bindings():
    @T.prim_func
    def kern(A: T.Tensor((4, 32), T.float32)):
        with T.Kernel(4, threads=(32, 2)) as bx:
            tx = T.get_thread_binding(0)
            ty = T.get_thread_binding(1)
            b = T.get_block_binding(0)
            A[b, tx] = T.cast(ty + bx, "float32")

    ext = [(str(a.node.thread_tag), int(a.value)) for a in attrs(kern, "thread_extent")]
    assert ext == [("blockIdx.x", 4), ("threadIdx.x", 32), ("threadIdx.y", 2)]
    store = collect(kern.body, tirx.BufferStore)[0]
    iv = {str(a.node.thread_tag): a.node.var for a in attrs(kern, "thread_extent")}
    assert store.indices[0].same_as(iv["blockIdx.x"]) and store.indices[1].same_as(iv["threadIdx.x"])


def test_single_grid_dim_returns_a_var_and_cpu_kernel_has_one_thread():
    @T.prim_func
    def kern(A: T.Tensor((4,), T.float32)):
        with T.Kernel(4, is_cpu=True) as bx:
            A[bx] = 0.0

    ext = [(str(a.node.thread_tag), int(a.value)) for a in attrs(kern, "thread_extent")]
    assert ext == [("blockIdx.x", 4), ("threadIdx.x", 1)]


# ---------------------------------------------------------------------------------------------- memory
def test_allocations_scopes():
    @T.prim_func
    def kern(A: T.Tensor((16, 16), T.float16)):
        with T.Kernel(1) as _:
            S = T.alloc_shared((16, 16), T.float16)
            F = T.alloc_fragment((16,), "float32")
            L = T.alloc_local((4, 4), T.int32)
            v = T.alloc_var(T.float32)
            w = T.alloc_var(T.int32, 7)
            S[0, 0] = A[0, 0]
            F[0] = 1.0
            L[0, 0] = 1
            v = 2.0  # noqa: F841 - a store into the var
            w += 1

    a = allocs(kern)
    assert {k: str(b.ty.storage_scope) for k, b in a.items()} == {
        "S": "shared.dyn", "F": "local.fragment", "L": "local", "v": "local.var", "w": "local.var"}
    assert ints(a["v"].ty.shape) == [1] and str(a["L"].ty.dtype) == "int32"
    stores = {str(s.buffer.name): s for s in collect(kern.body, tirx.BufferStore)}
    assert float(stores["v"].value.value) == 2.0
    w_stores = [s for s in collect(kern.body, tirx.BufferStore) if str(s.buffer.name) == "w"]
    assert int(w_stores[0].value.value) == 7  # init
    assert isinstance(w_stores[1].value, tirx.Add)  # w += 1 reads w[0]


def test_alloc_var_reads_as_value():
    @T.prim_func
    def kern(A: T.Tensor((4,), T.float32)):
        with T.Kernel(1) as _:
            acc = T.alloc_var(T.float32, 0)
            for i in range(4):
                acc += A[i]
            A[0] = acc * 2

    last = collect(kern.body, tirx.BufferStore)[-1]
    assert str(last.buffer.name) == "A"
    loads = collect(last.value, tvm.ir.TensorLoad)
    assert len(loads) == 1 and str(loads[0].source.name) == "acc"


# ---------------------------------------------------------------------------------------------- loops
def test_loop_kinds_and_annotations():
    @T.prim_func
    def kern(A: T.Tensor((8, 8), T.float32)):
        with T.Kernel(1) as _:
            for i, j in T.Parallel(8, 8):
                A[i, j] = 0.0
            for k in T.Pipelined(8, num_stages=3, order=[0, 1], stage=[0, 1]):
                A[k, 0] = 1.0
            for k in T.serial(2, 8):
                A[k, 1] = 1.0
            for k in range(8):
                A[k, 2] = 1.0
            for k in T.unroll(4):
                A[k, 3] = 1.0
            for k in T.vectorized(8):
                A[0, k] = 2.0
            for a, b, c in T.grid(2, 2, 2):
                A[a, b + c] = 3.0

    loops = fors(kern)
    kinds = [(int(f.kind), int(f.extent)) for f in loops]
    P, S, U, V = (int(k) for k in (tirx.ForKind.PARALLEL, tirx.ForKind.SERIAL, tirx.ForKind.UNROLLED,
                                   tirx.ForKind.VECTORIZED))
    assert kinds == [(P, 8), (P, 8), (S, 8), (S, 6), (S, 8), (U, 4), (V, 8), (S, 2), (S, 2), (S, 2)]
    assert int(loops[0].annotations["tl.parallel"]) == 1 and int(loops[1].annotations["tl.parallel"]) == 1
    pipe = loops[2].annotations
    assert int(pipe["tl.pipeline_stages"]) == 3
    assert ints(pipe["tl.pipeline_order"]) == [0, 1] and ints(pipe["tl.pipeline_stage"]) == [0, 1]
    assert int(loops[3].min) == 2
    assert "tl.parallel" not in loops[4].annotations
    assert [str(f.loop_var.name) for f in loops[:2]] == ["i", "j"]


def test_python_iterables_unroll_at_parse_time():
    offsets = (0, 3, 5)

    @T.prim_func
    def kern(A: T.Tensor((8,), T.float32)):
        with T.Kernel(1) as _:
            for o in offsets:
                A[o] = T.float32(o)
            for idx, val in enumerate([1.0, 2.0]):
                A[idx + 6] = val

    assert fors(kern) == []
    stores = collect(kern.body, tirx.BufferStore)
    assert [int(s.indices[0]) for s in stores] == [0, 3, 5, 6, 7]


# ---------------------------------------------------------------------------------------------- tile ops
def test_copy_forms_and_extents():
    @T.prim_func
    def kern(Q: T.Tensor((2, 128, 4, 64), T.float16), A: T.Tensor((128, 128), T.float16)):
        with T.Kernel(2, 4) as (bx, by):
            S = T.alloc_shared((64, 64), T.float16)
            T.copy(Q[0, bx * 64:(bx + 1) * 64, by, :], S)
            T.copy(A[bx * 64, 0], S)
            T.copy(S, A[0:64, 64:128])
            T.copy(S, A[bx * 64, 64])

    calls = tile_calls(kern)
    assert [c[0] for c in calls] == ["tl.copy"] * 4
    src, dst = calls[0][1]
    assert [int(r.extent) for r in src.region] == [1, 64, 1, 64] and str(src.source.name) == "Q"
    assert [int(r.extent) for r in dst.region] == [64, 64]
    src2, _ = calls[1][1]
    assert [int(r.extent) for r in src2.region] == [64, 64] and int(src2.region[1].min) == 0
    _, dst4 = calls[3][1]
    assert int(dst4.region[1].min) == 64 and [int(r.extent) for r in dst4.region] == [64, 64]


def test_fill_clear_gemm_reduce_cumsum_atomic_args():
    @T.prim_func
    def kern(A: T.Tensor((64, 32), T.float16), B: T.Tensor((64, 32), T.float16), Out: T.Tensor((64,), T.float32)):
        with T.Kernel(1) as _:
            As = T.alloc_shared((64, 32), T.float16)
            Bs = T.alloc_shared((64, 32), T.float16)
            C = T.alloc_fragment((64, 64), T.float32)
            r = T.alloc_fragment((64,), T.float32)
            T.fill(C, -T.infinity(T.float32))
            T.clear(r)
            T.gemm(As, Bs, C, transpose_B=True, policy=T.GemmWarpPolicy.FullRow, clear_accum=True)
            T.reduce_max(C, r, dim=1, clear=False)
            T.reduce_sum(C, r, dim=-1)
            T.reduce_absmax(C, r, 1)
            T.cumsum(r)
            T.cumsum(C, dim=1, reverse=True)
            T.atomic_add(Out[0], r)
            T.atomic_max(Out[3], r[3])

    calls = tile_calls(kern)
    names = [c[0] for c in calls]
    assert names == ["tl.fill", "tl.fill", "tl.gemm", "tl.reduce", "tl.reduce", "tl.reduce", "tl.cumsum",
                     "tl.cumsum", "tl.atomic", "tl.atomic_max_elem_op"]
    fill_val = calls[0][1][1]
    assert str(fill_val.ty.dtype) == "float32" and fill_val.value == float("-inf")
    assert float(calls[1][1][1].value) == 0.0
    g = calls[2][1]
    assert [str(x.source.name) for x in g[:3]] == ["As", "Bs", "C"] and ints(g[3:]) == [0, 1, 1, 1]
    red = calls[3][1]
    assert str(red[2].value) == "max" and ints(red[3:]) == [1, 0]
    assert str(calls[4][1][2].value) == "sum" and ints(calls[4][1][3:]) == [1, 1]
    assert str(calls[5][1][2].value) == "absmax"
    cs = calls[6][1]
    assert cs[0].source.same_as(cs[1].source) and ints(cs[2:]) == [0, 0]
    assert ints(calls[7][1][2:]) == [1, 1]
    at = calls[8][1]
    assert str(at[0].source.name) == "Out" and [int(x.extent) for x in at[0].region] == [64]
    assert str(at[1].source.name) == "r" and str(at[2].value) == "add"
    at2 = calls[9][1]  # two scalars: the element intrinsic (dst element, value, memory order)
    assert isinstance(at2[0], tvm.ir.TensorLoad) and str(at2[0].source.name) == "Out" and int(at2[0].indices[0]) == 3
    assert isinstance(at2[1], tvm.ir.TensorLoad) and ints(at2[2:]) == [0]


def test_gemm_fragment_a_and_transpose_a():
    @T.prim_func
    def kern(A: T.Tensor((32, 64), T.float16)):
        with T.Kernel(1) as _:
            Af = T.alloc_fragment((32, 64), T.float16)
            At = T.alloc_shared((64, 32), T.float16)
            Bs = T.alloc_shared((64, 16), T.float16)
            C = T.alloc_fragment((32, 16), T.float32)
            T.gemm(Af, Bs, C)
            T.gemm(At, Bs, C, transpose_A=True)

    calls = tile_calls(kern)
    assert ints(calls[0][1][3:5]) == [0, 0] and ints(calls[1][1][3:5]) == [1, 0]


def test_annotate_layout_and_swizzle_wrap_rest_of_block():
    @T.prim_func
    def kern(A: T.Tensor((16, 16), T.float16)):
        with T.Kernel(1) as _:
            S = T.alloc_shared((16, 16), T.float16)
            T.annotate_layout({S: lambda i, j: (j, i)})
            T.use_swizzle(8, order="col")
            T.copy(A, S)

    (lay,) = attrs(kern, "tl.layout_map")
    assert isinstance(lay.node[next(iter(lay.node.keys()))], tirx.IndexMap)
    (sw,) = attrs(kern, "tl.swizzle")
    assert int(sw.value) == 8 and str(sw.node.value) == "col"
    assert tile_calls(sw.body)[0][0] == "tl.copy" if hasattr(sw.body, "body") else True
    assert len(collect(sw.body, tvm.ir.Call)) == 1


# ---------------------------------------------------------------------------------------------- expressions
def test_math_and_special_values():
    @T.prim_func
    def kern(A: T.Tensor((16,), T.float32), B: T.Tensor((16,), T.float16)):
        with T.Kernel(1) as _:
            for i in T.Parallel(16):
                A[i] = T.exp(A[i]) + T.exp2(A[i]) + T.log(A[i]) + T.log2(A[i]) + T.sqrt(A[i]) + T.rsqrt(A[i])
                A[i] = T.tanh(A[i]) + T.sigmoid(A[i]) + T.abs(A[i]) + T.max(A[i], 0) + T.min(A[i], 1.0)
                A[i] = T.if_then_else(i < 8, A[i], T.max_value(T.float32)) + T.min_value("float32")
                B[i] = T.cast(A[i], T.float16) + T.float16(1)
                A[i] = T.floordiv(i, 3) + T.floormod(i, 3)

    text = kern.script()
    for name in ("T.exp(", "T.exp2(", "T.log(", "T.log2(", "T.sqrt(", "T.rsqrt(", "T.tanh(", "T.sigmoid(",
                 "T.fabs(", "T.max(", "T.min(", "T.if_then_else(", "T.Cast(\"float16\""):
        assert name in text, name
    assert T.ceildiv(1000, 128) == 8 and T.max(3, 5) == 5 and T.min(3, 5) == 3
    assert T.floordiv(7, 2) == 3 and T.floormod(7, 2) == 1


def test_bool_ops_conditional_expr_and_chained_compare():
    @T.prim_func
    def kern(A: T.Tensor((16,), T.float32)):
        with T.Kernel(1) as _:
            for i in T.serial(16):
                if (i > 2 and i < 10) or not i == 12:
                    A[i] = 1.0 if i > 4 else 2.0
                if 0 < i < 4:
                    A[i] = 3.0

    ifs = collect(kern.body, tirx.IfThenElse)
    assert isinstance(ifs[0].condition, tirx.Or) and isinstance(ifs[0].condition.a, tirx.And)
    assert isinstance(ifs[0].condition.b, tirx.Not)
    assert isinstance(ifs[1].condition, tirx.And)
    assert len(collect(kern.body, tvm.ir.Call)) == 1  # the if_then_else of the conditional expression


def test_static_and_runtime_if():
    flag = False

    @T.prim_func
    def kern(A: T.Tensor((4,), T.float32)):
        with T.Kernel(1) as bx:
            if flag:
                A[0] = 1.0
            else:
                A[1] = 2.0
            if flag or bx == 0:
                A[2] = 3.0
            else:
                A[3] = 4.0

    ifs = collect(kern.body, tirx.IfThenElse)
    assert len(ifs) == 1 and ifs[0].else_case is not None
    stores = [int(s.indices[0]) for s in collect(kern.body, tirx.BufferStore)]
    assert stores == [1, 2, 3]


def test_assignment_binds_or_inlines():
    @T.prim_func
    def kern(A: T.Tensor((16,), T.float32)):
        with T.Kernel(1) as bx:
            base = bx * 4 + 1          # pure: inlined
            v = A[base] * 2.0          # reads memory: Bind
            A[base] = v + v

    binds = collect(kern.body, tirx.Bind)
    assert len(binds) == 1 and str(binds[0].var.name) == "v"
    store = collect(kern.body, tirx.BufferStore)[0]
    assert isinstance(store.indices[0], tirx.Add)


def test_augmented_assignment_on_elements():
    @T.prim_func
    def kern(A: T.Tensor((4, 4), T.float32)):
        with T.Kernel(1) as _:
            for i, j in T.Parallel(4, 4):
                A[i, j] += 1.0
                A[i, j] *= 2.0

    stores = collect(kern.body, tirx.BufferStore)
    assert isinstance(stores[0].value, tirx.Add) and isinstance(stores[1].value, tirx.Mul)


# ---------------------------------------------------------------------------------------------- macros, helpers
def test_macro_inlined_with_return_value():
    @T.macro
    def scaled(buf, i, factor):
        return buf[i] * factor

    @T.macro
    def zero(buf):
        T.clear(buf)

    def helper(x):  # a plain Python helper runs at parse time
        return x + 1

    @T.prim_func
    def kern(A: T.Tensor((8,), T.float32)):
        with T.Kernel(1) as _:
            F = T.alloc_fragment((8,), T.float32)
            zero(F)
            for i in T.Parallel(8):
                F[i] = scaled(A, i, 2.0) + helper(0)

    assert [c[0] for c in tile_calls(kern)] == ["tl.fill"]
    store = collect(kern.body, tirx.BufferStore)[0]
    assert "A[i] * T.float32(2.0) + T.float32(1.0)" in kern.script() or isinstance(store.value, tirx.Add)


def test_nested_def_and_metaprogramming_loop():
    @T.prim_func
    def kern(A: T.Tensor((4,), T.float32)):
        def body(k):
            A[k] = T.float32(k * 10)

        with T.Kernel(1) as _:
            for k in range(2):  # an IR loop
                A[k] = 0.0
            for k in [2, 3]:  # compile-time loop
                body(k)

    assert len(fors(kern)) == 1
    assert [float(s.value.value) for s in collect(kern.body, tirx.BufferStore)[1:]] == [20.0, 30.0]


def test_script_prints_tile_ops_by_name():
    @T.prim_func
    def kern(A: T.Tensor((16, 16), T.float16)):
        with T.Kernel(1) as _:
            S = T.alloc_shared((16, 16), T.float16)
            C = T.alloc_fragment((16, 16), T.float32)
            T.copy(A, S)
            T.gemm(S, S, C)
            T.reduce_sum(C, C[:, 0], dim=1) if False else None

    text = kern.script()
    assert "T.tl.copy(A[0:16, 0:16], S[0:16, 0:16])" in text
    assert "T.tl.gemm(" in text


def test_structurally_equal_to_hand_built_ir():
    from tvm.script.ir_builder import IRBuilder
    from tvm.script.ir_builder import tirx as B

    @T.prim_func
    def kern(A: T.Tensor((32, 32), T.float32), C: T.Tensor((32, 32), T.float32)):
        with T.Kernel(2, threads=64) as bx:
            S = T.alloc_shared((16, 32), T.float32)
            T.copy(A[bx * 16, 0], S)
            for i, j in T.Parallel(16, 32):
                C[bx * 16 + i, j] = S[i, j] * 2.0

    import tilelang.ir as tl_ir

    with IRBuilder() as ib:
        with B.prim_func():
            a = B.arg("A", B.buffer((32, 32), "float32"))
            c = B.arg("C", B.buffer((32, 32), "float32"))
            with B.launch_thread("blockIdx.x", 2) as bx, B.launch_thread("threadIdx.x", 64):
                s = B.alloc_buffer((16, 32), "float32", scope="shared.dyn")
                src = tl_ir.to_region(tirx.BufferLoad(a, [bx * 16, 0]), [16, 32])
                B.evaluate(tl_ir.tile_call("tl.copy", [src, tl_ir.full_region(s)]))
                with B.parallel(0, 16, annotations={"tl.parallel": 1}) as i:
                    with B.parallel(0, 32, annotations={"tl.parallel": 1}) as j:
                        B.buffer_store(c, s[i, j] * tirx.const(2.0, "float32"), [bx * 16 + i, j])
    expected = ib.get()
    assert tvm_ffi.structural_equal(kern.body, expected.body, map_free_vars=True)


def test_annotate_layout_accepts_tilelang_layout_objects():
    class FakeLayout:  # the tilelang.layout protocol: to_ir() gives plain values
        def to_ir(self):
            return {"kind": "swizzle", "shape": [16, 16], "bytes": 128}

    @T.prim_func
    def kern(A: T.Tensor((16, 16), T.float16)):
        with T.Kernel(1) as _:
            S = T.alloc_shared((16, 16), T.float16)
            T.annotate_layout({S: FakeLayout()})
            T.copy(A, S)

    (lay,) = attrs(kern, "tl.layout_map")
    value = lay.node[next(iter(lay.node.keys()))]
    assert str(value["kind"]) == "swizzle" and int(value["bytes"]) == 128
