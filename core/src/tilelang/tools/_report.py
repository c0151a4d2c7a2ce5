"""The self-contained HTML page shared by the tools' reports (lower trace, pass diff, pass visualizer).

One stylesheet with a light and a dark palette (CSS variables; ``[data-theme="dark"]`` overrides them), a
theme button (``id="theme-btn"``) whose choice is remembered in ``localStorage`` under a per-tool key, and
the small scripts every report uses: folding of pass sections, "Expand All" / "Collapse All", expanding
hidden context rows, copying a panel's text.
"""

from __future__ import annotations

import html
import json

__all__ = ["BASE_CSS", "page", "js_string", "script_json"]

BASE_CSS = """
:root {
  --bg: #ffffff; --fg: #1f2328; --panel: #f6f8fa; --border: #d0d7de; --muted: #656d76; --accent: #0969da;
  --add-bg: #e6ffec; --add-fg: #1a7f37; --add-word: #abf2bc; --del-bg: #ffebe9; --del-fg: #cf222e;
  --del-word: #ff8182; --ws-bg: #fff8c5; --hunk-bg: #ddf4ff; --fail-bg: #ffebe9;
}
[data-theme="dark"] {
  --bg: #0d1117; --fg: #e6edf3; --panel: #161b22; --border: #30363d; --muted: #8d96a0; --accent: #4493f8;
  --add-bg: #12261e; --add-fg: #3fb950; --add-word: #1f6f3a; --del-bg: #25171c; --del-fg: #f85149;
  --del-word: #8e2c2c; --ws-bg: #3b2e00; --hunk-bg: #121d2f; --fail-bg: #3c1618;
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
       font: 13px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; }
code, pre, td.eq, td.add, td.del, td.ws, td.code { font-family: ui-monospace, Menlo, Consolas, monospace; }
header.top { position: sticky; top: 0; z-index: 5; display: flex; gap: 12px; align-items: center;
             padding: 8px 16px; background: var(--panel); border-bottom: 1px solid var(--border); }
header.top h1 { font-size: 16px; margin: 0 12px 0 0; }
.toolbar button, #theme-btn { background: var(--bg); color: var(--fg); border: 1px solid var(--border);
             border-radius: 6px; padding: 3px 10px; cursor: pointer; }
.stats { color: var(--muted); }
main { padding: 12px 16px; }
.pass-section { border: 1px solid var(--border); border-radius: 6px; margin: 8px 0; overflow: hidden; }
.pass-header { display: flex; gap: 10px; align-items: center; padding: 6px 10px; background: var(--panel);
               cursor: pointer; user-select: none; }
.pass-section.failed .pass-header { background: var(--fail-bg); }
.pass-chevron { transition: transform .15s; color: var(--muted); }
.pass-section.open .pass-chevron { transform: rotate(90deg); }
.pass-body { display: none; border-top: 1px solid var(--border); }
.pass-section.open .pass-body { display: block; }
.pass-badge, .status { border-radius: 10px; padding: 0 8px; font-size: 12px; }
.changed, .status-changed { background: var(--add-bg); color: var(--add-fg); }
.unchanged, .status-noop { background: var(--panel); color: var(--muted); border: 1px solid var(--border); }
.status-failed { background: var(--del-bg); color: var(--del-fg); font-weight: 600; }
.status-codegen { background: var(--hunk-bg); color: var(--accent); }
table { border-collapse: collapse; width: 100%; table-layout: fixed; }
td { padding: 0 6px; vertical-align: top; white-space: pre-wrap; word-break: break-all; }
td.ln { color: var(--muted); text-align: right; user-select: none; }
td.sg { color: var(--muted); text-align: center; user-select: none; }
td.add, .add-code, tr.add td.code { background: var(--add-bg); }
td.del, .del-code, tr.del td.code { background: var(--del-bg); }
td.ws { background: var(--ws-bg); }
.add-word, .add-code .hl { background: var(--add-word); }
.del-word, .del-code .hl { background: var(--del-word); }
tr.hunk td { background: var(--hunk-bg); color: var(--muted); }
tr.row-hidden { display: none; }
tr.btn-row td { text-align: center; color: var(--accent); background: var(--panel); cursor: pointer; }
.noop-msg { color: var(--muted); padding: 6px 10px; margin: 0; }
.panel-bar { display: flex; gap: 8px; align-items: center; padding: 4px 10px; color: var(--muted); }
.copy-btn { background: none; border: 1px solid var(--border); color: var(--fg); border-radius: 4px; cursor: pointer; }
pre { margin: 0; padding: 6px 10px; overflow-x: auto; }
details.expand-details > summary { cursor: pointer; color: var(--accent); padding: 2px 10px; background: var(--panel); }
.error-msg { color: var(--del-fg); padding: 6px 10px; white-space: pre-wrap; }
"""

