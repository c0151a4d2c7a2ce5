"""``webgpu.check_workgroup_memory`` (``device_module``): the workgroup arrays a kernel declares (after TVM has
merged those whose lifetimes do not overlap) must fit the target's ``max_shared_memory_per_block`` (WebGPU
guarantees 32 KiB); otherwise a `LoweringError` lists every array with its size.
"""

from __future__ import annotations

from typing import Any

WORKGROUP_LIMIT = 32 * 1024  # bytes: WebGPU's guaranteed maxComputeWorkgroupStorageSize


def workgroup_arrays(func: Any) -> list[tuple[str, str, int]]:
    """``(name, dtype, bytes)`` of every workgroup-memory allocation of a device function."""
    from tilelang.backend.sdk import dtype_bytes
    from tilelang.transform import utils as C

    out = []
    for alloc in C.allocations(func.body):
        buf = alloc.buffer
        if C.scope_of(buf).startswith("shared"):
            count = C.num_elements(buf.ty.shape)
            if count is not None:
                out.append((str(buf.name), str(buf.ty.dtype), count * dtype_bytes(str(buf.ty.dtype))))
    return out


def CheckWorkgroupMemory(target: Any = None) -> Any:
    """Raise a `LoweringError` naming the workgroup arrays when they exceed the target's limit."""
    import tvm
    from tvm import tirx

    from tilelang.errors import LoweringError

    def limit_of(tgt: Any) -> int:
        value = tgt.attrs.get("max_shared_memory_per_block") if tgt is not None else None
        return int(value) if value else WORKGROUP_LIMIT

    @tvm.transform.module_pass(opt_level=0, name="webgpu.check_workgroup_memory")
    def check(mod: Any, ctx: Any) -> Any:
        for gv, func in mod.functions.items():
            if not isinstance(func, tirx.PrimFunc):
                continue
            arrays = workgroup_arrays(func)
            total = sum(size for _, _, size in arrays)
            tgt = target if target is not None else (func.attrs.get("target") if func.attrs else None)
            limit = limit_of(tgt)
            if total > limit:
                listing = ", ".join(f"{name} ({dtype}, {size} B)" for name, dtype, size in
                                    sorted(arrays, key=lambda a: -a[2]))
                raise LoweringError(
                    f"kernel {gv.name_hint!r} needs {total} bytes of workgroup memory but this WebGPU target allows "
                    f"{limit} (max_shared_memory_per_block): {listing}. Use smaller tiles, fewer stages or "
                    "float16 tiles, or set max_shared_memory_per_block in the target if the adapter allows more")
        return mod

    return check
