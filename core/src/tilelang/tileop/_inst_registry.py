"""A registry of implementation classes keyed by instruction (``"cuda.mma"``, ``"generic"``, ...) and filtered by
a target predicate: the shape of the reference's ``tileop.gemm.registry`` and ``tileop.gemm_sp.registry``.

Registering a name again replaces that entry (a backend reloading its module stays consistent); resolving an
instruction must find exactly one entry whose predicate accepts the target.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

TargetPredicate = Callable[[Any], bool]


@dataclass(frozen=True)
class ImplEntry:
    """One implementation class: `name` (unique), the instruction key it serves, and the targets it accepts."""

    name: str
    inst_name: str
    predicate: TargetPredicate
    impl_class: type

    def __post_init__(self) -> None:
        if not self.name or not self.inst_name:
            raise ValueError(f"implementation entry needs a name and an instruction key, got {self.name!r}, "
                             f"{self.inst_name!r}")
        if not callable(self.predicate):
            raise TypeError(f"implementation {self.name!r}: predicate must be callable, got {self.predicate!r}")
        if not isinstance(self.impl_class, type):
            raise TypeError(f"implementation {self.name!r}: impl_class must be a class, got {self.impl_class!r}")


class InstRegistry:
    """Entries in registration order; `what` names the operator in error messages (``"GEMM"``)."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.entries: list[ImplEntry] = []

    def register(self, name: str, inst_name: str, predicate: TargetPredicate, impl_class: type) -> None:
        entry = ImplEntry(name, inst_name, predicate, impl_class)
        for i, known in enumerate(self.entries):
            if known.name == name:
                self.entries[i] = entry
                return
        self.entries.append(entry)

    def resolve(self, inst_name: str, target: Any) -> type:
        matches = [e for e in self.entries if e.inst_name == inst_name and e.predicate(target)]
        if len(matches) == 1:
            return matches[0].impl_class
        if not matches:
            known = sorted({e.inst_name for e in self.entries})
            raise ValueError(f"No {self.what} implementation registered for instruction {inst_name} and target "
                             f"{target}; registered instructions: {', '.join(known) or 'none'}")
        names = ", ".join(e.name for e in matches)
        raise ValueError(f"Multiple {self.what} implementations matched instruction {inst_name} and target "
                         f"{target}: {names}")
