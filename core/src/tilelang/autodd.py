"""AutoDD: shrink a failing Python program to a small one that still fails the same way (delta debugging).

::

    python -m tilelang.autodd buggy_kernel.py --err-msg "T.gemm shape mismatch" -o minimized.py [-j 4]
    tilelang autodd buggy_kernel.py --err-msg "..." -o minimized.py

A candidate is *interesting* when running it prints `err_msg` (case-sensitive) on stdout or stderr, whatever
its exit status. Candidates are made by rewriting the program's AST -- removing statements, replacing an
``if`` by one of its branches, a loop by one iteration with its variables bound to 0, a call by its first
argument, an operation by an operand, an assignment's value by 1, halving integer constants, dropping
arguments, keywords and parameters -- and a batch of rewrites is kept only when the result is interesting
and shorter. Rewrites are tried ddmin-style: all of a kind at once, then halves, quarters, ... down to one at
a time. `output` is rewritten after every improvement.

Backends: ``runner`` (default) executes candidates in reusable worker processes (imports stay warm; use
``subproc`` when the failure depends on process state), ``subproc`` starts a fresh interpreter per
candidate. ``--timeout`` bounds each run; a timed-out run prints ``AUTODD: TIMEOUT`` and is not interesting
unless that is the message.

Code that must survive is frozen: append ``# autodd: freeze`` to a one-line statement, bracket a block with
``# autodd: freeze-start`` / ``# autodd: end-freeze``, or write ``with __freeze__:`` / ``__freeze__(expr)``
(``from tilelang.autodd import __freeze__``; an identity at run time).
"""

from __future__ import annotations

import ast
import contextlib
import copy
import os
import queue
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple

__all__ = ["Args", "AutoDD", "JobBackend", "__freeze__", "autodd", "cli_main", "main"]

JobBackend = Literal["runner", "subproc"]
_DESCRIPTION = "Delta-debug the provided Python source until the target error message remains reproducible."
_TIMEOUT_MESSAGE = "AUTODD: TIMEOUT"


class _FreezeSentinel:
    """``with __freeze__:`` protects a block, ``__freeze__(expr)`` an expression; both are no-ops at run time."""

    def __enter__(self) -> _FreezeSentinel:
        return self

    def __exit__(self, *exc: Any) -> bool:
        return False

    def __call__(self, value: Any = None) -> Any:
        return value

    def __repr__(self) -> str:
        return "__freeze__"


__freeze__ = _FreezeSentinel()


# ------------------------------------------------------------------------------------------------- freezing
def _is_freeze_with(node: ast.AST) -> bool:
    return (isinstance(node, ast.With) and len(node.items) == 1 and node.items[0].optional_vars is None
            and isinstance(node.items[0].context_expr, ast.Name) and node.items[0].context_expr.id == "__freeze__")


def _is_freeze_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__freeze__"


_FREEZE_IMPORT = "from tilelang.autodd import __freeze__"


def _preprocess_freeze_comments(source: str) -> str:
    """Turn ``# autodd: freeze`` comments into ``with __freeze__:`` blocks (adding the import when needed)."""
    lines = source.splitlines()
    out: list[str] = []
    changed = False
    block: list[str] | None = None
    block_indent = ""
    for line in lines:
        stripped = line.strip()
        indent = line[:len(line) - len(line.lstrip())]
        if stripped.replace(" ", "") in ("#autodd:freeze-start", "#autodd:freeze_start"):
            block, block_indent, changed = [], indent, True
            continue
        if stripped.replace(" ", "") in ("#autodd:end-freeze", "#autodd:freeze-end", "#autodd:end_freeze"):
            if block is None:
                raise ValueError("`# autodd: end-freeze` without a matching `# autodd: freeze-start`")
            out.append(f"{block_indent}with __freeze__:")
            out += [f"    {b}" if b.strip() else b for b in block] or [f"{block_indent}    pass"]
            block = None
            continue
        if block is not None:
            block.append(line)
            continue
        code, sep, comment = line.partition("#")
        if sep and comment.strip().replace(" ", "") == "autodd:freeze" and code.strip():
            out += [f"{indent}with __freeze__:", f"{indent}    {code.strip()}"]
            changed = True
            continue
        out.append(line)
    if block is not None:
        raise ValueError("`# autodd: freeze-start` without a matching `# autodd: end-freeze`")
    text = "\n".join(out) + ("\n" if source.endswith("\n") else "")
    if changed and not _has_freeze_import(text):
        text = _add_freeze_import(text)
    return text


