"""Timing one autotuning candidate, here or on a remote worker.

`measure` checks a compiled kernel against ``ref_prog`` (or ``manual_check_prog``) and times it; the tuner's local
loop calls it directly. `BenchmarkTask` carries a compiled candidate *by value* (the artifact and its files, as
`tilelang.autotuner.executors.compile_task` returns them), the profile arguments (cloudpickled: ``ref_prog``,
``supply_prog`` and ``manual_check_prog`` may be closures) and, when the caller fixed them, the input tensors, so
that `benchmark_task` can rebuild and time the kernel on a worker that owns the device. An executor that offers
remote benchmarking implements the `BenchmarkExecutor` protocol: ``submit_benchmark(fn, task, *, target)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = ["BenchmarkExecutor", "BenchmarkTask", "benchmark_task", "measure", "rebuild_kernel", "supports_benchmark"]


@runtime_checkable
class BenchmarkExecutor(Protocol):
    """An executor that also times candidates on the workers owning the device, one kernel at a time per
    device. ``submit_benchmark(benchmark_task, task, target=...)`` returns a ``concurrent.futures.Future``."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any: ...

    def submit_benchmark(self, fn: Any, /, *args: Any, target: dict[str, Any]) -> Any: ...


def supports_benchmark(executor: Any) -> bool:
    """Whether `executor` runs benchmarks itself (see `BenchmarkExecutor`)."""
    return executor is not None and callable(getattr(executor, "submit_benchmark", None))


def rebuild_kernel(compiled: dict[str, Any], execution_backend: Any, pass_configs: dict[str, Any] | None,
                   compile_flags: Any) -> Any:
    """The `JITKernel` of a ``compile_task`` result (artifact JSON + files), in this process."""
    from tilelang.artifact import CompiledArtifact
    from tilelang.jit.kernel import JITKernel

    files = {k: (v if isinstance(v, bytes) else bytes(v)) for k, v in compiled["files"].items()}
    artifact = CompiledArtifact.from_json(compiled["artifact"], files)
    return JITKernel(artifact, compiled.get("out_idx"), execution_backend, cache_key=compiled.get("cache_key"),
                     pass_configs=pass_configs, compile_flags=compile_flags)


def supply_inputs(profile: Any, profiler: Any, kernel: Any) -> list[Any]:
    """Inputs for `kernel`: ``supply_prog(params)`` when given, else the profiler's supply type."""
    if profile.supply_prog is None:
        return profiler._get_inputs()
    from tilelang.engine.param import KernelParam

    params = [KernelParam.from_param_info(p) for i, p in enumerate(kernel.params) if i not in kernel.out_idx]
    return list(profile.supply_prog(params))


def measure(kernel: Any, profile: Any, inputs: list[Any] | None = None, *, time_ref: bool = False,
            best: float | None = None, early_stop_factor: float = 2.0) -> dict[str, Any]:
    """Check and time `kernel` with `profile` (a `ProfileArgs`) on `inputs` (supplied when None).

    Returns ``latency`` (ms, None when disqualified), ``error``, ``ref_latency`` (timed when `time_ref`),
    ``ref_timed`` (whether the reference step was reached) and ``inputs`` (those used). With `best`, a quick
    estimate above ``best * early_stop_factor`` stops the candidate early.
    """
    from tilelang.profiler import Profiler

    out: dict[str, Any] = {"latency": None, "error": None, "ref_latency": None, "ref_timed": False, "inputs": None}
    p = profile
    try:
        profiler = Profiler(kernel, p.supply_type, p.dims)
        these = inputs if inputs is not None else supply_inputs(p, profiler, kernel)
        out["inputs"] = these
        if time_ref:
            out["ref_timed"] = True
            if p.ref_prog is not None:
                out["ref_latency"] = profiler.do_bench(p.ref_prog, warmup=p.warmup, rep=p.rep, input_tensors=these)
        if p.ref_prog is not None and not p.skip_check:
            if p.manual_check_prog is not None:
                profiler.manual_assert_close(p.ref_prog, these, p.manual_check_prog)
            else:
                profiler.assert_allclose(p.ref_prog, these, atol=p.atol, rtol=p.rtol,
                                         max_mismatched_ratio=p.max_mismatched_ratio)
        if best is not None:
            estimate = profiler.do_bench(warmup=0, rep=max(1.0, p.rep / 10), input_tensors=these)
            if estimate > best * early_stop_factor:
                out["error"] = (f"early stop: estimated {estimate:.4f} ms > {early_stop_factor}x "
                                f"the best {best:.4f} ms")
                return out
        out["latency"] = profiler.do_bench(warmup=p.warmup, rep=p.rep, input_tensors=these)
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
    return out


@dataclass(frozen=True)
class BenchmarkTask:
    """Time one compiled candidate on a worker: `compiled` is a ``compile_task`` result, `profile` the
    cloudpickled ``(ProfileArgs, inputs or None)``."""

    compiled: dict[str, Any]
    profile: bytes
    execution_backend: Any = "auto"
    pass_configs: dict[str, Any] | None = None
    compile_flags: Any = None
    time_ref: bool = False

    @staticmethod
    def pack_profile(profile: Any, inputs: list[Any] | None) -> bytes:
        from tilelang.autotuner.executors import dumps_by_value

        callbacks = [profile.ref_prog, profile.supply_prog, profile.manual_check_prog]
        return dumps_by_value((profile, list(inputs) if inputs is not None else None),
                              *[cb for cb in callbacks if cb is not None])


def benchmark_task(task: BenchmarkTask) -> dict[str, Any]:
    """Worker side: rebuild the kernel, check and time it; returns ``latency``, ``error`` and ``ref_latency``
    (plain values: the inputs stay on the worker)."""
    import cloudpickle

    profile, inputs = cloudpickle.loads(task.profile)
    try:
        kernel = rebuild_kernel(task.compiled, task.execution_backend, task.pass_configs, task.compile_flags)
    except Exception as exc:
        return {"latency": None, "error": f"rebuild failed: {type(exc).__name__}: {exc}", "ref_latency": None}
    result = measure(kernel, profile, inputs, time_ref=task.time_ref)
    return {"latency": result["latency"], "error": result["error"], "ref_latency": result["ref_latency"]}
