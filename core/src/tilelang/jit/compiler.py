"""`compile` and `par_compile`: PrimFunc -> `JITKernel`, through the kernel cache.

`CompileOptions` carries what a ``@tilelang.jit`` decorator or a ``compile`` call fixes besides the program;
its `fingerprint` is the non-program part of every cache key.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from tilelang import env
from tilelang.artifact import CompiledArtifact
from tilelang.backend.execution import resolve_execution_backend
from tilelang.backend.target import TargetPair, kind_of, split_targets
from tilelang.cache.environment import prime_plugin_discovery
from tilelang.cache.keys import canonical, digest, program_text, sources_digest, target_fingerprint, versions
from tilelang.cache.manager import kernel_cache
from tilelang.engine.request import CompileRequest
from tilelang.errors import ExecutionBackendUnavailable, TargetError, surface_user_errors
from tilelang.frontend.lazy import LazyPrimFunc, unwrap_prim_func
from tilelang.jit.diagnostics import jit_phase, log_slow_compile
from tilelang.jit.kernel import JITKernel
from tilelang.transform.config import check_compile_flags, normalize_pass_configs

__all__ = ["CompileOptions", "compile", "par_compile", "kernel_from_cache", "own_out_idx"]

logger = logging.getLogger("tilelang.jit")
_compilation_logger = logging.getLogger("tilelang.jit.compilation")  # see tilelang.log: TILELANG_PRINT_ON_COMPILATION


@dataclass(frozen=True)
class CompileOptions:
    """How to compile: out_idx, target(s), execution backend, pass configs, compile flags, verbosity."""

    out_idx: Any = None
    target: Any = "auto"
    target_host: Any = None
    execution_backend: str = "auto"
    pass_configs: dict[str, Any] = field(default_factory=dict)
    compile_flags: Any = None
    verbose: bool = False

    def __post_init__(self) -> None:  # every entry point's options pass here: the argument types are checked
        object.__setattr__(self, "pass_configs", normalize_pass_configs(self.pass_configs))
        object.__setattr__(self, "compile_flags", check_compile_flags(self.compile_flags))

    def with_out_idx(self, out_idx: Any) -> CompileOptions:
        return replace(self, out_idx=out_idx)

    def resolved_target(self) -> dict[str, Any]:
        """The target pair's config, resolved now (``"auto"``: env var, ``with Target``, detection; the host:
        `target_host`, the target's own, or the device itself for CPU kinds): ``{..., "host": {...}}``."""
        if kernel_cache.enabled:
            prime_plugin_discovery()
        return split_targets(self.target, self.target_host).config()

    def request(self, target: dict[str, Any] | None = None) -> CompileRequest:
        """The `CompileRequest` of these options for `target` (a `resolved_target` config: not resolved again)."""
        from tilelang.transform.config import with_compile_flags

        pair = TargetPair.from_config(target if target is not None else self.resolved_target())
        # the pass configs were checked and normalised when these options were made
        return CompileRequest(pair, with_compile_flags(self.pass_configs, self.compile_flags), self.compile_flags)

    def fingerprint(self, target: dict[str, Any]) -> list[Any]:
        """Everything but the program that shapes the compiled code."""
        host = self.target_host
        host = host if not hasattr(host, "export") else dict(host.export())
        kinds = _kinds(target, target.get("host"), host)
        return [target_fingerprint(target, host), canonical(self.pass_configs), canonical(self.compile_flags),
                versions(), sources_digest(kinds)]

    def log(self, message: str, *args: Any) -> None:
        """Log at INFO; with ``verbose=True`` (or ``TILELANG_VERBOSE``) the line is shown whatever the level, through
        the ``tilelang`` logger's (tqdm-safe) handler."""
        if (self.verbose or env.verbose()) and not logger.isEnabledFor(logging.INFO):
            filename, lineno, func, _ = logger.findCaller(stacklevel=2)
            logger.handle(logger.makeRecord(logger.name, logging.INFO, filename, lineno, message, args, None, func))
        else:
            logger.info(message, *args, stacklevel=2)


