"""The Metal view of a kernel's launch plan: which MSL kernels run, in what order, bound to what.

TVM's Metal codegen gives every device function the signature::

    kernel void f(device T* X_ptr [[ buffer(0) ]], ...,                    // the tensors, in order
                  constant f_args_t& arg [[ buffer(n) ]],                   // only when there are scalars
                  uint2 blockIdx [[threadgroup_position_in_grid]],
                  uint2 threadIdx [[thread_position_in_threadgroup]])

where ``f_args_t`` is a struct of one ``T name[2]`` field per scalar parameter or symbolic dimension (TVM
packs each in a 64-bit slot). Core's launch plan (``artifact.launch_plan``, `tilelang.engine.launch_plan`)
gives the launch order, the caller's parameter bound to each buffer slot, each scalar's value and grid /
threadgroup size as safe expressions; here each step adds the struct's layout read from the MSL (name, MSL
type, count, byte offset, and the device parameter that fills it) and size. Pure Python: nothing here needs
TVM, torch or a Mac, so the whole plan is testable on Linux.
"""

from __future__ import annotations

import json
import re
import struct
from dataclasses import asdict, dataclass
from typing import Any

from tilelang.backend.sdk import BoundLaunch, KernelLaunch, LaunchExpr, bind_launch
from tilelang.backend.sdk import LaunchPlan as CoreLaunchPlan
from tilelang.errors import ExecutionBackendUnavailable, KernelArgumentError, TileLangError
from tilelang_metal.threadgroup_memory import KERNEL_HEAD

__all__ = ["PLAN_FILE", "PodField", "KernelStep", "LaunchPlan", "parse_kernels", "parse_structs", "plan_for",
           "bind_arguments"]

PLAN_FILE = "metal_launch.json"
_VERSION = 2

# MSL scalar type -> (struct format, size == alignment)
_MSL_SCALARS: dict[str, tuple[str, int]] = {
    "bool": ("?", 1), "char": ("b", 1), "uchar": ("B", 1), "short": ("h", 2), "ushort": ("H", 2),
    "int": ("i", 4), "uint": ("I", 4), "long": ("q", 8), "ulong": ("Q", 8), "half": ("e", 2),
    "float": ("f", 4), "bfloat": ("H", 2),
    "int8_t": ("b", 1), "uint8_t": ("B", 1), "int16_t": ("h", 2), "uint16_t": ("H", 2), "int32_t": ("i", 4),
    "uint32_t": ("I", 4), "int64_t": ("q", 8), "uint64_t": ("Q", 8), "unsigned": ("I", 4),
}


class MetalLaunchError(TileLangError):
    """A Metal kernel cannot be bound to the call's arguments."""


@dataclass(frozen=True)
class PodField:
    """One field of a device function's scalar struct: ``msl_type name[count]`` at byte `offset`; `param`: the
    index of the device parameter (in core's plan) that fills it, -1 while unassigned."""

    name: str
    msl_type: str
    count: int
    offset: int
    param: int = -1


@dataclass(frozen=True)
class KernelStep:
    """One device function: core's launch of it, the caller's parameter index per buffer slot (slots 0..n-1)
    and the scalar struct (bound at slot n) and its size."""

    launch: KernelLaunch
    buffers: tuple[int, ...]
    pods: tuple[PodField, ...]
    pod_size: int

    @property
    def name(self) -> str:
        return self.launch.name

    @property
    def grid(self) -> tuple[LaunchExpr, LaunchExpr, LaunchExpr]:
        return self.launch.grid

    @property
    def threads(self) -> tuple[LaunchExpr, LaunchExpr, LaunchExpr]:
        return self.launch.block

    @property
    def pod_slot(self) -> int | None:
        """The buffer index of the scalar struct, when there is one."""
        return len(self.buffers) if self.pods else None

    @staticmethod
    def dims(bound: BoundLaunch) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        """(threadgroups per grid, threads per threadgroup) of this step bound to a call."""
        return bound.grid, bound.block

    def pack(self, bound: BoundLaunch) -> bytes:
        """The scalar struct's bytes for a call (each field's element 0 holds the value, the rest zeros)."""
        out = bytearray(self.pod_size)
        for f in self.pods:
            value = bound.args[f.param]
            fmt = _MSL_SCALARS[f.msl_type][0]
            if f.msl_type == "bfloat":
                value = struct.unpack("<I", struct.pack("<f", float(value)))[0] >> 16
            elif fmt in "efd":
                value = float(value)
            elif fmt == "?":
                value = bool(value)
            else:
                value = int(value)
            struct.pack_into("<" + fmt, out, f.offset, value)
        return bytes(out)