def _has_freeze_import(source: str) -> bool:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return _FREEZE_IMPORT in source
    return any(isinstance(n, ast.ImportFrom) and n.module == "tilelang.autodd"
               and any(a.name == "__freeze__" for a in n.names) for n in ast.walk(tree))


def _add_freeze_import(source: str) -> str:
    """Insert the ``__freeze__`` import after the docstring and ``from __future__`` imports."""
    tree = ast.parse(source)
    at = 0
    for k, stmt in enumerate(tree.body):
        is_doc = k == 0 and isinstance(stmt, ast.Expr) and isinstance(getattr(stmt, "value", None), ast.Constant)
        if is_doc or (isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"):
            at = stmt.end_lineno or at
    lines = source.splitlines(keepends=True)
    return "".join(lines[:at]) + _FREEZE_IMPORT + "\n" + "".join(lines[at:])


def _protected(tree: ast.AST) -> set[int]:
    """ids of nodes a rewrite must not touch: frozen subtrees and every node enclosing one."""
    keep: set[int] = set()

    def visit(node: ast.AST, ancestors: list[ast.AST]) -> None:
        frozen = _is_freeze_with(node) or _is_freeze_call(node) or (
            isinstance(node, ast.ImportFrom) and node.module == "tilelang.autodd")
        if frozen:
            keep.update(id(a) for a in ancestors)
            keep.update(id(n) for n in ast.walk(node))
            return
        for child in ast.iter_child_nodes(node):
            visit(child, [*ancestors, node])

    visit(tree, [])
    return keep


# ------------------------------------------------------------------------------------------------ rewrites
@dataclass(frozen=True)
class _Site:
    """One possible rewrite: `kind` applied to the node reached by `path` (field names and list indices)."""

    kind: str
    path: tuple[Any, ...]


def _zeros(target: ast.expr) -> ast.expr:
    if isinstance(target, (ast.Tuple, ast.List)):
        return ast.Tuple(elts=[_zeros(e) for e in target.elts], ctx=ast.Load())
    return ast.Constant(value=0)


def _as_store(target: ast.expr) -> ast.expr:
    target = copy.deepcopy(target)
    for n in ast.walk(target):
        if hasattr(n, "ctx"):
            n.ctx = ast.Store()
    return target


def _stmt_rewrite(kind: str, node: ast.stmt) -> list[ast.stmt] | None:
    """The statements replacing `node` for a statement-level rewrite (None: not applicable)."""
    if kind == "remove":
        return []
    if kind == "if-body" and isinstance(node, ast.If):
        return node.body
    if kind == "if-else" and isinstance(node, ast.If) and node.orelse:
        return node.orelse
    if kind == "for-once" and isinstance(node, (ast.For, ast.While)):
        bind = [ast.Assign(targets=[_as_store(node.target)], value=_zeros(node.target))] if isinstance(
            node, ast.For) else []
        return bind + node.body
    if kind == "with-unbind" and isinstance(node, ast.With) and any(i.optional_vars is not None for i in node.items):
        binds = [ast.Assign(targets=[_as_store(i.optional_vars)], value=_zeros(i.optional_vars))
                 for i in node.items if i.optional_vars is not None]
        items = [ast.withitem(context_expr=i.context_expr, optional_vars=None) for i in node.items]
        return [ast.With(items=items, body=binds + node.body, type_comment=None)]
    if kind == "assign-1" and isinstance(node, ast.Assign) and not (
            isinstance(node.value, ast.Constant) and node.value.value == 1):
        return [ast.Assign(targets=node.targets, value=ast.Constant(value=1))]
    return None


def _expr_rewrite(kind: str, node: ast.expr) -> ast.expr | None:
    if kind == "call-arg0" and isinstance(node, ast.Call) and node.args and not isinstance(node.args[0], ast.Starred):
        return node.args[0]
    if kind == "binop-left" and isinstance(node, ast.BinOp):
        return node.left
    if kind == "binop-right" and isinstance(node, ast.BinOp):
        return node.right
    if kind == "int-half" and isinstance(node, ast.Constant) and type(node.value) is int and node.value > 1:
        return ast.Constant(value=node.value // 2)
    return None


_STMT_KINDS = ("remove", "if-body", "if-else", "for-once", "with-unbind", "assign-1")
_EXPR_KINDS = ("call-arg0", "binop-left", "binop-right", "int-half")
_ITEM_KINDS = ("drop-item",)  # an element of a call's args / keywords, a list / tuple, or a def's parameters


def _sites(tree: ast.Module, kinds: Sequence[str]) -> list[_Site]:
    """Every place where one of `kinds` applies, in source order."""
    keep = _protected(tree)
    found: list[_Site] = []

    def visit(node: ast.AST, path: tuple[Any, ...]) -> None:
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                for k, item in enumerate(value):
                    if not isinstance(item, ast.AST):
                        continue
                    p = (*path, field, k)
                    if id(item) not in keep:
                        if isinstance(item, ast.stmt):
                            found.extend(_Site(kind, p) for kind in kinds if kind in _STMT_KINDS
                                         and _stmt_rewrite(kind, item) is not None
                                         and not (kind == "remove" and isinstance(item, ast.Pass)))
                        elif "drop-item" in kinds and _droppable(node, field, item):
                            found.append(_Site("drop-item", p))
                        if isinstance(item, ast.expr):
                            found.extend(_Site(kind, p) for kind in kinds if kind in _EXPR_KINDS
                                         and _expr_rewrite(kind, item) is not None)
                    visit(item, p)
            elif isinstance(value, ast.AST):
                p = (*path, field)
                if isinstance(value, ast.expr) and id(value) not in keep and not _is_store(value):
                    found.extend(_Site(kind, p) for kind in kinds if kind in _EXPR_KINDS
                                 and _expr_rewrite(kind, value) is not None)
                visit(value, p)

    visit(tree, ())
    return found


def _is_store(node: ast.AST) -> bool:
    return isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del))