def _kinds(*targets: Any) -> tuple[str, ...]:
    """The target kinds among `targets` (None and unrecognisable values skipped; they are keyed as values)."""
    found = set()
    for t in filter(None, targets):
        try:
            found.add(kind_of(t))
        except (TargetError, KeyError, TypeError):
            pass
    return tuple(sorted(found))


def _prim_func(func: Any) -> Any:
    """The tirx PrimFunc of `func` (a PrimFunc, or an object carrying one as ``prim_func`` / ``func``)."""
    for attr in ("prim_func", "func"):
        inner = getattr(func, attr, None)
        if inner is not None and hasattr(inner, "script") and hasattr(inner, "params"):
            return inner
    if hasattr(func, "script") and hasattr(func, "params"):
        return func
    raise TypeError(f"expected a tirx PrimFunc (e.g. from @T.prim_func), got {type(func).__name__}: {func!r}")


def _name_of(prim: Any) -> str:
    attrs = getattr(prim, "attrs", None)
    if attrs is not None and "global_symbol" in attrs:
        return str(attrs["global_symbol"])
    return str(getattr(prim, "__name__", "main"))


def _lower(prim: Any, target: dict[str, Any], options: CompileOptions) -> CompiledArtifact:
    from tilelang.engine import lower

    return lower(prim, request=options.request(target))


def own_out_idx(func: Any, out_idx: Any) -> Any:
    """The out_idx to compile `func` with: a PrimFunc that returns ``T.empty`` tensors names its outputs itself
    (its ``tilelang_out_idx`` attribute), and giving `out_idx` too is a ValueError."""
    attrs = getattr(func, "attrs", None)
    if attrs is not None and "tilelang_out_idx" in attrs:
        if out_idx is not None:
            raise ValueError("Out index conflict: out_idx is specified and prim_func have returned `T.empty` tensors "
                             f"(outputs {list(attrs['tilelang_out_idx'])}); drop the out_idx argument")
        out_idx = [int(i) for i in attrs["tilelang_out_idx"]]
    return out_idx


def _out_key(out_idx: Any) -> tuple[int, ...]:
    if out_idx is None:
        return ()
    return (out_idx,) if isinstance(out_idx, int) else tuple(out_idx)


def _backend_for(target: dict[str, Any], name: Any) -> Any:
    try:
        return resolve_execution_backend(target, name)
    except ExecutionBackendUnavailable:
        if name not in (None, "auto"):
            raise
        return None  # the kernel still compiles; calling it explains why it cannot run here


def kernel_from_cache(key: str, options: CompileOptions, target: dict[str, Any], backend: Any = None,
                      prim_func: Any = None) -> JITKernel | None:
    """The kernel for program key `key` from memory or disk, or None."""
    if backend is None:
        backend = _backend_for(target, options.execution_backend)
    mem_key = (key, _out_key(options.out_idx), getattr(backend, "name", None))
    kernel = kernel_cache.get_kernel(mem_key)
    if kernel is not None:
        return kernel
    artifact = kernel_cache.load_artifact(key)
    if artifact is None:
        return None
    kernel = JITKernel(artifact, options.out_idx, backend or options.execution_backend, cache_key=key,
                       from_cache=True, prim_func=prim_func, pass_configs=options.pass_configs,
                       compile_flags=options.compile_flags)
    options.log("loaded %s from the disk cache (%s)", artifact.name, key[:16])
    kernel_cache.put_kernel(mem_key, kernel)
    return kernel


