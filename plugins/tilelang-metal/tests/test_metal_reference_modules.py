"""The reference's Metal module paths (``tilelang.metal.<x>``): each name does its job, MSL is syntax-checked."""

from __future__ import annotations

import importlib
import sys

import pytest
import tvm

import tilelang
import tilelang.language as T
from tilelang.transform import utils as C
from tilelang_metal.mslcheck import check_msl


def _gemm_kernel(m: int = 32, n: int = 32, k: int = 32, threads: int = 128, epilogue: bool = True):
    """A GEMM kernel; with `epilogue` its accumulator is also used element-wise, so it stays a fragment and the
    ``tl.gemm`` call reaches the tile-op registry (without, SimdgroupAccumulators keeps it in simdgroup matrices)."""

    @T.prim_func
    def mm(A: T.Tensor((m, k), "float16"), B: T.Tensor((k, n), "float16"), Cout: T.Tensor((m, n), "float32")):
        with T.Kernel(1, threads=threads):
            a_s = T.alloc_shared((m, k), "float16")
            b_s = T.alloc_shared((k, n), "float16")
            acc = T.alloc_fragment((m, n), "float32")
            T.copy(A, a_s)
            T.copy(B, b_s)
            T.clear(acc)
            T.gemm(a_s, b_s, acc)
            if epilogue:
                for i, j in T.Parallel(m, n):
                    acc[i, j] = acc[i, j] * 2.0
            T.copy(acc, Cout)

    return mm


# ---------------------------------------------------------------------------------------------- language
def test_language_is_common_plus_simdgroup_operators():
    from tilelang.language.tir.exports import CUDA_ONLY_TIR_EXPORTS, METAL_ONLY_TIR_EXPORTS

    metal = importlib.import_module("tilelang.metal.language")
    common = importlib.import_module("tilelang.language.common")
    assert metal.__tilelang_dialect__ == "metal"
    assert set(metal.__all__) >= METAL_ONLY_TIR_EXPORTS | set(common.__all__)
    assert CUDA_ONLY_TIR_EXPORTS.isdisjoint(metal.__all__)
    assert metal.Kernel is T.Kernel
    assert metal.simdgroup_load.__module__ == "tilelang.metal.language.tir"
    ct = tvm.tirx.decl_buffer((512,), "float32", scope="metal.cooperative_tensor")
    fill = metal.cooperative_tensor_fill(ct.data, 0, 0.0, 16, 32)
    assert fill.op.name == "tl.cooperative_tensor_fill" and fill.args[0].source.same_as(ct)
    assert metal.cooperative_tensor_fill.__module__ == "tilelang.metal.language"
    assert T.cooperative_tensor_store is metal.cooperative_tensor_store


def test_tir_operators_build_the_metal_intrinsics():
    from tilelang.metal.language.tir import make_filled_simdgroup_matrix, simdgroup_load

    sg = tvm.tirx.decl_buffer((64,), "float32", scope="metal.simdgroup")
    fill = make_filled_simdgroup_matrix(sg.data, 0, 0.0)
    assert fill.op.name == "tirx.make_filled_simdgroup_matrix" and fill.args[0].same_as(sg)
    assert fill.args[2].dtype == "float32"
    tile = tvm.tirx.decl_buffer((8, 8), "float32", scope="shared")
    load = simdgroup_load(sg, 0, tile.access_ptr("r"), 8, transpose_matrix=True)
    assert load.op.name == "tirx.simdgroup_load" and [int(a) for a in load.args[4:6]] == [8, 8]
    assert bool(load.args[6])