@dataclass(frozen=True)
class LaunchPlan:
    """Core's plan (`launch`) with one `KernelStep` per kernel in launch order, and the MSL library."""

    name: str
    source: str
    launch: CoreLaunchPlan
    steps: tuple[KernelStep, ...]

    def to_json(self) -> str:
        return json.dumps({"version": _VERSION, "name": self.name, "source": self.source,
                           "launch": self.launch.to_json(),
                           "steps": [{"buffers": list(s.buffers), "pods": [asdict(p) for p in s.pods],
                                      "pod_size": s.pod_size} for s in self.steps]})

    @classmethod
    def from_json(cls, text: str | bytes) -> LaunchPlan:
        data = json.loads(text)
        if data.get("version") != _VERSION:
            raise ValueError(f"Metal launch plan version {data.get('version')!r}, expected {_VERSION}")
        launch = CoreLaunchPlan.from_json(data["launch"])
        steps = tuple(KernelStep(k, tuple(s["buffers"]), tuple(PodField(**p) for p in s["pods"]), s["pod_size"])
                      for s, k in zip(data["steps"], launch.kernels))
        return cls(data["name"], data["source"], launch, steps)


# ---------------------------------------------------------------------------------------------- MSL parsing
@dataclass(frozen=True)
class KernelSignature:
    """A ``kernel void`` function: its buffer parameters ``(slot, name, msl type)`` and its struct type."""

    name: str
    buffers: tuple[tuple[int, str, str], ...]
    pod_struct: str | None
    pod_slot: int | None


_KERNEL = re.compile(KERNEL_HEAD + r"(.*?)\)\s*\{", re.S)
_BUFFER_ATTR = re.compile(r"\[\[\s*buffer\(\s*(\d+)\s*\)\s*\]\]")
_STRUCT = re.compile(r"struct\s+(\w+)\s*\{(.*?)\}\s*;", re.S)
_FIELD = re.compile(r"^\s*(?:constant\s+|const\s+)?([A-Za-z_][\w ]*?)\s+(\w+)\s*(?:\[\s*(\d+)\s*\])?\s*$")


