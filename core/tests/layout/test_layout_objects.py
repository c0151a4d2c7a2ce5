"""`tilelang.layout.Layout` / `Fragment` and the swizzle makers, checked by enumerating whole tiles."""

import itertools

import numpy as np
import pytest
from tvm import tirx

from tilelang import _ffi_api
from tilelang.layout import (
    CyclicFragment,
    Fragment,
    Layout,
    PartialFragment,
    SwizzleMode,
    make_full_bank_swizzled_layout,
    make_fully_replicated_layout_fragment,
    make_gemm_fragment_8x8,
    make_gemm_fragment_8x8_transposed,
    make_half_bank_swizzled_layout,
    make_linear_layout,
    make_quarter_bank_swizzled_layout,
    make_swizzled_layout,
    make_wgmma_swizzled_layout,
)
from tilelang.layout.gemm_sp import make_cutlass_metadata_layout
from tilelang.layout.swizzle import make_mma_swizzle_layout


def table(layout):
    """{input index: output index} over the whole (constant) input domain."""
    shape = [int(s) for s in layout.get_input_shape()]
    return {idx: tuple(int(x) for x in layout(*idx)) for idx in itertools.product(*map(range, shape))}


def linear_addresses(layout):
    out_shape = [int(s) for s in layout.get_output_shape()]
    return [int(np.ravel_multi_index(v, out_shape)) for v in table(layout).values()]


