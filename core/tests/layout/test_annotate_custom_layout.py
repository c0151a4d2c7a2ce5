"""A user-built `Layout` / `Fragment` annotated on a kernel flows through AttachLayouts / ApplyLayouts, and the
kernel still computes what torch does (CPU backend, shared layouts applied)."""

import math
import re

import pytest
import torch
import tvm

import tilelang
import tilelang.language as T
from tilelang.layout import Fragment, Layout, make_full_bank_swizzled_layout, make_half_bank_swizzled_layout
from tilelang.transform import utils as transform_utils

M, N = 64, 64

LAYOUTS = {
    # a padded row-major tile stored flat: one output index, rows 8 elements apart
    "padded_flat": lambda s: Layout((M, N), lambda i, j: i * (N + 8) + j),
    # a hand-written XOR swizzle keeping the 2-d shape
    "xor": lambda s: Layout((M, N), lambda i, j: [i, ((j // 4) ^ (i % 8)) * 4 + j % 4]),
    # the 128-byte TMA/GMMA atom: three output dims (column tile, row group, offset in the atom)
    "full_bank": make_full_bank_swizzled_layout,
    "half_bank": make_half_bank_swizzled_layout,
    # a column-major tile
    "transposed": lambda s: T.Layout((M, N), lambda i, j: j * M + i),
}


@pytest.fixture
def shared_layouts_applied(monkeypatch):
    """The CPU keeps shared layouts as hints by default: apply them, and keep the kernel cache out of it."""
    from tilelang import cache

    original = transform_utils.pipeline_options
    monkeypatch.setattr(transform_utils, "pipeline_options",
                        lambda target: {**original(target), "shared_layouts": True})
    was_enabled = cache.is_cache_enabled()
    cache.disable_cache()
    yield
    if was_enabled:
        cache.enable_cache()


def transpose_kernel(layout_of, dtype="float32"):
    @T.prim_func
    def transpose(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(1, threads=32):
            S = T.alloc_shared((M, N), dtype)
            F = T.alloc_fragment((M, N), dtype)
            T.annotate_layout({S: layout_of(S), F: Fragment((M, N), forward_thread_fn=lambda i, j: j % 32)})
            T.copy(A, S)
            for i, j in T.Parallel(M, N):
                B[i, j] = S[j, i] * T.cast(2, dtype)
            T.copy(S, F)
            T.copy(F, C)

    return transpose


def shared_storage(func):
    """(storage shape of tile S, lowered CPU module text) after the whole CPU pipeline."""
    script = tilelang.lower(func, target="cpu").host_mod.script()
    match = re.search(r"\bS = T\.(?:decl|alloc)_buffer\(\(([^)]*)\)", script)
    assert match, "tile S not found in the lowered module"
    return [int(x) for x in match.group(1).split(",") if x.strip()], script


@pytest.mark.backend("cpu")
@pytest.mark.parametrize("name", list(LAYOUTS))
def test_custom_shared_layout_runs_and_matches_torch(name, shared_layouts_applied):
    layout_of = LAYOUTS[name]
    func = transpose_kernel(layout_of)
    expected = math.prod(int(s) for s in layout_of(None).storage_shape) if "bank" not in name else M * N
    shape, script = shared_storage(func)
    assert math.prod(shape) == expected  # the storage the layout asks for (the CPU backend flattens it)
    assert ("S[" in script) and ((" ^ " in script) == (name in ("xor", "full_bank", "half_bank")))
    kernel = tilelang.compile(func, target="cpu")
    a = torch.randn(M, N)
    b, c = torch.empty(M, N), torch.empty(M, N)
    kernel(a, b, c)
    torch.testing.assert_close(b, (2 * a).T)
    torch.testing.assert_close(c, a)


@pytest.mark.backend("cpu")
def test_bank_swizzle_changes_the_storage_shape(shared_layouts_applied):
    from tilelang.transform import ApplyLayouts, AttachLayouts

    layout = make_full_bank_swizzled_layout(tvm.tirx.decl_buffer((M, N), "float32", name="S", scope="shared"))
    assert [int(s) for s in layout.storage_shape] == [2, 8, 256]  # (column tiles, row groups, 8 rows x 32 floats)

    @T.prim_func
    def scale(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=32):
            S = T.alloc_shared((M, N), "float32")
            T.annotate_layout({S: make_full_bank_swizzled_layout(S)})
            for i, j in T.Parallel(M, N):
                S[i, j] = A[i, j]
            for i, j in T.Parallel(M, N):
                B[i, j] = S[i, j] * 3.0

    mod = ApplyLayouts({"kind": "cpu"})(AttachLayouts({"kind": "cpu"})(tvm.IRModule({"main": scale})))
    (alloc,) = [a for a in transform_utils.allocations(mod["main"].body) if str(a.buffer.name) == "S"]
    assert [int(s) for s in alloc.buffer.ty.shape] == [2, 8, 256]
    kernel = tilelang.compile(scale, target="cpu")
    a, b = torch.randn(M, N), torch.empty(M, N)
    kernel(a, b)
    torch.testing.assert_close(b, 3 * a)


def test_a_layout_of_the_wrong_shape_is_rejected():
    from tilelang.errors import KernelTypeError

    with pytest.raises(KernelTypeError, match="shape"):
        transpose_kernel(lambda s: Layout((32, 32), lambda i, j: i * 32 + j))
