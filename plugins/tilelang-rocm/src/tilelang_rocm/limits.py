"""LDS (shared memory) per workgroup and scratch per thread: the AMDGPU limits, checked before LLVM sees a kernel.

LLVM's AMDGPU backend reports a kernel over the GPU's LDS ("local memory (N) exceeds limit") or over its scratch
("stack frame size (N) exceeds limit") as an error diagnostic, and TVM's LLVM context has no handler for it, so
LLVM prints one line and calls ``exit(1)``: the Python process ends with no exception. `check_memory` refuses such
a kernel first with a `LoweringError` that names its arrays. LDS sizes are those LLVM lays out: each static
``shared`` array as TVM declares it (16-byte aligned), after TVM's legalization, which stores bfloat16 shared
tiles as float32 (4 bytes an element, twice what the kernel's source suggests). Scratch: the kernel's ``local``
arrays alone (LLVM adds spills and its own frame, so a kernel just under the limit may still be refused by LLVM).
"""

from __future__ import annotations

from typing import Any

from tilelang.errors import LoweringError

LDS_BYTES = 64 * 1024  # per workgroup on CDNA (gfx90a, gfx942) and RDNA (gfx10xx-gfx12xx)
LDS_BYTES_BY_MCPU = {"gfx950": 160 * 1024}  # MI350's larger LDS
ALIGN = 16  # TVM's LLVM codegen aligns every LDS array to 16 bytes


def lds_limit(mcpu: str | None) -> int:
    """Bytes of LDS one workgroup may use on `mcpu`."""
    return LDS_BYTES_BY_MCPU.get((mcpu or "").split(":")[0], LDS_BYTES)


def scratch_limit(mcpu: str | None) -> int:
    """Bytes of scratch one thread may use on `mcpu` (LLVM's limit: the wave's scratch field over its lanes;
    TileLang runs RDNA kernels in wave32)."""
    name = (mcpu or "").split(":")[0]
    if name.startswith("gfx12"):
        return 256 * ((1 << 18) - 1) // 32
    if name.startswith("gfx11"):
        return 256 * ((1 << 15) - 1) // 32
    return 1024 * ((1 << 13) - 1) // (32 if name.startswith("gfx10") else 64)


def padded(nbytes: int) -> int:
    return -(-nbytes // ALIGN) * ALIGN


def stored_bytes(buf: Any, widen_bf16: bool = False) -> int | None:
    """Bytes buffer `buf` takes in LDS, padded to LLVM's alignment (``widen_bf16``: a bfloat16 buffer as the
    float32 one TVM's legalization will make of it); None when its size is not static."""
    from tilelang.backend.sdk import dtype_bytes
    from tilelang.transform import utils as C

    count = C.num_elements(buf.ty.shape)
    if count is None:
        return None
    dtype = str(buf.ty.dtype)
    width = dtype_bytes(dtype) * (2 if widen_bf16 and dtype.startswith("bfloat16") else 1)
    return padded(count * width)


def lds_buffers(node: Any, widen_bf16: bool = False) -> list[tuple[str, str, int]]:
    """``(name, dtype, bytes)`` of every LDS allocation (``shared`` / ``shared.dyn``) of a device function (or
    statement) whose size is known, as `stored_bytes` counts them."""
    from tilelang.transform import utils as C

    out = []
    for alloc in C.allocations(getattr(node, "body", node)):
        buf = alloc.buffer
        if C.scope_of(buf) in ("shared", "shared.dyn") and (size := stored_bytes(buf, widen_bf16)) is not None:
            out.append((str(buf.name), str(buf.ty.dtype), size))
    return out


def local_buffers(node: Any) -> list[tuple[str, str, int]]:
    """``(name, dtype, bytes)`` of every per-thread array (``local`` scope) of a device function with a static size."""
    from tilelang.backend.sdk import dtype_bytes
    from tilelang.transform import utils as C

    out = []
    for alloc in C.allocations(getattr(node, "body", node)):
        buf = alloc.buffer
        count = C.num_elements(buf.ty.shape)
        if C.scope_of(buf).startswith("local") and count is not None:
            out.append((str(buf.name), str(buf.ty.dtype), count * dtype_bytes(str(buf.ty.dtype))))
    return out


def _listing(arrays: list[tuple[str, str, int]]) -> str:
    return ", ".join(f"{name} ({dtype}, {size} B)" for name, dtype, size in sorted(arrays, key=lambda a: -a[2]))


def check_memory(mod: Any, mcpu: str | None) -> None:
    """Raise a `LoweringError` naming the arrays of the first kernel of device module `mod` that needs more LDS
    or scratch than `mcpu` has (instead of letting LLVM end the process)."""
    from tvm import tirx

    gpu = mcpu or "this GPU"
    for gv, func in mod.functions.items():
        if not isinstance(func, tirx.PrimFunc):
            continue
        arrays = lds_buffers(func)
        total, limit = sum(size for *_, size in arrays), lds_limit(mcpu)
        if total > limit:
            raise LoweringError(
                f"kernel {gv.name_hint!r} needs {total} bytes of LDS (shared memory) but {gpu} allows {limit} per "
                f"workgroup: {_listing(arrays)}. bfloat16 shared tiles are stored as float32 on ROCm and a "
                "`<fragment>_lds` array is T.gemm's staging tile; use smaller tiles (block_M / block_N / block_K), "
                "fewer pipeline stages or float16 tiles")
        arrays = local_buffers(func)
        total, limit = sum(size for *_, size in arrays), scratch_limit(mcpu)
        if total > limit:
            raise LoweringError(
                f"kernel {gv.name_hint!r} needs {total} bytes of per-thread local memory but {gpu} allows {limit} "
                f"of scratch per thread: {_listing(arrays)}. Use smaller T.alloc_local / T.alloc_fragment arrays "
                "(a fragment is split over the block's threads) or keep the data in shared or global memory")
