"""`tilelang.intrinsics.warp_matrix`: a toy subclass of `WarpMatrixEmitter` that gives only its lane maps gets the
shared operand loads, accumulator store, atom loop and fragment layouts, and they agree with each other."""

from __future__ import annotations

import itertools

import pytest
from tvm import tirx

from tilelang.backend import sdk
from tilelang.intrinsics import warp_matrix
from tilelang.intrinsics.warp_matrix import WarpMatrixEmitter, collecting


class ToyEmitter(WarpMatrixEmitter):
    """4-lane warps, 2 x 2 x 2 atoms: lane ``l`` holds element ``(l // 2, l % 2)`` of every A, B and C atom."""

    WARP_SIZE = 4

    def __init__(self, a_transposed: bool = False, b_transposed: bool = False, k_pack: int = 1):
        super().__init__("float16", "float16", "float32", a_transposed, b_transposed, block_row_warps=2,
                         block_col_warps=2, warp_row_tiles=4, warp_col_tiles=2, chunk=4 * k_pack)
        self.k_pack = k_pack
        self.micro_size_x = self.micro_size_y = self.micro_size_k = 2
        self.warp_rows, self.warp_cols = 2, 1
        self._initialize_local_size(2, 2, 2, self.WARP_SIZE)

    def _operand_lanes(self, is_a: bool):
        transposed = self.a_transposed if is_a else self.b_transposed
        return self._storage_order(lambda lane, v: (lane // 2, lane % 2), (not transposed) if is_a else transposed)

    def _store_map(self):
        return lambda lane, v: (lane // 2, lane % 2)

    def load_layout(self, buf, matrix):
        return self._make_load_layout(buf, matrix, lambda mn, k: (mn * 2 + k, 0), 2, 1)

    def store_layout(self, buf):
        return self._make_store_layout(buf, lambda i, j: (2 * i + j, 0))


def _stores(emitter: ToyEmitter, call) -> dict[tuple[int, int], tuple[int, ...]]:
    """``(thread, register) -> source index`` (loads) or ``(thread, register) -> destination index`` (stores) of
    what `call` emits for every thread of the block."""
    out = {}
    for tx in range(16):
        emitter.thread_var = tx
        with collecting() as stmts:
            call()
        for st in stmts:
            assert isinstance(st, tirx.BufferStore)
            if st.buffer.scope() == "local":  # a load: local[reg] = shared[...]
                out[tx, int(st.indices[0])] = tuple(int(i) for i in st.value.indices)
            else:  # a store: C[...] = local[reg]
                out[tx, int(st.value.indices[0])] = tuple(int(i) for i in st.indices)
    return out


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("matrix", ["A", "B"])
def test_operand_loads_follow_the_load_layout(matrix, transposed):
    is_a = matrix == "A"
    em = ToyEmitter(a_transposed=transposed and is_a, b_transposed=transposed and not is_a)
    mn = 8 if is_a else 4  # block_row_warps * warp_row_tiles, block_col_warps * warp_col_tiles
    mn_first = not transposed if is_a else transposed
    shape = (mn, 4) if mn_first else (4, mn)
    shared = tirx.decl_buffer(shape, "float16", name="S", scope="shared")
    local = tirx.decl_buffer((2,), "float16", name="R", scope="local")
    tiles = em.warp_rows if is_a else em.warp_cols
    loaded = {}
    load = em.ldmatrix_a if is_a else em.ldmatrix_b
    for ki in range(2):
        for (tx, reg), src in _stores(em, lambda ki=ki: load(local, shared, ki)).items():
            loaded[tx, ki * tiles + reg] = src
    layout = em.load_layout(tirx.decl_buffer(shape, "float16", scope="local.fragment"), matrix)
    # A's copies sit in the warps of the other block columns, B's in those of the other block rows: every replica
    # is a thread of the block that loads exactly that element there
    seen = set()
    for idx in itertools.product(*(range(s) for s in shape)):
        (reg,) = layout.map_forward_index(list(idx))
        for rep in range(2):
            thread = int(layout.map_forward_thread(list(idx), rep))
            assert 0 <= thread < 16 and loaded[thread, int(reg)] == idx
            seen.add((thread, int(reg)))
    assert len(loaded) == 16 * 2 * tiles  # every thread's registers, each K step
    assert seen == set(loaded)  # the layout places an element in every register a thread loads


def test_stmatrix_writes_each_element_once_where_the_store_layout_says():
    em = ToyEmitter()
    c = tirx.decl_buffer((8, 4), "float32", name="C", scope="shared")
    acc = tirx.decl_buffer((2,), "float32", name="acc", scope="local")
    written = _stores(em, lambda: em.stmatrix(acc, c))
    assert sorted(written.values()) == sorted(itertools.product(range(8), range(4)))
    layout = em.store_layout(tirx.decl_buffer((8, 4), "float32", scope="local.fragment"))
    for (tx, reg), idx in written.items():
        assert (int(layout.map_forward_thread(list(idx))), int(layout.map_forward_index(list(idx))[0])) == (tx, reg)
    # the accumulators are cast to C's dtype; a 4-D C is [block_m atoms, block_n atoms, micro_x, micro_y]
    em.thread_var = 0
    with collecting() as stmts:
        em.stmatrix(acc, tirx.decl_buffer((4, 2, 2, 2), "float16", name="C4", scope="shared"))
    assert isinstance(stmts[0].value, tirx.Cast) and [int(i) for i in stmts[0].indices] == [0, 0, 0, 0]
    with pytest.raises(ValueError, match="C_buf should be 2D or 4D"):
        em.stmatrix(acc, tirx.decl_buffer((8,), "float16"))


def test_stmatrix_to_the_global_matrix_offsets_by_the_block():
    em = ToyEmitter()
    c = tirx.decl_buffer((32, 32), "float32", name="C")
    acc = tirx.decl_buffer((2,), "float32", name="acc", scope="local")
    block = _stores(em, lambda: em.stmatrix(acc, c))
    shifted = _stores(em, lambda: em.stmatrix(acc, c, 1, 2))  # block (1, 2): rows + 8, columns + 8
    assert {k: (r + 8, col + 8) for k, (r, col) in block.items()} == shifted


def test_each_atom_runs_k_pack_slices_outermost_and_steps_fragment_operands():
    em = ToyEmitter(k_pack=2)
    local = tirx.decl_buffer((4,), "float16", scope="local")
    frag = tirx.decl_buffer((8,), "float16", scope="local.fragment")
    assert [tuple(int(x) for x in t) for t in em._each_atom(local, local)] == [(0, 0, 0), (2, 0, 1), (1, 1, 0),
                                                                             (3, 1, 1)]
    # a fragment operand holds every K step: k_inner 1 starts after warp_rows * k_pack atoms of A
    assert [int(a) for a, _, _ in em._each_atom(frag, local, k_inner=1)] == [4, 6, 5, 7]


def test_a_subclass_without_lane_maps_is_told_which_hook_it_lacks():
    class Bare(WarpMatrixEmitter):
        pass

    with pytest.raises(NotImplementedError, match=r"Bare gives no operand lane map \(_operand_lanes\)"):
        Bare()._operand_lanes(True)
    with pytest.raises(NotImplementedError, match=r"Bare gives no accumulator map \(_store_map\)"):
        Bare().get_store_index_map()


def test_thread_binding_orders_warps_by_is_m_first():
    em = ToyEmitter()
    assert em.extract_thread_binding(13) == (1, 1, 1)  # lane 1 of warp 3: warp_m = 3 % 2, warp_n = 3 // 2
    assert em.extract_thread_binding(9, is_m_first=True) == (1, 0, 1)  # warp 2: warp_n = 2 % 2, warp_m = 2 // 2


def test_the_backend_sdk_exports_the_emitter_and_its_helpers():
    for name in ("WarpMatrixEmitter", "OperandTiles", "collecting", "emit", "alloc_registers", "operand_region",
                 "is_fragment"):
        assert getattr(sdk, name) is getattr(warp_matrix, name)
