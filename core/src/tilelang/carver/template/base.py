"""`BaseTemplate`: an operator description that yields an equivalent PrimFunc and device-aware hints."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from tvm.tirx import PrimFunc

from tilelang.carver.arch import (
    TileDevice,
    auto_infer_current_arch,
    is_ampere_arch,
    is_cdna_arch,
    is_rdna_arch,
    is_volta_arch,
)
from tilelang.carver.roller.hint import Hint
from tilelang.carver.roller.node import OutputNode

__all__ = ["BaseTemplate"]


@dataclass
class BaseTemplate(ABC):
    """A template: its parameters are the dataclass fields; ``initialize_function`` builds the computation.

    The device defaults to `auto_infer_current_arch()`; ``with_arch`` picks another. ``recommend_hints``
    asks the roller for configurations of the computation on that device.
    """

    _arch: TileDevice = field(default_factory=auto_infer_current_arch, init=False, repr=False)
    _func: PrimFunc = field(default=None, init=False, repr=False)
    _output_nodes: list[OutputNode] = field(default=None, init=False, repr=False)

    @abstractmethod
    def get_hardware_aware_configs(self, arch: TileDevice = None, topk: int = 10) -> list[Hint]:
        """Up to `topk` hints for this computation on `arch`."""

    def with_arch(self, arch: TileDevice) -> BaseTemplate:
        if not isinstance(arch, TileDevice):
            raise TypeError(f"with_arch expects a TileDevice (e.g. tilelang.carver.arch.CUDA('cuda')), "
                            f"got {type(arch).__name__}")
        changed = arch is not self._arch
        self._arch = arch
        if changed:  # the computation may depend on the device (tensorized nodes of multi-operator templates)
            self.initialize_function()
        return self

    def has_arch(self) -> bool:
        return self._arch is not None

    def is_volta_arch(self) -> bool:
        return self._arch is not None and is_volta_arch(self._arch)

    def is_ampere_arch(self) -> bool:
        return self._arch is not None and is_ampere_arch(self._arch)

    def is_cdna_arch(self) -> bool:
        return self._arch is not None and is_cdna_arch(self._arch)

    def is_rdna_arch(self) -> bool:
        return self._arch is not None and is_rdna_arch(self._arch)

    def equivalent_function(self) -> PrimFunc:
        """The computation as a block-structured PrimFunc (a list of them for multi-operator templates)."""
        return self._func

    def initialize_function(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not define initialize_function")

    def set_function(self, func: PrimFunc) -> BaseTemplate:
        self._func = func
        return self

    def set_output_nodes(self, output_nodes: list[OutputNode]) -> BaseTemplate:
        self._output_nodes = output_nodes
        return self

    def recommend_hints(self, topk: int = 10) -> list[Hint]:
        """Up to `topk` configurations for the template's device, best first."""
        if self._arch is None:
            raise ValueError(f"{type(self).__name__} has no device: call with_arch(...) first")
        return self.get_hardware_aware_configs(self._arch, topk)

    @property
    def arch(self) -> TileDevice:
        return self._arch

    @property
    def output_nodes(self) -> list[OutputNode]:
        return self._output_nodes

    def params_as_dict(self) -> dict[str, Any]:
        return {}

    @property
    def class_attributes(self) -> dict[str, Any]:
        return self.params_as_dict()

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self.class_attributes.items())
        return f"{type(self).__name__}({fields})"

    def __post_init__(self) -> None:
        self.initialize_function()


def positive_ints(owner: str, **values: Any) -> None:
    """ValueError naming the first of `values` that is not a positive int."""
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{owner}: {name} must be a positive int, got {value!r}")
