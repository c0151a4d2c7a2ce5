"""The documentation's claims, executed: every Python block of the getting-started page, of each tutorial and of
the user-facing READMEs of core and the meta-distribution runs on the CPU backend (page by page, blocks in
order, each page in a fresh interpreter), and the CPU columns of the execution-backend table in targets.md match
what the backends accept. Run by ``nox -s docs`` (with tilelang-core, tilelang-cpu and tilelang-cuda installed:
two tutorials show CUDA source, which needs no GPU)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tilelang.testing.markdown import code_blocks, python_blocks, run_page

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
PAGES = [DOCS / "getting_started.md", *sorted(p for p in (DOCS / "tutorials").glob("*.md") if p.name != "index.md"),
         ROOT / "core" / "README.md", ROOT / "README-suite.md"]


def test_every_tutorial_is_listed_and_has_examples():
    index = (DOCS / "tutorials" / "index.md").read_text()
    for page in PAGES:
        assert python_blocks(page.read_text()), f"{page.name} has no Python example to run"
        if page.parent.name == "tutorials":
            assert f"\n{page.stem}\n" in index, f"{page.name} is not in the tutorials' toctree"
    for page in PAGES[:-2]:  # the pages' other blocks are shell sessions, TOML or text: nothing Python unrun
        assert {b.language for b in code_blocks(page.read_text())} <= {"python", "console", "toml", "text", ""}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_runs(page, tmp_path):
    done = run_page(page, tmp_path, env={"TILELANG_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 0, f"{page.name}:\n{done.stdout[-2000:]}\n{done.stderr[-6000:]}"


def _table_rows(text: str, header: str) -> list[list[str]]:
    lines = text[text.index(header):].splitlines()
    return [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:] if line.startswith("|")]


@pytest.mark.parametrize(("column", "kind"), [(1, "c"), (2, "llvm"), (2, "cpu")])
def test_the_cpu_columns_of_the_execution_backend_table(column, kind):
    from tilelang.backend import create_backend_context

    rows = _table_rows((DOCS / "targets.md").read_text(), "| name | CPU `c`")
    assert len(rows) >= 6
    for row in rows:
        name, claim = row[0].strip("`"), row[column]
        if claim == "-":
            with pytest.raises(ValueError, match=re.escape(f"Invalid execution backend '{name}'")):
                create_backend_context(kind, kind, name)
        else:
            ctx = create_backend_context(kind, kind, name)
            assert ctx.execution_backend is not None
            if "(the default)" in claim:
                assert create_backend_context(kind, kind, "auto").execution_backend.name == name
