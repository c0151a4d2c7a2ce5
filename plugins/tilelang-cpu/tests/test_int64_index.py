"""64-bit offsets for tensors of 2**31 elements or more (`tilelang.transform.config_index_bitwidth`, issue 30).

The slow tests read an int8 tensor of 65538 x 32768 elements (2 GiB, 2**31 + 65536 elements): rows past
2**31 elements must be summed from their own memory, static and dynamic row counts alike.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
import tvm

import tilelang
import tilelang.language as T
from tilelang.errors import LoweringError
from tilelang.transform import utils as C

BIG_M, N = 65538, 32768  # 2**31 + 2 * 32768 elements


def rowsum(M: Any, N: int = N, block_M: int = 4, block_N: int = 1024) -> Any:
    """``B[i] = sum_j A[i, j]`` of an int8 matrix, accumulated in int32."""

    @T.prim_func
    def rowsum(A: T.Tensor((M, N), "int8"), B: T.Tensor((M,), "int32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=block_M) as bx:
            acc = T.alloc_fragment((block_M,), "int32")
            tile = T.alloc_fragment((block_M, block_N), "int32")
            T.clear(acc)
            for ko in T.serial(T.ceildiv(N, block_N)):
                for i, j in T.Parallel(block_M, block_N):
                    tile[i, j] = T.cast(A[bx * block_M + i, ko * block_N + j], "int32")
                T.reduce_sum(tile, acc, dim=1, clear=False)
            T.copy(acc, B[bx * block_M])

    return rowsum


def copy1d(n: Any) -> Any:
    """``B = A`` over one dimension of `n` int8 elements."""

    @T.prim_func
    def copy1d(A: T.Tensor((n,), "int8"), B: T.Tensor((n,), "int8")):
        with T.Kernel(T.ceildiv(n, 1024), threads=1) as bx:
            for i in T.Parallel(1024):
                if bx * 1024 + i < n:
                    B[bx * 1024 + i] = A[bx * 1024 + i]

    return copy1d


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILELANG_DISABLE_CACHE", "1")


def _index_dtypes(art: Any, buffer: str) -> set[str]:
    """The (scalar) dtypes of the flattened indices into `buffer` in the lowered host code."""
    found: set[str] = set()
    for f in art.host_mod.functions.values():
        for ld in C.collect(f.body, tvm.ir.TensorLoad, lambda ld: str(ld.source.name) == buffer):
            found.update(str(i.ty.dtype).split("x")[0] for i in ld.indices)
        for st in C.collect(f.body, tvm.tirx.BufferStore, lambda st: str(st.buffer.name) == buffer):
            found.update(str(i.ty.dtype).split("x")[0] for i in st.indices)
    return found


@pytest.fixture(scope="module")
def big() -> tuple[torch.Tensor, torch.Tensor]:
    """The 2 GiB input (mostly zeros; rows 0, -2 and -1 hold values) and its row sums."""
    a = torch.zeros(BIG_M, N, dtype=torch.int8)
    a[0] = 2
    a[-2, ::2] = 3
    a[-1] = torch.arange(N, dtype=torch.int32).remainder(7).to(torch.int8)
    want = torch.zeros(BIG_M, dtype=torch.int32)
    want[0], want[-2], want[-1] = 2 * N, 3 * N // 2, int(torch.arange(N).remainder(7).sum())
    return a, want


@pytest.mark.slow
def test_static_int8_tensor_past_2_31_elements(big: tuple[torch.Tensor, torch.Tensor]) -> None:
    a, want = big
    kernel = tilelang.compile(rowsum(BIG_M), target="cpu")
    b = torch.full((BIG_M,), -1, dtype=torch.int32)
    kernel(a, b)
    assert torch.equal(b, want)


@pytest.mark.slow
@pytest.mark.parametrize("target", ["cpu", "c"])
def test_dynamic_rows_past_2_31_elements(big: tuple[torch.Tensor, torch.Tensor], target: str) -> None:
    """LLVM happened to widen the int32 offsets of this loop nest itself; gcc (target "c", ~20 s here) wraps them
    (a crash)."""
    a, want = big
    kernel = tilelang.compile(rowsum(T.dynamic("m")), target=target)
    b = torch.full((BIG_M,), -1, dtype=torch.int32)
    kernel(a, b)
    assert torch.equal(b, want)
    small = torch.ones(5, N, dtype=torch.int8)  # the same kernel on a small tensor
    out = torch.empty(5, dtype=torch.int32)
    kernel(small, out)
    assert torch.equal(out, torch.full((5,), N, dtype=torch.int32))


def test_offsets_are_64_bit_only_where_needed() -> None:
    assert _index_dtypes(tilelang.lower(rowsum(1000), target="cpu"), "A") == {"int32"}
    assert _index_dtypes(tilelang.lower(rowsum(BIG_M), target="cpu"), "A") == {"int64"}
    dynamic = tilelang.lower(rowsum(T.dynamic("m")), target="cpu")
    assert _index_dtypes(dynamic, "A") == {"int64"}  # m rows of 32768 can exceed int32
    assert _index_dtypes(dynamic, "B") == {"int32"}  # m elements cannot
    assert _index_dtypes(tilelang.lower(copy1d(T.dynamic("n")), target="cpu"), "A") == {"int32"}


def test_small_kernel_source_has_no_64_bit_offsets() -> None:
    art = tilelang.lower(rowsum(1000), target="cpu")
    compute = [ln for ln in art.kernel_source.splitlines() if "getelementptr" in ln and "%A" in ln]
    assert compute and not any("i64 %" in ln for ln in compute if "mul" in ln)
    assert "T.int64(" not in art.host_mod.script()


def test_config_index_bitwidth() -> None:
    forced = tilelang.lower(rowsum(1000), target="cpu", pass_configs={"tl.config_index_bitwidth": 64})
    assert _index_dtypes(forced, "A") == {"int64"} and _index_dtypes(forced, "B") == {"int64"}
    with pytest.raises(LoweringError, match=r"A has 2147549184 elements.*tl.config_index_bitwidth is 32"):
        tilelang.lower(rowsum(BIG_M), target="cpu", pass_configs={"tl.config_index_bitwidth": 32})
    with pytest.raises(LoweringError, match="must be 32 or 64, got 16"):
        tilelang.lower(rowsum(1000), target="cpu", pass_configs={"tl.config_index_bitwidth": 16})


def test_int32_runtime_dimension_past_int32_is_a_clear_error() -> None:
    """TVM binds an int32 ``T.dynamic`` dimension by truncating the tensor's extent: the call must refuse it."""
    art = tilelang.lower(copy1d(T.dynamic("n")), target="cpu")
    huge = torch.zeros(1, dtype=torch.int8).expand(2**32 + 7)  # no memory behind it: refused before any access
    with pytest.raises(ValueError, match=r"A\.shape\[0\] \(the runtime dimension n of copy1d\) exceeds int32.*"
                                         r"T\.dynamic\('n', 'int64'\)"):
        art.rt_mod[art.name](huge, huge)


def test_int64_runtime_dimension() -> None:
    kernel = tilelang.compile(copy1d(T.dynamic("n", "int64")), target="cpu")
    a = torch.arange(3000, dtype=torch.int32).to(torch.int8)
    b = torch.empty_like(a)
    kernel(a, b)
    assert torch.equal(a, b)
