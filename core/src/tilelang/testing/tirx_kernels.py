"""Hand-written tirx kernels (no TileLang front end involved) for testing codegens and registries.

`vector_add(n, threads)` is ``C = A + B`` over float32 vectors, written once for targets with threads
(blockIdx/threadIdx bound) and once for the host (a plain loop).
"""

from __future__ import annotations

from typing import Any


def vector_add_gpu(n: int = 1024, threads: int = 128) -> Any:
    """``C[i] = A[i] + B[i]`` with one element per thread; `n` must be a multiple of `threads`."""
    from tvm.script import tirx as T

    blocks = n // threads

    @T.prim_func
    def vector_add(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"), C: T.Buffer((n,), "float32")):
        T.func_attr({"global_symbol": "vector_add", "tirx.noalias": True})
        bx = T.launch_thread("blockIdx.x", blocks)
        tx = T.launch_thread("threadIdx.x", threads)
        C[bx * threads + tx] = A[bx * threads + tx] + B[bx * threads + tx]

    return vector_add


def vector_add_host(n: int = 1024) -> Any:
    """``C[i] = A[i] + B[i]`` as a host loop (buffers declared 4-byte aligned so torch views are safe)."""
    from tvm.script import tirx as T

    @T.prim_func
    def vector_add(a: T.handle, b: T.handle, c: T.handle):
        T.func_attr({"global_symbol": "vector_add", "tirx.noalias": True})
        A = T.match_buffer(a, (n,), "float32", align=4)
        B = T.match_buffer(b, (n,), "float32", align=4)
        C = T.match_buffer(c, (n,), "float32", align=4)
        for i in T.serial(n):
            C[i] = A[i] + B[i]

    return vector_add


def build_through_registry(func: Any, target: Any) -> tuple[Any, list[Any]]:
    """Build a plain tirx PrimFunc with TVM's default tirx pipeline, then OUR registered codegens.

    Returns ``(runtime_module, device_modules)``: the host module (device modules imported into it) built by
    the registered host codegen, and the modules the registered device codegen produced. This exercises the
    registries end to end without the TileLang front end or pipeline. Registries are looked up with the
    TileLang target config (its kind may be one TVM does not know); TVM gets ``tvm_target(config)``.
    """
    import tvm
    from tvm.tirx.build import split_host_device_mods

    from tilelang.backend import (
        apply_host_codegen_hooks,
        resolve_device_codegen,
        resolve_host_codegen,
        split_targets,
    )

    pair = split_targets(target)
    config, is_cpu = pair.device, pair.on_host
    target_host = pair.tvm_device if is_cpu else pair.tvm_host
    target = pair.tvm_device.with_host(target_host)
    mod = tvm.IRModule.from_expr(func) if isinstance(func, tvm.tirx.PrimFunc) else func
    mod = tvm.tirx.transform.BindTarget(target)(mod)
    pipeline, finalize_host, finalize_device = tvm.tirx.get_default_tir_pipeline(target)
    host_mod, device_mods = split_host_device_mods(pipeline(mod))
    codegen = resolve_device_codegen(config)
    built = [codegen.lower(finalize_device()(dev_mod), dev_target)
             for dev_target, dev_mod in device_mods.items() if len(dev_mod.functions)]
    host_mod = apply_host_codegen_hooks(finalize_host()(host_mod), target_host, config)
    host_codegen = codegen if is_cpu else resolve_host_codegen(target_host)
    rt_mod = host_codegen.lower(host_mod, target_host)
    for device_module in built:
        rt_mod.import_module(device_module)
    return rt_mod, built
