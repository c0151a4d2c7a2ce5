"""`ExecutionBackendSpec`: the reference TileLang's description of one execution backend of a backend module.

A spec names an execution backend (``tvm_ffi``, ``cython``, ``nvrtc``, ``torch``, ``cutedsl``, ...), says whether
it can be used here (`is_available`: its packages are importable; a device may still be missing), which targets
of the backend it serves, and whether it needs host codegen / device compilation. This project's specs are
derived from the registered `tilelang.backend.ExecutionBackend` objects (`spec_for`); `backend` is that object.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["ExecutionBackendSpec", "spec_for"]

TargetPredicate = Callable[[Any], bool]
AvailabilityCheck = Callable[[], bool]


def _always_available() -> bool:
    return True


@dataclass(frozen=True, slots=True)
class ExecutionBackendSpec:
    """One execution backend as a backend module declares it."""

    name: str
    is_available: AvailabilityCheck = _always_available
    supports_target: TargetPredicate | None = None
    enable_host_codegen: bool = False
    enable_device_compile: bool = False
    backend: Any = None  # the registered ExecutionBackend this name maps to (None for a reference-only spec)

    def matches(self, target: Any) -> bool:
        """Whether this execution backend serves `target`."""
        return True if self.supports_target is None else bool(self.supports_target(target))


_SPECS: dict[tuple[int, str], ExecutionBackendSpec] = {}


def spec_for(backend: Any, name: str) -> ExecutionBackendSpec:
    """The (memoised, so equal across calls) spec under `name` of registered execution backend `backend`."""
    key = (id(backend), name)
    spec = _SPECS.get(key)
    if spec is None:

        def serves(target: Any, backend: Any = backend, name: str = name) -> bool:
            return backend.supports_target(target) and name in backend.names_for(target)

        spec = ExecutionBackendSpec(name, is_available=backend.is_installed, supports_target=serves,
                                    enable_host_codegen=bool(backend.enable_host_codegen),
                                    enable_device_compile=bool(backend.enable_device_compile), backend=backend)
        _SPECS[key] = spec
    return spec
