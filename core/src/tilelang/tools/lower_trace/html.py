"""The lower-trace HTML report: one page, a section per traced pass, grouped by phase.

Each section shows the pass's side-by-side diff (`tilelang.tools.lower_trace.diff._make_diff_html`); a failed
pass shows its error and the IR it received; the code generator shows the source it produced. Sections carry
``data-depth`` / ``data-parent-index`` so nested passes (run by another pass) can be indented and filtered.
"""

from __future__ import annotations

import html
import os
import re
import threading
from collections.abc import Sequence

from tilelang.tools._report import page
from tilelang.tools.lower_trace.core import STATUS_CODEGEN, STATUS_FAILED, STATUS_SKIPPED, LowerRecord
from tilelang.tools.lower_trace.diff import _make_diff_html

__all__ = ["generate_html", "render_pass_section"]

_EXTRA_CSS = """
.layout { display: grid; grid-template-columns: 280px 1fr; gap: 14px; }
nav.side { position: sticky; top: 52px; max-height: calc(100vh - 64px); overflow: auto; font-size: 12px;
           border-right: 1px solid var(--border); padding-right: 8px; }
nav.side a { display: block; color: var(--fg); text-decoration: none; padding: 1px 4px; border-radius: 4px;
             white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
nav.side a:hover { background: var(--panel); }
nav.side a.nochange { color: var(--muted); }
nav.side a.failed { color: var(--del-fg); font-weight: 600; }
nav.side h3 { font-size: 12px; margin: 10px 0 2px; color: var(--muted); }
h2.phase { font-size: 14px; margin: 18px 0 6px; }
.pass-index { color: var(--muted); font-family: ui-monospace, monospace; }
.nested-tag { color: var(--muted); font-size: 11px; }
body.hide-noop .pass-section.noop, body.hide-nested .pass-section[data-depth]:not([data-depth="0"]) { display: none; }
"""

_EXTRA_JS = """
function toggleFilter(cls, on) { document.body.classList.toggle(cls, on); }
document.querySelectorAll('nav.side a').forEach(a => a.addEventListener('click', () => {
  const s = document.getElementById(a.getAttribute('href').slice(1));
  if (s) s.classList.add('open');
}));
"""


def _dom_id(text: str) -> str:
    """`text` as an id usable in HTML and CSS selectors."""
    safe = re.sub(r"[^A-Za-z0-9_]", "_", str(text))
    return safe if safe and not safe[0].isdigit() else "_" + safe


def _status(rec: LowerRecord) -> tuple[str, str, str]:
    """``(section class, badge class, badge text)`` of a record."""
    if rec.status == STATUS_FAILED:
        return "failed", "status-failed", "\u2718 FAILED"
    if rec.status == STATUS_CODEGEN:
        return "codegen", "status-codegen", "CODEGEN"
    if rec.status == STATUS_SKIPPED:
        return "noop", "status-noop", "SKIPPED"
    if rec.changed:
        return "changed", "status-changed", "CHANGED"
    return "noop", "status-noop", "NO-OP"