def _droppable(parent: ast.AST, field: str, item: ast.AST) -> bool:
    """Whether `item` can simply be deleted from `parent`'s list `field` (call arguments, container elements,
    positional parameters)."""
    if isinstance(parent, ast.Call):
        return field in ("args", "keywords")
    if isinstance(parent, (ast.List, ast.Tuple, ast.Set)):
        return field == "elts" and not _is_store(parent)
    return isinstance(parent, ast.arguments) and field in ("args", "posonlyargs")


def _apply(tree: ast.Module, sites: Sequence[_Site]) -> ast.Module:
    """A copy of `tree` with `sites` applied (a site inside a node another site replaced is skipped)."""
    new = copy.deepcopy(tree)
    by_parent: dict[tuple[Any, ...], list[tuple[Any, _Site]]] = {}
    for s in {site.path: site for site in reversed(sites)}.values():  # one rewrite per node (the first listed)
        by_parent.setdefault(s.path[:-1], []).append((s.path[-1], s))
    # deepest first, and right to left inside one list, so earlier paths stay valid
    for parent_path in sorted(by_parent, key=len, reverse=True):
        parent = _resolve(new, parent_path)
        if parent is None:
            continue
        for last, site in sorted(by_parent[parent_path], key=lambda x: (isinstance(x[0], int), x[0]), reverse=True):
            _apply_one(parent, last, site)
    _fix_empty_bodies(new)
    return ast.fix_missing_locations(new)


def _resolve(tree: ast.AST, path: tuple[Any, ...]) -> Any:
    node: Any = tree
    for step in path:
        try:
            node = node[step] if isinstance(step, int) else getattr(node, step)
        except (IndexError, AttributeError, TypeError):
            return None
    return node


