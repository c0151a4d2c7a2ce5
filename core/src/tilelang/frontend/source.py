"""Source of a kernel function: its AST (parsed once per code object), positions and error construction."""

from __future__ import annotations

import ast
import inspect
import textwrap
from types import CodeType
from typing import Any

from tilelang.errors import KernelSyntaxError, SourceError

# keyed by the code object's identity: code objects compare equal across files (co_filename is not compared),
# so two kernels with the same body at the same line of two files (notebook cells, generated modules) would
# share the first one's source; the entry keeps its code object alive, so the id is not reused
_CACHE: dict[int, tuple[CodeType, FunctionSource]] = {}


class FunctionSource:
    """The ``def`` of a Python function: AST, file, line offset, and a cache of compiled expressions."""

    def __init__(self, fn: Any):
        code = fn.__code__
        self.name = fn.__name__
        self.filename = code.co_filename
        try:
            lines, first = inspect.getsourcelines(fn)
        except (OSError, TypeError) as e:
            raise KernelSyntaxError(f"cannot read the source of {fn.__qualname__}: {e}; kernels must be defined in a "
                                    "file (not in an interactive prompt or via exec)") from None
        raw = "".join(lines)
        text = textwrap.dedent(raw)
        self.indent = len(lines[0]) - len(lines[0].lstrip()) if text != raw else 0
        self.first_line = first if first > 0 else 1
        self.lines = lines
        tree = ast.parse(text)
        node = tree.body[0]
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            raise KernelSyntaxError(f"{fn.__qualname__} is not a function definition")
        self.fdef: ast.FunctionDef = node
        self.code_cache: dict[int, CodeType] = {}

    @classmethod
    def of(cls, fn: Any) -> FunctionSource:
        code = getattr(fn, "__code__", None)
        if code is None:
            raise KernelSyntaxError(f"{fn!r} is not a Python function")
        entry = _CACHE.get(id(code))
        if entry is None or entry[0] is not code:
            entry = _CACHE[id(code)] = (code, cls(fn))
        return entry[1]

    def def_line(self) -> int:
        return self.first_line + self.fdef.lineno - 1

    def location(self, node: ast.AST | None) -> tuple[str, int, int]:
        if node is None or not hasattr(node, "lineno"):
            return self.filename, self.def_line(), 0
        return self.filename, self.first_line + node.lineno - 1, node.col_offset + self.indent

    def span(self, node: ast.AST | None) -> Any:
        """The ``tvm.ir.Span`` of `node` in the user's file."""
        from tilelang.ir.spans import make_span

        filename, line, col = self.location(node)
        end_line = self.first_line + getattr(node, "end_lineno", node.lineno if node is not None else 1) - 1 \
            if node is not None and hasattr(node, "lineno") else line
        end_col = (getattr(node, "end_col_offset", None) or 0) + self.indent if node is not None else col
        return make_span(filename, line, col, end_line, end_col)

    def line_text(self, node: ast.AST | None) -> str | None:
        rel = (node.lineno if node is not None and hasattr(node, "lineno") else self.fdef.lineno) - 1
        return self.lines[rel] if 0 <= rel < len(self.lines) else None

    def error(self, cls: type[SourceError], message: str, node: ast.AST | None) -> SourceError:
        return cls(message, location=self.location(node), source_line=self.line_text(node))

    def compile_expr(self, node: ast.expr, rewriter: ast.NodeTransformer) -> CodeType:
        code = self.code_cache.get(id(node))
        if code is None:
            import copy

            tree = ast.Expression(body=rewriter.visit(copy.deepcopy(node)))
            ast.fix_missing_locations(tree)
            code = self.code_cache[id(node)] = compile(tree, self.filename, "eval")
        return code