def render_pass_section(rec: LowerRecord) -> str:
    """The HTML section of one record."""
    css, badge, text = _status(rec)
    counts = f"+{rec.add_lines} / \u2212{rec.del_lines}" if rec.changed else ""
    parent = "" if rec.parent_index is None else str(rec.parent_index)
    nested = f'<span class="nested-tag">inside #{parent}</span>' if rec.depth else ""
    if rec.status == STATUS_FAILED:
        body = (f'<div class="error-msg">{html.escape(rec.error_msg or "the pass did not complete")}</div>'
                f'<div class="panel-bar">IR the pass received</div><pre>{html.escape(rec.before_text)}</pre>')
    elif rec.status == STATUS_CODEGEN:
        body = (f'<div class="panel-bar">generated source</div><pre>{html.escape(rec.after_text)}</pre>'
                f'<details class="expand-details"><summary>IR given to the code generator</summary>'
                f'<pre>{html.escape(rec.before_text)}</pre></details>')
    elif rec.changed:
        body = _make_diff_html(rec.before_text, rec.after_text, context=3)
    else:
        body = f'<p class="noop-msg">No differences.</p><pre>{html.escape(rec.after_text)}</pre>'
    is_open = " open" if rec.status == STATUS_FAILED else ""
    return (f'<div class="pass-section {css}{is_open}" id="{_dom_id(f"rec_{rec.phase}_{rec.index}")}" '
            f'data-phase="{html.escape(rec.phase)}" data-index="{rec.index}" data-depth="{rec.depth}" '
            f'data-parent-index="{parent}">'
            f'<div class="pass-header"><span class="pass-chevron">\u25b6</span>'
            f'<span class="pass-index">[{rec.index:02d}]</span><span class="pass-name">{html.escape(rec.name)}</span>'
            f'<span class="status {badge}">{text}</span><span class="stats">{counts}</span>{nested}</div>'
            f'<div class="pass-body">{body}</div></div>')


def generate_html(records: Sequence[LowerRecord], output_path: str,
                  section_cache: dict[tuple[str, int], str] | None = None) -> str:
    """Write the report of `records` to `output_path` and return the path.

    `section_cache` (keyed by ``(phase, index)``) keeps rendered sections between calls, so a report rewritten
    after every pass costs one new diff each time.
    """
    cache = {} if section_cache is None else section_cache
    phases: dict[str, list[LowerRecord]] = {}
    for rec in sorted(records, key=lambda r: r.index):
        phases.setdefault(rec.phase, []).append(rec)

    nav: list[str] = []
    main: list[str] = []
    for phase, recs in phases.items():
        failed = sum(r.status == STATUS_FAILED for r in recs)
        changed = sum(bool(r.changed) for r in recs)
        summary = f"{len(recs)} steps, {changed} changed" + (f", {failed} FAILED" if failed else "")
        nav.append(f"<h3>{html.escape(phase)}</h3>")
        main.append(f'<h2 class="phase" id="{_dom_id("phase_" + phase)}">{html.escape(phase)} '
                    f'<span class="stats">{summary}</span></h2>')
        for rec in recs:
            key = (rec.phase, rec.index)
            section = cache.get(key)
            if section is None:
                section = cache[key] = render_pass_section(rec)
            main.append(section)
            css = "failed" if rec.status == STATUS_FAILED else ("" if rec.changed else "nochange")
            indent = "&nbsp;&nbsp;" * rec.depth
            nav.append(f'<a class="{css}" href="#{_dom_id(f"rec_{rec.phase}_{rec.index}")}">{indent}'
                       f'{rec.index:02d} {html.escape(rec.name)}</a>')

    total_failed = sum(r.status == STATUS_FAILED for r in records)
    stats = (f"{len(records)} steps in {len(phases)} phase(s), {sum(bool(r.changed) for r in records)} changed"
             + (f", {total_failed} FAILED" if total_failed else ""))
    toolbar = ('<button onclick="setAll(true)">Expand All</button> <button onclick="setAll(false)">Collapse All'
               '</button> <label><input type="checkbox" onchange="toggleFilter(\'hide-noop\', this.checked)"> '
               'hide no-ops</label> <label><input type="checkbox" '
               'onchange="toggleFilter(\'hide-nested\', this.checked)"> hide nested passes</label>')
    body = f'<div class="layout"><nav class="side">{"".join(nav)}</nav><div>{"".join(main)}</div></div>'
    document = page("TileLang lower trace", body, storage_key="lower-trace-theme", toolbar=toolbar, stats=stats,
                    extra_css=_EXTRA_CSS, extra_js=_EXTRA_JS)
    folder = os.path.dirname(os.path.abspath(output_path))
    os.makedirs(folder, exist_ok=True)
    tmp = f"{output_path}.tmp.{os.getpid()}.{threading.get_ident()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(document)
    os.replace(tmp, output_path)
    return output_path
