"""``TILELANG_PASS_DIFF``: diff the IR around every pass the process runs, without code changes.

::

    TILELANG_PASS_DIFF=terminal python kernel.py   # (or 1 / true / on) coloured diffs on stdout
    TILELANG_PASS_DIFF=html python kernel.py       # report in TILELANG_PASS_DIFF_OUTPUT (tmp/pass_diff_output)
    TILELANG_PASS_DIFF=both python kernel.py

`install_pass_diff_hook` wraps ``tvm.transform.Pass.__call__`` (so passes called from Python are seen, nested
C++ calls are not); TileLang installs it on the first compilation when the variable is set. The HTML report
is rewritten after every pass, so a crash leaves the passes up to it. `uninstall_pass_diff_hook` restores
TVM's method.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any

__all__ = ["install_pass_diff_hook", "uninstall_pass_diff_hook"]

_original_call: Any = None
_pass_counter = 0
_html_steps: list[dict] = []
_html_path: str | None = None
_mode: str | None = None
_atexit_registered = False
_lock = threading.RLock()
_local = threading.local()


def _pass_name(p: Any) -> str:
    try:
        name = p.info.name
        if name:
            return str(name)
    except Exception:
        pass
    return type(p).__name__


def _script(mod: Any) -> str:
    try:
        return mod.script()
    except Exception as exc:
        return f"<could not print the module: {exc}>"


def _diffing_call(self: Any, mod: Any, *args: Any, **kwargs: Any) -> Any:
    """``Pass.__call__`` with the module's script diffed around it."""
    original = _original_call
    if original is None or getattr(_local, "busy", False):  # printing a module must not recurse into this
        return (original or type(self).__call__)(self, mod, *args, **kwargs)
    from tilelang.utils import pass_diff as pd

    global _pass_counter
    with _lock:
        _pass_counter += 1
        n = _pass_counter
    name = _pass_name(self)
    _local.busy = True
    try:
        before = _script(mod)
    finally:
        _local.busy = False
    result = original(self, mod, *args, **kwargs)
    _local.busy = True
    try:
        after = _script(result)
    finally:
        _local.busy = False
    diff_lines = pd._compute_diff(before.splitlines(), after.splitlines(), context=3)
    ins, dels = pd._count_changes(diff_lines)
    mode = _mode or "terminal"
    if mode in ("terminal", "both"):
        pd._print_step_header(n, "\u221e", name)
        pd._print_colored_diff(diff_lines)
        summary = f"+{ins} insertion(s), -{dels} deletion(s)" if ins or dels else "(no changes)"
        print(f"\n  {pd._DIM}>>> {summary}{pd._RESET}")
    if mode in ("html", "both") and _html_path is not None:
        with _lock:
            _html_steps.append({"name": f"Pass {n}: {name}", "before_script": before, "after_script": after,
                                "diff_lines": diff_lines, "insertions": ins, "deletions": dels,
                                "changed": bool(ins or dels)})
            try:
                pd._generate_html(_html_steps, _html_path)
            except Exception as exc:
                logging.getLogger("tilelang.pass_diff").warning("could not write the HTML report: %s", exc)
    return result


def _flush_at_exit() -> None:
    if _html_path and _html_steps:
        from tilelang.utils.pass_diff import _generate_html

        try:
            _generate_html(_html_steps, _html_path)
            print(f"\n[pass_diff] HTML report: {_html_path}")
        except Exception as exc:
            logging.getLogger("tilelang.pass_diff").warning("could not write the HTML report: %s", exc)


def install_pass_diff_hook() -> None:
    """Start diffing every pass when ``TILELANG_PASS_DIFF`` asks for it (no-op otherwise, or when installed)."""
    global _original_call, _html_path, _mode, _atexit_registered
    from tilelang.env import env

    mode = env.get_pass_diff_mode()
    if mode is None:
        return
    with _lock:
        if _original_call is not None:
            return
        from tvm.ir.transform import Pass

        _mode = mode
        if mode in ("html", "both"):
            folder = str(env.TILELANG_PASS_DIFF_OUTPUT)
            os.makedirs(folder, exist_ok=True)
            _html_path = os.path.join(folder, f"pass_diff_{time.strftime('%Y%m%d_%H%M%S')}_{os.getpid()}.html")
        _original_call = Pass.__call__
        Pass.__call__ = _diffing_call
        if not _atexit_registered:
            import atexit

            atexit.register(_flush_at_exit)
            _atexit_registered = True


def uninstall_pass_diff_hook() -> None:
    """Restore TVM's ``Pass.__call__`` and forget the collected steps (no-op when not installed)."""
    global _original_call, _pass_counter, _html_path, _mode
    with _lock:
        if _original_call is None:
            return
        from tvm.ir.transform import Pass

        Pass.__call__ = _original_call
        _original_call = None
        _html_steps.clear()
        _pass_counter = 0
        _html_path = None
        _mode = None
