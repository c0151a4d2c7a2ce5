"""The ROCm backend's pluggy hooks: give every lowered kernel its hsaco, assembly and resource usage."""

from __future__ import annotations

from typing import Any

from tilelang.backend import hookimpl


@hookimpl
def tilelang_artifact_built(artifact: Any) -> None:
    """`tilelang_rocm.compiler.finalize` as soon as tilelang.lower builds the artifact."""
    if artifact.target.get("kind") != "rocm" or "kernel.hsaco" in artifact.files:
        return
    from tilelang_rocm.compiler import finalize

    finalize(artifact)
