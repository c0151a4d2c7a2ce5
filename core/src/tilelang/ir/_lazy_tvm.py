"""`tvm` and `tirx` stand-ins that import the real modules on first attribute access.

``import tilelang.language`` must not import TVM (2.6-3.3 s): a serving process that only hits the kernel
cache never needs it. Modules of the IR layer use these names exactly like the real modules.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class _LazyModule:
    def __init__(self, name: str):
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)


tvm: Any = _LazyModule("tvm")
tirx: Any = _LazyModule("tvm.tirx")