def compile_with(func: Any, options: CompileOptions, target: dict[str, Any] | None = None) -> JITKernel:
    """Compile `func` with `options`, through the cache (the engine behind `compile`)."""
    from tilelang.backend import hooks

    if type(func) is LazyPrimFunc:
        if not func.is_built:  # by its source key first: a cached kernel loads without parsing it
            from tilelang.jit.source_keys import compile_lazy

            return compile_lazy(func, options, target)
        func = func.materialize()
    prim = _prim_func(func)
    target = target if target is not None else options.resolved_target()
    backend = _backend_for(target, options.execution_backend)
    key = None
    name = _name_of(prim)
    if kernel_cache.enabled:
        with jit_phase("cache.lookup", kernel=name):
            key = digest("program", program_text(prim), options.fingerprint(target))
            kernel = kernel_from_cache(key, options, target, backend, prim)
        if kernel is not None:
            return kernel
    start = time.perf_counter()
    if env.is_print_on_compilation_enabled():
        _compilation_logger.info("TileLang begins to compile kernel `%s` with `out_idx=%s` for %s", name,
                                 options.out_idx, target.get("kind"))
    context = {"kernel": name, "target": target, "backend": options.execution_backend}
    with jit_phase("cache.compile", verbose=options.verbose, **context):
        with jit_phase("lower", verbose=options.verbose, **context):
            artifact = _lower(prim, target, options)
        with jit_phase("load", verbose=options.verbose, **context):
            kernel = JITKernel(artifact, options.out_idx, backend or options.execution_backend, cache_key=key,
                               prim_func=prim, pass_configs=options.pass_configs, compile_flags=options.compile_flags)
    elapsed = time.perf_counter() - start
    options.log("compiled %s for %s in %.3f s", artifact.name, target.get("kind"), elapsed)
    log_slow_compile(artifact.name, target.get("kind"), elapsed)
    hooks.plugin_manager().hook.tilelang_kernel_compiled(kernel=kernel)
    if key is not None:
        with jit_phase("cache.store", kernel=name):
            kernel_cache.save_artifact(key, artifact, kernel._backend)
        kernel_cache.put_kernel((key, _out_key(options.out_idx), getattr(backend, "name", None)), kernel)
    return kernel


@surface_user_errors
def compile(func: Any, out_idx: int | Sequence[int] | None = None, execution_backend: str = "auto",
            target: Any = "auto", target_host: Any = None, verbose: bool = False,
            pass_configs: dict[str, Any] | None = None, compile_flags: Any = None) -> JITKernel:
    """Compile a PrimFunc into a callable `JITKernel` (cached in memory and on disk).

    `out_idx`: parameters the kernel allocates and returns (``-1`` = last). `target`: ``"auto"``, a kind,
    a dict or a ``tvm.target.Target``. `execution_backend`: a name, or ``"auto"`` for the first available.
    A PrimFunc that returns ``T.empty`` tensors names its outputs itself (its ``tilelang_out_idx`` attribute):
    giving `out_idx` too is a ValueError.
    """
    if type(func) is not LazyPrimFunc or func.is_built:  # an unbuilt kernel: checked if it must be parsed
        out_idx = own_out_idx(unwrap_prim_func(func), out_idx)
    options = CompileOptions(out_idx, target, target_host, execution_backend, pass_configs, compile_flags,
                             verbose)
    return compile_with(func, options)


def par_compile(funcs: Iterable[Any], out_idx: int | Sequence[int] | None = None, execution_backend: str = "auto",
                target: Any = "auto", target_host: Any = None, verbose: bool = False,
                pass_configs: dict[str, Any] | None = None, compile_flags: Any = None,
                num_workers: int | None = None, ignore_error: bool = False) -> list[JITKernel | None]:
    """`compile` every PrimFunc in `funcs` on a thread pool (TVM's builders release the GIL); results in
    order. With `ignore_error`, a failed compile gives None (and is logged) instead of raising."""
    funcs = list(funcs)
    options = CompileOptions(out_idx, target, target_host, execution_backend, pass_configs, compile_flags,
                             verbose)
    resolved = options.resolved_target()
    workers = max(1, min(num_workers or env.usable_cores(), len(funcs) or 1))

    def one(func: Any) -> JITKernel | None:
        try:
            return compile_with(func, options, resolved)
        except Exception as exc:
            if not ignore_error:
                raise
            logger.warning("par_compile: %r failed: %s", getattr(func, "__name__", func), exc)
            return None

    from tqdm.auto import tqdm

    bar = tqdm(total=len(funcs), desc="Parallel Compiling", disable=len(funcs) < 2, leave=False)
    try:
        if workers == 1:
            results = []
            for f in funcs:
                results.append(one(f))
                bar.update()
            return results
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tilelang-compile") as pool:
            futures = [pool.submit(one, f) for f in funcs]
            for future in futures:
                future.add_done_callback(lambda _: bar.update())
            return [future.result() for future in futures]
    finally:
        bar.close()
