"""Row-streaming block order in `tilelang_cpu.passes.lower_launch.LowerLaunchToCPU` (`stream_rows`): which kernels
get it, the loop nest it builds, and results against torch (including forms it must leave alone)."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import tvm

import tilelang
import tilelang.language as T
from tilelang.testing.corpus import elementwise_add
from tilelang.transform import utils as C


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")


def _compute_loops(func: Any, pass_configs: dict[str, Any] | None = None) -> list[Any]:
    """The For loops of the lowered kernel, outermost first."""
    art = tilelang.lower(func, target="cpu", pass_configs=pass_configs)
    return art, [lp for f in art.host_mod.functions.values() for lp in C.collect(f.body, tvm.tirx.For)]


def _parallel(loops: list[Any]) -> list[Any]:
    return [lp for lp in loops if lp.kind == tvm.tirx.ForKind.PARALLEL]


def test_tiled_elementwise_streams_whole_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILELANG_NUM_THREADS", "1")
    art, loops = _compute_loops(elementwise_add(M=256, N=512, block_M=64, block_N=64).func)
    par = _parallel(loops)
    assert len(par) == 1 and int(par[0].extent) == 4  # the 4 row bands (4 items for 1 thread); 8 x blocks in each
    row = par[0].body
    assert isinstance(row, tvm.tirx.For) and int(row.extent) == 64
    # the 8 x blocks' 64-wide pieces of a row fused into one contiguous 512-column loop
    assert isinstance(row.body, tvm.tirx.For) and int(row.body.extent) == 512
    store = row.body.body
    assert isinstance(store, tvm.tirx.BufferStore) and C.uses_var(store.indices[-1], [row.body.loop_var])
    a, b, c = torch.randn(256, 512), torch.randn(256, 512), torch.empty(256, 512)
    art.rt_mod[art.name](a, b, c)
    torch.testing.assert_close(c, a + b)


def test_few_row_bands_split_the_x_blocks_into_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILELANG_NUM_THREADS", "2")
    art, loops = _compute_loops(elementwise_add(M=64, N=1024, block_M=64, block_N=64).func)
    par = _parallel(loops)
    assert len(par) == 1 and int(par[0].extent) == 8  # 1 band x 8 chunks of 2 x blocks: 4 items per thread
    a, b, c = torch.randn(64, 1024), torch.randn(64, 1024), torch.empty(64, 1024)
    art.rt_mod[art.name](a, b, c)
    torch.testing.assert_close(c, a + b)


@pytest.mark.parametrize(("m", "n", "block"), [(256, 256, 64), (100, 72, 32), (96, 1024, 32)])
def test_elementwise_results(m: int, n: int, block: int) -> None:
    ck = elementwise_add(M=m, N=n, block_M=block, block_N=block)
    a, b, c = torch.randn(m, n), torch.randn(m, n), torch.empty(m, n)
    tilelang.compile(ck.func, target="llvm")(a, b, c)
    torch.testing.assert_close(c, a + b)


def test_three_dimensional_grid(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILELANG_NUM_THREADS", "2")

    @T.prim_func
    def scale3(A: T.Tensor((4, 64, 128), "float32"), B: T.Tensor((4, 64, 128), "float32")):
        with T.Kernel(4, 2, 4, threads=32) as (bx, by, bz):
            for i, j in T.Parallel(32, 32):
                B[bz, by * 32 + i, bx * 32 + j] = A[bz, by * 32 + i, bx * 32 + j] * 2.0 + 1.0

    art, loops = _compute_loops(scale3)
    assert int(_parallel(loops)[0].extent) == 8  # (z, y) bands, x blocks inside
    a, b = torch.randn(4, 64, 128), torch.empty(4, 64, 128)
    art.rt_mod[art.name](a, b)
    torch.testing.assert_close(b, a * 2 + 1)


def test_row_order_within_a_block_is_kept() -> None:
    """A serial row loop that reads the previous row of its own block still sees it written."""

    @T.prim_func
    def running(A: T.Tensor((64, 128), "float32"), B: T.Tensor((64, 128), "float32")):
        with T.Kernel(4, 2, threads=1) as (bx, by):
            for i in T.serial(32):
                for j in T.serial(32):
                    if i == 0:
                        B[by * 32 + i, bx * 32 + j] = A[by * 32 + i, bx * 32 + j]
                    else:
                        B[by * 32 + i, bx * 32 + j] = B[by * 32 + i - 1, bx * 32 + j] + A[by * 32 + i, bx * 32 + j]

    a, b = torch.randn(64, 128), torch.empty(64, 128)
    tilelang.compile(running, target="llvm")(a, b)
    torch.testing.assert_close(b, a.reshape(2, 32, 128).cumsum(1).reshape(64, 128))


def test_transposed_tiles_keep_the_block_loop() -> None:
    @T.prim_func
    def transpose(A: T.Tensor((128, 256), "float32"), B: T.Tensor((256, 128), "float32")):
        with T.Kernel(8, 4, threads=32) as (bx, by):
            for i, j in T.Parallel(32, 32):
                B[bx * 32 + j, by * 32 + i] = A[by * 32 + i, bx * 32 + j]

    art, loops = _compute_loops(transpose)
    assert int(_parallel(loops)[0].extent) == 32  # one iteration per block: bx indexes B's rows
    a, b = torch.randn(128, 256), torch.empty(256, 128)
    art.rt_mod[art.name](a, b)
    torch.testing.assert_close(b, a.t())


def test_one_dimensional_grid_over_contiguous_chunks_is_unchanged() -> None:
    @T.prim_func
    def add1(A: T.Tensor((4096,), "float32")):
        with T.Kernel(16, threads=128) as bx:
            for i in T.Parallel(256):
                A[bx * 256 + i] = A[bx * 256 + i] + 1.0

    art, loops = _compute_loops(add1)
    assert int(_parallel(loops)[0].extent) == 16
    a = torch.zeros(4096)
    art.rt_mod[art.name](a)
    assert torch.equal(a, torch.ones(4096))


def test_switch_off_restores_the_block_loop() -> None:
    _, loops = _compute_loops(elementwise_add(M=256, N=512, block_M=64, block_N=64).func,
                              pass_configs={"tl.cpu.row_streaming": False})
    assert int(_parallel(loops)[0].extent) == 32


def test_strided_columns_are_not_fused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILELANG_NUM_THREADS", "1")

    @T.prim_func
    def even(A: T.Tensor((64, 256), "float32"), B: T.Tensor((64, 256), "float32")):
        with T.Kernel(4, 2, threads=32) as (bx, by):
            for i, j in T.Parallel(32, 32):
                B[by * 32 + i, bx * 64 + j * 2] = A[by * 32 + i, bx * 64 + j * 2] + 1.0

    art, loops = _compute_loops(even)
    row = _parallel(loops)[0].body
    # 2 bands x 2 chunks; per row: the chunk's 2 x blocks, each still 32 strided columns (not fused)
    assert int(_parallel(loops)[0].extent) == 4 and int(row.extent) == 32 and int(row.body.extent) == 2
    a, b = torch.randn(64, 256), torch.zeros(64, 256)
    art.rt_mod[art.name](a, b)
    expected = torch.zeros(64, 256)
    expected[:, ::2] = a[:, ::2] + 1
    torch.testing.assert_close(b, expected)


def test_row_loop_bounded_by_the_x_block_is_not_hoisted() -> None:
    from tvm import tirx

    from tilelang_cpu.passes.lower_launch import stream_rows

    buf = tirx.decl_buffer([64, 256], "float32", name="A")
    bx, by, i = tirx.Var("bx", "int32"), tirx.Var("by", "int32"), tirx.Var("i", "int32")
    store = tirx.BufferStore(buf, tirx.const(1.0, "float32"), [by * 32 + i, bx * 32])
    blocks = [(bx, tirx.const(8, "int32")), (by, tirx.const(2, "int32"))]
    assert stream_rows(tirx.For(i, 0, 32, tirx.ForKind.SERIAL, store), blocks, 2) is not None
    assert stream_rows(tirx.For(i, 0, bx + 1, tirx.ForKind.SERIAL, store), blocks, 2) is None
