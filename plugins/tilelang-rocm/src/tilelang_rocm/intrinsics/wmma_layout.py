"""Lane layouts of the RDNA WMMA ``16x16x16`` operands (wave32) for gfx11 (RDNA3) and gfx12 (RDNA4).

gfx11: lane ``t`` holds a whole 16-element K row of A (``A[t % 16][0:16]``) and of B (``B[0:16][t % 16]``); lanes
16..31 hold copies of lanes 0..15. The 8 fp32 accumulators of lane ``t`` are ``D[t // 16 + 2 l][t % 16]``.
gfx12: lane ``t`` holds 8 K elements, ``A[t % 16][(t // 16) * 8 + e]``, ``B[(t // 16) * 8 + e][t % 16]``; its
accumulators are ``D[(t // 16) * 8 + l][t % 16]``.

Naming as the reference: ``shared_16x16_to_local_32xV_layout_X_<gen>(i, j) -> (thread, local)``,
``thread_id_shared_access_32xV_to_16x16_layout_X_<gen>(thread, local) -> (i, j)``; ``_colmajor`` maps the
operand stored transposed (A as K x M, B as N x K).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "shared_16x16_to_local_32x8_layout_A_gfx12", "thread_id_shared_access_32x8_to_16x16_layout_A_gfx12",
    "shared_16x16_to_local_32x8_layout_A_colmajor_gfx12",
    "thread_id_shared_access_32x8_to_16x16_layout_A_colmajor_gfx12",
    "shared_16x16_to_local_32x8_layout_B_gfx12", "thread_id_shared_access_32x8_to_16x16_layout_B_gfx12",
    "shared_16x16_to_local_32x8_layout_B_colmajor_gfx12",
    "thread_id_shared_access_32x8_to_16x16_layout_B_colmajor_gfx12",
    "shared_16x16_to_local_32x8_layout_C_gfx12", "thread_id_shared_access_32x8_to_16x16_layout_C_gfx12",
    "wmma_store_index_map_gfx12",
    "shared_16x16_to_local_32x16_layout_A_gfx11", "thread_id_shared_access_32x16_to_16x16_layout_A_gfx11",
    "shared_16x16_to_local_32x16_layout_A_colmajor_gfx11",
    "thread_id_shared_access_32x16_to_16x16_layout_A_colmajor_gfx11",
    "shared_16x16_to_local_32x16_layout_B_gfx11", "thread_id_shared_access_32x16_to_16x16_layout_B_gfx11",
    "shared_16x16_to_local_32x16_layout_B_colmajor_gfx11",
    "thread_id_shared_access_32x16_to_16x16_layout_B_colmajor_gfx11",
    "shared_16x16_to_local_32x8_layout_C_gfx11", "thread_id_shared_access_32x8_to_16x16_layout_C_gfx11",
    "wmma_store_index_map_gfx11",
    "fragment_forward_A_gfx11", "fragment_forward_A_colmajor_gfx11", "fragment_forward_B_gfx11",
    "fragment_forward_B_colmajor_gfx11",
    "get_wmma_a_layout_funcs", "get_wmma_b_layout_funcs", "get_wmma_c_layout_funcs",
    "get_wmma_store_index_map_func", "get_wmma_a_fragment_forward_func", "get_wmma_b_fragment_forward_func",
    "get_wmma_fragment_replicate_count",
]


# ---------------------------------------------------------------- gfx12: 8 values a lane
def shared_16x16_to_local_32x8_layout_A_gfx12(i: Any, j: Any) -> tuple[Any, Any]:
    """A[M=i][K=j] -> (lane, register)."""
    return (j // 8) * 16 + i, j % 8


def thread_id_shared_access_32x8_to_16x16_layout_A_gfx12(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return thread_id % 16, (thread_id // 16) * 8 + local_id


def shared_16x16_to_local_32x8_layout_A_colmajor_gfx12(i: Any, j: Any) -> tuple[Any, Any]:
    """A stored K x M: A_T[K=i][M=j] -> (lane, register)."""
    return (i // 8) * 16 + j, i % 8


def thread_id_shared_access_32x8_to_16x16_layout_A_colmajor_gfx12(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return (thread_id // 16) * 8 + local_id, thread_id % 16


def shared_16x16_to_local_32x8_layout_B_gfx12(i: Any, j: Any) -> tuple[Any, Any]:
    """B[K=i][N=j] -> (lane, register)."""
    return (i // 8) * 16 + j, i % 8


def thread_id_shared_access_32x8_to_16x16_layout_B_gfx12(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return (thread_id // 16) * 8 + local_id, thread_id % 16


def shared_16x16_to_local_32x8_layout_B_colmajor_gfx12(i: Any, j: Any) -> tuple[Any, Any]:
    """B stored N x K: B_T[N=i][K=j] -> (lane, register)."""
    return (j // 8) * 16 + i, j % 8


def thread_id_shared_access_32x8_to_16x16_layout_B_colmajor_gfx12(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return thread_id % 16, (thread_id // 16) * 8 + local_id


def shared_16x16_to_local_32x8_layout_C_gfx12(i: Any, j: Any) -> tuple[Any, Any]:
    """D[M=i][N=j] -> (lane, register)."""
    return (i // 8) * 16 + j, i % 8


def thread_id_shared_access_32x8_to_16x16_layout_C_gfx12(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return (thread_id // 16) * 8 + local_id, thread_id % 16


def wmma_store_index_map_gfx12(thread_id: Any, local_id: Any) -> Any:
    from tvm.runtime import convert

    return convert(list(thread_id_shared_access_32x8_to_16x16_layout_C_gfx12(thread_id, local_id)))


# ---------------------------------------------------------------- gfx11: 16 values a lane, half-waves copied
def shared_16x16_to_local_32x16_layout_A_gfx11(i: Any, j: Any) -> tuple[Any, Any]:
    """A[M=i][K=j] -> (lane of the lower half-wave, register)."""
    return i, j % 16


def thread_id_shared_access_32x16_to_16x16_layout_A_gfx11(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return thread_id % 16, local_id


def shared_16x16_to_local_32x16_layout_A_colmajor_gfx11(i: Any, j: Any) -> tuple[Any, Any]:
    return j, i % 16


def thread_id_shared_access_32x16_to_16x16_layout_A_colmajor_gfx11(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return local_id, thread_id % 16


def shared_16x16_to_local_32x16_layout_B_gfx11(i: Any, j: Any) -> tuple[Any, Any]:
    """B[K=i][N=j] -> (lane of the lower half-wave, register)."""
    return j, i % 16


def thread_id_shared_access_32x16_to_16x16_layout_B_gfx11(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return local_id, thread_id % 16


def shared_16x16_to_local_32x16_layout_B_colmajor_gfx11(i: Any, j: Any) -> tuple[Any, Any]:
    return i, j % 16


def thread_id_shared_access_32x16_to_16x16_layout_B_colmajor_gfx11(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return thread_id % 16, local_id


def shared_16x16_to_local_32x8_layout_C_gfx11(i: Any, j: Any) -> tuple[Any, Any]:
    """D[M=i][N=j] -> (lane, register): even rows in lanes 0..15, odd rows in 16..31."""
    return (i % 2) * 16 + j, i // 2


def thread_id_shared_access_32x8_to_16x16_layout_C_gfx11(thread_id: Any, local_id: Any) -> tuple[Any, Any]:
    return thread_id // 16 + local_id * 2, thread_id % 16


def wmma_store_index_map_gfx11(thread_id: Any, local_id: Any) -> Any:
    from tvm.runtime import convert

    return convert(list(thread_id_shared_access_32x8_to_16x16_layout_C_gfx11(thread_id, local_id)))


def fragment_forward_A_gfx11(i: Any, j: Any, rep: Any) -> tuple[Any, Any]:
    """The copy `rep` (0: lower half-wave, 1: upper) of A[i][j]."""
    thread_id, local_id = shared_16x16_to_local_32x16_layout_A_gfx11(i, j)
    return thread_id + 16 * rep, local_id


def fragment_forward_A_colmajor_gfx11(i: Any, j: Any, rep: Any) -> tuple[Any, Any]:
    thread_id, local_id = shared_16x16_to_local_32x16_layout_A_colmajor_gfx11(i, j)
    return thread_id + 16 * rep, local_id


def fragment_forward_B_gfx11(i: Any, j: Any, rep: Any) -> tuple[Any, Any]:
    thread_id, local_id = shared_16x16_to_local_32x16_layout_B_gfx11(i, j)
    return thread_id + 16 * rep, local_id


def fragment_forward_B_colmajor_gfx11(i: Any, j: Any, rep: Any) -> tuple[Any, Any]:
    thread_id, local_id = shared_16x16_to_local_32x16_layout_B_colmajor_gfx11(i, j)
    return thread_id + 16 * rep, local_id


# ---------------------------------------------------------------- selection by RDNA generation
def _unsupported(rdna_gen: int) -> ValueError:
    return ValueError(f"Unsupported RDNA generation for WMMA layout: {rdna_gen} (WMMA layouts: 11 and 12)")


_A = {(11, False): (shared_16x16_to_local_32x16_layout_A_gfx11, thread_id_shared_access_32x16_to_16x16_layout_A_gfx11),
      (11, True): (shared_16x16_to_local_32x16_layout_A_colmajor_gfx11,
                   thread_id_shared_access_32x16_to_16x16_layout_A_colmajor_gfx11),
      (12, False): (shared_16x16_to_local_32x8_layout_A_gfx12, thread_id_shared_access_32x8_to_16x16_layout_A_gfx12),
      (12, True): (shared_16x16_to_local_32x8_layout_A_colmajor_gfx12,
                   thread_id_shared_access_32x8_to_16x16_layout_A_colmajor_gfx12)}
_B = {(11, False): (shared_16x16_to_local_32x16_layout_B_gfx11, thread_id_shared_access_32x16_to_16x16_layout_B_gfx11),
      (11, True): (shared_16x16_to_local_32x16_layout_B_colmajor_gfx11,
                   thread_id_shared_access_32x16_to_16x16_layout_B_colmajor_gfx11),
      (12, False): (shared_16x16_to_local_32x8_layout_B_gfx12, thread_id_shared_access_32x8_to_16x16_layout_B_gfx12),
      (12, True): (shared_16x16_to_local_32x8_layout_B_colmajor_gfx12,
                   thread_id_shared_access_32x8_to_16x16_layout_B_colmajor_gfx12)}


def get_wmma_a_layout_funcs(rdna_gen: int, transposed: bool) -> tuple[Any, Any]:
    """(forward, reverse) maps of A for `rdna_gen` (11 or 12), `transposed`: stored K x M."""
    if (rdna_gen, bool(transposed)) not in _A:
        raise _unsupported(rdna_gen)
    return _A[rdna_gen, bool(transposed)]


def get_wmma_b_layout_funcs(rdna_gen: int, transposed: bool) -> tuple[Any, Any]:
    """(forward, reverse) maps of B for `rdna_gen`, `transposed`: stored N x K."""
    if (rdna_gen, bool(transposed)) not in _B:
        raise _unsupported(rdna_gen)
    return _B[rdna_gen, bool(transposed)]


def get_wmma_c_layout_funcs(rdna_gen: int) -> tuple[Any, Any]:
    if rdna_gen == 11:
        return shared_16x16_to_local_32x8_layout_C_gfx11, thread_id_shared_access_32x8_to_16x16_layout_C_gfx11
    if rdna_gen == 12:
        return shared_16x16_to_local_32x8_layout_C_gfx12, thread_id_shared_access_32x8_to_16x16_layout_C_gfx12
    raise _unsupported(rdna_gen)


def get_wmma_store_index_map_func(rdna_gen: int) -> Any:
    if rdna_gen in (11, 12):
        return wmma_store_index_map_gfx11 if rdna_gen == 11 else wmma_store_index_map_gfx12
    raise _unsupported(rdna_gen)


def get_wmma_a_fragment_forward_func(rdna_gen: int, transposed: bool) -> Any:
    if rdna_gen == 11:
        return fragment_forward_A_colmajor_gfx11 if transposed else fragment_forward_A_gfx11
    if rdna_gen == 12:
        return None
    raise _unsupported(rdna_gen)


def get_wmma_b_fragment_forward_func(rdna_gen: int, transposed: bool) -> Any:
    if rdna_gen == 11:
        return fragment_forward_B_colmajor_gfx11 if transposed else fragment_forward_B_gfx11
    if rdna_gen == 12:
        return None
    raise _unsupported(rdna_gen)


def get_wmma_fragment_replicate_count(rdna_gen: int) -> int:
    """How many lanes hold each A / B element: 2 on gfx11 (both half-waves), 1 on gfx12."""
    if rdna_gen in (11, 12):
        return 2 if rdna_gen == 11 else 1
    raise _unsupported(rdna_gen)
