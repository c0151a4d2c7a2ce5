"""`WGSparseTensorCoreIntrinEmitter`: writes a warpgroup 2:4-sparse ``wgmma.mma_async.sp`` GEMM (sm_90a) into a
hand-written kernel body, the sparse counterpart of the wgmma emitter (`wgmma_macro_generator`).

One instruction is ``m64nNk32`` (fp16 / bf16 into fp32): A holds the compressed half of each K step of 32 (a
64 x 16 tile), the metadata is one 32-bit register per thread in the layout of the ``mma.sp`` m16n8k32 atom of
its warp's 16 rows (`SparseTensorCoreIntrinEmitter.metadata_position`; sparsity selector 0). The warpgroup
geometry, descriptors, accumulator layout and `stmatrix` are those of the dense wgmma emitter:

- `wgmma_ss`: A (compressed) and B in shared memory, read through descriptors (``T.ptx_wgmma_sp_ss``);
- `wgmma_rs`: A in registers, per K step and 64-row block the k16 wgmma A fragment of the compressed tile
  (``local_size_a`` values from offset ``(ki * warp_rows + i) * local_size_a``; ``T.ptx_wgmma_sp_rs``).

Both load the thread's metadata registers from E (row-major metadata, as TileLang's compressors write it) into
a local buffer before the batch, then issue every instruction, commit, and wait unless ``wg_wait`` is -1.
"""

from __future__ import annotations

from typing import Any

from tilelang_cuda.intrinsics.macro import wgmma_macro_generator as _wg
from tilelang_cuda.intrinsics.macro.mma_macro_generator import _bits, _emit
from tilelang_cuda.intrinsics.macro.mma_sp_macro_generator import SparseTensorCoreIntrinEmitter

__all__ = ["WGSparseTensorCoreIntrinEmitter"]

_Dense = _wg.TensorCoreIntrinEmitter


