"""Compiling many autotuning candidates in groups: `grouped_compile` splits the configurations into chunks and
compiles each chunk on the executor (`tilelang.autotuner.executors`), returning kernels in configuration order
(None for a failed one, with the error logged)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

__all__ = ["grouped_compile", "chunk", "compile_grouped_unit_tvm_ffi", "CompileUnitResult"]

logger = logging.getLogger("tilelang.autotuner")


def chunk(items: Sequence[Any], size: int) -> list[list[Any]]:
    """`items` in consecutive groups of at most `size` (size >= 1)."""
    if size < 1:
        raise ValueError(f"group size must be at least 1, got {size}")
    return [list(items[i:i + size]) for i in range(0, len(items), size)]


def grouped_compile(jit_impl: Any, configs: Sequence[dict[str, Any]], group_size: int = 8,
                    num_workers: int | None = None, ignore_error: bool = True) -> list[Any]:
    """Compile ``jit_impl(**config)`` for each config, `group_size` at a time through `tilelang.par_compile`."""
    from tilelang.jit import par_compile

    kernels: list[Any] = []
    for group in chunk(list(configs), group_size):
        funcs = []
        for config in group:
            try:
                funcs.append(jit_impl.get_tir(**config))
            except Exception as exc:
                if not ignore_error:
                    raise
                logger.warning("grouped_compile: config %s failed to elaborate: %s", config, exc)
                funcs.append(None)
        built = par_compile([f for f in funcs if f is not None], out_idx=jit_impl.options.out_idx,
                            execution_backend=jit_impl.options.execution_backend, target=jit_impl.options.target,
                            pass_configs=jit_impl.options.pass_configs, num_workers=num_workers,
                            ignore_error=ignore_error)
        it = iter(built)
        kernels.extend(next(it) if f is not None else None for f in funcs)
    return kernels


class CompileUnitResult(NamedTuple):
    """One configuration of a grouped unit: its index, config, kernel (None on failure) and the error."""

    idx: int
    config: dict[str, Any]
    kernel: Any
    error: BaseException | None


def compile_grouped_unit_tvm_ffi(unit_items: list[tuple[int, dict[str, Any]]], compile_args: Any,
                                 elaborate_func: Callable[..., Any]) -> list[CompileUnitResult]:
    """Compile one unit of autotuning configurations: ``elaborate_func(**config)`` -> PrimFunc, each renamed
    ``<symbol>_gc_<idx>`` so their kernels never collide, compiled with `compile_args` (a `CompileArgs`).
    A configuration that fails records its error; the others still compile."""
    results = []
    for idx, config in unit_items:
        try:
            program = elaborate_func(**config)
            symbol = str(program.attrs["global_symbol"]) if program.attrs and "global_symbol" in program.attrs \
                else "main"
            program = program.with_attr("global_symbol", f"{symbol}_gc_{idx}")
            results.append(CompileUnitResult(idx, config, compile_args.compile_program(program), None))
        except Exception as exc:
            logger.warning("grouped compile: config %s (%s) failed: %s", idx, config, exc)
            results.append(CompileUnitResult(idx, config, None, exc))
    return results
