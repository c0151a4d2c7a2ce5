"""Text diffs for the lower trace: unified diffs (optionally ANSI-coloured) and side-by-side HTML tables.

The HTML table pairs changed lines so that both line-number columns only ever grow: inside a changed block the
lines whose stripped text is equal are matched first (a longest common subsequence, hence monotone) and the
lines between two matches are paired by position. Pairs whose only difference is whitespace are marked ``ws``.
Unchanged runs longer than twice the context are folded behind an "Expand" row.
"""

from __future__ import annotations

import difflib
import html

_ANSI_RESET = "\033[0m"
_ANSI_RED = "\033[31m"
_ANSI_GREEN = "\033[32m"
_ANSI_YELLOW = "\033[33m"
_ANSI_BLUE = "\033[34m"
_ANSI_CYAN = "\033[36m"
_ANSI_BOLD = "\033[1m"
_ANSI_DIM = "\033[2m"

NO_DIFFERENCES = '<p class="noop-msg">No differences.</p>'


def _esc(text: str) -> str:
    """HTML-escape `text` (quotes included)."""
    return html.escape(text, quote=True)


def _inline_diff(before: str, after: str) -> tuple[str, str, bool]:
    """Character-level highlight of two paired lines: ``(left_html, right_html, whitespace_only)``."""
    left: list[str] = []
    right: list[str] = []
    ws_only = True
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        a, b = before[i1:i2], after[j1:j2]
        if tag == "equal":
            left.append(_esc(a))
            right.append(_esc(b))
            continue
        if a.strip() or b.strip():
            ws_only = False
        if a:
            left.append(f'<span class="del-word">{_esc(a)}</span>')
        if b:
            right.append(f'<span class="add-word">{_esc(b)}</span>')
    return "".join(left), "".join(right), ws_only


def _pair_block(lo: int, hi: int, ro: int, rhi: int, before: list[str], after: list[str]) -> list[tuple]:
    """Rows ``(left index | None, right index | None, matched)`` for the changed block ``[lo,hi) x [ro,rhi)``."""
    left_keys = [before[i].strip() for i in range(lo, hi)]
    right_keys = [after[j].strip() for j in range(ro, rhi)]
    anchors = []
    for tag, a1, a2, b1, _ in difflib.SequenceMatcher(None, left_keys, right_keys, autojunk=False).get_opcodes():
        if tag == "equal":
            anchors.extend((lo + a1 + k, ro + b1 + k) for k in range(a2 - a1))
    rows: list[tuple] = []
    li, ri = lo, ro
    for la, ra in [*anchors, (hi, rhi)]:
        gap_l, gap_r = list(range(li, la)), list(range(ri, ra))
        for k in range(max(len(gap_l), len(gap_r))):
            rows.append((gap_l[k] if k < len(gap_l) else None, gap_r[k] if k < len(gap_r) else None, False))
        if la < hi:
            rows.append((la, ra, True))
        li, ri = la + 1, ra + 1
    return rows


def _ln(side: str, idx: int | None, kind: str) -> str:
    if idx is None:
        return '<td class="ln"></td>'
    return f'<td class="ln ln-{kind}" data-side="{side}" data-idx="{idx}">{idx + 1}</td>'


def _row(left: int | None, right: int | None, before: list[str], after: list[str], matched: bool) -> str:
    """One changed row of the side-by-side table."""
    if left is not None and right is not None:
        lhtml, rhtml, ws = _inline_diff(before[left], after[right])
        if ws and matched:
            return (f'<tr>{_ln("l", left, "ws")}<td class="sg sg-ws">~</td><td class="ws">{lhtml}</td>'
                    f'{_ln("r", right, "ws")}<td class="sg sg-ws">~</td><td class="ws">{rhtml}</td></tr>')
        return (f'<tr>{_ln("l", left, "del")}<td class="sg sg-del">\u2212</td><td class="del">{lhtml}</td>'
                f'{_ln("r", right, "add")}<td class="sg sg-add">+</td><td class="add">{rhtml}</td></tr>')
    if left is not None:
        return (f'<tr>{_ln("l", left, "del")}<td class="sg sg-del">\u2212</td><td class="del">{_esc(before[left])}</td>'
                '<td class="ln"></td><td class="sg"></td><td></td></tr>')
    return ('<tr><td class="ln"></td><td class="sg"></td><td></td>'
            f'{_ln("r", right, "add")}<td class="sg sg-add">+</td><td class="add">{_esc(after[right])}</td></tr>')


