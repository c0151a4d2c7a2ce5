"""Hand-written tirx kernels built straight with TVM into CompiledArtifacts (no TileLang front end)."""

from __future__ import annotations

from typing import Any

from tilelang.artifact import CompiledArtifact, ParamInfo


def host_target() -> dict[str, Any]:
    """This machine's LLVM target with its real CPU (core's tests never import a backend plugin by name)."""
    from tvm.target.codegen import llvm_get_system_cpu

    return {"kind": "llvm", "mcpu": str(llvm_get_system_cpu())}


def params_of(func: Any) -> list[ParamInfo]:
    from tvm import tirx

    infos = []
    for p in func.params:
        if not tirx.is_buffer_var(p):
            infos.append(ParamInfo(str(p.name), str(p.ty.dtype), (), is_tensor=False))
            continue
        ty = p.ty
        shape = tuple(int(d) if hasattr(d, "value") else str(d) for d in ty.shape)
        infos.append(ParamInfo(str(p.name), str(ty.dtype), shape))
    return infos


def make_artifact(func: Any, name: str) -> CompiledArtifact:
    """Build `func` for this CPU with TVM's LLVM builder."""
    import tvm

    target = host_target()
    rt_mod = tvm.tirx.build(func, target=target)
    align = {str(p.name): int(p.ty.data_alignment) for p in func.params if hasattr(p.ty, "data_alignment")}
    return CompiledArtifact(name=name, target=target, params=params_of(func),
                            kernel_source=str(rt_mod.inspect_source("ll")), rt_mod=rt_mod,
                            metadata={"param_align": align})


def vadd(n: int = 16) -> Any:
    """``C = A + B`` over float32 vectors of static length `n` (64-byte aligned buffers, TVM's default)."""
    from tvm.script import tirx as T

    @T.prim_func
    def vadd(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"), C: T.Buffer((n,), "float32")):
        T.func_attr({"global_symbol": "vadd"})
        for i in range(n):
            C[i] = A[i] + B[i]

    return make_artifact(vadd, "vadd")


def rowsum_dyn() -> Any:
    """``S[i] = w * sum_j X[i, j]`` with symbolic rows ``m`` and a float32 scalar parameter ``w``."""
    from tvm.script import tirx as T

    @T.prim_func
    def rowsum(x: T.handle, w: T.float32, s: T.handle):
        T.func_attr({"global_symbol": "rowsum"})
        m = T.int32()
        X = T.match_buffer(x, (m, 8), "float32")
        S = T.match_buffer(s, (m,), "float32")
        for i in range(m):
            S[i] = T.float32(0)
            for j in range(8):
                S[i] = S[i] + X[i, j] * w

    return make_artifact(rowsum, "rowsum")


def to_half(n: int = 16) -> Any:
    """``H = float16(A)``: an output whose dtype differs from every input's."""
    from tvm.script import tirx as T

    @T.prim_func
    def to_half(A: T.Buffer((n,), "float32"), H: T.Buffer((n,), "float16")):
        T.func_attr({"global_symbol": "to_half"})
        for i in range(n):
            H[i] = T.Cast("float16", A[i])

    return make_artifact(to_half, "to_half")


def fill(n: int = 8) -> Any:
    """``C[i] = v``: a kernel whose only input is a scalar (its output's device cannot come from an input)."""
    from tvm.script import tirx as T

    @T.prim_func
    def fill(v: T.float32, C: T.Buffer((n,), "float32")):
        T.func_attr({"global_symbol": "fill"})
        for i in range(n):
            C[i] = v

    return make_artifact(fill, "fill")
