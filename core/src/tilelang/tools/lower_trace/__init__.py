"""IR lower trace: the IR before and after every pass of a compilation, as a terminal diff and/or an HTML report.

Trace every compilation of a script without touching it::

    TL_LOWER_TRACE=1 python kernel.py          # HTML report (also: html)
    TL_LOWER_TRACE=terminal python kernel.py   # coloured diffs on stdout
    TL_LOWER_TRACE=both python kernel.py

or from code: ``tilelang.tools.lower_trace.enable(mode="both")`` / ``disable()``. To diff an explicit chain of
passes on one program: ``lower_trace(func, [pass_a, ("Named", pass_b)], mode="html", html_path="trace.html")``.
``tilelang trace kernel.py`` runs a script with tracing on.
"""

from __future__ import annotations

from typing import Any

from tilelang.tools.lower_trace.core import (
    STATUS_CODEGEN,
    STATUS_COMPLETED,
    STATUS_FAILED,
    STATUS_SKIPPED,
    LowerRecord,
    _get_pass_display_name,
    create_pass_instrument,
    disable,
    enable,
    reset,
)

__all__ = [
    "STATUS_CODEGEN", "STATUS_COMPLETED", "STATUS_FAILED", "STATUS_SKIPPED", "LowerRecord", "create_pass_instrument",
    "disable", "enable", "lower_trace", "reset",
]


def _named_passes(passes: Any) -> list[tuple[str, Any]]:
    """`passes` (a pass, a ``(name, pass)`` pair, or a list of either) as ``(name, pass)`` pairs."""
    if not isinstance(passes, (list, tuple)) or (
            isinstance(passes, tuple) and len(passes) == 2 and isinstance(passes[0], str)):
        passes = [passes]
    named = []
    for p in passes:
        if isinstance(p, (list, tuple)) and len(p) == 2 and isinstance(p[0], str):
            named.append((p[0], p[1]))
        elif callable(p):
            named.append((_get_pass_display_name(p), p))
        else:
            raise TypeError(f"lower_trace: expected a pass or a (name, pass) pair, got {p!r}")
    return named


def lower_trace(func_or_mod: Any, passes: Any, *, mode: str = "terminal", context: int = 3,
                html_path: str = "lower_trace_report.html") -> list[dict]:
    """Run `passes` in order on `func_or_mod` (a PrimFunc or IRModule) and diff the IR around each one.

    `mode` is ``"terminal"`` (print coloured diffs), ``"html"`` (write `html_path`) or ``"both"``; `context` is
    the number of unchanged lines around each change. Returns one dict per pass: ``name``, ``before_script``,
    ``after_script``, ``diff_lines``, ``insertions``, ``deletions``, ``changed`` (and ``error`` for a pass that
    raised; the exception is re-raised after the partial report is written).
    """
    import tvm

    from tilelang.tools.lower_trace.diff import _count_changes, unified_diff

    mode = str(mode).strip().lower()
    if mode not in ("terminal", "html", "both"):
        raise ValueError(f"lower_trace: mode must be 'terminal', 'html' or 'both', got {mode!r}")
    mod = func_or_mod if isinstance(func_or_mod, tvm.IRModule) else tvm.IRModule({"main": func_or_mod})
    steps = _named_passes(passes)
    terminal = mode in ("terminal", "both")
    results: list[dict] = []
    failure: BaseException | None = None
    try:
        for n, (name, p) in enumerate(steps, 1):
            before = mod.script()
            try:
                mod = p(mod)
            except Exception as exc:
                failure = exc
                results.append({"name": name, "before_script": before, "after_script": "", "diff_lines": [],
                                "insertions": 0, "deletions": 0, "changed": False, "error": str(exc)})
                if terminal:
                    print(f"\n{'=' * 60}\n  Pass {n}: {name}  [FAILED]\n{'=' * 60}\n")
                    print(f"  Exception: {exc}\n  IR before the failing pass:\n{before}")
                raise
            after = mod.script()
            labels = (f"step {n} before", f"step {n} after")
            diff_lines = unified_diff(before, after, *labels, context=context, color=False).splitlines()
            ins, dels = _count_changes(diff_lines)
            results.append({"name": name, "before_script": before, "after_script": after, "diff_lines": diff_lines,
                            "insertions": ins, "deletions": dels, "changed": bool(ins or dels)})
            if terminal:
                print(f"\n{'=' * 60}\n  Pass {n}: {name}\n{'=' * 60}\n")
                if ins or dels:
                    print(unified_diff(before, after, *labels, context=context, color=True), end="")
                    print(f"\n  >>> +{ins} insertion(s), -{dels} deletion(s)")
                else:
                    print("  (no changes)")
    finally:
        if mode in ("html", "both"):
            _write_report(results, html_path, failure)
    return results


def _write_report(results: list[dict], html_path: str, failure: BaseException | None) -> None:
    """The HTML report of a `lower_trace` run; a write error never hides the pass's own exception."""
    from tilelang.tools.lower_trace.html import generate_html

    records = [LowerRecord(phase="lower_trace", name=r["name"], index=i, before_text=r["before_script"],
                           after_text=r["after_script"], changed=r["changed"], add_lines=r["insertions"],
                           del_lines=r["deletions"], status=STATUS_FAILED if "error" in r else STATUS_COMPLETED,
                           error_msg=r.get("error", ""))
               for i, r in enumerate(results)]
    try:
        generate_html(records, html_path)
        print(f"\nHTML report written to: {html_path}")
    except Exception as exc:
        if failure is None:
            raise
        import sys

        print(f"[lower_trace] WARNING: could not write the HTML report: {exc}", file=sys.stderr)
