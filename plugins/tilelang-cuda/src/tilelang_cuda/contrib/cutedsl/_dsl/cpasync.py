"""cp.async, TMA (bulk tensor copies), mbarriers and async-proxy fences on the CuTe DSL.

Shared-memory operands are ``cute.Pointer`` s in shared memory; TMA descriptors are a ``cute.CopyAtom`` of a TMA
copy, a pointer to a 128-byte ``CUtensorMap`` (a kernel argument or ``extract_tensormap_ptr``) or a tensor of one.
"""

from __future__ import annotations

import cutlass.cute as cute
from cutlass.base_dsl.typing import Int32, Uint64

from tilelang_cuda.contrib.cutedsl._dsl._asm import asm, pointer_of, smem_addr

BYTES_PER_TENSORMAP = 128
BYTES_PER_POINTER = 8


def cp_async_commit():
    """Close the current group of cp.async copies (``cp.async.commit_group``)."""
    cute.arch.cp_async_commit_group()


def cp_async_wait(n=0):
    """Wait until at most `n` cp.async groups are pending (``cp.async.wait_group n``)."""
    cute.arch.cp_async_wait_group(n)


def _mode_name(modifier) -> str:
    name = modifier if isinstance(modifier, str) else getattr(modifier, "name", str(modifier))
    name = name.lower().rsplit(".", 1)[-1]
    if name not in ("ca", "cg"):
        raise ValueError(f"cp.async cache modifier must be CA or CG, got {modifier!r}")
    return name


def cp_async_shared_global(dst, src, cp_size, modifier, *, src_size=None, cond=None):
    """Copy `cp_size` (4, 8 or 16) bytes from global `src` to shared `dst` asynchronously with cache `modifier`
    (``nvvm.LoadCacheModifierKind.CA`` / ``CG`` or "ca" / "cg"; CG needs 16 bytes); `src_size` < `cp_size`
    zero-fills the rest; `cond` false skips the copy."""
    if cp_size not in (4, 8, 16):
        raise ValueError(f"cp.async copies 4, 8 or 16 bytes, got {cp_size}")
    mode = _mode_name(modifier)
    if mode == "cg" and cp_size != 16:
        raise ValueError(f"cp.async.cg copies 16 bytes, got {cp_size}")
    operands, constraints = [smem_addr(pointer_of(dst)), pointer_of(src).llvm_ptr], ["r", "l"]
    text = f"cp.async.{mode}.shared.global [$0], [$1], {cp_size}"
    if src_size is not None:
        operands.append(Int32(src_size).ir_value())
        constraints.append("r")
        text += ", $2"
    text += ";"
    if cond is not None:
        operands.append(Int32(cond).ir_value())
        constraints.append("r")
        text = f"{{ .reg .pred p; setp.ne.b32 p, ${len(operands) - 1}, 0; @p {text} }}"
    asm(None, operands, text, ",".join(constraints))


def _mode(size):
    if size not in (4, 8, 16):
        raise ValueError(f"cp_async_gs: size must be 4, 8 or 16 bytes, got {size}")
    return "cg" if size == 16 else "ca"  # 16-byte copies bypass L1


def cp_async_gs(size, dst, src):
    """``tl::cp_async_gs<size>``: copy `size` bytes from global `src` to shared `dst` (pointers or tensors) with
    ``cp.async.cg`` (16 bytes) or ``cp.async.ca``."""
    cp_async_shared_global(dst, src, size, _mode(size))


def cp_async_gs_conditional(size, dst, src, cond):
    """`cp_async_gs` issued only where `cond` holds (a predicated ``cp.async``; nothing is written otherwise)."""
    cp_async_shared_global(dst, src, size, _mode(size), cond=cond)


def extract_tensormap_ptr(tma_atom):
    """The generic pointer to the ``CUtensorMap`` of the TMA copy atom `tma_atom`."""
    import cutlass._mlir.dialects.cute as cute_ir
    import cutlass._mlir.dialects.cute_nvgpu as nvgpu_ir

    exec_value = nvgpu_ir.atom_make_exec_tma(tma_atom._trait.value)
    ptr_type = cute_ir.PtrType.get(Uint64.mlir_type, cute_ir.AddressSpace.generic, 64)
    return nvgpu_ir.get_tma_desc_addr(ptr_type, exec_value)


def _desc(tma_desc):
    if isinstance(tma_desc, cute.CopyAtom):
        tma_desc = extract_tensormap_ptr(tma_desc)
    elif isinstance(tma_desc, cute.Tensor):
        tma_desc = tma_desc.iterator
    return tma_desc.llvm_ptr if hasattr(tma_desc, "llvm_ptr") else tma_desc


def _coords(crd, first):
    crd = crd if isinstance(crd, tuple) else (crd,)
    if not 1 <= len(crd) <= 5:
        raise ValueError(f"TMA copies take 1 to 5 coordinates, got {len(crd)}")
    return [Int32(c).ir_value() for c in crd], "{" + ", ".join(f"${first + i}" for i in range(len(crd))) + "}"


