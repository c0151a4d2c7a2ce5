"""pytest plugin: the examples' own tests (``test_example_*.py``) on the CPU, moved there mechanically.

    python -m pytest -p examples_cpu examples/gemm      (with this folder on PYTHONPATH)

- Device ``cuda`` becomes ``cpu`` wherever torch is given one (``device="cuda"``, ``torch.device("cuda")``,
  ``.cuda()``, ``.to("cuda")``, ``torch.set_default_device``, ``torch.Generator(device="cuda")``);
  ``torch.cuda.synchronize`` / ``empty_cache`` do nothing, ``torch.cuda.Event`` times with the wall clock and
  ``torch.cuda.Stream`` / ``stream`` / ``default_stream`` are streams in name only (the CPU runs the work in program
  order); ``target="cuda"`` given to ``tilelang.compile`` / ``tilelang.jit`` becomes ``"cpu"``. The device queries
  that examples use to pick a configuration answer for the architecture they are written for (examples_run.py's
  default, sm_90): ``torch.cuda.get_device_capability()`` is (9, 0) and ``get_device_properties()`` reports it with
  one multiprocessor per CPU core. Nothing else of torch.cuda is faked: ``torch.cuda.is_available()`` stays False,
  so TileLang's ``target="auto"`` picks the CPU backend.
- ``tilelang.testing.requires_cuda`` and the ``requires_cuda_compute_version*`` decorators let the test run (it now
  targets the CPU); every other requirement (``requires_package`` ...) keeps its meaning.
- The tests' own checks (``torch.testing.assert_close`` against their torch references) decide pass or fail.
- ``TILELANG_EXAMPLES_TARGET=webgpu`` (examples_run.py ``--cpu --webgpu``): the kernels compile for and run on
  WebGPU instead (wgpu; Mesa's lavapipe on a machine without a GPU); the tensors stay torch CPU tensors, which the
  WebGPU backend copies in and out. ``target="auto"`` follows through ``TILELANG_DEFAULT_TARGET``.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import time
from types import SimpleNamespace
from typing import Any

CUDA_REQUIREMENTS = ("requires_cuda",)
CAPABILITY = (9, 0)  # the architecture the examples are written for (examples_run.py's sm_90a)


def _to_cpu(device: Any) -> Any:
    import torch

    if isinstance(device, torch.device):
        return torch.device("cpu") if device.type == "cuda" else device
    if isinstance(device, str) and device.split(":")[0] == "cuda":
        return "cpu"
    return device


class _WallEvent:
    """``torch.cuda.Event(enable_timing=True)`` on the CPU: records the wall clock."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.t = 0.0

    def record(self, *args: Any, **kwargs: Any) -> None:
        self.t = time.perf_counter()

    def synchronize(self) -> None:
        pass

    def wait(self, *args: Any) -> None:
        pass

    def query(self) -> bool:
        return True

    def elapsed_time(self, end: _WallEvent) -> float:
        return (end.t - self.t) * 1e3


class _CpuStream:
    """``torch.cuda.Stream`` on the CPU: work runs in program order, so a stream only has to be there."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def wait_stream(self, *args: Any) -> None:
        pass

    def wait_event(self, *args: Any) -> None:
        pass

    def record_event(self, event: Any = None) -> Any:
        event = event if event is not None else _WallEvent()
        event.record()
        return event

    def synchronize(self) -> None:
        pass

    def query(self) -> bool:
        return True

    def __enter__(self) -> _CpuStream:
        return self

    def __exit__(self, *args: Any) -> None:
        pass


_DEFAULT_STREAM = _CpuStream()


def _cpu_generator_class(generator: type) -> type:
    """``torch.Generator`` whose ``device="cuda"`` is the CPU (a subclass: ``isinstance`` checks still hold)."""

    class Generator(generator):  # type: ignore[misc, valid-type]
        def __new__(cls, device: Any = "cpu") -> Any:
            return generator.__new__(cls, device=_to_cpu(device))

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            pass

    return Generator


def move_to_cpu() -> None:
    import torch
    from torch.overrides import TorchFunctionMode

    def synchronize(*args: Any, **kwargs: Any) -> None:
        return None

    def empty_cache() -> None:
        return None

    torch.cuda.synchronize = synchronize
    torch.cuda.empty_cache = empty_cache
    torch.cuda.Event = _WallEvent
    torch.cuda.Stream = _CpuStream
    torch.cuda.stream = lambda stream=None: contextlib.nullcontext(stream)
    torch.cuda.default_stream = torch.cuda.current_stream = lambda *args, **kwargs: _DEFAULT_STREAM
    torch.cuda.get_device_capability = lambda *args, **kwargs: CAPABILITY
    torch.cuda.get_device_properties = lambda *args, **kwargs: SimpleNamespace(
        name="cpu", major=CAPABILITY[0], minor=CAPABILITY[1], multi_processor_count=os.cpu_count() or 1,
        total_memory=os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    torch.Tensor.cuda = lambda self, *args, **kwargs: self
    torch.Generator = _cpu_generator_class(torch.Generator)
    set_default = torch.set_default_device
    torch.set_default_device = lambda device: set_default(_to_cpu(device))

    class CpuDevice(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if "device" in kwargs:
                kwargs["device"] = _to_cpu(kwargs["device"])
            if getattr(func, "__name__", "") == "to" and len(args) > 1:
                args = (args[0], *(_to_cpu(a) for a in args[1:]))
            return func(*args, **kwargs)

    CpuDevice().__enter__()


def run_anyway(*args: Any, **kwargs: Any) -> Any:
    """A requirement that lets the test run: ``@requires_cuda``, ``@requires_cuda_compute_version_eq(9, 0)``."""
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda func: func


run_anyway.marks = lambda *a, **k: []  # the reference's ``requires_cuda.marks()`` form


TARGET_ENV = "TILELANG_EXAMPLES_TARGET"


def _cpu_target(target: Any) -> Any:
    """A target string of kind ``cuda`` (``"cuda"``, ``"cuda -arch=sm_90"``) as ``"cpu"`` (or the kind
    ``TILELANG_EXAMPLES_TARGET`` names); others unchanged."""
    if isinstance(target, str) and target.split(" ")[0].split(":")[0] == "cuda":
        return os.environ.get(TARGET_ENV) or "cpu"
    return target


def target_cpu(fn: Any) -> Any:
    """`fn` (``tilelang.compile``, ``tilelang.jit``) with its ``target="cuda"`` keyword moved to the CPU."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if "target" in kwargs:
            kwargs["target"] = _cpu_target(kwargs["target"])
        return fn(*args, **kwargs)

    return wrapper


def pytest_configure(config: Any) -> None:
    move_to_cpu()
    import tilelang
    import tilelang.testing

    tilelang.compile = target_cpu(tilelang.compile)
    jit_module = sys.modules["tilelang.jit"]  # a callable module: calling it calls its ``jit``
    jit_module.jit = target_cpu(jit_module.jit)

    for name in dir(tilelang.testing):
        if name in CUDA_REQUIREMENTS or name.startswith("requires_cuda_compute_version"):
            setattr(tilelang.testing, name, run_anyway)
