"""Pass timing: wall-clock time of every pass of a compilation, inclusive and self (minus nested passes).

Turned on per kernel with ``pass_configs={"tl.pass_profile": True}`` (threshold: ``"tl.pass_profile_threshold_ms"``)
or for every compilation with ``TILELANG_PASS_PROFILE=1`` (``TILELANG_PASS_PROFILE_THRESHOLD_MS``). The report
goes to the ``tilelang.pass_timing`` logger when the compilation ends; ``tilelang profile-passes kernel.py``
runs a script with timing on and prints it.

`TileLangPassTimingInstrument` is usable on its own::

    timing = TileLangPassTimingInstrument()
    with tvm.transform.PassContext(instruments=[timing.instrument]):
        mod = some_pass(mod)
    print(timing.report())
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tilelang.instrumentation import PassInstrumentationTool, current_pass_instrument_context

__all__ = ["PassTimingRecord", "PassTimingTool", "TileLangPassTimingInstrument", "create_pass_timing_tool"]

logger = logging.getLogger("tilelang.pass_timing")


def _extract_kernel_label(mod: Any) -> str:
    """The kernel a module holds (``global_symbol`` or the GlobalVar name), ``"<first> +N more"`` for several,
    ``""`` when there is none. Never raises: it runs inside every pass callback."""
    try:
        functions = getattr(mod, "functions", None) if mod is not None else None
        if not functions:
            return ""
        names: list[str] = []
        for gvar, func in functions.items():
            attrs = getattr(func, "attrs", None)
            symbol = attrs.get("global_symbol") if attrs is not None else None
            name = str(symbol) if symbol is not None else getattr(gvar, "name_hint", None)
            if name is not None and str(name) not in names:
                names.append(str(name))
        if not names:
            return ""
        return names[0] if len(names) == 1 else f"{names[0]} +{len(names) - 1} more"
    except Exception:
        return ""


@dataclass
class PassTimingRecord:
    """One finished pass: name, inclusive seconds, nesting depth, self seconds, start order, kernel label."""

    name: str
    duration_s: float
    depth: int
    self_duration_s: float = 0.0
    sequence: int = 0
    kernel: str = ""


@dataclass
class _Open:
    name: str
    start: float
    depth: int
    sequence: int
    kernel: str
    children_s: float = field(default=0.0)


class _TimingState:
    """The callbacks' state, owned by the TVM instrument (not by the wrapper, which may be collected)."""

    def __init__(self) -> None:
        self.records: list[PassTimingRecord] = []
        self.stack: list[_Open] = []
        self.sequence = 0

    def enter_pass_ctx(self) -> None:
        self.records.clear()
        self.stack.clear()
        self.sequence = 0

    def exit_pass_ctx(self) -> None:
        if self.stack:
            logger.warning("Discarding %d incomplete pass timing frame(s): %s", len(self.stack),
                           ", ".join(f.name for f in self.stack))
            self.stack.clear()

    def run_before_pass(self, mod: Any, info: Any) -> None:
        self.stack.append(_Open(str(info.name), time.monotonic(), len(self.stack), self.sequence,
                                _extract_kernel_label(mod)))
        self.sequence += 1

    def run_after_pass(self, mod: Any, info: Any) -> None:
        now = time.monotonic()
        name = str(info.name)
        if not self.stack or self.stack[-1].name != name:
            logger.warning("Ignoring unmatched pass timing callback for %s (expected %s)", name,
                           self.stack[-1].name if self.stack else "<none>")
            self.stack.clear()
            return
        frame = self.stack.pop()
        took = now - frame.start
        self.records.append(PassTimingRecord(frame.name, took, frame.depth, max(0.0, took - frame.children_s),
                                             frame.sequence, frame.kernel))
        if self.stack:
            self.stack[-1].children_s += took


