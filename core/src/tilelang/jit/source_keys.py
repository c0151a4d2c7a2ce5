"""The TVM-free way to a cached kernel: source keys and their records.

A *source key* (`tilelang.cache.keys`) hashes what the front end sees before it parses anything: the kernel
function's fingerprint (source, defaults, annotations, the closure values, globals and modules it reads), the
call, the out_idx, the execution backend and the compile options' fingerprint (target, pass configs, compile
flags, versions, source stamps). A record under it names the *program key* of the kernel compiled for it, which
loads the stored artifact. A hit therefore needs neither the parse nor TVM; a miss parses, compiles through the
program key (`compile_with`) and writes the record.

Used by ``@tilelang.jit`` (lazy factories and eager kernels, `tilelang.jit.decorator`) and by ``tilelang.compile``
of a module-level ``@T.prim_func`` not built yet (`compile_lazy`, see `tilelang.frontend.lazy`).
"""

from __future__ import annotations

from typing import Any

from tilelang.cache.keys import Unkeyable, canonical, digest, function_fingerprint
from tilelang.cache.manager import kernel_cache
from tilelang.jit.compiler import CompileOptions, compile_with, kernel_from_cache, own_out_idx
from tilelang.jit.kernel import JITKernel

__all__ = ["RECORDS", "source_key", "load", "remember", "compile_lazy"]

RECORDS = "jit"  # the records' namespace in the cache


def source_key(kind: str, fn: Any, call: Any, options: CompileOptions, target: dict[str, Any]) -> str | None:
    """The source key of compiling `fn` (a kernel function) for `call` (a canonical spelling of the call, or
    None), or None when the cache is off or something `fn` reads cannot be keyed (logged)."""
    if not kernel_cache.enabled:
        return None
    try:
        return digest(kind, function_fingerprint(fn), call, canonical(options.out_idx), options.execution_backend,
                      options.fingerprint(target))
    except Unkeyable as exc:
        options.log("no source key for %s: %s", getattr(fn, "__qualname__", fn), exc)
        return None


def load(key: str | None, options: CompileOptions, target: dict[str, Any]) -> tuple[JITKernel | None, Any]:
    """``(kernel, record)`` stored under source key `key`, or ``(None, None)``."""
    if key is None:
        return None, None
    record = kernel_cache.get_record(RECORDS, key)
    if not isinstance(record, dict) or "key" not in record:
        return None, None
    kernel = kernel_from_cache(record["key"], options.with_out_idx(record.get("out_idx", options.out_idx)), target)
    return kernel, record


def remember(key: str | None, kernel: JITKernel, **extra: Any) -> None:
    """Record that source key `key` compiles to `kernel` (with `extra` JSON-able facts about the call)."""
    if key is not None and kernel.cache_key is not None:
        kernel_cache.put_record(RECORDS, key, {"key": kernel.cache_key, "out_idx": kernel.out_idx, **extra})


def compile_lazy(func: Any, options: CompileOptions, target: dict[str, Any] | None = None) -> JITKernel:
    """Compile a `LazyPrimFunc` not built yet: by its source key when cached (no parse, no TVM), else parse it and
    compile (``tilelang_out_idx`` applied as `compile` does) and record the result."""
    target = target if target is not None else options.resolved_target()
    key = source_key("prim_func", func.source_function, None, options, target)
    kernel, _ = load(key, options, target)
    if kernel is not None:
        return kernel
    prim = func.materialize()
    kernel = compile_with(prim, options.with_out_idx(own_out_idx(prim, options.out_idx)), target)
    remember(key, kernel)
    return kernel
