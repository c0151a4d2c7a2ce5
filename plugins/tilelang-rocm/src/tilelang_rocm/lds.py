"""LDS (shared memory) per workgroup: the AMDGPU limit and the check that runs before LLVM sees a kernel.

LLVM's AMDGPU backend reports a kernel whose LDS exceeds the GPU's limit ("local memory (N) exceeds limit")
as an error diagnostic, and TVM's LLVM context has no handler for it, so LLVM prints one line and calls
``exit(1)``: the Python process ends with no exception. `check_lds` refuses such a kernel first with a
`LoweringError` that names its buffers. Sizes are those LLVM lays out: each static ``shared`` array as TVM
declares it (16-byte aligned), after TVM's legalization, which stores bfloat16 shared tiles as float32 (4 bytes
an element, twice what the kernel's source suggests).
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


def check_lds(mod: Any, mcpu: str | None) -> None:
    """Raise a `LoweringError` naming the LDS arrays of the first kernel of device module `mod` that needs more
    LDS than `mcpu` has (instead of letting LLVM end the process)."""
    from tvm import tirx

    limit = lds_limit(mcpu)
    for gv, func in mod.functions.items():
        if not isinstance(func, tirx.PrimFunc):
            continue
        arrays = lds_buffers(func)
        total = sum(size for _, _, size in arrays)
        if total <= limit:
            continue
        listing = ", ".join(f"{name} ({dtype}, {size} B)" for name, dtype, size in sorted(arrays, key=lambda a: -a[2]))
        raise LoweringError(
            f"kernel {gv.name_hint!r} needs {total} bytes of LDS (shared memory) but {mcpu or 'this GPU'} allows "
            f"{limit} per workgroup: {listing}. bfloat16 shared tiles are stored as float32 on ROCm and a "
            "`<fragment>_lds` array is T.gemm's staging tile; use smaller tiles (block_M / block_N / block_K), fewer "
            "pipeline stages or float16 tiles")
