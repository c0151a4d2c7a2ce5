"""The reference's ``tilelang.language.eager.builder`` names, served by TileLang's front end (`tilelang.frontend`).

``prim_func`` / ``macro`` / ``const`` are the DSL's; `Ref` marks a macro parameter that aliases the caller's
``T.alloc_var`` (assigning to it stores into the caller's variable); ``PrimFunc`` is the tirx PrimFunc class;
``JITFunc`` is the eager ``@tilelang.jit`` program class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tilelang.frontend.build import prim_func
from tilelang.frontend.eager import EagerProgram as JITFunc
from tilelang.frontend.macro import Macro, macro
from tilelang.language.annotations import annotate_compile_flags, annotate_pass_configs
from tilelang.language.symbolics import const


@dataclass
class Ref:
    """A reference to one buffer element (a ``T.alloc_var`` is ``Ref(x[0])``); as a macro parameter annotation,
    ``x: T.Ref`` makes assignments to ``x`` store into the caller's variable."""

    bufload: Any

    @property
    def buffer(self) -> Any:
        return self.bufload.source

    def store(self, value: Any) -> None:
        from tvm.script.ir_builder import tirx as B

        B.buffer_store(self.bufload.source, value, list(self.bufload.indices))

    def load(self) -> Any:
        return self.bufload


def __getattr__(name: str) -> Any:
    if name == "PrimFunc":
        from tvm.tirx import PrimFunc

        return PrimFunc
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["JITFunc", "Macro", "PrimFunc", "Ref", "annotate_compile_flags", "annotate_pass_configs",  # noqa: F822
           "const", "macro", "prim_func"]
