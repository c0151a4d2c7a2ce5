"""`AutoTuner` and ``@tilelang.autotune``: compile every configuration in parallel, check, time, keep the best.

Compiles fan out through an executor (`tilelang.autotuner.executors`); benchmarking runs here, one kernel at a
time, unless the executor runs benchmarks itself (``submit_benchmark``, `tilelang.autotuner.benchmark`: the Ray and
Dask executors time candidates on the workers owning the device). Every compiled candidate lands in this process's
kernel cache, wherever it was compiled. A configuration whose compile fails, whose outputs differ from
`ref_prog`, or whose run raises is disqualified (reported through the ``tilelang_autotune_result`` hook). The best
configuration and its latency are kept on disk, keyed like the JIT's source key plus the configurations, so a
later process compiles (or loads) only the winner.
"""

from __future__ import annotations

import inspect
import logging
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, as_completed
from dataclasses import dataclass, field
from typing import Any

from tilelang import env
from tilelang.autotuner import benchmark, executors
from tilelang.autotuner.param import CompileArgs, ProfileArgs
from tilelang.cache.keys import Unkeyable, canonical, digest, function_fingerprint
from tilelang.cache.manager import kernel_cache
from tilelang.jit.decorator import JITImpl
from tilelang.jit.kernel import JITKernel
from tilelang.profiler import Profiler

__all__ = ["AutoTuner", "AutoTuneResult", "autotune", "TimeoutException"]

logger = logging.getLogger("tilelang.autotuner")
RECORDS = "autotune"
# the reference's `AutoTuner.run` keywords (not kernel arguments unless the factory has a parameter so named)
RUN_OPTIONS = ("warmup", "rep", "timeout", "use_pipeline", "enable_grouped_compile", "group_compile_size",
               "benchmark_devices", "benchmark_multi_gpu", "early_stop", "early_stop_factor")
PASS_CONFIGS = "pass_configs"  # reserved configuration key: that configuration's own pass configs (the reference's)


class TimeoutException(Exception):
    """A candidate's compile or benchmark ran past the profile's ``timeout``."""


@dataclass
class AutoTuneResult:
    """The winner (`config`, `latency` in ms, `kernel`), the reference's latency, and every trial."""

    config: dict[str, Any] | None
    latency: float | None
    kernel: JITKernel | None
    ref_latency: float | None = None
    trials: list[dict[str, Any]] = field(default_factory=list)
    from_cache: bool = False


