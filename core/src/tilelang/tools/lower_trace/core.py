"""Lower trace as a compile-session tool: a snapshot of the IR around every pass and code generator.

`enable()` (or ``TL_LOWER_TRACE``) only decides what future compilations do: each compilation gets its own
`LowerTraceSession` (records, numbering, report files), created from a configuration snapshot, so tracing one
kernel never touches another one running concurrently. Nothing global in TVM is patched: passes are observed
through a `StackedPassInstrument` in the compilation's PassContext, code generators through the session's
codegen middleware.

Files (``trace_dir`` defaults to ``TL_LOWER_TRACE_DIR``, ``./tmp/lower_trace_dir``)::

    <trace_dir>/<script>/report.html                      link to the latest run's report (html mode)
    <trace_dir>/<script>/codegen.cpp                      editable generated source (see below)
    <trace_dir>/<script>/.run_records/run_<stamp>/<phase>/NN_<pass>_before.tir / _after.tir

The generated device source is also written to ``codegen.cpp`` (with ``.original``, the last generated text,
and ``.latest``). If the user edits ``codegen.cpp`` and compiles again, a source-only code generator returns
the edited source instead; for code generators that already built a binary the edit is only reported. When
both the user and the code generator changed it, the user's copy is saved as ``.bak`` and regenerated.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import shutil
import sys
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import uuid4

from tilelang.instrumentation import (
    CodegenEvent,
    IncompletePass,
    PassEvent,
    PassEventObserver,
    PassInstrumentationTool,
    StackedPassInstrument,
    active_stacked_pass_instruments,
    current_compile_pass_instrumentation,
    current_pass_phase,
    pass_phase,
    register_pass_instrumentation_tool,
    unregister_pass_instrumentation_tool,
)
from tilelang.tools.lower_trace.diff import (
    _ANSI_BLUE,
    _ANSI_BOLD,
    _ANSI_CYAN,
    _ANSI_DIM,
    _ANSI_GREEN,
    _ANSI_RED,
    _ANSI_RESET,
    _ANSI_YELLOW,
    print_diff,
)

__all__ = [
    "LowerRecord", "LowerTraceSession", "STATUS_CODEGEN", "STATUS_COMPLETED", "STATUS_FAILED", "STATUS_SKIPPED",
    "create_pass_instrument", "current_lower_trace_session", "disable", "enable", "get_last_session", "reset",
]

STATUS_COMPLETED = "completed"
STATUS_FAILED = "failed"
STATUS_SKIPPED = "skipped"
STATUS_CODEGEN = "codegen"

_TOOL_NAME = "lower_trace"
_UNSCOPED = "unscoped"
_OFF = ("", "0", "false", "no", "off")
_ON = ("1", "true", "yes", "on")
_MODES = ("terminal", "html", "both")

# Code generators whose result is consumed as source (compiled later): an edited codegen.cpp can replace it.
_SOURCE_ONLY_CODEGEN_FFIS = frozenset({
    "target.build.tilelang_cuda_without_compile", "target.build.tilelang_cutedsl_without_compile",
    "target.build.tilelang_hip_without_compile", "target.build.tilelang_metal_without_compile",
    "target.build.tilelang_c", "target.build.webgpu", "target.build.tilelang_cpp", "target.build.tilelang_webgpu",
    "target.build.tilelang_metal", "target.build.tilelang_ascend", "target.build.tilelang_ascend_pto",
})

_UNSET: Any = object()


class _Config:
    """Overrides set by `enable()`; `_UNSET` means "use the environment"."""

    lock = threading.RLock()
    mode: Any = _UNSET
    trace_dir: Any = _UNSET
    codegen_output: Any = _UNSET


_last_session: ContextVar[LowerTraceSession | None] = ContextVar("tilelang_last_lower_trace_session", default=None)
_path_locks_guard = threading.Lock()
_path_locks: dict[str, threading.Lock] = {}


@dataclass
class LowerRecord:
    """One traced step: a pass (or the code generator) with the IR before and after it."""

    phase: str
    name: str
    index: int
    before_text: str
    after_text: str
    changed: bool
    add_lines: int = 0
    del_lines: int = 0
    status: str = STATUS_COMPLETED
    error_msg: str = ""
    depth: int = 0
    parent_index: int | None = None


# ------------------------------------------------------------------------------------------------ config
def _parse_lower_trace_mode(value: str | None) -> str | None:
    """``TL_LOWER_TRACE`` value -> ``"terminal"`` / ``"html"`` / ``"both"`` / None (off); other truthy -> html."""
    if value is None:
        return None
    v = str(value).strip().lower()
    if v in _OFF:
        return None
    return v if v in _MODES else "html"


def _env_mode() -> str | None:
    from tilelang.env import env

    return _parse_lower_trace_mode(str(env.TL_LOWER_TRACE))


def _env_trace_dir() -> str:
    from tilelang.env import env

    return str(env.TL_LOWER_TRACE_DIR).strip() or os.path.join(".", "tmp", "lower_trace_dir")


def _get_mode() -> str | None:
    """The mode future compilations trace with (`enable` overrides ``TL_LOWER_TRACE``)."""
    with _Config.lock:
        mode = _Config.mode
    return _env_mode() if mode is _UNSET else mode


def _is_trace_enabled() -> bool:
    """Whether future compilations are traced."""
    return _get_mode() is not None


def _snapshot() -> tuple[str | None, str, Any]:
    with _Config.lock:
        mode = _env_mode() if _Config.mode is _UNSET else _Config.mode
        trace_dir = _Config.trace_dir if _Config.trace_dir not in (_UNSET, None, "") else _env_trace_dir()
        return mode, str(trace_dir), _Config.codegen_output


# ----------------------------------------------------------------------------------------------- helpers
def _get_pass_display_name(pass_obj: Any) -> str:
    """A pass object's short name (the part of its PassInfo name after the last dot)."""
    try:
        return str(pass_obj.info.name).rsplit(".", 1)[-1]
    except Exception:
        return type(pass_obj).__name__


