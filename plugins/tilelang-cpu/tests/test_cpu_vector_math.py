"""Vectorised CPU math: the ``exp``/``exp2`` expansion (`tilelang_cpu.passes.vector_exp`) and the vector ``tl.reduce``
(`tilelang_cpu.tileops.reduce`): accuracy and special values against torch, selection, and the code LLVM gets."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import tilelang
import tilelang.language as T
from tilelang.testing.corpus import softmax

N = 1 << 16


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")


def _unary(fn: Any, target: str = "llvm", pass_configs: dict[str, Any] | None = None) -> Any:
    @T.prim_func
    def unary(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32")):
        with T.Kernel(N // 1024, threads=128) as bx:
            for i in T.Parallel(1024):
                Y[bx * 1024 + i] = fn(X[bx * 1024 + i])

    return tilelang.compile(unary, target=target, pass_configs=pass_configs)


def _ulps(y: torch.Tensor, exact: torch.Tensor) -> torch.Tensor:
    """|y - exact| in units of the float32 ulp of `exact` (normal results only)."""
    scale = torch.exp2(torch.floor(torch.log2(exact.abs()))) * torch.finfo(torch.float32).eps
    return (y.double() - exact).abs() / scale


_SPECIAL = [float("-inf"), float("inf"), float("nan"), 0.0, -0.0, 1e-30, -1e-30, 88.7, 88.8, -103.0, -104.0,
            127.9, 128.0, -149.0, -150.0, 1000.0, -1000.0]


@pytest.mark.parametrize("name", ["exp", "exp2"])
@pytest.mark.parametrize("span", [1.0, 30.0, 200.0])
def test_exp_is_accurate_and_handles_special_values(name: str, span: float) -> None:
    fn, ref = (T.exp, torch.exp) if name == "exp" else (T.exp2, torch.exp2)
    kernel = _unary(fn)
    torch.manual_seed(0)
    x = torch.empty(N).uniform_(-span, span)
    x[:len(_SPECIAL)] = torch.tensor(_SPECIAL)
    y = torch.empty(N)
    kernel(x, y)
    exact = ref(x.double())
    normal = (exact.abs() < torch.finfo(torch.float32).max) & (exact.abs() >= torch.finfo(torch.float32).tiny)
    assert float(_ulps(y, exact)[normal].max()) <= 2.0
    subnormal = exact.abs() < torch.finfo(torch.float32).tiny
    sub_err = torch.cat([(y.double() - exact).abs()[subnormal], torch.zeros(1, dtype=torch.float64)])
    assert float(sub_err.max()) <= 2.0**-149
    expected = ref(x)  # float32 overflow to inf, underflow to 0, NaN
    assert torch.equal(torch.isnan(y), torch.isnan(expected))
    assert torch.equal(torch.isinf(y), torch.isinf(expected))
    assert torch.equal(y == 0, expected == 0)


def test_exp_loop_has_no_libm_calls() -> None:
    source = _unary(T.exp2).get_kernel_source()
    assert "@exp2f" not in source and "@expf" not in source and "llvm.exp" not in source
    assert "<16 x float>" in source or "<8 x float>" in source  # the loop vectorised


def test_fast_exp_config_off_keeps_libm_exp() -> None:
    kernel = _unary(T.exp, pass_configs={"tl.cpu.fast_exp": False})
    source = kernel.get_kernel_source()
    assert "@expf" in source or "llvm.exp" in source
    x, y = torch.randn(N), torch.empty(N)
    kernel(x, y)
    torch.testing.assert_close(y, torch.exp(x))


def test_c_target_keeps_libm_exp() -> None:
    kernel = _unary(T.exp, target="c")
    assert "exp" in kernel.get_kernel_source()
    x, y = torch.randn(N), torch.empty(N)
    kernel(x, y)
    torch.testing.assert_close(y, torch.exp(x))


@pytest.fixture
def chosen(tile_op_choices) -> list[str]:
    """Names of the ``tl.reduce`` implementations LowerTileOps picks while the test runs."""
    return tile_op_choices("tl.reduce")


def _reduce_kernel(kind: str, m: int, n: int, dim: int, clear: bool, src_dtype: str,
                   pass_configs: dict[str, Any] | None = None) -> Any:
    out_shape = (m,) if dim in (1, -1) else (n,)

    @T.prim_func
    def reduce(X: T.Tensor((m, n), src_dtype), Y: T.Tensor(out_shape, "float32")):
        with T.Kernel(1, threads=32) as _:
            x = T.alloc_fragment((m, n), src_dtype)
            y = T.alloc_fragment(out_shape, "float32")
            T.copy(X, x)
            T.copy(Y, y)
            T.reduce(x, y, kind, dim=dim, clear=clear)
            T.copy(y, Y)

    return tilelang.compile(reduce, target="llvm", pass_configs=pass_configs)


_TORCH = {"sum": lambda x, d: x.sum(d), "max": lambda x, d: x.amax(d), "min": lambda x, d: x.amin(d),
          "abssum": lambda x, d: x.abs().sum(d), "absmax": lambda x, d: x.abs().amax(d)}


@pytest.mark.parametrize("kind", list(_TORCH))
@pytest.mark.parametrize("n", [2, 7, 64, 100, 1024, 1029])
def test_reduce_kinds_and_tails_match_torch(chosen: list[str], kind: str, n: int) -> None:
    kernel = _reduce_kernel(kind, 8, n, -1, True, "float32")
    torch.manual_seed(1)
    x, y = torch.randn(8, n), torch.empty(8)
    kernel(x, y)
    torch.testing.assert_close(y, _TORCH[kind](x.double(), 1).float(), atol=1e-4, rtol=1e-5)
    assert chosen == ["cpu_vector_partials"]


@pytest.mark.parametrize("kind", ["sum", "max", "absmax"])
def test_reduce_without_clear_continues_from_the_destination(chosen: list[str], kind: str) -> None:
    kernel = _reduce_kernel(kind, 4, 300, 1, False, "float32")
    x, y0 = torch.randn(4, 300), torch.tensor([0.5, -100.0, 100.0, 2.0])
    y = y0.clone()
    kernel(x, y)
    part = _TORCH[kind](x.double(), 1)
    expected = y0.double() + part if kind == "sum" else torch.maximum(y0.double(), part)
    torch.testing.assert_close(y, expected.float(), atol=1e-4, rtol=1e-5)
    assert chosen == ["cpu_vector_partials"]


def test_half_source_accumulates_in_fp32(chosen: list[str]) -> None:
    kernel = _reduce_kernel("sum", 4, 512, 1, True, "float16")
    x, y = torch.randn(4, 512).half(), torch.empty(4)
    kernel(x, y)
    torch.testing.assert_close(y, x.double().sum(1).float(), atol=1e-3, rtol=1e-4)
    assert chosen == ["cpu_vector_partials"]


def test_vector_reduce_config_off_uses_the_generic_fold(chosen: list[str]) -> None:
    kernel = _reduce_kernel("sum", 8, 100, 1, True, "float32", pass_configs={"tl.cpu.vector_reduce": False})
    x, y = torch.randn(8, 100), torch.empty(8)
    kernel(x, y)
    torch.testing.assert_close(y, x.sum(1), atol=1e-4, rtol=1e-5)
    assert chosen == ["generic"]


def test_an_unknown_cpu_config_names_the_close_one() -> None:
    with pytest.raises(Exception, match="unknown CPU pass config 'tl.cpu.vector_reduction'.*did you mean "
                                        "'tl.cpu.vector_reduce'"):
        _reduce_kernel("sum", 8, 100, 1, True, "float32", pass_configs={"tl.cpu.vector_reduction": False})


def test_reduce_over_a_leading_dimension_uses_the_generic_fold(chosen: list[str]) -> None:
    kernel = _reduce_kernel("sum", 16, 32, 0, True, "float32")
    x, y = torch.randn(16, 32), torch.empty(32)
    kernel(x, y)
    torch.testing.assert_close(y, x.sum(0), atol=1e-5, rtol=1e-5)
    assert chosen == ["generic"]


@pytest.mark.parametrize("block", [1, 4, 16])
def test_softmax_matches_torch_with_extreme_rows(block: int) -> None:
    ck = softmax(M=64, N=1024, block_M=block)
    kernel = tilelang.compile(ck.func, target="llvm")
    x = torch.randn(64, 1024) * 30
    x[3, :] = -1e4  # all equal, far below 0
    x[5, 7] = float("-inf")
    y = torch.empty(64, 1024)
    kernel(x, y)
    torch.testing.assert_close(y, torch.softmax(x, dim=1), atol=1e-6, rtol=1e-4)


def test_exp_in_an_explicitly_vectorised_loop() -> None:
    @T.prim_func
    def both(X: T.Tensor((4096,), "float32"), Y: T.Tensor((4096,), "float32")):
        with T.Kernel(64, threads=1) as bx:
            for i in T.vectorized(64):
                Y[bx * 64 + i] = T.exp(X[bx * 64 + i]) + T.exp2(X[bx * 64 + i])

    kernel = tilelang.compile(both, target="llvm")
    x, y = torch.randn(4096) * 10, torch.empty(4096)
    kernel(x, y)
    torch.testing.assert_close(y, torch.exp(x) + torch.exp2(x), rtol=1e-6, atol=0)
    assert "llvm.exp" not in kernel.get_kernel_source()



@pytest.mark.parametrize(("dtype", "expanded"), [("float32", True), ("float16", False)])
def test_pass_expands_float32_exp_only(dtype: str, expanded: bool) -> None:
    import tvm

    from tilelang.transform import utils as C
    from tilelang_cpu.passes.vector_exp import VectorizableExp

    @T.prim_func
    def e(X: T.Tensor((64,), dtype), Y: T.Tensor((64,), dtype)):
        with T.Kernel(1, threads=1) as _:
            for i in T.serial(64):
                Y[i] = T.exp(X[i])

    mod = VectorizableExp({"kind": "llvm"})(tvm.IRModule({"main": e}))
    calls = [c for c in C.collect(mod["main"].body, tvm.ir.Call)
             if isinstance(c.op, tvm.ir.Op) and c.op.name == "tirx.exp"]
    assert bool(calls) is not expanded