def _split_params(text: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([<":
            depth += 1
        elif ch in ")]>":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def parse_kernels(msl: str) -> dict[str, KernelSignature]:
    """Every ``kernel void`` function of `msl`, by name, in source order."""
    out: dict[str, KernelSignature] = {}
    for name, params in _KERNEL.findall(msl):
        buffers: list[tuple[int, str, str]] = []
        pod_struct = pod_slot = None
        for p in _split_params(params):
            m = _BUFFER_ATTR.search(p)
            if m is None:
                continue  # a [[threadgroup_position_in_grid]]-style built-in
            slot = int(m.group(1))
            decl = p[:m.start()].strip()
            words = decl.replace("*", " * ").replace("&", " & ").split()
            pname = words[-1]
            if words[0] == "constant" and "&" in words:
                pod_struct, pod_slot = words[1], slot
            else:
                buffers.append((slot, pname, " ".join(w for w in words[:-1] if w not in ("device", "*",
                                                                                          "const", "constant",
                                                                                          "__restrict"))))
        buffers.sort()
        slots = [b[0] for b in buffers]
        if slots != list(range(len(slots))) or (pod_slot is not None and pod_slot != len(slots)):
            raise ExecutionBackendUnavailable(
                f"metal: kernel {name!r} binds buffers at slots {slots} (scalars at {pod_slot}); expected "
                f"0..{len(slots) - 1} then the scalar struct")
        out[name] = KernelSignature(name, tuple(buffers), pod_struct, pod_slot)
    return out


def parse_structs(msl: str) -> dict[str, tuple[tuple[PodField, ...], int]]:
    """Every ``struct`` of `msl` made of scalar (array) fields: its fields with C-layout offsets and its size."""
    out: dict[str, tuple[tuple[PodField, ...], int]] = {}
    for sname, body in _STRUCT.findall(msl):
        fields, offset, align = [], 0, 1
        for decl in filter(None, (d.strip() for d in body.split(";"))):
            m = _FIELD.match(decl)
            if m is None or m.group(1).strip() not in _MSL_SCALARS:
                break
            mtype, fname, count = m.group(1).strip(), m.group(2), int(m.group(3) or 1)
            size = _MSL_SCALARS[mtype][1]
            offset = (offset + size - 1) // size * size
            fields.append(PodField(fname, mtype, count, offset))
            offset += size * count
            align = max(align, size)
        else:
            out[sname] = (tuple(fields), (offset + align - 1) // align * align)
    return out


# ---------------------------------------------------------------------------------------------- the plan
def plan_for(artifact: Any) -> LaunchPlan:
    """The Metal plan of `artifact`: its stored plan, else one made from core's plan and the MSL."""
    stored = artifact.files.get(PLAN_FILE) if getattr(artifact, "files", None) else None
    if stored is not None:
        return LaunchPlan.from_json(stored)
    launch = getattr(artifact, "launch_plan", None)
    if launch is None:
        raise ExecutionBackendUnavailable(f"metal: kernel {artifact.name!r} carries no launch plan: recompile it "
                                          "(clear the kernel cache)")
    msl = artifact.kernel_source
    kernels = parse_kernels(msl)
    if not kernels:
        raise ExecutionBackendUnavailable(f"metal: kernel {artifact.name!r} has no MSL kernel function to run")
    structs = parse_structs(msl)
    steps = []
    for k in launch.kernels:
        sig = kernels.get(k.name)
        if sig is None:
            raise ExecutionBackendUnavailable(f"metal: no MSL kernel for device function {k.name!r} of "
                                              f"{artifact.name!r}")
        pointers = [p for p in k.params if p.is_pointer]
        if len(pointers) != len(sig.buffers):
            raise ExecutionBackendUnavailable(f"metal: kernel {k.name!r} binds {len(sig.buffers)} buffers, its "
                                              f"launch plan {len(pointers)}")
        for p in pointers:
            if p.tensor is None:
                raise ExecutionBackendUnavailable(
                    f"metal: device function {k.name!r} of {artifact.name!r} reads buffer {p.name!r}, which is "
                    f"none of the kernel's parameters ({', '.join(launch.param_names)}); Metal kernels cannot use "
                    "host-allocated workspaces")
        buffers = tuple(int(p.tensor) for p in pointers)  # type: ignore[arg-type]
        pods: tuple[PodField, ...] = ()
        pod_size = 0
        if sig.pod_struct is not None:
            if sig.pod_struct not in structs:
                raise ExecutionBackendUnavailable(
                    f"metal: cannot lay out {sig.pod_struct!r}, the scalar struct of {k.name!r}")
            fields, pod_size = structs[sig.pod_struct]
            pods = tuple(PodField(f.name, f.msl_type, f.count, f.offset, _scalar_index(k, f.name)) for f in fields)
        steps.append(KernelStep(k, buffers, pods, pod_size))
    return LaunchPlan(artifact.name, msl, launch, tuple(steps))


def _scalar_index(launch: KernelLaunch, field: str) -> int:
    """The device parameter of `launch` a struct field holds (by name; TVM may suffix a colliding id)."""
    for cand in (field, re.sub(r"_\d+$", "", field)):
        for i, p in enumerate(launch.params):
            if not p.is_pointer and p.name == cand:
                return i
    known = ", ".join(p.name for p in launch.params if not p.is_pointer)
    raise ExecutionBackendUnavailable(f"metal: cannot bind scalar {field!r} of kernel {launch.name!r} "
                                      f"(its scalars: {known})")


# ---------------------------------------------------------------------------------------------- binding a call
def bind_arguments(plan: LaunchPlan, params: list[Any], args: tuple[Any, ...]) -> list[BoundLaunch]:
    """Every step of `plan` bound to a call, after checking `args` against `params` (ParamInfo): the count,
    static extents and symbolic dims that agree between tensors."""
    kernel = plan.name
    if len(args) != len(params):
        raise MetalLaunchError(f"{kernel}: expected {len(params)} arguments "
                               f"({', '.join(p.name for p in params)}), got {len(args)}")
    dims: dict[str, int] = {}
    for p, a in zip(params, args):
        if not p.is_tensor:
            continue
        shape = tuple(getattr(a, "shape", ()))
        if len(shape) != len(p.shape):
            raise MetalLaunchError(f"{kernel}: {p.name} needs {len(p.shape)} dims, got shape {list(shape)}")
        for dim, size in zip(p.shape, shape):
            if isinstance(dim, int):
                if dim != int(size):
                    raise MetalLaunchError(f"{kernel}: {p.name} needs shape {list(p.shape)}, got {list(shape)}")
            elif str(dim).isidentifier():
                if dims.setdefault(str(dim), int(size)) != int(size):
                    raise MetalLaunchError(f"{kernel}: dim {dim} is {dims[str(dim)]} elsewhere, {size} in {p.name}")
    try:
        return bind_launch(plan.launch, args)
    except KernelArgumentError as exc:
        raise MetalLaunchError(f"{kernel}: {exc}") from None