def _short_name(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _filename_part(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", str(name))


def _line_changes(before: str, after: str) -> tuple[int, int]:
    """``(added, deleted)`` line counts between two texts."""
    added = deleted = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(),
                                                        autojunk=False).get_opcodes():
        if tag != "equal":
            added += j2 - j1
            deleted += i2 - i1
    return added, deleted


def _module_source(mod: Any) -> str:
    """The source text of a built runtime module (errors propagate)."""
    for attr in ("inspect_source", "get_source"):
        fn = getattr(mod, attr, None)
        if callable(fn):
            return fn() or ""
    return ""


def _make_patched_source_module(original_module: Any, patched_source: str) -> Any:
    """A TVM source module holding `patched_source`, in the format of `original_module`."""
    import tvm.runtime._ffi_api as runtime_api

    try:
        fmt = str(original_module.format)
    except Exception:
        fmt = "c"
    return runtime_api.CSourceModuleCreate(patched_source, fmt, [], None)


def _path_lock(path: str) -> threading.Lock:
    key = os.path.realpath(path)
    with _path_locks_guard:
        return _path_locks.setdefault(key, threading.Lock())


def _say(message: str) -> None:
    print(f"  [lower_trace] {message}")


# ----------------------------------------------------------------------------------------------- session
class LowerTraceSession(PassInstrumentationTool):
    """The trace of one compilation: its records and report files."""

    def __init__(self, *, mode: str | None, trace_dir: str, codegen_output: Any = _UNSET) -> None:
        self.mode = mode
        self.trace_dir = trace_dir
        self.codegen_output = codegen_output
        self.records: list[LowerRecord] = []
        self.section_cache: dict[tuple[str, int], str] = {}
        self.pass_index = 0
        self.pipeline_count = 0
        self.script_dir: str | None = None
        self.run_dir: str | None = None
        self._finished = False
        self._lock = threading.RLock()

    @property
    def enabled(self) -> bool:
        return self.mode is not None

    @property
    def should_print_terminal(self) -> bool:
        return self.mode in ("terminal", "both")

    @property
    def should_generate_html(self) -> bool:
        return self.mode in ("html", "both")

    # ----------------------------------------------------------------------------------------- files
    def ensure_script_dir(self) -> str:
        """``<trace_dir>/<script name>`` (created)."""
        if self.script_dir is None:
            script = os.path.splitext(os.path.basename(sys.argv[0] if sys.argv else ""))[0] or "kernel"
            self.script_dir = os.path.join(self.trace_dir, _filename_part(script))
            os.makedirs(self.script_dir, exist_ok=True)
        return self.script_dir

    def ensure_run_dir(self) -> str:
        """This compilation's own directory under ``.run_records`` (created)."""
        if self.run_dir is None:
            stamp = datetime.now().strftime("%Y%m%d_%H%M%S_%f")
            name = f"run_{stamp}_{os.getpid()}_{uuid4().hex[:8]}"
            self.run_dir = os.path.join(self.ensure_script_dir(), ".run_records", name)
            os.makedirs(self.run_dir, exist_ok=True)
        return self.run_dir

    def get_codegen_output_path(self) -> str | None:
        """Where the generated source is mirrored for editing (None: not mirrored)."""
        if self.codegen_output is not _UNSET:
            return self.codegen_output
        return os.path.join(self.ensure_script_dir(), "codegen.cpp") if self.should_generate_html else None

    # --------------------------------------------------------------------------------------- records
    def allocate_index(self) -> int:
        """The next record number of this compilation."""
        with self._lock:
            n = self.pass_index
            self.pass_index += 1
            return n

    def append_record(self, record: LowerRecord) -> None:
        """Add `record` (records stay in start order) and save its snapshots."""
        with self._lock:
            self.records.append(record)
            self.records.sort(key=lambda r: r.index)
        self.save_raw_files(record)

    def save_raw_files(self, record: LowerRecord) -> None:
        """Write the record's before/after text under the run directory (failures are only reported)."""
        try:
            folder = os.path.join(self.ensure_run_dir(), _filename_part(record.phase))
            os.makedirs(folder, exist_ok=True)
            stem = os.path.join(folder, f"{record.index:02d}_{_filename_part(record.name)}")
            with open(f"{stem}_before.tir", "w", encoding="utf-8") as f:
                f.write(record.before_text)
            suffix = ".cpp" if record.status == STATUS_CODEGEN else ".tir"
            with open(f"{stem}_after{suffix}", "w", encoding="utf-8") as f:
                f.write(record.after_text)
        except Exception as exc:
            _say(f"{_ANSI_RED}WARNING: could not save the trace files: {exc}{_ANSI_RESET}")

    def _link_report(self, report: str) -> None:
        """Point ``<script dir>/report.html`` at `report` (a relative symlink, else a copy), atomically."""
        link = os.path.join(self.ensure_script_dir(), "report.html")
        tmp = f"{link}.tmp.{os.getpid()}.{uuid4().hex}"
        try:
            os.symlink(os.path.relpath(report, os.path.dirname(link)), tmp)
        except OSError:
            shutil.copyfile(report, tmp)
        try:
            os.replace(tmp, link)
        finally:
            with contextlib.suppress(OSError):
                os.remove(tmp)

    def flush_html(self) -> None:
        """Rewrite this run's report (html / both mode, once there is something to show)."""
        if not self.should_generate_html or not self.records or self.run_dir is None:
            return
        from tilelang.tools.lower_trace.html import generate_html

        with self._lock:
            records = list(self.records)
        report = os.path.join(self.run_dir, "report.html")
        generate_html(records, report, section_cache=self.section_cache)
        self._link_report(report)

    def _flush_quietly(self) -> None:
        if self.should_generate_html:
            with contextlib.suppress(Exception):
                self.flush_html()

    # ------------------------------------------------------------------------------------------ tool API
    def create_pass_instrument(self) -> StackedPassInstrument | None:
        if not self.enabled:
            return None
        return StackedPassInstrument(_Observer(self), sequence_allocator=self.allocate_index,
                                     phase_provider=lambda: current_pass_phase() or _UNSCOPED)

    @contextlib.contextmanager
    def pipeline_scope(self, base_phase: str) -> Iterator[None]:
        if not self.enabled:
            yield
            return
        with self._lock:
            self.pipeline_count += 1
            run = self.pipeline_count
        phase = f"run{run}_{base_phase}" if run > 1 else base_phase
        try:
            with pass_phase(phase):
                yield
        except Exception as exc:
            self._abort_instruments(exc)
            _say(f"EXCEPTION in {phase}: {exc}")
            raise
        finally:
            self._flush_quietly()
        _say(f"pipeline {run} ({phase}) complete: {len(self.records)} total records")

    def _abort_instruments(self, error: BaseException) -> None:
        """Close this session's still-open passes as failed (the pipeline raised)."""
        for inst in reversed(active_stacked_pass_instruments()):
            observer = getattr(inst, "observer", None)
            if isinstance(observer, _Observer) and observer.session is self and inst.pending_events:
                inst.abort(error)

    def run_codegen(self, event: CodegenEvent, next_call: Callable[[], Any]) -> Any:
        if not self.enabled:
            return next_call()
        if self.should_generate_html:
            self.ensure_run_dir()
        before = str(event.mod)
        out_path = self.get_codegen_output_path()
        try:
            with pass_phase("codegen"):
                result = next_call()
        except Exception as exc:
            self._abort_instruments(exc)
            index = self.allocate_index()
            self.append_record(LowerRecord("codegen", "codegen", index, before, "", False, status=STATUS_FAILED,
                                           error_msg=str(exc)))
            _say(f"codegen/{index:02d}_codegen: FAILED ({exc})")
            self._flush_quietly()
            raise
        # numbered after the call: passes the code generator ran itself come first
        index = self.allocate_index()
        generated = after = ""
        patched: str | None = None
        try:
            generated = _module_source(result)
            if out_path:
                patched = self._sync_codegen_file(generated, out_path, index)
            after = generated if patched is None else patched
            added, deleted = _line_changes(before, after)
            self.append_record(LowerRecord("codegen", "codegen", index, before, after, True, added, deleted,
                                           status=STATUS_CODEGEN))
            where = f"  ->  {_ANSI_BLUE}{out_path}{_ANSI_RESET}" if out_path else ""
            _say(f"codegen/{index:02d}_codegen: CODEGEN (+{added}/-{deleted}){where}")
            self._flush_quietly()
        except Exception as exc:
            _say(f"{_ANSI_RED}WARNING: tracing the generated code failed: {exc}{_ANSI_RESET}")
        if self.should_print_terminal:
            print_diff(before, after, "codegen (TIR before)", "codegen (source after)")
        if patched is None:
            return result
        if event.name in _SOURCE_ONLY_CODEGEN_FFIS:
            return _make_patched_source_module(result, patched)
        if patched.rstrip() != generated.rstrip():
            kind = str(getattr(getattr(event.target, "kind", None), "name", ""))
            hint = {"cuda": " Use execution_backend='nvrtc' to compile edited CUDA source.",
                    "hip": " Use execution_backend='cython' to compile edited HIP source."}.get(kind, "")
            _say(f"{_ANSI_YELLOW}codegen/{index:02d}_codegen: NOTE: the edits in {out_path} are shown in the trace "
                 f"but were NOT recompiled: this code generator already built a binary from the IR.{hint}"
                 f"{_ANSI_RESET}")
        return result

    def _sync_codegen_file(self, generated: str, path: str, index: int) -> str | None:
        """Reconcile `path` (the user's copy) with the new `generated` source; the edited text to use, or None."""
        with _path_lock(path):
            return self._sync_codegen_file_locked(generated, path, index)

    def _sync_codegen_file_locked(self, generated: str, path: str, index: int) -> str | None:
        baseline_path = path + ".original"
        tag = f"codegen/{index:02d}_codegen"

        def write(p: str, text: str) -> None:
            with open(p, "w", encoding="utf-8") as f:
                f.write(text)

        def read(p: str) -> str:
            with open(p, encoding="utf-8") as f:
                return f.read()

        try:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            write(path + ".latest", generated)
            if not (os.path.isfile(path) and os.path.isfile(baseline_path)):
                if os.path.isfile(path):
                    shutil.copyfile(path, path + ".bak")
                    _say(f"{tag}: {path} had no baseline; kept a copy as {_ANSI_BOLD}{path}.bak{_ANSI_RESET}")
                write(baseline_path, generated)
                write(path, generated)
                _say(f"codegen source written to {_ANSI_GREEN}{path}{_ANSI_RESET} (edit it and compile again)")
                return None
            baseline, working = read(baseline_path), read(path)
            edited = working.rstrip() != baseline.rstrip()
            regenerated = generated.rstrip() != baseline.rstrip()
            if not edited:
                if regenerated:
                    write(baseline_path, generated)
                    write(path, generated)
                    _say(f"{_ANSI_CYAN}{tag}: REGENERATED (new generated source, no user edits){_ANSI_RESET}")
                return None
            if not regenerated:
                _say(f"{_ANSI_BOLD}{_ANSI_GREEN}{tag}: PATCHED (using the user's edits){_ANSI_RESET}")
                return working
            if working.rstrip() == generated.rstrip():
                write(baseline_path, generated)
                _say(f"{_ANSI_GREEN}{tag}: SYNCED (the edits equal the new generated source){_ANSI_RESET}")
                return working
            shutil.copyfile(path, path + ".bak")
            shutil.copyfile(baseline_path, baseline_path + ".bak")
            write(baseline_path, generated)
            write(path, generated)
            _say(f"{_ANSI_BOLD}{_ANSI_YELLOW}{tag}: CONFLICT (regenerated; the user's copy is in {path}.bak)"
                 f"{_ANSI_RESET}")
        except Exception as exc:
            _say(f"{_ANSI_RED}WARNING: codegen file I/O failed: {exc}{_ANSI_RESET}")
        return None

    def finish(self, error: BaseException | None) -> None:
        if self._finished:
            return
        self._finished = True
        self._flush_quietly()
        if self.should_generate_html and self.records and self.script_dir is not None:
            _say(f"report: {_ANSI_BLUE}{os.path.join(self.script_dir, 'report.html')}{_ANSI_RESET}")

    def reset(self) -> None:
        """Forget every record (the files already written stay)."""
        with self._lock:
            self.records.clear()
            self.section_cache.clear()
            self.pass_index = 0
            self.pipeline_count = 0


class _Observer(PassEventObserver):
    """Turns one session's pass events into `LowerRecord`s."""

    def __init__(self, session: LowerTraceSession) -> None:
        self.session = session

    def pass_started(self, mod: Any, event: PassEvent) -> str:
        if self.session.should_generate_html:
            self.session.ensure_run_dir()
        return str(mod)

    def pass_finished(self, mod: Any, event: PassEvent, before: str) -> None:
        s = self.session
        after = str(mod)
        changed = after != before
        added, deleted = _line_changes(before, after) if changed else (0, 0)
        phase, name = event.phase or _UNSCOPED, _short_name(event.name)
        s.append_record(LowerRecord(phase, name, event.sequence, before, after, changed, added, deleted,
                                    depth=event.depth, parent_index=event.parent_sequence))
        mark = f"{_ANSI_GREEN}CHANGED" if changed else f"{_ANSI_DIM}NO-OP"
        _say(f"{phase}/{event.sequence:02d}_{name}: {mark}{_ANSI_RESET}")
        s._flush_quietly()
        if s.should_print_terminal and changed:
            print_diff(before, after, f"{phase}/{name} (before)", f"{phase}/{name} (after)")

    def passes_incomplete(self, passes: Any, error: BaseException | None) -> None:
        s = self.session
        message = str(error) if error is not None else "the pass did not complete"
        for item in passes:
            if not isinstance(item, IncompletePass) or item.event is None:
                continue
            ev = item.event
            phase, name = ev.phase or _UNSCOPED, _short_name(ev.name)
            s.append_record(LowerRecord(phase, name, ev.sequence, "" if item.state is None else str(item.state), "",
                                        False, status=STATUS_FAILED, error_msg=message, depth=ev.depth,
                                        parent_index=ev.parent_sequence))
            _say(f"{_ANSI_RED}{phase}/{ev.sequence:02d}_{name}: FAILED ({message}){_ANSI_RESET}")
        s._flush_quietly()

    def callback_mismatch(self, actual: str, expected: str | None) -> None:
        _say(f"{_ANSI_RED}WARNING: after-pass callback for {actual!r} while {expected!r} was open{_ANSI_RESET}")


# ---------------------------------------------------------------------------------------------- module API
def _new_session(mode: str | None, trace_dir: str, codegen_output: Any) -> LowerTraceSession:
    session = LowerTraceSession(mode=mode, trace_dir=trace_dir, codegen_output=codegen_output)
    _last_session.set(session)
    return session


def session_from_environment() -> LowerTraceSession | None:
    """A session configured by ``TL_LOWER_TRACE`` when it is set and `enable()` has not registered the tool."""
    mode, trace_dir, codegen_output = _snapshot()
    if mode is None:
        return None
    return _new_session(mode, trace_dir, codegen_output)


def get_last_session() -> LowerTraceSession | None:
    """The session created last in this execution context (None after `disable`)."""
    return _last_session.get()


def current_lower_trace_session() -> LowerTraceSession | None:
    """The lower-trace session of the active compile session, if any."""
    compile_session = current_compile_pass_instrumentation()
    return None if compile_session is None else compile_session.find_tool(LowerTraceSession)


def create_pass_instrument() -> StackedPassInstrument:
    """An instrument recording into the active compilation's session (a new standalone session otherwise)."""
    session = current_lower_trace_session() or _new_session(*_snapshot())
    instrument = session.create_pass_instrument()
    if instrument is None:  # tracing off: an instrument that captures nothing
        instrument = StackedPassInstrument(_Observer(session), capture_predicate=lambda _n, _d: False,
                                           sequence_allocator=session.allocate_index)
    return instrument


def is_registered() -> bool:
    """Whether `enable()` registered the lower-trace tool for future compile sessions."""
    from tilelang.instrumentation.session import _factories, _registry_lock

    with _registry_lock:
        return _TOOL_NAME in _factories


def enable(*, mode: Any = _UNSET, trace_dir: Any = _UNSET, codegen_output: Any = _UNSET) -> None:
    """Trace every later compilation: `mode` ``"terminal"`` / ``"html"`` / ``"both"`` (falsy: off).

    Unset arguments keep the previous `enable` value or the environment (``TL_LOWER_TRACE``,
    ``TL_LOWER_TRACE_DIR``); ``codegen_output=None`` turns off the editable source copy.
    """
    if mode is not _UNSET:
        parsed = _parse_lower_trace_mode(None if mode is None else str(mode))
        if parsed is None:
            disable()
            with _Config.lock:
                _Config.mode = None
            return
    with _Config.lock:
        if mode is not _UNSET:
            _Config.mode = parsed
        if trace_dir is not _UNSET:
            _Config.trace_dir = None if trace_dir is None else str(trace_dir)
        if codegen_output is not _UNSET:
            _Config.codegen_output = None if codegen_output is None else str(codegen_output)
        config = _snapshot()
        register_pass_instrumentation_tool(_TOOL_NAME, lambda: _new_session(*config))
    print(f"[lower_trace] tracing every compilation ({config[0]} mode, files under {config[1]})")


def disable() -> None:
    """Stop tracing later compilations and forget `enable`'s settings."""
    with _Config.lock:
        unregister_pass_instrumentation_tool(_TOOL_NAME)
        _Config.mode = _Config.trace_dir = _Config.codegen_output = _UNSET
    _last_session.set(None)


def reset() -> None:
    """Forget the records of the active compilation's session."""
    session = current_lower_trace_session()
    if session is not None:
        session.reset()
