import engine_kernels as K
import pytest

import tilelang
from tilelang.layout import CyclicFragment, linearize, make_swizzled_layout, unravel
from tilelang.transform.config import PassConfigKey, normalize_pass_configs


def test_pass_config_key_is_exported_lazily():
    assert tilelang.PassConfigKey is PassConfigKey
    assert PassConfigKey.TL_DISABLE_VECTORIZE == "tl.disable_vectorize"
    assert normalize_pass_configs({"tir.disable_vectorize": True, PassConfigKey.TL_ENABLE_FAST_MATH: 1}) == {
        "tirx.disable_vectorize": True, "tl.enable_fast_math": 1}


@pytest.mark.backend("cpu")
@pytest.mark.parametrize("which", ["tl.LowerTileOps", "LowerTileOps", "all"])
def test_print_ir_env(monkeypatch, capfd, which):
    monkeypatch.setenv("TILELANG_PRINT_IR", which)
    tilelang.lower(K.elementwise_add(), target="cpu")
    err = capfd.readouterr().err
    assert "# ---- IR after tl.LowerTileOps" in err
    assert ("# ---- IR after tl.PartitionParallel" in err) == (which == "all")


def test_fragment_cyclic_layout():
    frag = CyclicFragment((4, 8), 8)
    owners = {(i, j): (frag.thread([i, j]), frag.local([i, j])) for i in range(4) for j in range(8)}
    assert len(set(owners.values())) == 32  # a bijection onto (thread, register)
    assert frag.local_size == 4
    assert CyclicFragment((4, 8), 8, "replicated").local_size == 32


def test_swizzle_is_a_row_permutation():
    layout = make_swizzled_layout((8, 64), dtype="float16")
    for r in range(8):
        cols = [layout(r, c)[1] for c in range(64)]
        assert sorted(cols) == list(range(64))
    assert [layout(1, c)[1] for c in range(8)] == list(range(8, 16))


def test_linearize_unravel_roundtrip():
    assert unravel(linearize([2, 3, 4], [5, 6, 7]), [5, 6, 7]) == [2, 3, 4]
