"""Pass diff: the TVMScript of a module before and after each pass of a chain, as unified diffs.

::

    from tilelang.utils.pass_diff import pass_diff

    pass_diff(func, tilelang.transform.ThreadSync("shared"))              # coloured diff on stdout
    pass_diff(func, [("Split", tvm.tirx.transform.SplitHostDevice()), ("Sync", sync)], mode="both",
              html_path="diff.html")                                      # and an HTML report

Every pass of every compilation can be diffed without code changes with ``TILELANG_PASS_DIFF`` (see
`tilelang.utils.pass_diff_hook`). The HTML report shows each changed pass as side-by-side hunks with the
unchanged lines around them folded into "Show N lines above / below" blocks.
"""

from __future__ import annotations

import difflib
import html
import os
import re
import time
from typing import Any

__all__ = ["pass_diff"]

_RED = "\033[91m"
_GREEN = "\033[92m"
_CYAN = "\033[96m"
_BOLD = "\033[1m"
_DIM = "\033[2m"
_RESET = "\033[0m"

_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_MAX_EXPAND = 20


# ---------------------------------------------------------------------------------------------- diffing
def _to_mod(func_or_mod: Any) -> Any:
    import tvm

    return func_or_mod if isinstance(func_or_mod, tvm.IRModule) else tvm.IRModule({"main": func_or_mod})


def _get_script(mod: Any) -> str:
    return mod.script()


def _compute_diff(before_lines: list[str], after_lines: list[str], context: int, before_label: str = "before",
                  after_label: str = "after") -> list[str]:
    """The unified diff of two line lists (no line terminators); ``[]`` when they are equal."""
    return list(difflib.unified_diff(before_lines, after_lines, fromfile=before_label, tofile=after_label,
                                     lineterm="", n=context))


def _count_changes(diff_lines: list[str]) -> tuple[int, int]:
    """``(insertions, deletions)`` of a unified diff (the ``---`` / ``+++`` headers are not changes)."""
    ins = sum(1 for d in diff_lines if d.startswith("+") and not d.startswith("+++"))
    dels = sum(1 for d in diff_lines if d.startswith("-") and not d.startswith("---"))
    return ins, dels


def _pass_name(p: Any) -> str:
    try:
        return str(p.info.name)
    except Exception:
        return type(p).__name__


# --------------------------------------------------------------------------------------------- terminal
def _print_colored_diff(diff_lines: list[str]) -> None:
    """Print a unified diff with ANSI colours."""
    if not diff_lines:
        print(f"  {_DIM}(no changes){_RESET}")
        return
    for line in diff_lines:
        if line.startswith(("+++", "---")):
            print(f"{_BOLD}{line}{_RESET}")
        elif line.startswith("@@"):
            print(f"{_CYAN}{line}{_RESET}")
        elif line.startswith("+"):
            print(f"{_GREEN}{line}{_RESET}")
        elif line.startswith("-"):
            print(f"{_RED}{line}{_RESET}")
        else:
            print(line)


def _print_step_header(step_idx: int, total: int | str, name: str) -> None:
    rule = "=" * 60
    print(f"\n{_BOLD}{rule}{_RESET}\n{_BOLD}  Pass {step_idx}/{total}: {name}{_RESET}\n{_BOLD}{rule}{_RESET}")


# ------------------------------------------------------------------------------------------------- HTML
def _row(kind: str, left: str = "", right: str = "", left_num: int | None = None,
         right_num: int | None = None) -> dict[str, Any]:
    return {"type": kind, "left": left, "right": right, "left_num": left_num, "right_num": right_num}


def _hunk_ranges(diff_lines: list[str]) -> list[tuple[int, int, int, int]]:
    """``(left start, left end, right start, right end)`` (0-based, end exclusive) of each hunk."""
    out = []
    for line in diff_lines:
        m = _HUNK.match(line)
        if m:
            a, b, c, d = (int(g) if g is not None else 1 for g in m.groups())
            left0 = a - 1 if b else a  # an empty range names the line before it
            right0 = c - 1 if d else c
            out.append((left0, left0 + b, right0, right0 + d))
    return out