def tma_load(tma_desc, mbar, smem_ptr, crd):
    """Load the box at coordinates `crd` of the tensor `tma_desc` describes into `smem_ptr`, completing on mbarrier
    `mbar` (``cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx::bytes``, sm_90+).

    With a pointer first and a single coordinate, ``tma_load(smem_ptr, gmem_ptr, mbar, size)`` is a plain bulk
    copy of `size` bytes (pass 1-D coordinates of a descriptor pointer as a 1-tuple)."""
    if not isinstance(crd, tuple) and isinstance(tma_desc, cute.Pointer):
        smem, gmem, bar, size = tma_desc, mbar, smem_ptr, crd
        asm(None, [smem_addr(smem), gmem.llvm_ptr, Int32(size).ir_value(), smem_addr(bar)],
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1], $2, [$3];", "r,l,r,r")
        return
    coords, braces = _coords(crd, 3)
    asm(None, [smem_addr(smem_ptr), _desc(tma_desc), smem_addr(mbar), *coords],
        f"cp.async.bulk.tensor.{len(coords)}d.shared::cluster.global.mbarrier::complete_tx::bytes "
        f"[$0], [$1, {braces}], [$2];", ",".join(["r", "l", "r"] + ["r"] * len(coords)))


def tma_store(tma_desc, smem_ptr, crd):
    """Store `smem_ptr` to the box at `crd` of the tensor `tma_desc` describes
    (``cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group``); with a pointer first and a single coordinate,
    ``tma_store(gmem_ptr, smem_ptr, size)`` is a plain bulk copy of `size` bytes."""
    if not isinstance(crd, tuple) and isinstance(tma_desc, cute.Pointer):
        asm(None, [tma_desc.llvm_ptr, smem_addr(smem_ptr), Int32(crd).ir_value()],
            "cp.async.bulk.global.shared::cta.bulk_group [$0], [$1], $2;", "l,r,r")
        return
    coords, braces = _coords(crd, 2)
    asm(None, [_desc(tma_desc), smem_addr(smem_ptr), *coords],
        f"cp.async.bulk.tensor.{len(coords)}d.global.shared::cta.bulk_group [$0, {braces}], [$1];",
        ",".join(["l", "r"] + ["r"] * len(coords)))


def tma_reduce(tma_desc, smem_ptr, crd, op: str = "add"):
    """Reduce (`op`: add, min, max, inc, dec, and, or, xor) `smem_ptr` into the box at `crd` of the global tensor
    (``cp.reduce.async.bulk.tensor.Nd.global.shared::cta.<op>.tile.bulk_group``)."""
    if op not in ("add", "min", "max", "inc", "dec", "and", "or", "xor"):
        raise ValueError(f"tma_reduce: unknown reduction {op!r}")
    coords, braces = _coords(crd, 2)
    asm(None, [_desc(tma_desc), smem_addr(smem_ptr), *coords],
        f"cp.reduce.async.bulk.tensor.{len(coords)}d.global.shared::cta.{op}.tile.bulk_group [$0, {braces}], [$1];",
        ",".join(["l", "r"] + ["r"] * len(coords)))


def tma_store_arrive():
    """Close the current group of TMA stores (``cp.async.bulk.commit_group``)."""
    cute.arch.cp_async_bulk_commit_group()


def tma_store_wait(count: int = 0, *, read: bool | None = True):
    """Wait until at most `count` TMA store groups are pending (``cp.async.bulk.wait_group.read``: until their
    shared-memory sources may be reused; `read` False: until the writes are done)."""
    cute.arch.cp_async_bulk_wait_group(count, read=read)


def prefetch_tma_descriptor(tma_desc):
    """Prefetch the ``CUtensorMap`` `tma_desc` into the descriptor cache (``prefetch.tensormap``)."""
    asm(None, [_desc(tma_desc)], "prefetch.tensormap [$0];", "l")


def mbarrier_init(mbar, count):
    """Initialise the shared-memory mbarrier `mbar` to expect `count` arrivals (``mbarrier.init.shared.b64``)."""
    cute.arch.mbarrier_init(mbar, count)


def mbarrier_expect_tx(mbar, transaction_bytes):
    """Add `transaction_bytes` to the bytes the current phase of `mbar` waits for (``mbarrier.expect_tx``)."""
    cute.arch.mbarrier_expect_tx(mbar, transaction_bytes)


def mbarrier_arrive(mbar):
    """Arrive once on `mbar` (``mbarrier.arrive.shared.b64``)."""
    cute.arch.mbarrier_arrive(mbar)


def arrive_and_expect_tx(mbar, transaction_bytes):
    """`mbarrier_expect_tx` and `mbarrier_arrive` at once (``mbarrier.arrive.expect_tx``)."""
    cute.arch.mbarrier_arrive_and_expect_tx(mbar, transaction_bytes)


def mbarrier_wait(mbar, phase):
    """Wait until the phase `phase` (0 or 1) of `mbar` completes (``mbarrier.try_wait.parity`` loop)."""
    cute.arch.mbarrier_wait(mbar, phase)


def mbarrier_cp_async_arrive(mbar):
    """Arrive on `mbar` when this thread's earlier cp.async copies complete (``cp.async.mbarrier.arrive.b64``)."""
    asm(None, [smem_addr(mbar)], "cp.async.mbarrier.arrive.shared::cta.b64 [$0];", "r")


def mbarrier_cp_async_arrive_noinc(mbar):
    """`mbarrier_cp_async_arrive` without raising the pending count (``.noinc``: counts as one of the expected)."""
    cute.arch.cp_async_mbarrier_arrive_noinc(mbar)


def fence_proxy_async():
    """Order this thread's generic-proxy shared-memory writes before later async-proxy (TMA, wgmma) reads
    (``fence.proxy.async.shared::cta``)."""
    cute.arch.fence_proxy("async.shared", space="cta")


def fence_barrier_init():
    """Make mbarrier initialisations visible to the cluster (``fence.mbarrier_init.release.cluster``)."""
    cute.arch.mbarrier_init_fence()