AFFINE = [
    Layout([8, 16], lambda i, j: i * 16 + j),
    Layout([8, 16], lambda i, j: [j, i]),
    Layout([16, 64], lambda i, j: [j // 8, i, j % 8]),
    Layout([4, 6, 5], lambda i, j, k: [k, i * 6 + j]),
    Layout([64], lambda i: [i % 4, i // 4]),
]


@pytest.mark.parametrize("layout", AFFINE, ids=lambda layout: str(layout.index))
def test_inverse_composed_with_forward_is_identity(layout):
    inv = layout.inverse()
    assert [int(s) for s in inv.get_input_shape()] == [int(s) for s in layout.get_output_shape()]
    for idx, out in table(layout).items():
        assert tuple(int(x) for x in inv(*out)) == idx
    back = table(inv)
    assert len(set(back.values())) == len(back)  # a bijection both ways


def test_inverse_of_a_swizzle_is_refused():
    with pytest.raises(ValueError, match="not an invertible"):
        Layout([8, 64], lambda i, j: [i, ((j // 8) ^ i) * 8 + j % 8]).inverse()


@pytest.mark.parametrize("maker,units", [(make_full_bank_swizzled_layout, 8), (make_half_bank_swizzled_layout, 4),
                                         (make_quarter_bank_swizzled_layout, 2)])
@pytest.mark.parametrize("dtype", ["float16", "float32", "int8"])
def test_bank_swizzles_are_bijections_that_spread_columns(maker, units, dtype):
    vec = 128 // {"float16": 16, "float32": 32, "int8": 8}[dtype]
    rows, cols = 16, vec * units * 2
    layout = maker(tirx.decl_buffer((rows, cols), dtype, name="S", scope="shared"))
    addrs = linear_addresses(layout)
    assert sorted(addrs) == list(range(rows * cols))  # a permutation of the storage
    layout.verify()
    # a column of 16-byte vectors read down `units` consecutive rows lands in `units` different vector slots
    slots = {addrs[r * cols] // vec % units for r in range(units * (8 // units)) if r % (8 // units) == 0}
    assert len(slots) == units


def test_bank_swizzle_of_a_batched_tile_expands_the_2d_one():
    two = make_full_bank_swizzled_layout(tirx.decl_buffer((8, 64), "float16", name="A", scope="shared"))
    three = make_full_bank_swizzled_layout(tirx.decl_buffer((3, 8, 64), "float16", name="B", scope="shared"))
    assert three.is_equal(two.expand([3]))
    assert not three.is_equal(two.expand([2]))


def test_bank_swizzle_rejects_a_row_it_cannot_tile():
    with pytest.raises(ValueError, match="multiple of 64 float16"):
        make_full_bank_swizzled_layout(tirx.decl_buffer((8, 32), "float16", name="A", scope="shared"))
    with pytest.raises(TypeError, match="expected a buffer"):
        make_full_bank_swizzled_layout((8, 64))


def test_wgmma_layout_picks_the_widest_swizzle_that_fits():
    for cols, units in ((64, 8), (32, 4), (16, 2)):
        buf = tirx.decl_buffer((8, cols), "float16", name="A", scope="shared")
        narrow = {8: make_full_bank_swizzled_layout, 4: make_half_bank_swizzled_layout,
                  2: make_quarter_bank_swizzled_layout}[units](buf)
        assert make_wgmma_swizzled_layout(buf).is_equal(narrow)
    odd = tirx.decl_buffer((8, 12), "float16", name="A", scope="shared")
    assert make_wgmma_swizzled_layout(odd).is_equal(make_linear_layout(odd))


def test_mma_swizzle_and_linear_layouts_are_permutations():
    for dtype, cols in (("float16", 64), ("float16", 192), ("int8", 128)):
        buf = tirx.decl_buffer((16, cols), dtype, name="A", scope="shared")
        assert sorted(linear_addresses(make_mma_swizzle_layout(buf))) == list(range(16 * cols))
    buf = tirx.decl_buffer((4, 6), "float32", name="A", scope="shared")
    assert [v[0] for v in table(make_linear_layout(buf)).values()] == list(range(24))


def test_swizzled_layout_keeps_its_shape_and_pads_unswizzlable_rows():
    layout = make_swizzled_layout((16, 64), dtype="float16")
    assert layout.storage_shape == [16, 64] and layout.kind == "swizzle"
    assert sorted(linear_addresses(layout)) == list(range(16 * 64))
    padded = make_swizzled_layout((16, 24), dtype="float16")
    assert padded.kind == "padded" and padded.storage_shape == [16, 32]
    assert make_swizzled_layout((16, 24), dtype="float16", allow_pad=False).storage_shape == [16, 24]


def test_repeat_and_expand_follow_their_definitions():
    atom = Layout([4, 8], lambda i, j: (i * 8 + j) ^ 5)
    rep = atom.repeat(dim=1, factor=3)
    assert [int(s) for s in rep.get_output_shape()] == [3, 32]
    for (i, j), out in table(rep).items():
        assert out == (j // 8, int(atom(i, j % 8)[0]))
    exp = atom.expand([2, 3])
    for (a, b, i, j), out in table(exp).items():
        assert out == (a, b, int(atom(i, j)[0]))
    with pytest.raises(ValueError):
        _ffi_api.Layout_repeat(atom, 0, 0)
    with pytest.raises(TypeError):
        atom.expand("2")


def test_reshape_keeps_the_flat_map_and_rescales_elements():
    layout = Layout([4, 8], lambda i, j: [j, i])
    flat = layout.reshape([32])
    for k in range(32):
        assert flat(k) == layout(k // 8, k % 8)
    halves = layout.reshape([4, 16], rescale_num=1, rescale_den=2)  # each element becomes two of half the size
    for i, j in itertools.product(range(4), range(16)):
        out = layout(i, j // 2)
        assert halves(i, j) == [out[0], out[1] * 2 + j % 2]
    contiguous = Layout([4, 8], lambda i, j: i * 8 + j)
    wide = contiguous.reshape([4, 4], rescale_num=2, rescale_den=1)
    assert [wide(i, j)[0] for i in range(4) for j in range(4)] == list(range(16))
    with pytest.raises(ValueError, match="interleaves"):
        layout.reshape([4, 4], rescale_num=2)
    with pytest.raises(ValueError, match="cannot reshape"):
        layout.reshape([5, 8])


def test_equality_is_semantic_and_checks_shapes():
    assert Layout([16, 8], lambda i, j: i * 8 + j).is_equal(Layout([16, 8], lambda a, b: b + a * 8))
    assert not Layout([16, 8], lambda i, j: i * 8 + j).is_equal(Layout([8, 16], lambda i, j: i * 16 + j))
    assert not Layout([8], lambda i: i).is_equal(Fragment([8], forward_thread_fn=lambda i: i))


def test_fragment_infers_its_index_from_the_unused_digits():
    frag = Fragment([32, 4], forward_thread_fn=lambda i, j: i % 8)
    seen = {}
    for (i, j), _ in table(frag).items():
        key = (int(frag.map_forward_thread([i, j])), int(frag(i, j)[0]))
        assert key not in seen  # (thread, register) is one-to-one
        seen[key] = (i, j)
    assert int(frag.get_thread_size()) == 8 and int(frag.get_output_shape()[0]) == 16


def test_fragment_replicate_repeat_and_condense():
    base = Fragment([8, 8], forward_thread_fn=lambda i, j: i * 4 + j // 2, forward_index_fn=lambda i, j: j % 2)
    assert base.is_equal(make_gemm_fragment_8x8())
    assert not base.is_equal(make_gemm_fragment_8x8_transposed())
    twice = base.replicate(2)
    assert int(twice.replicate_size) == 2 and int(twice.get_thread_size()) == 64
    assert {int(twice.map_forward_thread([1, 2], rep=r)) for r in range(2)} == {5, 37}
    on_threads = base.repeat([2, 1], repeat_on_thread=True)
    assert int(on_threads.get_thread_size()) == 64 and int(on_threads.map_forward_thread([9, 2])) == 32 + 5
    on_regs = base.repeat([1, 2])
    assert int(on_regs.get_output_shape()[0]) == 4 and int(on_regs(1, 10)[0]) == 2 + 0
    loose = Fragment([8], forward_thread_fn=lambda i, rep: i + 8 * (rep % 2), replicate=4)
    tight = loose.condense_rep_var()
    assert int(tight.replicate_size) == 2
    assert {int(tight.map_forward_thread([3], rep=r)) for r in range(2)} == {3, 11}


def test_fully_replicated_and_partial_fragments():
    frag = make_fully_replicated_layout_fragment(tirx.decl_buffer((2, 3), "float32", name="F"), 4)
    assert int(frag.replicate_size) == 4 and [int(frag(i, j)[0]) for i in range(2) for j in range(3)] == list(range(6))
    assert {int(frag.map_forward_thread([1, 1], rep=r)) for r in range(4)} == {0, 1, 2, 3}
    partial = PartialFragment([4], forward_thread_fn=lambda i, rep: rep, replicate=4, combine=2)
    assert partial.combine == 2 and partial.as_post_collective().is_equal(
        Fragment([4], forward_thread_fn=lambda i, rep: rep, replicate=4))
    with pytest.raises(ValueError, match="evenly divide"):
        PartialFragment([4], forward_thread_fn=lambda i, rep: rep, replicate=4, combine=3)


@pytest.mark.parametrize("lanes", [1, 4])
def test_cyclic_fragment_as_a_fragment_agrees(lanes):
    cyc = CyclicFragment((8, 16), 8, vector_lanes=lanes)
    frag = cyc.as_fragment()
    for i, j in itertools.product(range(8), range(16)):
        assert int(frag.map_forward_thread([i, j])) == cyc.thread([i, j])
        assert int(frag(i, j)[0]) == cyc.local([i, j])


def test_swizzle_mode_fields():
    assert SwizzleMode.from_ordinal(3) is SwizzleMode.SWIZZLE_128B
    assert [m.swizzle_byte_size() for m in SwizzleMode] == [1, 32, 64, 128]
    assert SwizzleMode.SWIZZLE_64B.wgmma_layout_type() == 2 and SwizzleMode.SWIZZLE_32B.tcgen05_layout_type() == 6
    assert SwizzleMode.SWIZZLE_128B.smem_alignment() == 1024 and SwizzleMode.NONE.swizzle_atom_size() == 1
    with pytest.raises(ValueError, match="ordinal"):
        SwizzleMode.from_ordinal(7)


@pytest.mark.parametrize("arch,dtype,mma", [("sm_90", "uint8", "float16"), ("sm_90", "int8", "int8"),
                                            ("sm_80", "uint16", "float16"), ("sm_80", "int32", "int8")])
def test_cutlass_metadata_layouts_are_injective(arch, dtype, mma):
    buf = tirx.decl_buffer((128, 64), dtype, name="E", scope="shared")
    kwargs = {"block_k": 64} if arch == "sm_90" else {}
    layout = make_cutlass_metadata_layout(buf, mma, arch=arch, **kwargs)
    addrs = linear_addresses(layout)
    assert len(set(addrs)) == len(addrs)
    with pytest.raises(ValueError, match="should be"):
        make_cutlass_metadata_layout(tirx.decl_buffer((128, 64), "float32", name="E"), "float16", arch=arch, **kwargs)


def test_ffi_api_table_resolves_every_name():
    for name in _ffi_api._TABLE:
        assert callable(getattr(_ffi_api, name)), name
    with pytest.raises(AttributeError, match="does not implement"):
        _ffi_api.no_such_native_function  # noqa: B018
    atom = Layout([8, 64], lambda i, j: i * 64 + j)
    assert _ffi_api.Layout_expand(atom, [2]).is_equal(atom.expand([2]))
    frag = make_gemm_fragment_8x8()
    assert int(_ffi_api.Fragment_thread_size(frag)) == 32