def _parse_diff_into_rows(diff_lines: list[str], before_lines: list[str] | None = None,
                          after_lines: list[str] | None = None,
                          max_expand: int = _MAX_EXPAND) -> tuple[list[dict], list[dict]]:
    """Rows of a side-by-side view of a unified diff, and the folded context around each hunk.

    Rows have ``type`` ``hunk`` / ``ctx`` / ``pair`` (a deleted line next to the added one replacing it) /
    ``del`` / ``add``. With the full texts, the second list holds up to `max_expand` unchanged lines above
    each hunk (``position="before"``) and below the last one (``"after"``).
    """
    rows: list[dict] = []
    dels: list[str] = []
    adds: list[str] = []
    left = right = 0

    def flush() -> None:
        nonlocal left, right
        for k in range(max(len(dels), len(adds))):
            if k < len(dels) and k < len(adds):
                left, right = left + 1, right + 1
                rows.append(_row("pair", dels[k], adds[k], left, right))
            elif k < len(dels):
                left += 1
                rows.append(_row("del", dels[k], "", left, None))
            else:
                right += 1
                rows.append(_row("add", "", adds[k], None, right))
        dels.clear()
        adds.clear()

    for line in diff_lines:
        if line.startswith(("---", "+++")) and not rows:
            continue
        m = _HUNK.match(line)
        if m:
            flush()
            left, right = int(m.group(1)) - 1, int(m.group(3)) - 1
            if m.group(2) == "0":
                left += 1
            if m.group(4) == "0":
                right += 1
            rows.append(_row("hunk", line))
        elif line.startswith("-"):
            if adds:
                flush()
            dels.append(line[1:])
        elif line.startswith("+"):
            adds.append(line[1:])
        else:
            flush()
            left, right = left + 1, right + 1
            text = line[1:] if line else ""
            rows.append(_row("ctx", text, text, left, right))
    flush()

    if before_lines is None or after_lines is None:
        return rows, []
    ranges = _hunk_ranges(diff_lines)
    sections: list[dict] = []

    def section(position: str, hunk: int, l0: int, l1: int, r0: int, r1: int) -> None:
        n = max(l1 - l0, r1 - r0)
        if n <= 0:
            return
        lines = []
        for k in range(n):
            li, ri = l0 + k, r0 + k
            lines.append({"left": before_lines[li] if li < l1 else "", "right": after_lines[ri] if ri < r1 else "",
                          "left_num": li + 1 if li < l1 else None, "right_num": ri + 1 if ri < r1 else None})
        sections.append({"position": position, "hunk_idx": hunk, "direction": "up" if position == "before" else
                         "down", "count": n, "lines": lines})

    prev_left = prev_right = 0
    for k, (l0, l1, r0, r1) in enumerate(ranges):
        section("before", k, max(prev_left, l0 - max_expand), l0, max(prev_right, r0 - max_expand), r0)
        prev_left, prev_right = l1, r1
    if ranges:
        section("after", len(ranges) - 1, prev_left, min(len(before_lines), prev_left + max_expand), prev_right,
                min(len(after_lines), prev_right + max_expand))
    return rows, sections


def _inline_highlight(old: str, new: str) -> tuple[str, str]:
    """Word-level highlight of a replaced line: ``(old_html, new_html)`` with ``<span class="hl">`` on changes."""
    a, b = re.split(r"(\s+)", old), re.split(r"(\s+)", new)
    out_a: list[str] = []
    out_b: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        x, y = html.escape("".join(a[i1:i2])), html.escape("".join(b[j1:j2]))
        if tag == "equal":
            out_a.append(x)
            out_b.append(y)
        else:
            out_a.append(f'<span class="hl">{x}</span>' if x else "")
            out_b.append(f'<span class="hl">{y}</span>' if y else "")
    return "".join(out_a), "".join(out_b)


_COLGROUP = ('<colgroup><col class="col-ln" style="width:48px"><col class="col-code">'
             '<col class="col-gutter" style="width:6px"><col class="col-ln" style="width:48px">'
             '<col class="col-code"></colgroup>')