def _apply_one(parent: Any, last: Any, site: _Site) -> None:
    if isinstance(last, int):  # an element of a list field: parent is that list
        if last >= len(parent):
            return
        item = parent[last]
        if site.kind == "drop-item":
            del parent[last]
        elif isinstance(item, ast.stmt):
            repl = _stmt_rewrite(site.kind, item)
            if repl is not None:
                parent[last:last + 1] = repl
        else:
            repl = _expr_rewrite(site.kind, item)
            if repl is not None:
                parent[last] = repl
    else:
        repl = _expr_rewrite(site.kind, getattr(parent, last))
        if repl is not None:
            setattr(parent, last, repl)


def _fix_empty_bodies(tree: ast.AST) -> None:
    """A ``pass`` in each body left empty, no ``pass`` next to other statements, empty else-branches dropped."""
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if not isinstance(stmts, list) or not all(isinstance(x, ast.stmt) for x in stmts):
                continue
            real = [x for x in stmts if not isinstance(x, ast.Pass)]
            stmts[:] = (real or [ast.Pass()]) if field == "body" else real
        if isinstance(node, ast.Try) and not node.handlers and not node.finalbody:
            node.finalbody = [ast.Pass()]


def _render(tree: ast.Module) -> str | None:
    """Source of `tree`, or None when it does not round-trip to valid Python."""
    try:
        text = ast.unparse(tree) + "\n"
        compile(text, "<autodd>", "exec")
        return text
    except Exception:  # a rewrite produced an AST that does not print or compile: not a candidate
        return None


# ------------------------------------------------------------------------------------------------ running
def _worker(conn: Any) -> None:  # pragma: no cover - runs in a child process
    import runpy

    while True:
        try:
            path = conn.recv()
        except EOFError:
            return
        if path is None:
            return
        with tempfile.TemporaryFile(mode="w+b") as sink:
            sys.stdout.flush()
            sys.stderr.flush()
            saved = os.dup(1), os.dup(2)
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            try:
                runpy.run_path(path, run_name="__main__")
            except BaseException:
                traceback.print_exc()
            finally:
                with contextlib.suppress(Exception):
                    sys.stdout.flush()
                    sys.stderr.flush()
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
                os.close(saved[0])
                os.close(saved[1])
            sink.seek(0)
            conn.send(sink.read().decode("utf-8", "replace"))


class _Runner:
    """A reusable worker process (``runner`` backend); restarted after a timeout or a crash."""

    def __init__(self) -> None:
        self._proc: Any = None
        self._conn: Any = None

    def _start(self) -> None:
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        self._proc = ctx.Process(target=_worker, args=(child,), daemon=True)
        self._proc.start()
        child.close()
        self._conn = parent

    def run(self, path: str, timeout: float) -> str:
        if self._proc is None or not self._proc.is_alive():
            self._start()
        self._conn.send(path)
        if self._conn.poll(timeout):
            try:
                return self._conn.recv()
            except EOFError:
                self.stop()
                return "AUTODD: the worker process exited"
        self.stop()
        return _TIMEOUT_MESSAGE

    def stop(self) -> None:
        if self._proc is not None:
            with contextlib.suppress(Exception):
                self._conn.send(None)
            self._proc.join(timeout=1)
            if self._proc.is_alive():
                self._proc.kill()
                self._proc.join()
        self._proc = self._conn = None


def _run_subprocess(path: str, timeout: float) -> str:
    try:
        done = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=timeout,
                              cwd=os.path.dirname(path))
    except subprocess.TimeoutExpired as exc:
        partial = (exc.stdout or b"") + (exc.stderr or b"")
        return (partial.decode("utf-8", "replace") if isinstance(partial, bytes) else str(partial)) + _TIMEOUT_MESSAGE
    return done.stdout + done.stderr


