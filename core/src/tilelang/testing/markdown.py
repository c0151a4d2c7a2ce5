"""Run the Python examples of a Markdown page (a tutorial, a README) as the test of what the page claims.

`python_blocks` finds the fenced ```` ```python ```` blocks; `script_of` turns a page into one Python script whose
code sits at the page's own line numbers (everything else blank), so a failing example is reported at
``page.md:LINE`` and kernels defined in it have a source file the front end can read; `run_page` runs that script
in a fresh interpreter, the way a reader pastes the blocks one after the other.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CodeBlock", "code_blocks", "python_blocks", "script_of", "run_page"]

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+|~~~+)\s*(?P<info>[^\n`]*)$")


@dataclass(frozen=True)
class CodeBlock:
    """One fenced block: its info string's first word (``python``, ``console``, ...), first code line (1-based)
    and text."""

    language: str
    line: int
    code: str


def code_blocks(text: str) -> list[CodeBlock]:
    """Every fenced code block of Markdown `text`, in order."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        language = (opening["info"].split() or [""])[0].strip("{}")
        body, j = [], i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            body.append(lines[j][indent:] if lines[j][:indent].strip() == "" else lines[j])
            j += 1
        blocks.append(CodeBlock(language, i + 2, "\n".join(body)))
        i = j + 1
    return blocks


def python_blocks(text: str) -> list[CodeBlock]:
    """The ``python`` blocks of `text` (the examples a page runs)."""
    return [b for b in code_blocks(text) if b.language == "python"]


def script_of(text: str) -> str:
    """The page's Python blocks as one script, each block's code on the page's own lines."""
    out = [""] * (len(text.splitlines()) + 1)
    for block in python_blocks(text):
        for k, line in enumerate(block.code.splitlines()):
            out[block.line - 1 + k] = line
    return "\n".join(out) + "\n"


def run_page(page: str | Path, workdir: str | Path, *, env: dict[str, str] | None = None,
             timeout: float = 900) -> subprocess.CompletedProcess:
    """Run the Python blocks of Markdown file `page` as one script (``<workdir>/<page stem>_md.py``) in a fresh
    interpreter with `workdir` as its directory; returns the finished process (output captured)."""
    page = Path(page)
    script = Path(workdir) / f"{page.stem}_md.py"
    script.write_text(script_of(page.read_text(encoding="utf-8")), encoding="utf-8")
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, str(script)], cwd=str(workdir), env=full_env, capture_output=True,
                          text=True, timeout=timeout)