def _make_diff_html(before_text: str, after_text: str, context: int = 3) -> str:
    """A side-by-side HTML diff table of two texts (see the module docstring)."""
    before, after = before_text.splitlines(), after_text.splitlines()
    opcodes = difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes()
    same_lines = all(tag == "equal" for tag, *_ in opcodes)
    nl_before, nl_after = before_text.endswith("\n"), after_text.endswith("\n")
    if same_lines:
        if nl_before == nl_after:
            return NO_DIFFERENCES
        state = {True: "present", False: "absent"}
        return (f'<p class="noop-msg">Only the trailing newline differs (before: {state[nl_before]}, '
                f'after: {state[nl_after]}).</p>')

    rows: list[str] = []
    folds = 0
    for tag, i1, i2, j1, j2 in opcodes:
        if tag != "equal":
            for left, right, matched in _pair_block(i1, i2, j1, j2, before, after):
                rows.append(_row(left, right, before, after, matched))
            continue
        n = i2 - i1
        head = context if i1 > 0 else 0  # context after the previous change
        tail = context if i2 < len(before) else 0  # context before the next change
        hidden = range(head, n - tail) if n > head + tail else range(0)
        for k in range(n):
            i, j = i1 + k, j1 + k
            attr = f' class="row-hidden" data-collapse="1" data-run="{folds}"' if k in hidden else ""
            rows.append(f'<tr{attr}>{_ln("l", i, "eq")}<td class="sg"></td><td class="eq">{_esc(before[i])}</td>'
                        f'{_ln("r", j, "eq")}<td class="sg"></td><td class="eq">{_esc(after[j])}</td></tr>')
            if hidden and k == hidden[-1]:
                rows.append(f'<tr class="btn-row"><td colspan="6" data-run="{folds}" onclick="expand(this,20,event)">'
                            f'<span class="exp-arrow">\u2191\u2193</span><span class="exp-label">Expand '
                            f'{len(hidden)} lines</span></td></tr>')
                folds += 1
    cols = '<col style="width:50px"><col style="width:20px"><col>' * 2
    return f'<div class="diff-table-wrap"><table><colgroup>{cols}</colgroup>' + "\n".join(rows) + "</table></div>"


def unified_diff(before_text: str, after_text: str, before_label: str = "before", after_label: str = "after",
                 context: int = 3, color: bool = True) -> str:
    """A unified diff of two texts ("" when equal), ANSI-coloured when `color`."""
    lines = list(difflib.unified_diff(before_text.splitlines(keepends=True), after_text.splitlines(keepends=True),
                                      fromfile=before_label, tofile=after_label, n=context))
    if not color:
        return "".join(lines)
    out = []
    for line in lines:
        if line.startswith(("---", "+++")):
            style = _ANSI_BOLD
        elif line.startswith("@@"):
            style = _ANSI_CYAN
        elif line.startswith("-"):
            style = _ANSI_RED
        elif line.startswith("+"):
            style = _ANSI_GREEN
        else:
            out.append(line)
            continue
        body = line.rstrip("\n")
        out.append(f"{style}{body}{_ANSI_RESET}" + line[len(body):])
    return "".join(out)


def print_diff(before_text: str, after_text: str, before_label: str = "before", after_label: str = "after",
               context: int = 3, color: bool = True) -> bool:
    """Print the unified diff of two texts; True when they differ."""
    text = unified_diff(before_text, after_text, before_label, after_label, context, color)
    if text:
        print(text, end="" if text.endswith("\n") else "\n")
    return bool(text)


def _count_changes(diff_lines: list[str]) -> tuple[int, int]:
    """``(insertions, deletions)`` of a unified diff given as lines (file headers not counted)."""
    ins = sum(1 for d in diff_lines if d.startswith("+") and not d.startswith("+++"))
    dels = sum(1 for d in diff_lines if d.startswith("-") and not d.startswith("---"))
    return ins, dels
