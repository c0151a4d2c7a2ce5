"""The reference's class-level tile-op API: `tilelang.tileop.base`, ``gemm`` / ``gemm_sp`` packages with their
``*_base`` classes and instruction registries, checked on real ``tl.gemm`` call sites of a CPU kernel."""

from __future__ import annotations

import pytest

import tilelang
import tilelang.language as T
from tilelang.tileop.base import GemmWarpPolicy
from tilelang.tileop.gemm import GEMM, GemmBase, GemmGeneric, lower_gemm, operand_index
from tilelang.tileop.gemm.registry import gemm_impls, register_gemm_impl, resolve_gemm_impl
from tilelang.tileop.gemm_sp import GEMM_SP, GemmSPBase, GemmSPGeneric
from tilelang.tileop.gemm_sp.registry import register_gemm_sp_impl, resolve_gemm_sp_impl


class _Target:
    def __init__(self, kind: str, arch: str = "") -> None:
        self.kind, self.arch = kind, arch


@pytest.fixture
def scratch_registry():
    from tilelang.tileop.gemm import registry as gr
    from tilelang.tileop.gemm_sp import registry as sr

    saved = (list(gr._GEMM_IMPLS), list(sr._GEMM_SP_IMPLS))
    yield
    gr._GEMM_IMPLS[:] = saved[0]
    sr._GEMM_SP_IMPLS[:] = saved[1]


def test_package_keeps_the_module_names():
    assert GEMM.op == "tl.gemm" and GEMM.lower is lower_gemm and callable(operand_index)
    assert GEMM_SP.op == "tl.gemm_sp"
    from tilelang.tileop import GENERIC_IMPLS

    assert GEMM in GENERIC_IMPLS and GEMM_SP in GENERIC_IMPLS


def test_core_registers_the_generic_classes():
    assert resolve_gemm_impl("generic", _Target("llvm")) is GemmGeneric
    assert resolve_gemm_sp_impl("generic", _Target("cuda")) is GemmSPGeneric
    assert issubclass(GemmGeneric, GemmBase) and issubclass(GemmSPGeneric, GemmSPBase)


def test_registry_resolves_by_instruction_and_predicate(scratch_registry):
    class Sm70: ...

    class Sm80: ...

    register_gemm_impl("x.mma_sm70", "x.mma", lambda t: t.arch == "sm_70", Sm70)
    register_gemm_impl("x.mma", "x.mma", lambda t: t.arch != "sm_70", Sm80)
    assert resolve_gemm_impl("x.mma", _Target("x", "sm_70")) is Sm70
    assert resolve_gemm_impl("x.mma", _Target("x", "sm_80")) is Sm80
    register_gemm_impl("x.mma", "x.mma", lambda t: t.arch == "sm_90", Sm80)  # same name: replaced
    assert [e.name for e in gemm_impls()].count("x.mma") == 1
    with pytest.raises(ValueError, match=r"No GEMM implementation registered for instruction x\.mma.*registered "
                                         r"instructions: .*generic"):
        resolve_gemm_impl("x.mma", _Target("x", "sm_80"))
    register_gemm_impl("x.other", "x.mma", lambda t: True, Sm70)
    with pytest.raises(ValueError, match=r"Multiple GEMM implementations matched instruction x\.mma.*x\.mma, x\.other"):
        resolve_gemm_impl("x.mma", _Target("x", "sm_90"))
    register_gemm_sp_impl("x.sp", "x.mma.sp", lambda t: True, Sm70)
    assert resolve_gemm_sp_impl("x.mma.sp", _Target("x")) is Sm70
    with pytest.raises(ValueError, match="No GEMM_SP implementation"):
        resolve_gemm_sp_impl("x.mma", _Target("x"))
    with pytest.raises(TypeError, match="impl_class must be a class"):
        register_gemm_impl("bad", "x.mma", lambda t: True, object())


