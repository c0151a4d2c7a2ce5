"""Reading the WGSL that TVM's WebGPU codegen emits: one shader per kernel, and the interface it declares.

TVM 0.27's convention (``codegen_webgpu.cc``, mirrored by its web runtime's ``createShader``):

- every buffer parameter is ``@group(0) @binding(i) var<storage, read|read_write>``, i counting buffer
  parameters in the kernel's parameter order;
- every scalar parameter is a field of ``struct PODArgs``, in parameter order, followed by
  ``packGridDimX: u32``; the struct is one ``var<uniform>`` at the binding after the last buffer;
- ``blockIdx.x`` is ``blockIdx.z * gridDim.x + blockIdx.x``, so a grid wider than the per-dimension limit is
  spread over z; blocks whose index passes ``packGridDimX`` return at once.

`ShaderInterface.parse` reads exactly that; `validation_error` turns naga's complaint into a clear error.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

from tilelang.errors import LoweringError

__all__ = ["Binding", "ShaderInterface", "split_functions", "WGSLValidationError", "validation_error"]

_FUNCTION_HEADER = re.compile(r"^// Function: (\w+)\n//-+\n", re.M)
_BINDING = re.compile(r"@group\(0\)\s*@binding\((\d+)\)\s*var<(storage|uniform)(?:,\s*(\w+))?>\s*(\w+)\s*:\s*([^;]+);")
_POD_STRUCT = re.compile(r"struct\s+PODArgs\s*\{([^}]*)\}", re.S)
_FIELD = re.compile(r"(\w+)\s*:\s*(\w+)")
_WORKGROUP = re.compile(r"@workgroup_size\(([^)]*)\)")
_GUARD = re.compile(r"gridDim\.x \+ blockIdx\.x (>=?) podArgs\.packGridDimX")
_ENTRY = re.compile(r"@compute\b.*?\bfn\s+(\w+)", re.S)
# WGSL scalar -> (struct format character, size == alignment in a uniform struct)
POD_FORMATS = {"i32": "i", "u32": "I", "f32": "f", "f16": "e", "i64": "q", "u64": "Q", "f64": "d"}


class WGSLValidationError(LoweringError):
    """The WGSL of a kernel was rejected by the WebGPU implementation (naga); the message quotes the line."""


@dataclass(frozen=True)
class Binding:
    """One ``@group(0) @binding(index)`` resource: a storage buffer (``access`` read / read_write) or the
    uniform holding the scalar arguments."""

    index: int
    name: str
    kind: str  # "storage" | "uniform"
    access: str  # "read" | "read_write" | ""
    wgsl_type: str


@dataclass(frozen=True)
class ShaderInterface:
    """What one kernel's WGSL declares: its entry point, bindings, scalar fields and workgroup size."""

    entry: str
    bindings: tuple[Binding, ...]
    pod_fields: tuple[tuple[str, str], ...]  # (name, wgsl scalar type), packGridDimX included
    workgroup_size: tuple[int, int, int]
    guard_inclusive: bool  # True when blocks with index == packGridDimX still run (TVM's ``>`` guard)

    @property
    def storage(self) -> tuple[Binding, ...]:
        return tuple(b for b in self.bindings if b.kind == "storage")

    @property
    def uniform(self) -> Binding | None:
        return next((b for b in self.bindings if b.kind == "uniform"), None)

    @classmethod
    def parse(cls, wgsl: str) -> ShaderInterface:
        entries = _ENTRY.findall(wgsl)
        if len(entries) != 1:
            raise ValueError(f"expected one @compute entry point in the WGSL, found {len(entries)}")
        bindings = tuple(sorted((Binding(int(i), name, kind, access or "", ty.strip())
                                 for i, kind, access, name, ty in _BINDING.findall(wgsl)), key=lambda b: b.index))
        pod = _POD_STRUCT.search(wgsl)
        fields = tuple(_FIELD.findall(pod.group(1))) if pod else ()
        for name, ty in fields:
            if ty not in POD_FORMATS:
                raise ValueError(f"scalar argument {name!r} has WGSL type {ty!r}; supported: {sorted(POD_FORMATS)}")
        size = _WORKGROUP.search(wgsl)
        dims = [int(x.strip().rstrip("u").rstrip("i")) for x in size.group(1).split(",")] if size else [1]
        guard = _GUARD.search(wgsl)
        return cls(entries[0], bindings, fields, tuple(([*dims, 1, 1])[:3]), guard is None or guard.group(1) == ">")

    def pack_pods(self, values: list[int | float]) -> bytes:
        """The uniform's bytes for `values` (one per field of PODArgs), laid out by WGSL's uniform rules."""
        out = bytearray()
        for (_, ty), value in zip(self.pod_fields, values):
            fmt = POD_FORMATS[ty]
            width = struct.calcsize(fmt)
            out += bytes(-len(out) % width)
            out += struct.pack("<" + fmt, value)
        out += bytes(-len(out) % 16 if out else 16)  # a uniform struct's size is a multiple of 16
        return bytes(out)


def split_functions(source: str) -> dict[str, str]:
    """``{kernel name: its WGSL}`` from TVM's module source (``// Function: name`` headers between kernels)."""
    marks = list(_FUNCTION_HEADER.finditer(source))
    if not marks:
        entries = _ENTRY.findall(source)
        return {entries[0]: source} if len(entries) == 1 else {}
    shaders: dict[str, str] = {}
    for mark, nxt in zip(marks, [*marks[1:], None]):
        body = source[mark.end(): nxt.start() if nxt else len(source)]
        if body.strip():
            shaders[mark.group(1)] = body
    return shaders


_LOCATION = re.compile(r"wgsl:(\d+):(\d+)")


def validation_error(exc: BaseException, wgsl: str, kernel: str) -> WGSLValidationError:
    """A `WGSLValidationError` carrying naga's message, the kernel's name and the offending WGSL line."""
    text = str(exc).strip()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    message = next((ln.strip() for ln in lines if "error" in ln.lower() and not ln.startswith("Validation")),
                   lines[-1].strip() if lines else type(exc).__name__)
    message = re.sub(r"^Shader '[^']*' (parsing|validation) error:\s*", "", message)
    loc = _LOCATION.search(text)
    detail = f"WGSL of kernel {kernel!r} rejected by the WebGPU implementation: {message}"
    if loc is None:
        return WGSLValidationError(f"{detail}\n{text}")
    lineno, col = int(loc.group(1)), int(loc.group(2))
    source_lines = wgsl.splitlines()
    line = source_lines[lineno - 1] if 0 < lineno <= len(source_lines) else None
    return WGSLValidationError(detail, location=(f"<wgsl:{kernel}>", lineno, col - 1), source_line=line)