def _cells(left_num: Any, left: str, right_num: Any, right: str, lcls: str = "", rcls: str = "") -> str:
    ln = "" if left_num is None else left_num
    rn = "" if right_num is None else right_num
    return (f'<td class="ln">{ln}</td><td class="code {lcls}">{left}</td><td class="gutter"></td>'
            f'<td class="ln">{rn}</td><td class="code {rcls}">{right}</td>')


def _rows_to_html_table(rows: list[dict]) -> str:
    """One ``<table class="diff-table">`` of side-by-side rows."""
    out = []
    for r in rows:
        kind = r["type"]
        if kind == "hunk":
            out.append(f'<tr class="hunk"><td colspan="5">{html.escape(r["left"])}</td></tr>')
        elif kind == "pair":
            old, new = _inline_highlight(r["left"], r["right"])
            out.append(f'<tr class="pair">{_cells(r["left_num"], old, r["right_num"], new, "del-code", "add-code")}'
                       "</tr>")
        elif kind == "del":
            out.append(f'<tr class="del">{_cells(r["left_num"], html.escape(r["left"]), None, "&nbsp;")}</tr>')
        elif kind == "add":
            out.append(f'<tr class="add">{_cells(None, "&nbsp;", r["right_num"], html.escape(r["right"]))}</tr>')
        else:
            cells = _cells(r["left_num"], html.escape(r["left"]), r["right_num"], html.escape(r["right"]))
            out.append(f'<tr class="ctx">{cells}</tr>')
    return f'<table class="diff-table">{_COLGROUP}{"".join(out)}</table>'


def _split_rows_by_hunk(visible_rows: list[dict]) -> list[list[dict]]:
    """The rows grouped per hunk, each group starting with its ``@@`` row (rows before the first are dropped)."""
    hunks: list[list[dict]] = []
    for row in visible_rows:
        if row["type"] == "hunk":
            hunks.append([row])
        elif hunks:
            hunks[-1].append(row)
    return hunks


def _render_expand_details(expand_sections: list[dict]) -> dict[int, tuple[str, str]]:
    """``{hunk index: (html above the hunk, html below it)}``: folded context as ``<details>`` blocks."""
    out: dict[int, tuple[str, str]] = {}
    for sec in expand_sections:
        where = "above" if sec["direction"] == "up" else "below"
        rows = "".join(
            '<tr class="ctx">' + _cells(ln["left_num"], html.escape(ln["left"]), ln["right_num"],
                                        html.escape(ln["right"])) + "</tr>" for ln in sec["lines"])
        block = (f'<details class="expand-details"><summary class="expand-summary" data-count="{sec["count"]}" '
                 f'data-pos="{where}">\u22ef Show {sec["count"]} lines {where}</summary>'
                 f'<table class="diff-table">{_COLGROUP}{rows}</table></details>')
        above, below = out.get(sec["hunk_idx"], ("", ""))
        out[sec["hunk_idx"]] = (above + block, below) if sec["position"] == "before" else (above, below + block)
    return out


_EXTRA_CSS = """
.diff-table td.code { white-space: pre-wrap; }
.diff-table col.col-gutter { background: var(--border); }
.pass-badge { margin-left: auto; }
"""


def _step_html(idx: int, step: dict) -> str:
    changed = bool(step["changed"])
    before_id, after_id = f"before_{idx}", f"after_{idx}"
    if changed:
        rows, sections = _parse_diff_into_rows(step["diff_lines"], step["before_script"].splitlines(),
                                               step["after_script"].splitlines())
        folds = _render_expand_details(sections)
        blocks = []
        for k, hunk in enumerate(_split_rows_by_hunk(rows)):
            above, below = folds.get(k, ("", ""))
            blocks.append(above + _rows_to_html_table(hunk) + below)
        body = (f'<div id="{before_id}" style="display:none">{html.escape(step["before_script"])}</div>'
                f'<div id="{after_id}" style="display:none">{html.escape(step["after_script"])}</div>'
                f'<div class="panel-bar">Before <button class="copy-btn" data-copy-target="{before_id}">Copy</button>'
                f' After <button class="copy-btn" data-copy-target="{after_id}">Copy</button></div>'
                + "".join(blocks))
        badge = f'<span class="pass-badge changed">+{step["insertions"]} / \u2212{step["deletions"]}</span>'
    else:
        body = (f'<div class="panel-bar">IR (unchanged) <button class="copy-btn" data-copy-target="{before_id}">Copy'
                f'</button></div><pre id="{before_id}">{html.escape(step["before_script"])}</pre>')
        badge = '<span class="pass-badge unchanged">unchanged</span>'
    return (f'<div class="pass-section{" open" if changed else ""}"><div class="pass-header">'
            f'<span class="pass-chevron">\u25b6</span><span class="pass-name">{html.escape(str(step["name"]))}</span>'
            f'{badge}</div><div class="pass-body">{body}</div></div>')