_BASE_JS = """
const THEME_KEY = __KEY__;
function applyTheme(t) {
  document.documentElement.setAttribute('data-theme', t);
  const b = document.getElementById('theme-btn');
  if (b) b.textContent = t === 'dark' ? 'Light' : 'Dark';
}
function toggleTheme() {
  const t = document.documentElement.getAttribute('data-theme') === 'dark' ? 'light' : 'dark';
  try { localStorage.setItem(THEME_KEY, t); } catch (e) {}
  applyTheme(t);
}
function setAll(open) {
  document.querySelectorAll('.pass-section').forEach(s => s.classList.toggle('open', open));
}
function expand(cell, n, ev) {
  if (ev) ev.stopPropagation();
  const run = cell.getAttribute('data-run');
  const table = cell.closest('table');
  let shown = 0;
  table.querySelectorAll('tr.row-hidden[data-run="' + run + '"]').forEach(r => {
    if (shown < n || (ev && ev.shiftKey)) { r.classList.remove('row-hidden'); shown++; }
  });
  if (!table.querySelector('tr.row-hidden[data-run="' + run + '"]')) cell.parentElement.remove();
}
document.addEventListener('click', ev => {
  const header = ev.target.closest('.pass-header');
  if (header) header.parentElement.classList.toggle('open');
  const copy = ev.target.closest('.copy-btn');
  if (copy) {
    const src = document.getElementById(copy.getAttribute('data-copy-target'));
    if (src && navigator.clipboard) navigator.clipboard.writeText(src.textContent);
  }
});
(function () {
  let t = 'light';
  try { t = localStorage.getItem(THEME_KEY) || t; } catch (e) {}
  applyTheme(t);
})();
"""


def js_string(text: str) -> str:
    """`text` as a JavaScript string literal that is safe inside a double-quoted HTML attribute."""
    return html.escape(json.dumps(str(text)), quote=True)


def script_json(value: object) -> str:
    """`value` as JSON that cannot end the enclosing ``<script>`` element early."""
    return (json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def page(title: str, body: str, *, storage_key: str, toolbar: str = "", stats: str = "", extra_css: str = "",
         extra_js: str = "") -> str:
    """A complete HTML document: header (title, `stats`, `toolbar`, theme button) and `body`."""
    script = _BASE_JS.replace("__KEY__", json.dumps(storage_key)) + extra_js
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{html.escape(title)}</title>\n<style>{BASE_CSS}{extra_css}</style>\n</head>\n<body>\n"
        f"<header class=\"top\"><h1>{html.escape(title)}</h1><span class=\"stats\">{stats}</span>"
        f"<span class=\"toolbar\">{toolbar}</span><span style=\"flex:1\"></span>"
        "<button id=\"theme-btn\" onclick=\"toggleTheme()\">Dark</button></header>\n"
        f"<main>\n{body}\n</main>\n<script>{script}</script>\n</body>\n</html>\n"
    )