class TileLangPassTimingInstrument:
    """Times every pass of the PassContexts its `instrument` is given to.

    `threshold_ms` hides passes whose inclusive time is below it from `report` (0: show all).
    """

    def __init__(self, threshold_ms: float = 0.0) -> None:
        from tvm.ir import _ffi_instrument_api

        self._state = _TimingState()
        self._records = self._state.records
        self._stack = self._state.stack
        self._threshold_ms = float(threshold_ms)
        s = self._state
        # bound methods of the state only: the native instrument must not keep this wrapper alive
        self._instrument = _ffi_instrument_api.PassInstrument(
            "TileLangPassTimingInstrument", s.enter_pass_ctx, s.exit_pass_ctx, None, s.run_before_pass,
            s.run_after_pass)

    # the callbacks, callable directly (tests, other drivers)
    def _enter_pass_ctx(self) -> None:
        self._state.enter_pass_ctx()

    def _exit_pass_ctx(self) -> None:
        self._state.exit_pass_ctx()

    def _run_before_pass(self, info: Any, mod: Any = None) -> None:
        self._state.run_before_pass(mod, info)

    def _run_after_pass(self, info: Any, mod: Any = None) -> None:
        self._state.run_after_pass(mod, info)

    @property
    def instrument(self) -> Any:
        """The TVM pass instrument to put in a ``PassContext(instruments=[...])``."""
        return self._instrument

    @property
    def threshold_ms(self) -> float:
        return self._threshold_ms

    @property
    def records(self) -> list[PassTimingRecord]:
        """The finished passes in start order."""
        return sorted(self._records, key=lambda r: r.sequence)

    @property
    def total_duration_s(self) -> float:
        """The time of the top-level passes (nested ones are inside them)."""
        return sum(r.duration_s for r in self._records if r.depth == 0)

    def report(self, context: str | None = None) -> str:
        """A table of the passes (inclusive / self time and shares) and the ten slowest."""
        if not self._records:
            text = "[tilelang pass timing] No passes recorded."
            return f"{text} Context: {context}" if context else text
        total = self.total_duration_s
        threshold = self._threshold_ms / 1000.0
        shown = [r for r in self.records if r.duration_s >= threshold]
        skipped = len(self._records) - len(shown)

        def label(r: PassTimingRecord) -> str:
            return f"{r.name}({r.kernel})" if r.kernel else r.name

        def share(seconds: float) -> float:
            return seconds / total * 100 if total > 0 else 0.0

        width = max([43, *(len("  " * r.depth + label(r)) for r in shown)])
        rule = 53 + width
        out = ["=" * rule, "TileLang Pass Timing Report"]
        if context:
            out.append(f"Context: {context}")
        out += ["=" * rule, f"Total: {total:.4f}s ({len(self._records)} passes)"]
        if self._threshold_ms > 0:
            out.append(f"(inclusive threshold: {self._threshold_ms:.1f}ms)")
        out += ["-" * rule,
                f"{'#':>3}  {'Pass Name':<{width}} {'Inclusive':>10} {'Self':>10}  {'Incl %':>7} {'Self %':>7}",
                "-" * rule]
        for n, r in enumerate(self.records, 1):
            if r.duration_s < threshold:
                continue
            name = "  " * r.depth + label(r)
            out.append(f"{n:>3}  {name:<{width}} {r.duration_s:>9.4f}s {r.self_duration_s:>9.4f}s "
                       f"{share(r.duration_s):>6.1f}% {share(r.self_duration_s):>6.1f}%")
        out.append("-" * rule)
        slowest = sorted(shown, key=lambda r: r.duration_s, reverse=True)[:10]
        if slowest:
            out.append(f"Top {len(slowest)} Slowest Passes by Inclusive Time:")
            out += [f"  {i:>2}. {label(r):<{width + 2}} {r.duration_s:>9.4f}s {share(r.duration_s):>5.1f}%"
                    for i, r in enumerate(slowest, 1)]
        if skipped:
            out.append(f"\n({skipped} passes skipped - under {self._threshold_ms:.1f}ms inclusive threshold)")
        out.append("=" * rule)
        return "\n".join(out)

    def print_report(self, context: str | None = None) -> None:
        """Log the report (logger ``tilelang.pass_timing``, level INFO)."""
        logger.info("\n%s", self.report(context=context))


class PassTimingTool(PassInstrumentationTool):
    """The compile-session tool: one timing instrument per PassContext, one combined report at the end."""

    # first in, first out: the other tools' snapshot work is not counted in a pass's time
    pass_instrument_priority = -100

    def __init__(self, threshold_ms: float = 0.0) -> None:
        self.threshold_ms = float(threshold_ms)
        self._runs: list[tuple[str | None, TileLangPassTimingInstrument]] = []
        self._finished = False

    def create_pass_instrument(self) -> Any:
        timing = TileLangPassTimingInstrument(threshold_ms=self.threshold_ms)
        self._runs.append((current_pass_instrument_context(), timing))
        return timing.instrument

    @property
    def timings(self) -> tuple[TileLangPassTimingInstrument, ...]:
        return tuple(t for _, t in self._runs)

    @property
    def contexts(self) -> tuple[str | None, ...]:
        return tuple(c for c, _ in self._runs)

    @property
    def records(self) -> list[PassTimingRecord]:
        return [r for _, t in self._runs for r in t.records]

    def report(self) -> str:
        """One section per PassContext of the compilation."""
        return "\n\n".join(t.report(context=c) for c, t in self._runs)

    def print_report(self) -> None:
        if self._runs:
            logger.info("\n%s", self.report())

    def finish(self, error: BaseException | None) -> None:
        if not self._finished:
            self._finished = True
            self.print_report()


def create_pass_timing_tool(pass_configs: Mapping[Any, Any] | None) -> PassTimingTool | None:
    """A `PassTimingTool` when ``tl.pass_profile`` (in `pass_configs`) or ``TILELANG_PASS_PROFILE`` asks for one."""
    from tilelang.env import env, resolve_pass_profile_threshold_ms
    from tilelang.transform.config import PassConfigKey

    configs = dict(pass_configs or {})
    if not (configs.get(PassConfigKey.TL_PASS_PROFILE) or env.is_pass_profile_enabled()):
        return None
    threshold = resolve_pass_profile_threshold_ms(configs, PassConfigKey.TL_PASS_PROFILE_THRESHOLD_MS,
                                                  env.get_pass_profile_threshold_ms)
    return PassTimingTool(threshold_ms=threshold)
