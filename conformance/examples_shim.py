"""Run one example script of the reference TileLang's examples/ tree as if a GPU were present, without one.

    python examples_shim.py --device sm_90a --events EVENTS.jsonl SCRIPT.py

Used by `examples_run.py` for this project and for the reference TileLang alike (it imports only the standard
library and torch, and finds each TileLang's functions by name), so both are measured the same way:

- torch sees one simulated device of the requested architecture (``torch.cuda.is_available()``, the device's
  capability and properties; ``torch.version.hip`` and ``gcnArchName`` for a ``gfx*`` device), so that each
  TileLang's own target detection picks that architecture, as it would on the real machine.
- Tensors the script puts on that device become ``meta`` tensors (shape, dtype and strides, no data): torch
  code that only shapes tensors runs, and JIT kernels called with them compile for their shapes.
- Each kernel build is recorded: a call of the compile entry (``tilelang.compile`` / ``jit(...).compile`` / a
  lazily compiled call / ``tilelang.lower``), outermost only; an autotuning run counts as one build, which reaches a
  binary when one of its configurations does. A build *reaches a binary* when the device compiler returned one
  (a cubin from nvcc / NVRTC, an hsaco from the linker) during it, whatever happens after (loading it needs a GPU).
- A plain (non-autotune) build's record holds ``source``: the first 16 hex digits of the sha256 of the device
  source handed to the device compiler during it (of those sources' digests in order when it compiled several
  different ones), so that a rebuild of the same kernel can be told from a new one. It is left out when the
  sources are not known exactly: none was seen, or a binary came without one (a binary cache, the ROCm linker).
- The script stops at the first kernel launch, device timing, or read of a device tensor's data (an exception
  derived from BaseException, so `except Exception` in a script or an autotuner does not swallow it).

Each finished build and the script's end are appended to EVENTS as JSON lines.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import importlib
import inspect
import json
import os
import re
import runpy
import sys
import threading
import traceback
import types

EVENTS: str | None = None
_lock = threading.Lock()


class DeviceStop(BaseException):
    """The script reached what needs the device itself (a launch, device timing, a device tensor's data)."""


def emit(**record: object) -> None:
    if EVENTS is None:
        return
    with _lock, open(EVENTS, "a") as f:
        f.write(json.dumps(record) + "\n")


_ERROR_LINE = re.compile(r"\berror\b|Error:|Check failed|failed", re.IGNORECASE)


def first_error_line(exc: BaseException) -> str:
    """``Type: line`` with the first line of the message that names the error (nvcc's message comes after its
    command line; TVM's after a traceback)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip() and not ln.startswith("frame #")]
    line = next((ln for ln in lines if _ERROR_LINE.search(ln) and not ln.startswith(("File ", "  "))),
                lines[0] if lines else "")
    return f"{type(exc).__name__}: {line}"[:300]


# ------------------------------------------------------------------------------------------ the simulated device
DEVICES = {  # arch -> (capability, name, SM count, memory GiB)
    "sm_80": ((8, 0), "NVIDIA A100-SXM4-80GB", 108, 80),
    "sm_90a": ((9, 0), "NVIDIA H100 80GB HBM3", 132, 80),
    "sm_100a": ((10, 0), "NVIDIA B200", 148, 180),
    "sm_120": ((12, 0), "NVIDIA GeForce RTX 5090", 170, 32),
    "gfx942": ((9, 4), "AMD Instinct MI300X", 304, 192),
    "gfx950": ((9, 5), "AMD Instinct MI355X", 256, 288),
}


def _props(arch: str) -> types.SimpleNamespace:
    (major, minor), name, sms, gib = DEVICES[arch]
    return types.SimpleNamespace(
        name=name, major=major, minor=minor, multi_processor_count=sms, total_memory=gib << 30,
        gcnArchName=arch if arch.startswith("gfx") else "", L2_cache_size=50 << 20, warp_size=64 if
        arch.startswith("gfx") else 32, max_threads_per_multi_processor=2048, regs_per_multiprocessor=65536,
        shared_memory_per_block_optin=232448 if major >= 9 else 166912, shared_memory_per_block=49152,
        shared_memory_per_multiprocessor=233472 if major >= 9 else 167936, max_threads_per_block=1024,
        regs_per_block=65536, clock_rate=1980000, memory_clock_rate=2619000, memory_bus_width=5120,
        is_integrated=False, uuid="simulated")


class _FakeEvent:
    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    def record(self, *args: object, **kwargs: object) -> None:
        raise DeviceStop("device timing (torch.cuda.Event)")

    def synchronize(self) -> None:
        raise DeviceStop("device timing (torch.cuda.Event)")

    def elapsed_time(self, other: object) -> float:
        raise DeviceStop("device timing (torch.cuda.Event)")


class _FakeStream:
    cuda_stream = 0
    device = None

    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def wait_stream(self, other: object) -> None:
        pass

    def __enter__(self) -> _FakeStream:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def _is_device(device: object) -> bool:
    import torch

    if isinstance(device, torch.device):
        return device.type == "cuda"
    if isinstance(device, str):
        return device.split(":")[0] == "cuda"
    return isinstance(device, int) and not isinstance(device, bool)


def simulate_device(arch: str) -> None:
    """Patch torch so that it reports one device of `arch` and keeps that device's tensors as meta tensors."""
    import torch
    from torch.overrides import TorchFunctionMode

    props = _props(arch)
    cuda = torch.cuda
    noop = lambda *a, **k: None
    replacements = {
        "is_available": lambda: True, "device_count": lambda: 1, "current_device": lambda: 0,
        "get_device_capability": lambda *a, **k: (props.major, props.minor),
        "get_device_properties": lambda *a, **k: props, "get_device_name": lambda *a, **k: props.name,
        "get_arch_list": lambda: [arch], "is_initialized": lambda: True, "init": noop, "set_device": noop,
        "synchronize": noop, "empty_cache": noop, "manual_seed": noop, "manual_seed_all": noop, "seed": noop,
        "reset_peak_memory_stats": noop, "max_memory_allocated": lambda *a, **k: 0,
        "memory_allocated": lambda *a, **k: 0, "mem_get_info": lambda *a, **k: (props.total_memory,) * 2,
        "Event": _FakeEvent, "Stream": _FakeStream, "current_stream": lambda *a, **k: _FakeStream(),
        "default_stream": lambda *a, **k: _FakeStream(), "stream": lambda *a, **k: _FakeStream(),
        "_lazy_init": noop,
    }
    for name, value in replacements.items():
        if value is noop:  # one function object per name: torch.compile's trace rules refuse shared ones
            value = types.FunctionType(noop.__code__, {}, name)
        setattr(cuda, name, value)
    cuda.device = lambda *a, **k: _FakeStream()  # `with torch.cuda.device(i):`
    if arch.startswith("gfx"):
        torch.version.hip = "6.3.0"

    def to_meta(tensor: torch.Tensor, *args: object, **kwargs: object) -> torch.Tensor:
        return tensor.to("meta")

    torch.Tensor.cuda = to_meta
    real_device = torch.device

    class _DeviceType(type):  # torch.device(0) means the current accelerator: the simulated one
        def __instancecheck__(cls, obj: object) -> bool:
            return isinstance(obj, real_device)

        def __call__(cls, *args: object, **kwargs: object) -> object:
            if len(args) == 1 and not kwargs and isinstance(args[0], int) and not isinstance(args[0], bool):
                return real_device("cuda", args[0])
            return real_device(*args, **kwargs)

    torch.device = _DeviceType("device", (), {})
    original_set_default = torch.set_default_device
    torch.set_default_device = lambda d: original_set_default("meta" if _is_device(d) else d)

    def read(tensor: torch.Tensor, *args: object, **kwargs: object) -> object:
        raise DeviceStop("read of a device tensor's data")

    class MetaDevice(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if _is_device(kwargs.get("device")):
                kwargs["device"] = "meta"
            name = getattr(func, "__name__", "")
            if name == "to" and args and isinstance(args[0], torch.Tensor):
                args = tuple("meta" if i > 0 and _is_device(a) else a for i, a in enumerate(args))
            if args and isinstance(args[0], torch.Tensor) and args[0].is_meta:
                if name in ("item", "tolist", "numpy", "__bool__", "__int__", "__float__", "__index__") or (
                        name in ("cpu", "to") and not any(a == "meta" for a in (*args[1:], kwargs.get("device")))
                        and (name == "cpu" or _targets_cpu(args[1:], kwargs))):
                    read(args[0])
            return func(*args, **kwargs)

    def _targets_cpu(args: tuple, kwargs: dict) -> bool:
        return any(isinstance(a, (str, torch.device)) and str(a).split(":")[0] == "cpu"
                   for a in (*args, kwargs.get("device")))

    MetaDevice().__enter__()  # for the whole run


# ------------------------------------------------------------------------------------------ build recording
class Builds:
    """Outermost build per thread (an autotuning run groups every build made while it runs, in any thread)."""

    def __init__(self) -> None:
        self.local = threading.local()
        self.group: dict | None = None
        self.count: dict[str, int] = {}

    def _name(self, fn_args: tuple, fn_kwargs: dict, kind: str) -> str:
        for a in (*fn_args, *fn_kwargs.values()):
            attrs = getattr(a, "attrs", None)
            try:
                if attrs is not None and "global_symbol" in attrs:
                    return str(attrs["global_symbol"])
            except Exception:
                pass
            for attr in ("__name__", "func", "fn", "jit_impl"):
                inner = getattr(a, attr, None)
                if isinstance(inner, str):
                    return inner
                if inner is not None and isinstance(getattr(inner, "__name__", None), str):
                    return inner.__name__
        return kind

    def wrap_build(self, fn, kind: str):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if getattr(self.local, "current", None) is not None:
                return fn(*args, **kwargs)
            if self.group is not None:
                result = fn(*args, **kwargs)
                group = self.group
                if group is not None and group["binary"]:
                    # decided; what the tuner does next (benchmark) needs the device, and tuners wait for every
                    # queued compile before they let an exception out: end the process here
                    self.group = None
                    group["ok"], group["error"] = True, None
                    self.finish(group)
                    emit(event="end", status="stopped", detail="autotuning: a configuration reached a binary")
                    sys.stdout.flush()
                    sys.stderr.flush()
                    os._exit(0)
                return result
            record = {"kind": kind, "name": self._name(args[1:] if kind.endswith("init") else args, kwargs, kind),
                      "binary": False}
            emit(event="begin", name=record["name"])
            self.local.current = record
            try:
                result = fn(*args, **kwargs)
                record["ok"] = True
                return result
            except BaseException as exc:
                record["ok"] = False
                record["error"] = first_error_line(exc) if not isinstance(exc, DeviceStop) else f"stop: {exc}"
                raise
            finally:
                self.local.current = None
                self.finish(record)
        return wrapper

    def wrap_group(self, fn):
        @functools.wraps(fn)
        def wrapper(tuner, *args, **kwargs):
            if self.group is not None:
                return fn(tuner, *args, **kwargs)
            impl = getattr(tuner, "jit_impl", None) or getattr(tuner, "fn", None)
            name = getattr(getattr(impl, "func", impl), "__name__", None) or getattr(impl, "__name__", "autotune")
            record = {"kind": "autotune", "name": str(name), "binary": False, "configs": 0}
            emit(event="begin", name=record["name"])
            self.group = record
            try:
                result = fn(tuner, *args, **kwargs)
                record["ok"] = True
                return result
            except BaseException as exc:
                record["ok"] = False
                record["error"] = first_error_line(exc) if not isinstance(exc, DeviceStop) else f"stop: {exc}"
                raise
            finally:
                self.group = None
                self.finish(record)
        return wrapper

    def wrap_binary(self, fn, *, none_is_miss: bool = False, takes_source: bool = False):
        """`fn` returns a binary (None for a miss when `none_is_miss`); `takes_source`: its first argument is the
        device source, whose digest a plain build's record collects (`finish` turns them into ``source``)."""
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            source = _source_of(args, kwargs) if takes_source else None
            digest = _digest(source) if isinstance(source, (str, bytes, bytearray)) else None
            plain = getattr(self.local, "current", None) if self.group is None else None
            if plain is not None and digest is not None and digest not in plain.setdefault("_sources", []):
                plain["_sources"].append(digest)  # handed to the compiler, whether it then succeeds or not
            result = fn(*args, **kwargs)
            if not (none_is_miss and result is None):
                record = self.group or getattr(self.local, "current", None)
                if record is not None:
                    record["binary"] = True
                    if digest is None:
                        record["_unknown"] = True  # a binary whose source was not seen
            return result
        return wrapper

    def finish(self, record: dict) -> None:
        sources, unknown = record.pop("_sources", None), record.pop("_unknown", False)
        if sources and not unknown and record["kind"] != "autotune":
            record["source"] = (sources[0] if len(sources) == 1 else _digest("\n".join(sources)))[:16]
        n = self.count.get(record["name"], 0)
        self.count[record["name"]] = n + 1
        record["id"] = record["name"] + (f"#{n + 1}" if n else "")
        emit(event="build", **record)


def _digest(data: str | bytes) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else bytes(data)).hexdigest()


def _source_of(args: tuple, kwargs: dict) -> object:
    """The device source a device compiler was handed: its first argument (``source`` here, ``code`` in the
    reference's nvcc / NVRTC / hipcc)."""
    if args:
        return args[0]
    return kwargs.get("source", kwargs.get("code"))


def _launch(*args: object, **kwargs: object) -> None:
    raise DeviceStop("kernel launch")


def _timing(*args: object, **kwargs: object) -> None:
    raise DeviceStop("device timing (do_bench)")


# (module, attribute path, role); a TileLang that lacks one skips it
HOOKS = (
    ("tilelang.jit.compiler", "compile_with", "build"),  # this project: every compile, through the JIT too
    ("tilelang.jit", "compile", "build"),  # the reference
    ("tilelang.jit.kernel", "JITKernel.__init__", "build-init"),  # the reference's JITKernel compiles itself
    ("tilelang.engine.lower", "lower", "build"),
    ("tilelang.autotuner.tuner", "AutoTuner.run", "group"),
    ("tilelang_cuda.compiler", "compile_source", "binary-source"),  # this project: nvcc / NVRTC (memoised)
    ("tilelang_rocm.codegen", "link", "binary"),  # this project: ld.lld -> hsaco (from an object: no source)
    ("tilelang.contrib.nvcc", "compile_cuda", "binary-source"),
    ("tilelang.contrib.nvrtc", "compile_cuda", "binary-source"),
    ("tilelang.contrib.hipcc", "compile_hip", "binary-source"),
    ("tilelang.cache.cuda_binary_cache", "CUDABinaryCache.load", "binary-cached"),
    ("tilelang.jit.kernel", "JITKernel.__call__", "launch"),
    ("tilelang.jit.kernel", "JITKernel._raise_unavailable", "launch"),  # this project, with no device
    ("tilelang.jit.adapter.base", "BaseKernelAdapter.__call__", "launch"),  # the reference's profiler calls it
    ("tilelang.profiler.bench", "do_bench", "timing"),
)


def install_hooks(builds: Builds) -> list[str]:
    """Wrap every hook point present; functions imported elsewhere by name are replaced there too."""
    installed = []
    for module_name, path, role in HOOKS:
        try:
            module = importlib.import_module(module_name)
        except Exception:
            continue
        owner, attr = module, path
        if "." in path:
            cls_name, attr = path.split(".")
            owner = getattr(module, cls_name, None)
            if owner is None:
                continue
        original = inspect.getattr_static(owner, attr, None) if isinstance(owner, type) else getattr(owner, attr, None)
        if original is None:
            continue
        if role in ("launch", "timing"):
            wrapped = _launch if role == "launch" else _timing
        elif role == "group":
            wrapped = builds.wrap_group(original)
        elif role.startswith("binary"):
            wrapped = builds.wrap_binary(original.__func__ if isinstance(original, classmethod) else original,
                                         none_is_miss=role == "binary-cached", takes_source=role == "binary-source")
            if isinstance(original, classmethod):
                wrapped = classmethod(wrapped)
        else:
            wrapped = builds.wrap_build(original, role)
        setattr(owner, attr, wrapped)
        if not isinstance(owner, type):  # `from m import f` copies elsewhere
            for other in list(sys.modules.values()):
                if other is not None and getattr(other, "__name__", "").startswith("tilelang") and \
                        getattr(other, attr, None) is original:
                    setattr(other, attr, wrapped)
        installed.append(f"{module_name}:{path}")
    return installed


def main() -> int:
    global EVENTS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", required=True, choices=sorted(DEVICES))
    ap.add_argument("--events", required=True)
    ap.add_argument("script")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    ns = ap.parse_args()
    EVENTS = ns.events
    simulate_device(ns.device)
    import tilelang  # noqa: F401  (before the script, so that hooks wrap what the script will call)

    builds = Builds()
    hooks = install_hooks(builds)
    emit(event="start", script=ns.script, device=ns.device, hooks=hooks,
         tilelang=getattr(sys.modules["tilelang"], "__version__", "?"))
    script = os.path.abspath(ns.script)
    sys.argv = [script, *ns.args]
    sys.path.insert(0, os.path.dirname(script))
    status, detail = "completed", ""
    try:
        runpy.run_path(script, run_name="__main__")
    except DeviceStop as stop:
        status, detail = "stopped", str(stop)
    except SystemExit as exc:
        status, detail = ("completed", "") if exc.code in (None, 0) else ("error", f"SystemExit: {exc.code}")
    except BaseException as exc:
        status, detail = "error", first_error_line(exc)
        traceback.print_exc()
        where = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == script]
        if where:
            detail += f" (line {where[-1].lineno})"
    emit(event="end", status=status, detail=detail)
    return 0


if __name__ == "__main__":
    sys.exit(main())
