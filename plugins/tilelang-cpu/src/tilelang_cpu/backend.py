"""The CPU backend's manifest: the single place that registers everything it provides."""

from __future__ import annotations

import os
import shutil

from tilelang.backend import (
    Backend,
    TargetKind,
    ToolStatus,
    register_lazy_device_codegen,
    register_lazy_execution_backends,
    register_lazy_passes,
    register_lazy_tile_op_impls,
    register_target_kind,
)

KINDS = ("c", "llvm", "cpu")  # the reference lists c before llvm (its "auto" execution backend order)


def _normalize_cpu(config: dict) -> dict:
    """``cpu`` is the friendly spelling of this machine's LLVM target."""
    return {**config, "kind": "llvm"}


# Shared-memory layouts (T.annotate_layout swizzles / paddings) stay hints: a CPU has no shared-memory banks, so a
# swizzle only adds index arithmetic (measured 5-10x slower GEMM tiles).
# A CPU has no fp8 arithmetic: fp8 values are converted and computed in fp32 (``emulate_fp8``).
PIPELINE_OPTIONS = {"has_threads": False, "shared_layouts": False, "emulate_fp8": True}
# C has no vectors wider than the prelude's 128-bit types (``float4``, ``half8``...): whole loops run in such runs
C_PIPELINE_OPTIONS = {**PIPELINE_OPTIONS, "vector_bits": 128}


def _detect() -> dict:
    return {"kind": "llvm"}


def register() -> None:
    """Register the CPU target kinds, codegens and execution backends (no heavy imports)."""
    register_target_kind(TargetKind("cpu", normalize=_normalize_cpu, detect=_detect, detect_priority=-100,
                                    description="this machine's CPU through LLVM (alias of llvm)",
                                    pipeline_options=PIPELINE_OPTIONS))
    register_target_kind(TargetKind("llvm", description="CPU code through LLVM; mcpu defaults to the host CPU",
                                    pipeline_options=PIPELINE_OPTIONS))
    register_target_kind(TargetKind("c", description="portable C source compiled by the system C compiler",
                                    pipeline_options=C_PIPELINE_OPTIONS))
    for kind in ("llvm", "c"):
        register_lazy_device_codegen(kind, f"tilelang_cpu.codegen:{kind.upper()}_CODEGEN")
        register_lazy_execution_backends(kind, "tilelang_cpu.execution_backend:EXECUTION_BACKENDS")
        register_lazy_passes(kind, "tilelang_cpu.pipeline:PASSES")
        register_lazy_tile_op_impls(kind, "tilelang_cpu.tileops:IMPLS")
    register_lazy_tile_op_impls("llvm", "tilelang_cpu.tileops:LLVM_IMPLS")


def toolchain() -> list[ToolStatus]:
    """LLVM inside TVM, the host CPU it targets, the cores used, and a C compiler for the ``c`` target."""
    lines = []
    try:
        from tilelang_cpu.codegen import host_cpu

        lines.append(ToolStatus("llvm (in TVM)", True, f"mcpu={host_cpu()}"))
    except Exception as exc:
        lines.append(ToolStatus("llvm (in TVM)", False, repr(exc)))
    lines.append(ToolStatus("cores", True, str(os.cpu_count())))
    cc = shutil.which(os.environ.get("CC", "gcc")) or shutil.which("cc")
    lines.append(ToolStatus("C compiler (target c)", cc is not None, cc or "not found: install gcc"))
    return lines


BACKEND = Backend(
    name="cpu",
    target_kinds=KINDS,
    register=register,
    toolchain=toolchain,
    description="Runs every tile program on the host CPU (LLVM, or C via the system compiler).",
    sdk_version="1.0",
)