# ---------------------------------------------------------------------------------------------- intrinsics
def _emitter_kernel(a_transposed: bool = False):
    import tilelang.metal.language as TM
    from tilelang.metal.intrinsics import MPSIntrinEmitter

    m = n = k = 32
    a_shape = (k, m) if a_transposed else (m, k)

    @T.prim_func
    def main(A: T.Tensor(a_shape, "float16"), B: T.Tensor((k, n), "float16"), Cout: T.Tensor((m, n), "float32")):
        with T.Kernel(1, threads=128):
            a_s = T.alloc_shared(a_shape, "float16")
            b_s = T.alloc_shared((k, n), "float16")
            c_s = T.alloc_shared((m, n), "float32")
            a_sg = T.alloc_buffer((2 * 64,), "float16", scope="metal.simdgroup")
            b_sg = T.alloc_buffer((2 * 64,), "float16", scope="metal.simdgroup")
            c_sg = T.alloc_buffer((4 * 64,), "float32", scope="metal.simdgroup")
            T.copy(A, a_s)
            T.copy(B, b_s)
            emitter = MPSIntrinEmitter("float16", "float16", "float32", a_transposed=a_transposed,
                                       block_row_warps=2, block_col_warps=2, warp_row_tiles=16, warp_col_tiles=16,
                                       chunk=k, use_cooperative_tensor=False)
            for i in T.serial(4):
                TM.make_filled_simdgroup_matrix(c_sg.data, i, 0.0)
            for ki in T.serial(k // 8):
                emitter.ldmatrix_a(a_sg, a_s, ki)
                emitter.ldmatrix_b(b_sg, b_s, ki)
                emitter.mma(a_sg, b_sg, c_sg)
            emitter.simd_store(c_sg, c_s)
            T.copy(c_s, Cout)

    return main


@pytest.mark.parametrize("a_transposed", [False, True])
def test_emitter_kernel_lowers_to_checked_msl(clang22, a_transposed):
    msl = tilelang.lower(_emitter_kernel(a_transposed), target="metal").kernel_source
    assert msl.count("simdgroup_multiply_accumulate(") == 4  # 2 x 2 tiles per simdgroup
    assert msl.count("simdgroup_load(") == 4 and msl.count("simdgroup_store(") == 4
    assert ("(bool)1" in msl) == a_transposed  # the A tiles load transposed
    # the access pointers order the simdgroup reads / writes against the threads' copies
    barrier = "threadgroup_barrier(mem_flags::mem_threadgroup)"
    assert msl.index(barrier) < msl.index("simdgroup_load(")
    assert msl.rindex("simdgroup_store(") < msl.rindex(barrier)
    result = check_msl(msl, name="emitter.metal", clang=clang22)
    assert result.ok, result.diagnostics


def test_emitter_parses_buffers_and_regions():
    from tilelang.metal.intrinsics.metal_macro_generator import MPSIntrinEmitter

    padded = tvm.tirx.decl_buffer((16, 16), "float16", strides=(32, 1), scope="shared")
    *_, stride = MPSIntrinEmitter._parse_buffer_nd(padded)
    assert tvm.ir.structural_equal(stride, tvm.tirx.IntImm("int32", 32))
    staged = tvm.tirx.decl_buffer((2, 16, 24), "float16", scope="shared")
    region = tvm.tirx.BufferRegion(staged, [tvm.ir.Range.from_min_extent(1, 1), tvm.ir.Range.from_min_extent(8, 8),
                                            tvm.ir.Range.from_min_extent(0, 16)])
    buf, extra, row, col, stride = MPSIntrinEmitter._parse_buffer_nd(region)
    assert buf.same_as(staged) and [int(e) for e in extra] == [1] and (int(row), int(col), int(stride)) == (8, 0, 24)
    gapped = tvm.tirx.decl_buffer((16, 16), "float16", strides=(32, 2), scope="shared")
    with pytest.raises(ValueError, match="contiguous innermost dimension"):
        MPSIntrinEmitter._parse_buffer_nd(gapped)
    with pytest.raises(ValueError, match="multiples of the 8x8"):
        MPSIntrinEmitter(warp_row_tiles=12, use_cooperative_tensor=False)
    with pytest.raises(ValueError, match=r"multiples of the 16x32 cooperative-tensor C tile \(16 and 32\)"):
        MPSIntrinEmitter(warp_row_tiles=16, warp_col_tiles=16).mma(None, None, None)
    assert MPSIntrinEmitter().micro_size_y == 32  # the reference's defaults construct


# ---------------------------------------------------------------------------------------------- op.gemm
def test_gemm_classes_lower_through_the_simdgroup_gemm(monkeypatch: pytest.MonkeyPatch, clang22):
    import tilelang.transform.lower_tile_ops as lto
    from tilelang.backend import TileOpImpl
    from tilelang.metal.op.gemm import REGISTRATIONS
    from tilelang.metal.op.gemm.gemm_metal import (
        GEMM_INST_METAL,
        GEMM_INST_METAL_COOPERATIVE_TENSOR,
        GemmMetal,
        GemmMetalSimdGroup,
    )

    assert (GEMM_INST_METAL, GEMM_INST_METAL_COOPERATIVE_TENSOR) == ("metal.simdgroup", "metal.cooperative_tensor")
    assert [r[2] for r in REGISTRATIONS] == [GemmMetalSimdGroup, GemmMetal]
    metal4 = tvm.target.Target({"kind": "metal", "keys": ["metal", "gpu", "metal4"]})
    assert GemmMetalSimdGroup.matches("metal") and not GemmMetalSimdGroup.matches({"kind": "llvm"})
    assert GemmMetal.matches(metal4) and not GemmMetal.matches("metal")
    with pytest.raises(ValueError, match="Metal 4 cooperative tensors"):
        GemmMetal().lower(None)
    used = []
    real = lto.resolve_tile_op_impl

    def through_class(op, target, ctx=None):
        if op != "tl.gemm":
            return real(op, target, ctx)
        used.append(op)
        return TileOpImpl("tl.gemm", "gemm_metal_simdgroup", GemmMetalSimdGroup(ctx).lower)

    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")
    monkeypatch.setattr(lto, "resolve_tile_op_impl", through_class)
    msl = tilelang.lower(_gemm_kernel(), target="metal").kernel_source
    assert used and "simdgroup_multiply_accumulate(" in msl
    assert check_msl(msl, name="gemm_class.metal", clang=clang22).ok
    with pytest.raises(Exception, match="not served by simdgroup matrices"):
        tilelang.lower(_gemm_kernel(12, 12, 12, threads=32), target="metal")


# ---------------------------------------------------------------------------------------------- target, utils
def test_target_facts():
    from tilelang.metal.target import (
        check_metal4_availability,
        check_metal_availability,
        normalize_metal_target,
        target_is_metal,
        target_metal_supports_metal4,
    )

    metal4 = tvm.target.Target({"kind": "metal", "keys": ["metal", "gpu", "metal4"]})
    assert target_is_metal(metal4) and target_is_metal({"kind": "metal"}) and not target_is_metal("llvm")
    assert target_metal_supports_metal4(metal4) and not target_metal_supports_metal4(tvm.target.Target("metal"))
    assert normalize_metal_target(metal4) is metal4
    assert normalize_metal_target({"kind": "cuda"}) is None and normalize_metal_target("webgpu") is None
    assert str(normalize_metal_target("metal").kind.name) == "metal"
    if sys.platform != "darwin":
        assert not check_metal_availability() and not check_metal4_availability()


def test_scope_predicates():
    import tilelang.metal as metal
    from tilelang.metal.utils import is_metal_cooperative_tensor, is_metal_simdgroup

    sg = tvm.tirx.decl_buffer((64,), "float16", scope="metal.simdgroup")
    shared = tvm.tirx.decl_buffer((8, 8), "float16", scope="shared")
    assert is_metal_simdgroup(sg) and not is_metal_simdgroup(shared)
    assert is_metal_simdgroup(tvm.tirx.BufferLoad(sg, [0]))
    assert not is_metal_cooperative_tensor(sg)
    assert metal.is_metal_simdgroup is is_metal_simdgroup


# ---------------------------------------------------------------------------------------------- transform
def test_mark_host_metal_context_wraps_the_launch():
    from tilelang.metal.transform import MarkHostMetalContext

    host = tilelang.lower(_gemm_kernel(), target="metal").host_mod

    def launches(mod):
        return C.collect(mod["mm"].body, tvm.ir.Call, lambda c: isinstance(c.op, tvm.ir.Op)
                         and c.op.name == "tirx.tvm_call_packed_lowered")

    def marks(mod):
        return C.collect(mod["mm"].body, tvm.tirx.AttrStmt, lambda s: str(s.attr_key) == "metal_context")

    assert launches(host) and not marks(host)
    marked = MarkHostMetalContext()(host)
    # the kernel launch inside the compute scope is marked; setting the device before it is not
    assert [str(m.body.value.args[0].value) for m in marks(marked)] == ["mm_kernel"]
    assert len(launches(marked)) == len(launches(host)) == 2
    assert len(marks(MarkHostMetalContext()(marked))) == len(marks(marked))  # marking twice changes nothing


def test_fragment_to_simdgroup_rescopes_gemm_accumulators():
    from tilelang.metal.transform import MetalFragmentToSimdgroup

    func = _gemm_kernel(threads=128)
    bound = tvm.tirx.transform.BindTarget(tvm.target.Target("metal"))(tvm.IRModule({"main": func}))
    out = MetalFragmentToSimdgroup(bound)["main"]
    scopes = {str(a.buffer.name): (C.scope_of(a.buffer), [int(s) for s in a.buffer.ty.shape])
              for a in C.allocations(out.body)}
    assert scopes["acc"] == ("metal.simdgroup", [32 * 32 // 4])  # 4 simdgroups share the 32x32 accumulator
    assert scopes["a_s"][0] in ("shared", "shared.dyn")  # other buffers keep their scope
    gemm = C.collect(out.body, tvm.ir.Call, lambda c: isinstance(c.op, tvm.ir.Op) and c.op.name == "tl.gemm")[0]
    assert C.scope_of(gemm.args[2].source) == "metal.simdgroup"
    unbound = tvm.IRModule({"main": func})  # no metal target: unchanged
    assert MetalFragmentToSimdgroup(unbound)["main"].same_as(unbound["main"])
