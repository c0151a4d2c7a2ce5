"""The manifest: one entry point (``ccpu``) names ``BACKEND``; ``register`` fills core's registries lazily."""

from __future__ import annotations

from tilelang.backend.sdk import (
    Backend,
    TargetKind,
    ToolStatus,
    c_compiler,
    host_launch_pass,
    register_lazy_device_codegen,
    register_lazy_execution_backends,
    register_pass,
    register_target_kind,
)


def _normalize(config: dict) -> dict:
    """Fill the C compiler flags (``-O3 -march=native`` unless the user gave ``cflags``)."""
    return {"cflags": "-O3 -march=native", **config}


def _to_tvm(config: dict) -> dict:
    """TVM has no kind ``ccpu``: its passes and C codegen see a plain ``c`` target."""
    return {"kind": "c"}


def register() -> None:
    """Register the ``ccpu`` kind, its device codegen and execution backend (import paths only), and core's host
    launch lowering (the kernel is host code: its block grid runs as a loop on this machine's cores)."""
    register_target_kind(TargetKind("ccpu", normalize=_normalize, to_tvm=_to_tvm,
                                    description="portable C built by the system compiler",
                                    pipeline_options={"has_threads": False, "vectorize": False}))
    register_lazy_device_codegen("ccpu", "tilelang_ccpu.codegen:CCPU_CODEGEN")
    register_lazy_execution_backends("ccpu", "tilelang_ccpu.execution_backend:EXECUTION_BACKENDS")
    register_pass("ccpu", host_launch_pass("ccpu.lower_launch"))


def toolchain() -> list[ToolStatus]:
    """The system C compiler."""
    cc = c_compiler()
    return [ToolStatus("C compiler", cc is not None, cc or "not found: install gcc")]


BACKEND = Backend(name="ccpu", target_kinds=("ccpu",), register=register, toolchain=toolchain,
                  sdk_version="1.0",
                  description="Example third-party backend: C source compiled with cc -O3 -march=native.")
