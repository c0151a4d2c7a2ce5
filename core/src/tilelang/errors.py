"""Every exception TileLang raises on purpose.

Messages name the user's mistake, list what is available and say the fix. Errors about a kernel carry the
kernel's source location (``file:line``) and the offending expression.
"""

from __future__ import annotations

# Spellings of the first-party backends, used only to phrase install hints: a third-party kind `x` is
# published as `tilelang-x` by convention and needs no entry here.
_DISTRIBUTION_HINTS = {"hip": "tilelang-rocm", "llvm": "tilelang-cpu", "c": "tilelang-cpu", "cutedsl": "tilelang-cuda"}
# names under which `import tilelang.<name>` means a first-party backend (the error then says what to install)
FIRST_PARTY_BACKENDS = frozenset({"cpu", "cuda", "rocm", "hip", "metal", "webgpu", "llvm", "c", "cutedsl"})


def distribution_for(kind: str) -> str:
    """The distribution that conventionally provides target kind or backend `kind`."""
    return _DISTRIBUTION_HINTS.get(kind, f"tilelang-{kind}")


class TileLangError(Exception):
    """Base class of every error TileLang raises on purpose."""


# --------------------------------------------------------------------------- backends and registries
class BackendError(TileLangError):
    """A problem with an installed, missing or misbehaving backend."""


class BackendNotInstalled(BackendError, ModuleNotFoundError):
    """No installed distribution provides the requested target kind or ``tilelang.<backend>`` module."""

    def __init__(self, kind: str, *, installed: list[str] | tuple[str, ...] = (), message: str | None = None):
        self.kind = kind
        self.distribution = distribution_for(kind)
        listed = ", ".join(sorted(installed)) or "none"
        super().__init__(message or (
            f"No installed backend serves target kind {kind!r} (installed target kinds: {listed}). "
            f"Install it with `pip install {self.distribution}`."
        ))


class BackendLoadError(BackendError):
    """A plugin raised while it was imported or registered; the original error is the ``__cause__``."""


class InvalidManifestError(BackendError, ValueError):
    """A plugin's Backend manifest breaks a rule of the plugin contract."""


class DuplicateRegistrationError(BackendError, ValueError):
    """A key was registered twice with different values and without ``override=True``."""


class AmbiguousImplementationError(BackendError):
    """Two registered implementations match the same request with equal priority."""


class NoImplementationError(BackendError, LookupError):
    """No registered implementation matches the request."""


class ExecutionBackendUnavailable(BackendError):
    """The requested execution backend cannot run here (missing device, driver or package)."""


class InvalidExecutionBackend(ExecutionBackendUnavailable, ValueError):
    """No execution backend of the target answers to the requested name; the message lists the names that do."""


class ToolchainMissing(BackendError):
    """A tool the backend needs (nvcc, ld.lld, a wgpu adapter, ...) is not installed; the message says how."""


class TargetError(TileLangError, ValueError):
    """A target specification that cannot be understood or normalised."""


class InvalidTargetError(TargetError, AssertionError):
    """A target the user spelled wrongly (an option string, a dict with bad options). Also an AssertionError, as
    the reference TileLang raises for these."""


# --------------------------------------------------------------------------- kernels
class SourceError(TileLangError):
    """An error in the user's kernel, reported at its ``file:line`` with the offending source line, then the reference's
    ``--> file:line:col`` marker.

    `location` is ``(filename, lineno, col)``; `source_line` the text of that line, when known.
    """

    def __init__(self, message: str, *, location: tuple[str, int, int] | None = None,
                 source_line: str | None = None):
        self.message = message
        self.location = location
        self.source_line = source_line
        super().__init__(self._format())
        self._tilelang_enriched = True  # the source line is in the message already (see `enrich_error`)

    def _format(self) -> str:
        if self.location is None:
            return self.message
        filename, lineno, col = self.location
        text = f"{filename}:{lineno}: {self.message}"
        if self.source_line:
            stripped = self.source_line.rstrip()
            indent = len(stripped) - len(stripped.lstrip())
            text += f"\n    {stripped.lstrip()}"
            if col >= indent:
                text += "\n    " + " " * (col - indent) + "^"
        return text + f"\n  --> {filename}:{lineno}:{col}"  # the reference's location marker (editors link it)


