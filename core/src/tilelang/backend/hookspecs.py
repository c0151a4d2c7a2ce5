"""The cross-cutting hooks a backend plugin may implement (pluggy project name ``"tilelang"``).

Implement them in the module your entry point names (or any module listed in your manifest's ``hook_modules``)
with ``@tilelang.backend.hookimpl``; core registers those modules with its PluginManager when the plugin loads.
Every spec states its calling rule. Arguments are passed by keyword, so an implementation may accept only the
ones it needs.
"""

from __future__ import annotations

from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("tilelang")

# ----------------------------------------------------------------------------- compilation


@hookspec
def tilelang_extend_pipeline(point: str, target: Any) -> list[Any] | None:
    """Extra passes to run at pipeline extension point `point` for `target`.

    :param point: one of ``tilelang.backend.passes.EXTENSION_POINTS``.
    :param target: the ``tvm.target.Target`` being compiled for.
    :return: a list of ``tvm.ir.transform.Pass`` (or None). All results are run, after the passes registered
        with ``register_pass`` for that point, in the order pluggy calls the implementations.
    """


@hookspec
def tilelang_prepare_host_codegen(mod: Any, target_host: Any, target: Any) -> Any | None:
    """Rewrite the host IRModule just before host codegen (after the registered host-codegen hooks).

    :return: the rewritten module, or None to leave it. Implementations are chained: each receives the
        previous one's result.
    """


@hookspec
def tilelang_postprocess_kernel_source(source: str, target: Any) -> str | None:
    """Post-process generated device source of any target (a site-wide rewrite) before it is compiled.

    A backend rewrites its own kind's source with ``DeviceCodegen.postprocess``, which runs first.

    :param source: the device source (CUDA C, MSL, WGSL, ...).
    :param target: the device target.
    :return: the new source, or None to leave it. Implementations are chained: each receives the previous
        one's result.
    """


@hookspec
def tilelang_artifact_built(artifact: Any) -> None:
    """Observe (or annotate) a freshly lowered `CompiledArtifact`: called at the end of ``tilelang.lower`` for every
    artifact, before the JIT or the kernel cache sees it; every implementation is called; results are ignored.

    A backend's own binaries and reports come from its ``DeviceCodegen`` (``build`` / ``finalize`` return a
    ``DeviceBuild``), not from this hook.
    """


# ----------------------------------------------------------------------------- running and tuning


@hookspec(firstresult=True)
def tilelang_supply_tensor(supply_type: str, shape: tuple[int, ...], dtype: str, device: Any) -> Any | None:
    """Make an input tensor for the profiler / autotuner.

    :return: a tensor, or None to let the next implementation (finally core's default supply) decide.
        First non-None result wins.
    """


@hookspec
def tilelang_kernel_compiled(kernel: Any) -> None:
    """Observe a newly compiled (not cache-loaded) JITKernel. Every implementation is called; results ignored."""


@hookspec
def tilelang_autotune_result(config: dict[str, Any], latency: float | None, error: str | None) -> None:
    """Observe one autotuning trial (latency in ms, or the error that disqualified it). Results ignored."""