class AutoTuner:
    """Tunes a ``@tilelang.jit`` lazy kernel factory over `configs` (dicts of its keyword arguments, or a
    callable returning them for the call's arguments).

    Compiles run on `executor`, by default a local `tilelang.autotuner.process_pool.WorkerPool` of `max_workers`
    processes started the `start_method` way (``"fork"``, ``"spawn"``, ``"forkserver"``; None: the program's
    ``multiprocessing.set_start_method`` choice, else fork on Linux). A worker that dies (the OOM killer) fails
    only its configuration (its trial's ``error`` says so) and is replaced; Ctrl-C stops the workers at once.
    """

    def __init__(self, fn: Any, configs: Sequence[dict[str, Any]] | Callable[..., Sequence[dict[str, Any]]], *,
                 executor: Executor | None = None, max_workers: int | None = None, progress: bool = True,
                 cache_results: bool = True, do_not_specialize: Sequence[str] | None = None,
                 early_stop: bool = False, early_stop_factor: float = 2.0, start_method: str | None = None,
                 **profile: Any):
        self.jit_impl = fn if isinstance(fn, JITImpl) else JITImpl(fn, _default_options())
        self.fn = self.jit_impl.fn
        self.configs = configs
        self.executor = executor
        self.max_workers = max_workers
        self.progress = progress
        self.cache_results = cache_results
        self.do_not_specialize = tuple(do_not_specialize or ())
        self.early_stop = early_stop
        self.early_stop_factor = early_stop_factor
        self.start_method = start_method
        self.profile = ProfileArgs(**profile)

    # the reference's names for the two argument sets
    @property
    def compile_args(self) -> CompileArgs:
        o = self.jit_impl.options
        return CompileArgs(o.out_idx, o.execution_backend, o.target, o.target_host, o.verbose,
                           dict(o.pass_configs) or None, o.compile_flags)

    @compile_args.setter
    def compile_args(self, args: CompileArgs) -> None:
        self.set_compile_args(out_idx=args.out_idx, execution_backend=args.execution_backend, target=args.target,
                              target_host=args.target_host, verbose=args.verbose,
                              pass_configs=args.pass_configs, compile_flags=args.compile_flags)

    @property
    def profile_args(self) -> ProfileArgs:
        return self.profile

    @profile_args.setter
    def profile_args(self, args: ProfileArgs) -> None:
        self.profile = args

    def generate_cache_key(self, parameters: Any, extra_parameters: dict[str, Any]) -> str | None:
        """The key of the stored tuning result, or None when a profile callback (``ref_prog``,
        ``supply_prog``, ``manual_check_prog``) makes results impossible to reuse safely."""
        p = self.profile
        if any(cb is not None for cb in (p.ref_prog, p.supply_prog, p.manual_check_prog)):
            return None
        defaults = [v.default for v in dict(parameters).values()
                    if getattr(v, "default", inspect.Parameter.empty) is not inspect.Parameter.empty]
        configs = (self.configs if not callable(self.configs)
                   else ("callable", getattr(self.configs, "__qualname__", "")))
        try:
            return digest("autotune-key", function_fingerprint(self.fn), canonical(defaults),
                          canonical(extra_parameters), canonical(configs), _args_spelling(self.compile_args),
                          _args_spelling(self.profile))
        except Unkeyable:
            return None

    @classmethod
    def from_kernel(cls, kernel: Any, configs: Any) -> AutoTuner:
        """Reference spelling: ``AutoTuner.from_kernel(kernel=fn, configs=...)``."""
        return cls(kernel, configs)

    def set_compile_args(self, **options: Any) -> AutoTuner:
        """Override the jit options (out_idx, target, execution_backend, pass_configs, ...); checked as
        ``tilelang.jit``'s (`CompileOptions`)."""
        self.jit_impl = executors.with_options(self.jit_impl, **options)
        return self

    def set_profile_args(self, **profile: Any) -> AutoTuner:
        """Override any `ProfileArgs` field (warmup, rep, timeout, ref_prog, supply_type, supply_prog, rtol, atol,
        max_mismatched_ratio, skip_check, manual_check_prog, cache_input_tensors, dims)."""
        from dataclasses import fields, replace

        known = {f.name for f in fields(ProfileArgs)}
        unknown = sorted(set(profile) - known)
        if unknown:
            raise TypeError(f"unknown profile argument(s) {unknown}; known: {sorted(known)}")
        self.profile = replace(self.profile, **profile)
        return self

    # ------------------------------------------------------------------------------------------ running
    def _configs(self, args: tuple, kwargs: dict) -> list[dict[str, Any]]:
        configs = self.configs(*args, **kwargs) if callable(self.configs) else self.configs
        configs = [dict(c) for c in configs]
        if not configs:
            raise ValueError("autotune needs at least one configuration")
        return configs

    def _given_tunables(self, args: tuple, kwargs: dict, configs: list[dict[str, Any]]) -> list[str]:
        """The configurations' parameters that the call itself gives (by keyword or by position)."""
        names = list(inspect.signature(self.jit_impl.fn).parameters)
        by_position = set(names[:len(args)])
        return [k for k in _kernel_args(configs[0]) if k in kwargs or k in by_position]

    def _call_spelling(self, args: tuple, kwargs: dict) -> Any:
        """The call's canonical spelling: its values (lazy), tensors by shape and dtype (eager)."""
        if self.jit_impl.mode == "eager":
            return JITImpl._canonical_call(args, kwargs)
        return canonical([list(args), kwargs])

    def _record_key(self, args: tuple, kwargs: dict, configs: list[dict[str, Any]]) -> str | None:
        if not (self.cache_results and kernel_cache.enabled):
            return None
        options = self.jit_impl.options
        try:
            target = options.resolved_target()
            return digest("autotune", function_fingerprint(self.jit_impl.fn), self._call_spelling(args, kwargs),
                          canonical(configs), canonical(options.out_idx), options.fingerprint(target),
                          canonical(self.profile.supply_type), self.profile.ref_prog is not None)
        except Unkeyable:
            return None

    def run(self, *args: Any, **kwargs: Any) -> AutoTuneResult:
        """Tune for these call arguments (configs supply the remaining keyword arguments).

        Lazy factories are called with compile-time values and benchmarked on supplied inputs; eager kernels are
        called with tensors, compiled for their shapes and dtypes, and benchmarked on those tensors.
        """
        kwargs = self._take_run_options(kwargs)
        configs = self._configs(args, kwargs)
        given = self._given_tunables(args, kwargs, configs)
        if given:  # the reference's rule: a call that sets a tuned parameter itself is compiled as it is, untuned
            logger.warning("autotune: the call sets tuned parameter(s) %s itself: compiled with the call's values, "
                           "not tuned", ", ".join(given))
            return AutoTuneResult(None, None, self.jit_impl.compile(*args, **kwargs))
        record_key = self._record_key(args, kwargs, configs)
        if record_key is not None:
            record = kernel_cache.get_record(RECORDS, record_key)
            if isinstance(record, dict) and record.get("config") is not None:
                kernel = self._with_pass_configs(record["config"]).compile(
                    *args, **{**kwargs, **_kernel_args(record["config"])})
                kernel.config, kernel.latency = record["config"], record["latency"]
                kernel.ref_latency = record.get("ref_latency")
                return AutoTuneResult(record["config"], record["latency"], kernel, record.get("ref_latency"),
                                      record.get("trials", []), from_cache=True)
        kernels, trials, compiled = self._compile_all(args, kwargs, configs)
        inputs = None
        if self.jit_impl.mode == "eager":
            inputs = next((self._eager_inputs(k, args, kwargs) for k in kernels if k is not None), None)
        executor = _adapt(self.executor)
        if benchmark.supports_benchmark(executor):
            result = self._benchmark_remote(executor, kernels, trials, compiled, inputs)
        else:
            result = self._benchmark(kernels, trials, inputs)
        if record_key is not None and result.config is not None:
            kernel_cache.put_record(RECORDS, record_key, {
                "config": result.config, "latency": result.latency, "ref_latency": result.ref_latency,
                "trials": result.trials})
        return result

    def _take_run_options(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """Apply the reference's ``AutoTuner.run`` options given by keyword (``warmup``, ``rep``, ``timeout``,
        ``early_stop``, ``early_stop_factor``; the grouping and multi-GPU ones are accepted: compiles already run
        in parallel here) unless the kernel factory has a parameter of that name; the call's other arguments."""
        params = inspect.signature(self.jit_impl.fn).parameters
        options = {k: kwargs[k] for k in RUN_OPTIONS if k in kwargs and k not in params}
        for name in ("warmup", "rep", "timeout"):
            if name in options:
                self.set_profile_args(**{name: options[name]})
        for name in ("early_stop", "early_stop_factor"):
            if name in options:
                setattr(self, name, options[name])
        return {k: v for k, v in kwargs.items() if k not in options}

    def _compile_all(self, args: tuple, kwargs: dict, configs: list[dict[str, Any]]
                     ) -> tuple[list[JITKernel | None], list[dict[str, Any]], list[dict[str, Any] | None]]:
        from tqdm.auto import tqdm

        target = self.jit_impl.options.resolved_target()  # resolved here, once: workers never re-resolve "auto"
        token = executors.register_job(self.jit_impl, target)
        payload = executors.pack_job(self.jit_impl, target)
        call_args, call_kwargs = args, kwargs
        if self.jit_impl.mode == "eager":  # workers need shapes and dtypes, not the tensors' data
            args, kwargs = _stand_ins(args), dict(zip(kwargs, _stand_ins(tuple(kwargs.values()))))
        tasks = [executors.CompileTask(token, payload, args, {**kwargs, **_kernel_args(c)}, c.get(PASS_CONFIGS))
                 for c in configs]
        trials: list[dict[str, Any]] = [{"config": c, "latency": None, "error": None} for c in configs]
        kernels: list[JITKernel | None] = [None] * len(configs)
        compiled: list[dict[str, Any] | None] = [None] * len(configs)
        own = self.executor is None
        workers = min(self.max_workers or env.autotune_workers(), len(tasks))
        pool = executors.SerialExecutor() if own and workers <= 1 else (
            executors.local_process_executor(workers, self.start_method) if own else _adapt(self.executor))
        # submitted lazily, `workers` in flight on our pool (a cluster's executor gets them all): the bar moves with
        # each compile, also with one worker, whose SerialExecutor compiles a task when it is submitted
        window = workers if own else len(tasks)
        bar = tqdm(total=len(tasks), desc="autotune: compiling", disable=not self.progress)
        lazily = executors.completed_lazily(pool, executors.compile_task, tasks, window)
        try:
            for i, future in lazily:
                bar.update()
                try:
                    compiled[i] = future.result()
                    kernels[i] = self._rebuild(compiled[i])
                except Exception as exc:
                    trials[i]["error"] = f"compile failed: {type(exc).__name__}: {exc}"
                    logger.debug("config %s failed to compile:\n%s", configs[i], traceback.format_exc())
                    continue
                try:
                    self._land(kernels[i], call_args, {**call_kwargs, **_kernel_args(configs[i])}, target,
                               remember=PASS_CONFIGS not in configs[i])
                except Exception as exc:  # the candidate still runs; only the caller's cache misses it
                    logger.warning("config %s: its kernel was not stored in this process's cache: %r", configs[i], exc)
        except BaseException:  # Ctrl-C or an error of ours: stop compiling now, leave no worker behind
            lazily.close()  # cancels what is in flight and submits nothing more
            bar.close()
            if own:
                _stop_now(pool)
            raise
        bar.close()
        if own:
            pool.shutdown(wait=True)
        failed = [t for t in trials if t["error"] is not None]
        if failed:
            logger.warning("autotune: %d of %d configurations failed to compile (first: %s: %s)", len(failed),
                           len(trials), failed[0]["config"], failed[0]["error"])
        return kernels, trials, compiled

    def _rebuild(self, payload: dict[str, Any]) -> JITKernel:
        options = self.jit_impl.options
        return benchmark.rebuild_kernel({**payload, "out_idx": payload.get("out_idx", options.out_idx)},
                                        options.execution_backend, payload.get("pass_configs", options.pass_configs),
                                        options.compile_flags)

    def _with_pass_configs(self, config: dict[str, Any]) -> JITImpl:
        """The jit function compiling `config`: its own ``pass_configs`` (if any) over the tuner's."""
        own = config.get(PASS_CONFIGS)
        if not own:
            return self.jit_impl
        return executors.with_options(self.jit_impl, pass_configs={**dict(self.jit_impl.options.pass_configs), **own})

    def _land(self, kernel: JITKernel, args: tuple, kwargs: dict, target: dict[str, Any],
              remember: bool = True) -> None:
        """Put a candidate compiled elsewhere into this process's kernel cache: its artifact on disk (unless a
        worker sharing the cache directory stored it already), the kernel in memory, and for lazy factories the
        record mapping the call to it, so that calling the factory with a tuned configuration loads, not compiles.
        """
        key = kernel.cache_key
        if key is None or not kernel_cache.enabled:
            return
        from tilelang.jit.compiler import _out_key

        if not kernel_cache.store().entry_dir(key).is_dir():
            kernel_cache.save_artifact(key, kernel.artifact, kernel._backend)
        kernel_cache.put_kernel((key, _out_key(kernel.out_idx), getattr(kernel._backend, "name", None)), kernel)
        if self.jit_impl.mode == "lazy" and remember:  # a call of the factory compiles without a config's pass_configs
            try:
                call = canonical([list(args), kwargs])
            except Unkeyable:
                return
            from tilelang.jit import source_keys

            options = self.jit_impl.options
            source_keys.remember(source_keys.source_key("lazy", self.jit_impl.fn, call, options, target), kernel)

    def _eager_inputs(self, kernel: JITKernel, args: tuple, kwargs: dict) -> list[Any] | None:
        """The eager call's own values for `kernel`'s inputs (by parameter name), or None when a tensor input
        was not passed (the profiler then supplies one)."""
        from tilelang.frontend.eager import UNBOUND

        values, _ = self.jit_impl._eager_program().bind(args, kwargs)
        inputs = [values.get(p.name, UNBOUND) for i, p in enumerate(kernel.params) if i not in kernel.out_idx]
        return None if any(v is UNBOUND for v in inputs) else inputs

    def _benchmark(self, kernels: list[JITKernel | None], trials: list[dict[str, Any]],
                   inputs: list[Any] | None = None) -> AutoTuneResult:
        from tqdm.auto import tqdm

        from tilelang.autotuner.capture import get_autotune_inputs
        from tilelang.backend.hooks import plugin_manager

        p = self.profile
        hook = plugin_manager().hook.tilelang_autotune_result
        captured = get_autotune_inputs()
        if captured is not None:
            if p.supply_prog is not None:
                logger.warning("supply_prog is ignored: the inputs come from `with set_autotune_inputs(...)`")
            inputs = list(captured)
        ref_latency = None
        ref_timed = False
        best: tuple[float, int] | None = None
        for i, kernel in enumerate(tqdm(kernels, desc="autotune: benchmarking", disable=not self.progress)):
            trial = trials[i]
            if kernel is not None:
                measured = benchmark.measure(kernel, p, inputs, time_ref=not ref_timed,
                                             best=best[0] if self.early_stop and best is not None else None,
                                             early_stop_factor=self.early_stop_factor)
                if measured["ref_timed"]:
                    ref_timed, ref_latency = True, measured["ref_latency"]
                if measured["inputs"] is not None and (p.cache_input_tensors or captured is not None):
                    inputs = measured["inputs"]
                trial["latency"], trial["error"] = measured["latency"], measured["error"]
            hook(config=trial["config"], latency=trial["latency"], error=trial["error"])
            if trial["latency"] is not None and (best is None or trial["latency"] < best[0]):
                best = (trial["latency"], i)
        return self._winner(kernels, trials, best, ref_latency)

    def _benchmark_remote(self, executor: Any, kernels: list[JITKernel | None], trials: list[dict[str, Any]],
                          compiled: list[dict[str, Any] | None], inputs: list[Any] | None) -> AutoTuneResult:
        """Time every compiled candidate through ``executor.submit_benchmark`` (on the workers owning the device,
        one kernel at a time per device). The reference is timed once, with the first candidate; early stop does
        not apply (candidates are timed concurrently on different devices)."""
        from tqdm.auto import tqdm

        from tilelang.autotuner.capture import get_autotune_inputs
        from tilelang.backend.hooks import plugin_manager

        p = self.profile
        hook = plugin_manager().hook.tilelang_autotune_result
        captured = get_autotune_inputs()
        if captured is not None:
            if p.supply_prog is not None:
                logger.warning("supply_prog is ignored: the inputs come from `with set_autotune_inputs(...)`")
            inputs = list(captured)
        profile = benchmark.BenchmarkTask.pack_profile(p, inputs)
        options = self.jit_impl.options
        futures: dict[Any, int] = {}
        first = True
        for i, payload in enumerate(compiled):
            if payload is None or kernels[i] is None:
                continue
            task = benchmark.BenchmarkTask({**payload, "out_idx": payload.get("out_idx", options.out_idx)},
                                           profile, options.execution_backend,
                                           payload.get("pass_configs", options.pass_configs),
                                           options.compile_flags, time_ref=first)
            first = False
            futures[executor.submit_benchmark(benchmark.benchmark_task, task, target=payload["target"])] = i
        ref_latency = None
        best: tuple[float, int] | None = None
        bar = tqdm(as_completed(futures), total=len(futures), desc="autotune: benchmarking", disable=not self.progress)
        for future in bar:
            i = futures[future]
            trial = trials[i]
            try:
                measured = future.result()
                trial["latency"], trial["error"] = measured["latency"], measured["error"]
                if measured.get("ref_latency") is not None:
                    ref_latency = measured["ref_latency"]
            except Exception as exc:
                trial["error"] = f"benchmark failed: {type(exc).__name__}: {exc}"
        for i, trial in enumerate(trials):
            hook(config=trial["config"], latency=trial["latency"], error=trial["error"])
            if trial["latency"] is not None and (best is None or trial["latency"] < best[0]):
                best = (trial["latency"], i)
        return self._winner(kernels, trials, best, ref_latency)

    def _winner(self, kernels: list[JITKernel | None], trials: list[dict[str, Any]], best: tuple[float, int] | None,
                ref_latency: float | None) -> AutoTuneResult:
        if best is None:
            errors = "; ".join(f"{t['config']}: {t['error']}" for t in trials[:5])
            raise RuntimeError(f"autotune: no configuration compiled and ran correctly ({errors})")
        latency, index = best
        kernel = kernels[index]
        kernel.config, kernel.latency, kernel.ref_latency = trials[index]["config"], latency, ref_latency
        return AutoTuneResult(trials[index]["config"], latency, kernel, ref_latency, trials)

    def _supply(self, profiler: Profiler, kernel: JITKernel) -> list[Any]:
        """Inputs for `kernel`: ``supply_prog(params)`` when given, else the profiler's supply type."""
        return benchmark.supply_inputs(self.profile, profiler, kernel)


def _kernel_args(config: dict[str, Any]) -> dict[str, Any]:
    """A configuration's keyword arguments for the kernel factory: all but the reserved ``pass_configs``."""
    return {k: v for k, v in config.items() if k != PASS_CONFIGS}


def _args_spelling(args: Any) -> Any:
    """A canonical spelling of a CompileArgs / ProfileArgs (callables by qualified name)."""
    from dataclasses import fields

    out = {}
    for f in fields(args):
        value = getattr(args, f.name)
        if callable(value):
            value = f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', repr(value))}"
        elif hasattr(value, "value") and not isinstance(value, (int, float, str)):  # enums
            value = value.value
        out[f.name] = canonical(value)
    return out


def _stop_now(pool: Any) -> None:
    """Stop an own pool at once: `WorkerPool.terminate` kills its workers; others drop what has not started."""
    terminate = getattr(pool, "terminate", None)
    if terminate is not None:
        terminate()
    else:
        pool.shutdown(wait=False, cancel_futures=True)


def _adapt(executor: Any) -> Any:
    """`executor` as a ``concurrent.futures``-style executor: a ``distributed.Client`` (whose futures
    ``concurrent.futures.as_completed`` cannot wait on) becomes a `tilelang.autotuner.dask_executor.DaskExecutor`."""
    if executor is not None and type(executor).__module__.startswith("distributed") and \
            type(executor).__name__ == "Client":
        from tilelang.autotuner.dask_executor import DaskExecutor

        return DaskExecutor(executor)
    return executor


def _stand_ins(values: tuple) -> tuple:
    """`values` with tensors replaced by `TensorArg` (shape and dtype: what an eager specialisation reads)."""
    from tilelang.frontend.eager import TensorArg, is_tensor_like

    return tuple(TensorArg(tuple(int(d) for d in v.shape), str(v.dtype)) if is_tensor_like(v) else v
                 for v in values)


def _default_options() -> Any:
    from tilelang.jit.compiler import CompileOptions

    return CompileOptions()


class _AutoTuned:
    """What ``@tilelang.autotune`` returns. Lazy: calling it tunes (once per arguments) and returns the best
    kernel. Eager: calling it tunes (once per shapes, dtypes and other values) and runs the best kernel."""

    def __init__(self, tuner: AutoTuner):
        self.tuner = tuner
        self.jit_impl = tuner.jit_impl
        self._results: dict[Any, AutoTuneResult] = {}
        self.__wrapped__ = tuner.jit_impl.fn
        self.__doc__ = tuner.jit_impl.fn.__doc__
        self.__name__ = tuner.jit_impl.fn.__name__

    def tune(self, *args: Any, **kwargs: Any) -> AutoTuneResult:
        """Tune (or recall) for these arguments and return the full result."""
        if self.jit_impl.mode == "eager":
            key: Any = ("eager", JITImpl._eager_signature(args, kwargs))
        else:
            key = digest(canonical([list(args), kwargs]))
        result = self._results.get(key)
        if result is None:
            result = self._results[key] = self.tuner.run(*args, **kwargs)
        return result

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        result = self.tune(*args, **kwargs)
        if self.jit_impl.mode == "eager":
            return self.jit_impl(*args, **{**kwargs, **(result.config or {})})
        return result.kernel

    def compile(self, *args: Any, **kwargs: Any) -> Any:
        """Tune (once per arguments) and return the best kernel without running it, eager kernels too."""
        result = self.tune(*args, **kwargs)
        if self.jit_impl.mode == "eager":
            return self.jit_impl.compile(*args, **{**kwargs, **(result.config or {})})
        return result.kernel


def autotune(func: Any = None, *, configs: Any = None, warmup: float = 25, rep: float = 100, timeout: float = 100,
             supply_type: Any = "auto", ref_prog: Callable[..., Any] | None = None,
             supply_prog: Callable[..., Any] | None = None, rtol: float = 1e-2, atol: float = 1e-2,
             max_mismatched_ratio: float = 0.01, skip_check: bool = False,
             manual_check_prog: Callable[..., Any] | None = None, cache_input_tensors: bool = False,
             do_not_specialize: Sequence[str] | None = None, early_stop: bool = False, early_stop_factor: float = 2.0,
             executor: Executor | None = None, max_workers: int | None = None, progress: bool = True,
             cache_results: bool = True, dims: dict[str, int] | None = None, start_method: str | None = None) -> Any:
    """Decorator stacked on ``@tilelang.jit``: ``fn(*args)`` tunes over `configs` and returns the best kernel
    (with ``.config``, ``.latency``, ``.ref_latency``), or for an eager kernel runs it and returns its outputs;
    ``fn.tune(*args)`` returns the `AutoTuneResult`. The profile keywords are `ProfileArgs`' fields; `executor`,
    `max_workers` and `start_method` choose where compiles run (see `AutoTuner`)."""
    def wrap(fn: Any) -> _AutoTuned:
        tuner = AutoTuner(fn, configs, executor=executor, max_workers=max_workers, progress=progress,
                          cache_results=cache_results, do_not_specialize=do_not_specialize, early_stop=early_stop,
                          early_stop_factor=early_stop_factor, start_method=start_method, warmup=warmup, rep=rep,
                          timeout=timeout,
                          ref_prog=ref_prog, supply_type=supply_type, supply_prog=supply_prog, rtol=rtol, atol=atol,
                          max_mismatched_ratio=max_mismatched_ratio, skip_check=skip_check,
                          manual_check_prog=manual_check_prog, cache_input_tensors=cache_input_tensors, dims=dims)
        return _AutoTuned(tuner)

    if configs is None and func is not None and not callable(func):
        func, configs = None, func  # @autotune([...]) with the configs positionally
    if configs is None:
        raise TypeError("autotune needs configs=: a list of dicts of keyword arguments, or a callable returning one")
    return wrap(func) if func is not None else wrap