class KernelSyntaxError(SourceError):
    """The kernel uses Python syntax or a DSL construct that TileLang does not accept."""


class KernelTypeError(SourceError, TypeError):
    """Wrong arity, dtype, shape or scope in a DSL call."""


class LoweringError(SourceError):
    """A pass could not lower the kernel for the requested target."""


class KernelArgumentError(TileLangError, ValueError):
    """A compiled kernel was called with arguments that do not match its parameters."""


# --------------------------------------------------------------------------- the reference's helpers
# `--> file:line:col`; the file may hold spaces or a drive letter (C:\\...), so it ends at the last `:line:col`
_MARKER_RE = __import__("re").compile(r"-->\s*(?P<file>.+?):(?P<line>\d+):(?P<col>\d+)\s*$", __import__("re").M)
_LOCATION = _MARKER_RE


def _snippet(filename: str, line: int, col: int) -> str | None:
    import linecache

    text = linecache.getline(filename, line)
    if not text:
        return None
    stripped = text.rstrip("\n")
    return f"{line:5d} | {stripped}\n      | {' ' * max(col - 1, 0)}^"


def enrich_error(exc: BaseException) -> BaseException:
    """Append the source line to an error whose message carries a ``--> file:line:col`` marker (once)."""
    message = str(exc)
    match = _LOCATION.search(message)
    if match is None or getattr(exc, "_tilelang_enriched", False):
        return exc
    snippet = _snippet(match["file"], int(match["line"]), int(match["col"]))
    if snippet is not None:
        exc.args = (f"{message}\n{snippet}", *exc.args[1:])
    try:
        exc._tilelang_enriched = True  # type: ignore[attr-defined]
    except AttributeError:
        pass
    return exc


# --------------------------------------------------------------------------- what the user sees of a kernel error
# modules whose frames are TileLang's own machinery (front end, pipeline, JIT, backends, TVM) or the standard
# library's plumbing between them; an error in a user's kernel is shown without them
_INTERNAL_MODULES = ("tilelang.", "tilelang_", "tvm.", "tvm_ffi.", "contextlib", "functools")
USER_ERRORS = (SourceError, KernelArgumentError)


def _is_internal(frame: object) -> bool:
    name = getattr(frame, "f_globals", {}).get("__name__", "")
    return name in ("tilelang", "tvm", "tvm_ffi") or name.startswith(_INTERNAL_MODULES)


def _user_traceback(tb: object) -> object:
    """`tb` without the frames of TileLang's own modules (a user's helper called from a kernel stays)."""
    import types

    kept = []
    while tb is not None:
        if not _is_internal(tb.tb_frame):  # type: ignore[attr-defined]
            kept.append(tb)
        tb = tb.tb_next  # type: ignore[attr-defined]
    out = None
    for t in reversed(kept):
        out = types.TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out


def for_the_user(exc: BaseException) -> BaseException:
    """`exc`, an error in the user's kernel or in its arguments, as the user should see it: its message first
    (``file:line: what is wrong``, the source line), TileLang's internal frames trimmed from its traceback, and
    the exception it was raised from dropped when the message already says it (as Triton reports front-end errors).
    ``TILELANG_FULL_TRACEBACK=1`` keeps everything (for debugging TileLang itself)."""
    from tilelang.env import env

    if env.keep_full_traceback():
        return exc
    cause = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    if cause is not None and str(cause) and str(cause) in str(exc):
        exc.__cause__, exc.__suppress_context__ = None, True
    elif cause is not None:
        cause.__traceback__ = _user_traceback(cause.__traceback__)
    exc.__traceback__ = _user_traceback(exc.__traceback__)
    return exc


def surface_user_errors(fn):  # type: ignore[no-untyped-def]
    """Decorate an entry point of the user's (``T.prim_func``, ``tilelang.compile``, ``tilelang.lower``): errors in
    the user's kernel leave it through `for_the_user`."""
    import functools

    @functools.wraps(fn)
    def entry_point(*args, **kwargs):  # type: ignore[no-untyped-def]
        try:
            return fn(*args, **kwargs)
        except USER_ERRORS as exc:
            raise for_the_user(exc) from exc.__cause__  # the error is in your kernel: read its message

    return entry_point
