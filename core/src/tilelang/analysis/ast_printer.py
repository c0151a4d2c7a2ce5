"""ASTPrinter: print a PrimFunc's statement tree, one node per line, fields before children.

Unlike the TVMScript text, the tree shows each node's class and field names, which is what a pass author needs
when matching on IR::

    PrimFunc(params=[A, B], ret_type=..., attrs={...})
    └── body=AttrStmt
        ├── node(IterVar): bx
        ├── attr_key(str): thread_extent
        ├── value(PrimExpr): 1
        └── body(Stmt): SeqStmt
            ├── seq0(Stmt): AllocBuffer
            ...

Long field values are clipped to 140 characters.
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

from tilelang.analysis import _ir

__all__ = ["ASTPrinter", "format_ast"]

_LIMIT = 140
_MID, _LAST = "├── ", "└── "
_PAD, _BAR = "    ", "│   "
_CHILD_FIELDS = ("body", "block", "seq", "then_case", "else_case")


def _fields(node: Any) -> list[tuple[str, str]]:
    """``(name, static type)`` of the node's fields, base classes first, ``span`` left out."""
    chain = []
    info = getattr(type(node), "__tvm_ffi_type_info__", None)
    while info is not None:
        chain.append(info)
        info = info.parent_type_info
    out = []
    for info in reversed(chain):
        for f in info.fields:
            if f.name != "span":
                out.append((f.name, str(getattr(f, "ty", "") or "")))
    return out


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _LIMIT else text[:_LIMIT] + "..."


def _emit(node: Any, indent: str, lines: list[str]) -> None:
    fields = _fields(node)
    plain = [(n, t) for n, t in fields if n not in _CHILD_FIELDS]
    children = [(n, t) for n, t in fields if n in _CHILD_FIELDS]
    for k, (name, ty) in enumerate(plain):
        last = k == len(plain) - 1 and not children
        value = getattr(node, name, None)
        shown = value if isinstance(value, str) else repr(value)
        lines.append(indent + _clip(f"{_LAST if last else _MID}{name}({ty}): {shown}"))
    kids: list[tuple[str, Any]] = []
    for name, _ty in children:
        value = getattr(node, name, None)
        if name == "seq":
            kids += [(f"seq{i}", s) for i, s in enumerate(value)]
        else:
            kids.append((name, value))
    for k, (label, child) in enumerate(kids):
        last = k == len(kids) - 1
        kind = type(child).__name__ if child is not None else "None"
        lines.append(indent + _clip(f"{_LAST if last else _MID}{label}(Stmt): {kind}"))
        if child is not None:
            _emit(child, indent + (_PAD if last else _BAR), lines)


def format_ast(func: tirx.PrimFunc) -> str:
    """The tree of `func` as text (see the module docstring)."""
    names = [str(getattr(p, "name", p)) for p in func.params]
    lines = [_clip(f"PrimFunc(params={names}, ret_type={func.ret_type}, attrs={func.attrs})"),
             f"{_LAST}body={type(func.body).__name__}"]
    _emit(func.body, _PAD, lines)
    return "\n".join(lines)


def ASTPrinter() -> Any:
    """A pass that prints `format_ast` of every PrimFunc (the module is returned unchanged)."""
    return _ir.checker_pass("tl.ASTPrinter", lambda func: print(format_ast(func)))