def test_warp_policy_partitions():
    assert GemmWarpPolicy.Square.compute_warp_partition(128, 128, 4) == (2, 2)
    assert GemmWarpPolicy.FullRow.compute_warp_partition(128, 128, 4) == (4, 1)
    assert GemmWarpPolicy.FullCol.compute_warp_partition(128, 128, 4) == (1, 4)
    assert GemmWarpPolicy.FullRow.compute_warp_partition(32, 128, 4) == (2, 2)  # M holds only 2 warps of 16 rows
    assert GemmWarpPolicy.Square.compute_warp_partition(256, 64, 8) == (2, 4)  # per-warp tile 128x16 ~ 256:64
    assert GemmWarpPolicy.from_warp_partition(4, 1) is GemmWarpPolicy.FullRow
    assert GemmWarpPolicy.from_warp_partition(1, 4) is GemmWarpPolicy.FullCol
    assert GemmWarpPolicy.from_warp_partition(2, 2) is GemmWarpPolicy.Square
    assert GemmWarpPolicy.to_prime_factors(360) == [2, 2, 2, 3, 3, 5]
    assert T.GemmWarpPolicy.FullRow.is_full_row() and not GemmWarpPolicy.Square.is_full_col()


def test_base_refuses_what_is_not_a_call_site():
    with pytest.raises(TypeError, match="GemmBase wraps a tile-op lowering context"):
        GemmBase("not a context")


def _gemm_kernel(trans_b: bool):
    b_shape = (32, 16) if trans_b else (16, 32)

    @T.prim_func
    def kernel(A: T.Tensor((24, 16), "float32"), B: T.Tensor(b_shape, "float32"), C: T.Tensor((24, 32), "float32")):
        with T.Kernel(1, threads=1):
            As = T.alloc_shared((24, 16), "float32")
            Bs = T.alloc_shared(b_shape, "float32")
            Cl = T.alloc_fragment((24, 32), "float32")
            T.copy(A, As)
            T.copy(B, Bs)
            T.gemm(As, Bs, Cl, transpose_B=trans_b, policy=T.GemmWarpPolicy.FullCol, clear_accum=True)
            T.copy(Cl, C)

    return kernel


@pytest.mark.backend("cpu")
@pytest.mark.parametrize("trans_b", [False, True])
def test_gemm_base_reads_a_real_call_site_and_generic_class_lowers_it(trans_b):
    import torch

    from tilelang.backend import tile_ops
    from tilelang.backend.tile_ops import ANY_TARGET, TileOpImpl, register_tile_op_impl
    from tilelang.cache import disable_cache, enable_cache, is_cache_enabled

    seen = []

    def lower(ctx):
        view = resolve_gemm_impl("generic", ctx.target)(ctx)
        seen.append({"MNK": tuple(int(x) for x in (view.M, view.N, view.K)), "trans": (view.trans_A, view.trans_B),
                     "dtypes": (view.a_dtype, view.accum_dtype), "rr": view.is_gemm_rr(),
                     "ss": view.is_gemm_ss() == (view.A.name.endswith("s") and view.B.name.endswith("s")),
                     "policy": view.policy, "clear": view.clear_accum, "names": (view.A.name.rstrip("s"), view.C.name),
                     "offsets": [int(x) for x in view.A_base_offsets], "stride_B": int(view.stride_B)})
        return view.lower()

    was_enabled = is_cache_enabled()
    disable_cache()
    try:
        register_tile_op_impl(TileOpImpl("tl.gemm", "via_gemm_base", lower, priority=100))
        kernel = tilelang.compile(_gemm_kernel(trans_b), target="cpu")
    finally:
        tile_ops._TILE_OPS.unregister(ANY_TARGET, "tl.gemm/via_gemm_base")
        if was_enabled:
            enable_cache()
    # (the CPU backend may read A straight from global memory instead of its shared copy, and accumulate straight
    # into C: the tile Cl is only cleared by the gemm and copied out whole)
    assert seen and seen[0] == {"MNK": (24, 32, 16), "trans": (False, trans_b), "dtypes": ("float32", "float32"),
                                "ss": True, "rr": False, "policy": GemmWarpPolicy.FullCol, "clear": True,
                                "names": ("A", "C"), "offsets": [0, 0], "stride_B": 16 if trans_b else 32}
    a, b = torch.randn(24, 16), torch.randn(*((32, 16) if trans_b else (16, 32)))
    c = torch.full((24, 32), 7.0)
    kernel(a, b, c)
    torch.testing.assert_close(c, a @ (b.T if trans_b else b), atol=1e-4, rtol=1e-4)
