"""Performance-regression helpers of the reference (its example scripts call them).

``regression()`` runs every function of the calling module whose name starts with ``regression_`` (sorted; the
``TL_PERF_REGRESSION_ONLY`` variable — a comma list or JSON list of glob/substring patterns — selects some),
each of which reports latencies with ``process_func(func, name, **kwargs)``; the results are printed one per line
(``name: latency``), or as one ``__TILELANG_PERF_RESULTS_JSON__=[...]`` line with ``TL_PERF_REGRESSION_FORMAT=json``.
"""

from __future__ import annotations

import fnmatch
import inspect
import json
import logging
import os
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["PerfResult", "process_func", "regression", "results"]

JSON_PREFIX = "__TILELANG_PERF_RESULTS_JSON__="
_RETRIES = 5


@dataclass(frozen=True)
class PerfResult:
    name: str
    latency: float
    case: str | None = None


_RESULTS: list[PerfResult] = []
_CASE: list[str | None] = [None]


def results() -> list[PerfResult]:
    """The latencies recorded since the last `regression()` started."""
    return list(_RESULTS)


def process_func(func: Callable[..., float], name: str | None = None, /, **kwargs: Any) -> None:
    """Call ``func(**kwargs)`` (a latency; retried up to 5 times while not positive) and record it."""
    label = getattr(func, "__module__", "<unknown>") if name is None else name
    label = label.removeprefix("regression_")
    latency = float(func(**kwargs))
    for _ in range(_RETRIES):
        if latency > 0:
            break
        latency = float(func(**kwargs))
    if latency <= 0:
        warnings.warn(f"{label} has latency {latency} <= 0; check the profiling", RuntimeWarning, stacklevel=2)
        return
    _RESULTS.append(PerfResult(label, latency, _CASE[0]))


def _filters() -> list[str]:
    value = os.environ.get("TL_PERF_REGRESSION_ONLY", "").strip()
    if not value:
        return []
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        parsed = value.split(",")
    parsed = [parsed] if isinstance(parsed, str) else parsed
    return [str(p).strip().lower() for p in parsed if str(p).strip()] if isinstance(parsed, list) else []


def _selected(name: str, patterns: list[str]) -> bool:
    if not patterns:
        return True
    short = name.removeprefix("regression_")
    return any(fnmatch.fnmatch(c.lower(), p) or p in c.lower() for p in patterns for c in (name, short))


def _emit() -> None:
    if os.environ.get("TL_PERF_REGRESSION_FORMAT", "text").strip().lower() == "json":
        data = [{"name": r.name, "latency": r.latency, **({"case": r.case} if r.case else {})} for r in _RESULTS]
        print(JSON_PREFIX + json.dumps(data, separators=(",", ":")))
        return
    for r in _RESULTS:
        print(f"{r.name}: {r.latency}")


def regression(prefixes: Sequence[str] = ("regression_",), verbose: bool = True) -> None:
    """Run the calling module's ``regression_*`` functions and print their recorded latencies."""
    caller = inspect.currentframe().f_back.f_globals  # type: ignore[union-attr]
    _RESULTS.clear()
    patterns = _filters()
    chosen = sorted((k, v) for k, v in list(caller.items())
                    if callable(v) and any(k.startswith(p) for p in prefixes) and _selected(k, patterns))
    for i, (name, fn) in enumerate(chosen, 1):
        _CASE[0] = name.removeprefix("regression_")
        if verbose:
            print(f"  ├─ [{i}/{len(chosen)}] {_CASE[0]}", end="", flush=True)
        start = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                logging.disable(logging.WARNING)
                try:
                    fn()
                finally:
                    logging.disable(logging.NOTSET)
            if verbose:
                print(f" ({time.perf_counter() - start:.2f}s)", flush=True)
        finally:
            _CASE[0] = None
    _emit()
