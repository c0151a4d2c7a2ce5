"""The CuTe algebra of `tilelang.layout.cute`, checked against its defining properties on random layouts."""

import itertools
import random

import pytest
import tvm_ffi
from tvm import tirx

from tilelang import _ffi_api
from tilelang.layout import Layout, cute, make_full_bank_swizzled_layout


def random_layout(rng, max_rank=3):
    """A random injective layout: a random permutation of compact power-of-two modes, sometimes with a gap
    (power-of-two extents meet composition's divisibility conditions)."""
    shape = tuple(rng.choice([1, 2, 4, 8]) for _ in range(rng.randint(1, max_rank)))
    order = list(range(len(shape)))
    rng.shuffle(order)
    stride = [0] * len(shape)
    acc = 1
    for k in order:
        stride[k] = acc
        acc *= shape[k] * rng.choice([1, 1, 2])
    return cute.make_layout(shape, stride=tuple(stride))


def image(layout):
    return [layout(i) for i in range(cute.size(layout))]


@pytest.mark.parametrize("seed", range(40))
def test_coalesce_and_composition_keep_the_function(seed):
    rng = random.Random(seed)
    a = random_layout(rng)
    assert image(cute.coalesce(a)) == image(a)
    # B reads A's domain with a stride that divides cleanly: A o B == A(B(i))
    n = cute.size(a)
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    step = rng.choice(divisors)
    b = cute.make_layout(n // step, stride=step)
    r = cute.composition(a, b)
    assert cute.size(r) == cute.size(b)
    assert image(r) == [a(b(i)) for i in range(cute.size(b))]


@pytest.mark.parametrize("seed", range(40))
def test_inverses(seed):
    a = random_layout(random.Random(seed))
    r = cute.right_inverse(a)
    assert all(a(r(i)) == i for i in range(cute.size(r)))
    li = cute.left_inverse(a)
    assert all(li(a(i)) == i for i in range(cute.size(a)))


@pytest.mark.parametrize("seed", range(40))
def test_complement_fills_the_codomain_disjointly(seed):
    a = random_layout(random.Random(seed))
    target = cute.cosize(a) * 2
    c = cute.complement(a, target)
    both = {a(i) + c(j) for i in range(cute.size(a)) for j in range(cute.size(c))}
    assert len(both) == cute.size(a) * cute.size(c)  # (a, complement) is injective ...
    assert len(both) >= target  # ... and covers the cotarget


def test_divide_and_products():
    a = cute.make_layout((8, 4), stride=(4, 1))
    d = cute.logical_divide(a, cute.make_layout(4, stride=2))
    assert cute.rank(d) == 2 and cute.size(d) == 32
    assert sorted(image(d)) == sorted(image(a))
    block, tiler = cute.make_layout((2, 3)), cute.make_layout((2, 2))
    p = cute.logical_product(block, tiler)
    assert tvm_ffi.structural_equal(p[0], block) and sorted(image(p)) == list(range(24))
    t = cute.tiled_product(block, tiler)
    assert sorted(image(t)) == list(range(24))
    blk = cute.blocked_product(block, tiler)
    assert cute.rank(blk) == 2 and sorted(image(blk)) == list(range(24))


def test_structural_identity_printing_and_parsing():
    a = cute.make_layout(((2, 2), 4), stride=((1, 8), 2))
    assert str(a) == "((2,2),4):((1,8),2)"
    assert tvm_ffi.structural_equal(cute.Layout.parse(str(a)), a)
    assert not tvm_ffi.structural_equal(cute.Layout.parse("((2,2),4):((1,8),3)"), a)
    basis = cute.make_layout((4, 2), stride=(cute.E(1), 3 * cute.E(0)))
    assert str(basis) == "(4,2):(1@1,3@0)" and basis(5) == (3, 1)
    assert str(cute.IntTuple.parse("2@0@1")) == "2@0@1"
    assert str(cute.Swizzle.parse("Sw<3,4,3>")) == "Sw<3,4,3>"


def test_dynamic_strides_stay_symbolic():
    n = tirx.Var("n", "int32")
    a = cute.make_layout((4, n), stride=(n, 1))
    assert tvm_ffi.structural_equal(cute.size(a), 4 * n)  # leaves multiplied in order
    assert tvm_ffi.structural_equal(a((3, 2)), 3 * n + 2)
    with pytest.raises(cute.LayoutAlgebraError, match="rank-1"):
        cute.complement(cute.make_layout((4, 8), stride=(n, 1)), 1024)


def swizzled(b, m, s, shape, offset=0):
    def forward(*idx):
        addr = offset
        place = 1
        for k in reversed(range(len(idx))):
            addr = addr + idx[k] * place
            place *= shape[k]
        return addr ^ ((addr & (((1 << b) - 1) << (m + s))) >> s)

    return Layout(shape, forward)


@pytest.mark.parametrize("b,m,s", [(b, m, s) for b in (1, 2, 3) for m in (0, 3) for s in (3, 4) if s >= b])
def test_swizzle_recovery_is_exact(b, m, s):
    shape = (1 << max(1, m + s + b - 3), 8)
    mode = cute.ComposedLayout.from_tilelang(swizzled(b, m, s, shape, offset=1 << 14))
    assert (mode.swizzle.b_bits, mode.swizzle.m_base, mode.swizzle.s_shift) == (b, m, s)
    assert mode.offset == 1 << 14
    for i, j in itertools.product(range(shape[0]), range(shape[1])):
        assert mode((i, j)) == int(swizzled(b, m, s, shape, offset=1 << 14)(i, j)[0])


def test_recovery_of_affine_and_bank_layouts():
    assert cute.Layout.from_tilelang(Layout((4, 8), lambda i, j: i * j)) is None
    plain = cute.Layout.from_tilelang(Layout((4, 8), lambda i, j: j * 4 + i))
    assert str(plain) == "(4,8):(1,4)"
    buf = tirx.decl_buffer((16, 128), "float16", name="A", scope="shared")
    mode = cute.ComposedLayout.from_tilelang(make_full_bank_swizzled_layout(buf), buf)
    assert str(mode.swizzle) == "Sw<3,4,3>" and mode.swizzle.to_swizzle_mode().swizzle_byte_size() == 128
    hier = cute.Layout.from_tilelang_hierarchical(Layout((8, 4), lambda i, j: [j, i]))
    assert str(hier) == "(8,4):(1@1,1@0)"
    with pytest.raises(Exception, match="must be constant"):
        cute.ComposedLayout.from_tilelang(Layout((tirx.Var("n", "int32"), 8), lambda i, j: i * 8 + j))


@pytest.mark.parametrize("shape", ["32dp32b", "16dp64b", "16dp128b", "16dp256b"])
def test_tcgen05_fragments_are_bijections_onto_threads_and_registers(shape):
    meta = getattr(_ffi_api, f"get_tcgen05_meta_ld_{shape}")()
    width = {"32dp32b": 1, "16dp64b": 2, "16dp128b": 4, "16dp256b": 8}[shape]
    tile = cute.make_layout((128, width * 4), stride=(cute.E(0), cute.E(1)))
    plan = _ffi_api.ExpandTcgen05Layout(meta, tile, 128)
    assert plan is not None and plan.num_chunks_each_wg == 4
    rank2 = cute.from_python((0, 0))  # pads a (thread@0, value@1) result to both slots
    owners = {cute.to_python(cute.from_python(plan.fragment((dp, col))) + rank2)
              for dp in range(128) for col in range(width * 4)}
    assert len(owners) == 128 * width * 4
    assert {t for t, _ in owners} == set(range(128))
    assert _ffi_api.ExpandTcgen05Layout(meta, cute.make_layout((128, 3), stride=(cute.E(0), cute.E(1))),
                                        128) is None or shape == "32dp32b"