def _generate_html(steps: list[dict], path: str) -> str:
    """Write the HTML report of `steps` (dicts as returned by `pass_diff`) to `path`; returns `path`."""
    from tilelang.tools._report import page

    changed = sum(1 for s in steps if s["changed"])
    stats = (f"{len(steps)} passes, {changed} changed, +{sum(s['insertions'] for s in steps)} "
             f"\u2212{sum(s['deletions'] for s in steps)} lines \u00b7 {time.strftime('%Y-%m-%d %H:%M:%S')}")
    toolbar = '<button onclick="setAll(true)">Expand All</button> <button onclick="setAll(false)">Collapse All</button>'
    document = page("TileLang Pass Diff Report", "\n".join(_step_html(i, s) for i, s in enumerate(steps)),
                    storage_key="pass-diff-theme", toolbar=toolbar, stats=stats, extra_css=_EXTRA_CSS)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(document)
    return path


# ----------------------------------------------------------------------------------------------- public
def pass_diff(func_or_mod: Any, passes: Any, *, mode: str = "terminal", context: int = 3,
              html_path: str = "pass_diff_report.html") -> list[dict]:
    """Run `passes` in order on `func_or_mod` (a PrimFunc or IRModule) and diff the script around each.

    `passes`: a pass, a list of passes, or a list of ``(name, pass)`` pairs (unnamed passes take their PassInfo
    name). `mode`: ``"terminal"`` (coloured diff on stdout), ``"html"`` (report at `html_path`) or ``"both"``;
    `context`: unchanged lines shown around each change. Returns one dict per pass: ``name``,
    ``before_script``, ``after_script``, ``diff_lines``, ``insertions``, ``deletions``, ``changed``.
    """
    mode = str(mode).strip().lower()
    if mode not in ("terminal", "html", "both"):
        raise ValueError(f"pass_diff: mode must be 'terminal', 'html' or 'both', got {mode!r}")
    items = passes if isinstance(passes, (list, tuple)) and not (
        isinstance(passes, tuple) and len(passes) == 2 and isinstance(passes[0], str)) else [passes]
    named = []
    for p in items:
        if isinstance(p, (list, tuple)) and len(p) == 2 and isinstance(p[0], str):
            named.append((p[0], p[1]))
        elif callable(p):
            named.append((_pass_name(p), p))
        else:
            raise TypeError(f"pass_diff: expected a pass or a (name, pass) pair, got {p!r}")
    mod = _to_mod(func_or_mod)
    results = []
    for n, (name, p) in enumerate(named, 1):
        before = _get_script(mod)
        mod = p(mod)
        after = _get_script(mod)
        diff_lines = _compute_diff(before.splitlines(), after.splitlines(), context)
        ins, dels = _count_changes(diff_lines)
        results.append({"name": name, "before_script": before, "after_script": after, "diff_lines": diff_lines,
                        "insertions": ins, "deletions": dels, "changed": bool(ins or dels)})
        if mode in ("terminal", "both"):
            _print_step_header(n, len(named), name)
            _print_colored_diff(diff_lines)
            summary = f"+{ins} insertion(s), -{dels} deletion(s)" if ins or dels else "(no changes)"
            print(f"\n  {_DIM}>>> {summary}{_RESET}")
    if mode in ("html", "both"):
        _generate_html(results, html_path)
        print(f"HTML report written to: {html_path}")
    return results