class WGSparseTensorCoreIntrinEmitter(SparseTensorCoreIntrinEmitter):
    """Sparse ``wgmma.sp`` emitter (see the module docstring)."""

    def __init__(self, a_dtype: Any = "float16", e_dtype: Any = "uint8", b_dtype: Any = "float16",
                 accum_dtype: Any = "float16", a_transposed: bool = False, b_transposed: bool = False,
                 e_transposed: bool = False, block_row_warps: int = 2, block_col_warps: int = 2,
                 warp_row_tiles: int = 8, warp_col_tiles: int = 8, warp_k: int = 16, reduce_k: int = 1,
                 num_elems_per_byte: int = 1, is_m_first: bool | None = False, thread_var: Any = None):
        if str(a_dtype) not in ("float16", "bfloat16") or str(accum_dtype) != "float32":
            raise ValueError(f"WGSparseTensorCoreIntrinEmitter: wgmma.sp is emitted for float16 / bfloat16 A into a "
                             f"float32 accumulator, got {a_dtype} -> {accum_dtype} (SparseTensorCoreIntrinEmitter "
                             "emits mma.sp for int8 and fp8)")
        if reduce_k != 1:
            raise ValueError(f"WGSparseTensorCoreIntrinEmitter: reduce_k must be 1, got {reduce_k}")
        super().__init__(a_dtype, e_dtype, b_dtype, accum_dtype, a_transposed, b_transposed, e_transposed,
                         block_row_warps, block_col_warps, warp_row_tiles, warp_col_tiles, warp_k, reduce_k,
                         num_elems_per_byte, is_m_first, thread_var)
        self.wgmma_inst_m = _wg.WGMMA_M
        self.wgmma_inst_n = _wg.select_wgmma_inst_n(warp_col_tiles)
        self.wgmma_prefix = f"m{_wg.WGMMA_M}n{self.wgmma_inst_n}k{self.micro_size_k}"
        self.a_shared_layout = None
        self.b_shared_layout = None

    # the dense wgmma emitter's warpgroup geometry, operand layouts and accumulator store
    _assign_a_shared_layout = _Dense._assign_a_shared_layout
    _assign_b_shared_layout = _Dense._assign_b_shared_layout
    _rows_per_group = _Dense._rows_per_group
    _m_atoms = _Dense._m_atoms
    _n_atoms = _Dense._n_atoms
    accum_regs = _Dense.accum_regs
    _ranges = staticmethod(_Dense._ranges)
    _tile_offsets = staticmethod(_Dense._tile_offsets)
    _desc = staticmethod(_Dense._desc)
    stmatrix = _Dense.stmatrix

    def _check(self, layouts: str) -> None:
        if self.block_row_warps % 4 or self._rows_per_group % _wg.WGMMA_M:
            raise ValueError(f"wgmma.sp tiles need warpgroups of 4 warps along M and 64-row blocks: "
                             f"block_row_warps={self.block_row_warps}, warp_row_tiles={self.warp_row_tiles}")
        if self.warp_k % self.micro_size_k:
            raise ValueError(f"WGSparseTensorCoreIntrinEmitter: warp_k ({self.warp_k}) must be a multiple of "
                             f"{self.micro_size_k}")
        if ("A" in layouts and self.a_shared_layout is None) or self.b_shared_layout is None:
            raise ValueError(f"WGSparseTensorCoreIntrinEmitter needs the shared layouts of {' and '.join(layouts)} "
                             "(_assign_a_shared_layout / _assign_b_shared_layout)")

    def _geometry(self) -> tuple[Any, Any, Any, Any]:
        """(group_m, group_n, warp in the warpgroup, lane) of the calling thread."""
        tid = self.get_thread_binding()
        group, t = tid // 128, tid % 128
        groups_m = self.block_row_warps // 4
        return group % groups_m, group // groups_m, t // 32, t % 32

    def _load_metadata(self, E_region: Any) -> Any:
        """A local buffer with this thread's metadata registers, ``local_size_e`` E elements per K step and
        64-row block (step-major)."""
        from tvm import tirx

        from tilelang.language import alloc_local

        buf, mins = self._region(E_region)
        other, base0, base1 = mins[:-2], mins[-2], mins[-1]
        group_m, _, warp, lane = self._geometry()
        steps = self.warp_k // self.micro_size_k
        e_local = alloc_local((steps * self._m_atoms * self.local_size_e,), self.e_dtype)
        for ki in range(steps):
            for mb in range(self._m_atoms):
                row0 = group_m * self._rows_per_group + mb * _wg.WGMMA_M + 16 * warp
                for v in range(self.local_size_e):
                    r, c = self.metadata_position(lane, v)
                    col = ki * self.micro_size_k // self.e_factor + c
                    idx = ([*other, base0 + col, base1 + row0 + r] if self.e_transposed
                           else [*other, base0 + row0 + r, base1 + col])
                    at = (ki * self._m_atoms + mb) * self.local_size_e + v
                    _emit(tirx.BufferStore(e_local, tirx.BufferLoad(buf, idx), [tirx.IntImm("int32", at)]))
        return e_local

    @staticmethod
    def _scale(ki: int, clear_accum: Any) -> Any:
        from tvm import tirx

        if ki:
            return 1
        if isinstance(clear_accum, bool):
            return 0 if clear_accum else 1
        return 1 - tirx.Cast("int32", clear_accum)

    def _issue(self, A_region: Any, E_region: Any, B_region: Any, C_local_buf: Any, clear_accum: Any,
               wg_wait: int, rs: bool) -> None:
        from tvm import tirx

        from tilelang.language import access_ptr
        from tilelang_cuda.language.api import warpgroup_arrive, warpgroup_commit_batch, warpgroup_wait
        from tilelang_cuda.language.tir import ptx_wgmma_sp_rs, ptx_wgmma_sp_ss

        self._check("B" if rs else "A and B")
        e_local = self._load_metadata(E_region)
        group_m, group_n, _, _ = self._geometry()
        b_buf, b_mins = self._region(B_region)
        b_ranges = self._ranges(B_region)
        b = _wg.compute_gmma_descriptor(self.b_shared_layout, b_buf, not self.b_transposed, self.micro_size_k,
                                        b_ranges)
        b_tile = self._tile_offsets(self.b_shared_layout, b_ranges)
        b_desc = self._desc(access_ptr(tirx.BufferLoad(b_buf, b_mins), 0), b)
        k_half = self.micro_size_k // self.SPARSE_FACTOR
        if not rs:
            a_buf, a_mins = self._region(A_region)
            a_ranges = self._ranges(A_region)
            a = _wg.compute_gmma_descriptor(self.a_shared_layout, a_buf, self.a_transposed, k_half, a_ranges)
            a_tile = self._tile_offsets(self.a_shared_layout, a_ranges)
            a_desc = self._desc(access_ptr(tirx.BufferLoad(a_buf, a_mins), 0), a)
        elem = _bits(self.a_dtype) // 8
        regs = self.wgmma_inst_n // 2
        steps = self.warp_k // self.micro_size_k
        _emit(warpgroup_arrive())
        for mb in range(self._m_atoms):
            for nb in range(self._n_atoms):
                for ki in range(steps):
                    m0 = group_m * self._rows_per_group + mb * _wg.WGMMA_M
                    n0 = group_n * self.warp_col_tiles + nb * self.wgmma_inst_n
                    k0 = ki * self.micro_size_k
                    b_off = b_tile((n0, k0) if self.b_transposed else (k0, n0)) * elem // 16
                    e_at = (ki * self._m_atoms + mb) * self.local_size_e
                    c_at = (mb * self._n_atoms + nb) * regs
                    scale = self._scale(ki, clear_accum)
                    if rs:
                        a_at = (ki * self._m_atoms + mb) * self.local_size_a
                        _emit(ptx_wgmma_sp_rs(self.accum_dtype, self.wgmma_prefix, b.is_k_major, self.a_dtype_abbrv,
                                              self.b_dtype_abbrv, self.accum_dtype_abbrv, A_region, a_at, e_local,
                                              e_at, self.SPARSE_SELECTOR, b_desc, b_off, C_local_buf, c_at, scale))
                    else:
                        ka = ki * k_half
                        a_off = a_tile((ka, m0) if self.a_transposed else (m0, ka)) * elem // 16
                        _emit(ptx_wgmma_sp_ss(self.accum_dtype, self.wgmma_prefix, a.is_k_major, b.is_k_major,
                                              self.a_dtype_abbrv, self.b_dtype_abbrv, self.accum_dtype_abbrv,
                                              a_desc, a_off, e_local, e_at, self.SPARSE_SELECTOR, b_desc, b_off,
                                              C_local_buf, c_at, scale))
        _emit(warpgroup_commit_batch())
        if wg_wait >= 0:
            _emit(warpgroup_wait(wg_wait))

    def wgmma_ss(self, A_region: Any, E_region: Any, B_region: Any, C_region: Any, clear_accum: Any = False,
                 wg_wait: int = 0) -> None:
        """``C (+)= decompress(A, E) @ B`` over `warp_k` with A (compressed) and B in shared memory; with
        `clear_accum` (a bool or a runtime condition) the first K step overwrites the accumulators."""
        self._issue(A_region, E_region, B_region, C_region, clear_accum, wg_wait, rs=False)

    def wgmma_rs(self, A_region: Any, E_region: Any, B_region: Any, C_region: Any, clear_accum: Any = False,
                 wg_wait: int = 0) -> None:
        """As `wgmma_ss` with the compressed A in registers (the local buffer `A_region`, see the module
        docstring)."""
        self._issue(A_region, E_region, B_region, C_region, clear_accum, wg_wait, rs=True)