# ------------------------------------------------------------------------------------------------ driver
class AutoDD:
    """The reducer: `reduce` shrinks `source` while ``interesting(candidate)`` holds.

    `interesting` defaults to "running the candidate prints `err_msg`" with the chosen backend; tests and tools
    may pass their own predicate (then no process is started).
    """

    def __init__(self, source: str, err_msg: str = "", *, output: str | os.PathLike[str] | None = None,
                 backend: JobBackend = "runner", timeout: float = 60, jobs: int = 1,
                 interesting: Callable[[str], bool] | None = None, log: Callable[[str], None] | None = None) -> None:
        if interesting is None and not err_msg:
            raise ValueError("autodd needs the error message to preserve (--err-msg)")
        if backend not in ("runner", "subproc"):
            raise ValueError(f"unknown backend {backend!r}; use 'runner' or 'subproc'")
        if jobs < 1:
            raise ValueError(f"jobs must be >= 1, got {jobs}")
        self.err_msg = err_msg
        self.output = Path(output) if output is not None else None
        self.backend = backend
        self.timeout = float(timeout)
        self.jobs = jobs
        self._predicate = interesting
        self._log = log or (lambda msg: print(msg, file=sys.stderr))
        self._tmp = tempfile.TemporaryDirectory(prefix="autodd_")
        self._idle: queue.SimpleQueue[_Runner] = queue.SimpleQueue()  # one warm worker per job, reused
        self._runners: list[_Runner] = []
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._counter = 0
        self.tests_run = 0
        text = _preprocess_freeze_comments(source)
        tree = ast.parse(text)
        self.best = _render(tree) or text
        self.tree = ast.parse(self.best)

    # -------------------------------------------------------------------------------------------- testing
    @contextlib.contextmanager
    def _runner(self) -> Iterator[_Runner]:
        """An idle worker (a new one while fewer than `jobs` exist), returned to the pool afterwards."""
        with self._lock:
            fresh = len(self._runners) < self.jobs and self._idle.empty()
            if fresh:
                self._runners.append(_Runner())
                runner = self._runners[-1]
        if not fresh:
            runner = self._idle.get()
        try:
            yield runner
        finally:
            self._idle.put(runner)

    def is_interesting(self, candidate: str) -> bool:
        """Whether `candidate` still shows the failure."""
        with self._lock:
            self.tests_run += 1
            self._counter += 1
            n = self._counter
        if self._predicate is not None:
            return bool(self._predicate(candidate))
        path = os.path.join(self._tmp.name, f"candidate_{n}.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(candidate)
        try:
            if self.backend == "runner":
                with self._runner() as runner:
                    out = runner.run(path, self.timeout)
            else:
                out = _run_subprocess(path, self.timeout)
        finally:
            with contextlib.suppress(OSError):
                os.remove(path)
        return self.err_msg in out

    def _accept(self, tree: ast.Module, text: str) -> None:
        self.tree, self.best = tree, text
        if self.output is not None:
            self.output.write_text(text)

    def _first_interesting(self, trials: list[tuple[ast.Module, str]]) -> tuple[ast.Module, str] | None:
        """The first of `trials` (in order) that is interesting, testing up to `jobs` at a time."""
        if self.jobs == 1 or len(trials) == 1:
            return next((t for t in trials if self.is_interesting(t[1])), None)
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="autodd")
        for start in range(0, len(trials), self.jobs):
            batch = trials[start:start + self.jobs]
            for trial, ok in zip(batch, self._executor.map(lambda t: self.is_interesting(t[1]), batch)):
                if ok:
                    return trial
        return None

    # ------------------------------------------------------------------------------------------ reducing
    def _ddmin(self, kinds: Sequence[str], allow_larger: bool = False) -> bool:
        """Apply rewrites of `kinds` in shrinking batches while that keeps the failure; True on progress."""
        progress = False
        chunks = 1
        while True:
            sites = _sites(self.tree, kinds)
            if not sites:
                return progress
            chunks = min(max(chunks, 1), len(sites))
            size = -(-len(sites) // chunks)
            trials = []
            for start in range(0, len(sites), size):
                text = _render(_apply(self.tree, sites[start:start + size]))
                if text is not None and text != self.best and (allow_larger or len(text) < len(self.best)):
                    trials.append((ast.parse(text), text))
            hit = self._first_interesting(trials) if trials else None
            if hit is not None:
                self._accept(*hit)
                progress = True
                self._log(f"[autodd] {'/'.join(kinds)}: {len(self.best)} chars ({self.tests_run} runs)")
                chunks = max(chunks - 1, 1)
                continue
            if size == 1:
                return progress
            chunks *= 2

    def reduce(self, max_rounds: int = 50) -> str:
        """Run the reduction to a fixed point (or `max_rounds` rounds); returns the smallest failing source."""
        if not self.is_interesting(self.best):
            raise RuntimeError(f"the original program does not print the expected message {self.err_msg!r}; "
                               "autodd needs a reproducible failure to start from")
        if self.output is not None:
            self.output.write_text(self.best)
        try:
            for _ in range(max_rounds):
                size = len(self.best)
                self._ddmin(("remove", "if-body", "if-else", "for-once"))
                self._ddmin(("with-unbind",), allow_larger=True)
                self._ddmin(("assign-1", "call-arg0", "binop-left", "binop-right", "remove", "if-body", "if-else"))
                self._ddmin(("int-half",), allow_larger=True)
                self._ddmin(("drop-item", "remove"))
                if len(self.best) >= size:
                    break
        finally:
            self.close()
        return self.best

    def close(self) -> None:
        """Stop the worker processes and remove the temporary files."""
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
        for runner in self._runners:
            runner.stop()
        self._runners.clear()
        self._idle = queue.SimpleQueue()
        self._tmp.cleanup()


def autodd(source: str, err_msg: str, *, output: str | os.PathLike[str] | None = None,
           backend: JobBackend = "runner", timeout: float = 60, jobs: int = 1,
           interesting: Callable[[str], bool] | None = None) -> str:
    """The smallest variant of `source` found that still prints `err_msg` (see the module docstring)."""
    return AutoDD(source, err_msg, output=output, backend=backend, timeout=timeout, jobs=jobs,
                  interesting=interesting).reduce()


# --------------------------------------------------------------------------------------------------- CLI
class Args(NamedTuple):
    source: Path
    err_msg: str
    output: Path
    backend: JobBackend
    timeout: int
    jobs: int


def main(args: Args) -> str:
    """Reduce ``args.source`` into ``args.output``; returns the minimized source."""
    src = Path(args.source)
    if not src.is_file():
        raise FileNotFoundError(f"Source file '{src}' does not exist or is not a regular file.")
    if not os.access(src, os.R_OK):
        raise OSError(f"Source file '{src}' is not readable.")
    reducer = AutoDD(src.read_text(), args.err_msg, output=args.output, backend=args.backend, timeout=args.timeout,
                     jobs=args.jobs)
    before = len(reducer.best)
    best = reducer.reduce()
    print(f"[autodd] {before} -> {len(best)} characters after {reducer.tests_run} runs; written to {args.output}",
          file=sys.stderr)
    return best


def add_arguments(parser: Any) -> None:
    """The command-line arguments (shared with ``tilelang autodd``)."""
    parser.add_argument("source", type=Path, help="Input python source file")
    parser.add_argument("--err-msg", type=str, required=True, help="Error message to look for (case-sensitive)")
    parser.add_argument("-o", "--output", type=Path, required=True, help="Output file path")
    parser.add_argument("--backend", default="runner", choices=["runner", "subproc"],
                        help="Backend for running code: runner is faster, subproc is stable")
    parser.add_argument("--timeout", type=int, default=60, help="Timeout for each task in seconds (default: 60)")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="Number of parallel jobs (default: 1)")


def _args(ns: Any) -> Args:
    return Args(ns.source, ns.err_msg, ns.output, ns.backend, ns.timeout, ns.jobs)


def cli_main(argv: Sequence[str] | None = None) -> int:
    from argparse import ArgumentParser

    parser = ArgumentParser(prog="python -m tilelang.autodd",
                            usage="python -m tilelang.autodd source --err-msg MSG -o OUTPUT "
                                  "[--backend {runner,subproc}] [--timeout SEC] [-j N]",
                            description=_DESCRIPTION)
    add_arguments(parser)
    ns = parser.parse_args(argv)
    try:
        main(_args(ns))
    except (OSError, RuntimeError, ValueError, SyntaxError) as exc:
        print(f"autodd: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(cli_main())
