"""The launch plan of a compiled Metal kernel: which MSL kernels run, in what order, bound to what.

TVM's Metal codegen gives every device function the signature::

    kernel void f(device T* X_ptr [[ buffer(0) ]], ...,                    // the tensors, in order
                  constant f_args_t& arg [[ buffer(n) ]],                   // only when there are scalars
                  uint2 blockIdx [[threadgroup_position_in_grid]],
                  uint2 threadIdx [[thread_position_in_threadgroup]])

where ``f_args_t`` is a struct of one ``T name[2]`` field per scalar parameter or symbolic dimension (TVM
packs each in a 64-bit slot). The plan records, per device function: the caller's parameter bound to each
buffer slot, the struct's fields (name, MSL type, count, byte offset) and size, and its grid (threadgroups)
and threadgroup size as Python expressions over the call's scalars and symbolic dims. It is built from the MSL
alone, plus the lowered IR for the per-function launch extents and launch order when the artifact still has
them (else ``metadata["grid"]`` / ``["threads"]``, valid for a single device function). Pure Python: nothing
here needs TVM, torch or a Mac, so the whole plan is testable on Linux.
"""

from __future__ import annotations

import ast
import json
import re
import struct
from dataclasses import asdict, dataclass
from typing import Any

from tilelang.errors import ExecutionBackendUnavailable, TileLangError

__all__ = ["PLAN_FILE", "PodField", "KernelStep", "LaunchPlan", "parse_kernels", "parse_structs", "plan_for",
           "bind_arguments", "evaluate"]

PLAN_FILE = "metal_launch.json"
_VERSION = 1
_BLOCK_TAGS = ("blockIdx.x", "blockIdx.y", "blockIdx.z")
_THREAD_TAGS = ("threadIdx.x", "threadIdx.y", "threadIdx.z")

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
    """One field of a device function's scalar struct: ``msl_type name[count]`` at byte `offset`."""

    name: str
    msl_type: str
    count: int
    offset: int


@dataclass(frozen=True)
class KernelStep:
    """One device function: its name, the caller's parameter index per buffer slot (slots 0..n-1), the scalar
    struct (bound at slot n) and its size, and grid / threadgroup size (x, y, z) as Python expressions."""

    name: str
    buffers: tuple[int, ...]
    pods: tuple[PodField, ...]
    pod_size: int
    grid: tuple[str, str, str]
    threads: tuple[str, str, str]

    @property
    def pod_slot(self) -> int | None:
        """The buffer index of the scalar struct, when there is one."""
        return len(self.buffers) if self.pods else None

    def dims(self, env: dict[str, Any]) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        """(threadgroups per grid, threads per threadgroup), evaluated for the call's `env`."""
        grid = tuple(evaluate(g, env) for g in self.grid)
        threads = tuple(evaluate(t, env) for t in self.threads)
        return grid, threads  # type: ignore[return-value]

    def pack(self, env: dict[str, Any]) -> bytes:
        """The scalar struct's bytes for `env` (each field's element 0 holds the value, the rest zeros)."""
        out = bytearray(self.pod_size)
        for f in self.pods:
            value = _lookup(f.name, env, self.name)
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
    """Every step of one kernel call, in launch order, and the MSL library they come from."""

    name: str
    source: str
    steps: tuple[KernelStep, ...]

    def to_json(self) -> str:
        return json.dumps({"version": _VERSION, "name": self.name, "source": self.source,
                           "steps": [asdict(s) for s in self.steps]})

    @classmethod
    def from_json(cls, text: str | bytes) -> LaunchPlan:
        data = json.loads(text)
        if data.get("version") != _VERSION:
            raise ValueError(f"Metal launch plan version {data.get('version')!r}, expected {_VERSION}")
        steps = tuple(KernelStep(s["name"], tuple(s["buffers"]), tuple(PodField(**p) for p in s["pods"]),
                                 s["pod_size"], tuple(s["grid"]), tuple(s["threads"]))  # type: ignore[arg-type]
                      for s in data["steps"])
        return cls(data["name"], data["source"], steps)


# ---------------------------------------------------------------------------------------------- MSL parsing
@dataclass(frozen=True)
class KernelSignature:
    """A ``kernel void`` function: its buffer parameters ``(slot, name, msl type)`` and its struct type."""

    name: str
    buffers: tuple[tuple[int, str, str], ...]
    pod_struct: str | None
    pod_slot: int | None


_KERNEL = re.compile(r"kernel\s+void\s+(\w+)\s*\((.*?)\)\s*\{", re.S)
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
                                                                                          "const", "constant"))))
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
    """The launch plan of `artifact`: its stored plan, else one built from its MSL (and IR when present)."""
    stored = artifact.files.get(PLAN_FILE) if getattr(artifact, "files", None) else None
    if stored is not None:
        return LaunchPlan.from_json(stored)
    msl = artifact.kernel_source
    kernels = parse_kernels(msl)
    if not kernels:
        raise ExecutionBackendUnavailable(f"metal: kernel {artifact.name!r} has no MSL kernel function to run")
    structs = parse_structs(msl)
    names = [p.name for p in artifact.params]
    ir = _ir_launch_facts(artifact, kernels) if getattr(artifact, "device_mod", None) is not None else None
    if ir is not None:
        order = [n for n in ir[0] if n in kernels]
        extents = ir[1]
    else:
        order = [n for n in artifact.metadata.get("device_functions", []) if n in kernels] or list(kernels)
        if len(order) != 1:
            raise ExecutionBackendUnavailable(
                f"metal: kernel {artifact.name!r} has {len(order)} device functions but neither its IR nor a "
                f"stored {PLAN_FILE}: recompile it (clear the kernel cache)")
        meta = artifact.metadata
        extents = {order[0]: (_pad([_checked_expr(str(g)) for g in meta.get("grid", [])]),
                              _pad([_checked_expr(str(t)) for t in meta.get("threads", [])]))}
    steps = []
    for fname in order:
        sig = kernels[fname]
        buffers = tuple(_param_index(artifact.name, fname, names, pname) for _, pname, _ in sig.buffers)
        pods: tuple[PodField, ...] = ()
        pod_size = 0
        if sig.pod_struct is not None:
            if sig.pod_struct not in structs:
                raise ExecutionBackendUnavailable(
                    f"metal: cannot lay out {sig.pod_struct!r}, the scalar struct of {fname!r}")
            pods, pod_size = structs[sig.pod_struct]
        grid, threads = extents.get(fname, (("1", "1", "1"), ("1", "1", "1")))
        steps.append(KernelStep(fname, buffers, pods, pod_size, grid, threads))
    return LaunchPlan(artifact.name, msl, tuple(steps))


def _pad(exprs: list[str]) -> tuple[str, str, str]:
    exprs = [*exprs, "1", "1", "1"][:3]
    return exprs[0], exprs[1], exprs[2]


def _param_index(kernel: str, fname: str, names: list[str], pname: str) -> int:
    for cand in (pname, pname[:-4] if pname.endswith("_ptr") else None):
        if cand in names:
            return names.index(cand)
    raise ExecutionBackendUnavailable(
        f"metal: device function {fname!r} of {kernel!r} reads buffer {pname!r}, which is none of the kernel's "
        f"parameters ({', '.join(names)}); Metal kernels cannot use host-allocated workspaces")


def _ir_launch_facts(artifact: Any, kernels: dict[str, KernelSignature]) -> tuple[list[str], dict] | None:
    """(launch order, {function: (grid, threads)}) from the lowered IR; None where it cannot be read."""
    try:
        import tvm
        import tvm_ffi
        from tvm import tirx
    except ImportError:
        return None
    funcs = {gv.name_hint: f for gv, f in artifact.device_mod.functions.items() if isinstance(f, tirx.PrimFunc)}
    if not set(kernels) & set(funcs):
        return None
    called: list[str] = []

    def on_call(call: Any) -> None:
        if isinstance(call.op, tvm.ir.Op) and call.op.name.startswith("tirx.tvm_call_packed") and call.args:
            name = getattr(call.args[0], "value", None)
            if name in funcs and name not in called:
                called.append(name)

    if artifact.host_mod is not None:
        for func in artifact.host_mod.functions.values():
            if isinstance(func, tirx.PrimFunc):
                tvm_ffi.structural_walk(func.body, [(tvm.ir.Call, on_call)])
    order = called + [n for n in funcs if n not in called]
    facts = {}
    for fname, func in funcs.items():
        extents: dict[str, Any] = {}

        def on_attr(node: Any, extents: dict[str, Any] = extents) -> None:
            if node.attr_key == "thread_extent":
                extents.setdefault(str(node.node.thread_tag), node.value)

        tvm_ffi.structural_walk(func.body, [(tirx.AttrStmt, on_attr)])
        grid = tuple(_to_python(extents[t]) if t in extents else "1" for t in _BLOCK_TAGS)
        threads = tuple(_to_python(extents[t]) if t in extents else "1" for t in _THREAD_TAGS)
        facts[fname] = (grid, threads)
    return order, facts


_BINARY = {"Add": "+", "Sub": "-", "Mul": "*", "FloorDiv": "//", "FloorMod": "%", "RShift": ">>", "LShift": "<<",
           "BitwiseAnd": "&", "BitwiseOr": "|", "BitwiseXor": "^", "LT": "<", "LE": "<=", "GT": ">", "GE": ">=",
           "EQ": "==", "NE": "!=", "And": "and", "Or": "or"}


def _to_python(expr: Any) -> str:
    """A Python expression computing the integer tirx expression `expr` (vars read as names)."""
    kind = type(expr).__name__
    if kind == "IntImm":
        return str(int(expr.value))
    if kind in ("Var", "SizeVar"):
        return str(expr.name)
    if kind in _BINARY:
        return f"({_to_python(expr.a)} {_BINARY[kind]} {_to_python(expr.b)})"
    if kind in ("Min", "Max"):
        return f"{kind.lower()}({_to_python(expr.a)}, {_to_python(expr.b)})"
    if kind == "Div":  # truncating integer division
        return f"int({_to_python(expr.a)} / {_to_python(expr.b)})"
    if kind == "Cast":
        return f"int({_to_python(expr.value)})"
    if kind == "Select":
        return f"({_to_python(expr.true_value)} if {_to_python(expr.condition)} else {_to_python(expr.false_value)})"
    raise ExecutionBackendUnavailable(f"metal: cannot evaluate launch extent {expr} ({kind}) on the host")


_SAFE = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Name, ast.Load, ast.Constant, ast.operator, ast.unaryop,
         ast.Call, ast.IfExp, ast.Compare, ast.cmpop, ast.BoolOp, ast.boolop)


def _checked_expr(text: str) -> str:
    """`text` (a launch extent of the metadata) if it is plain integer arithmetic over names."""
    tree = ast.parse(text, mode="eval")
    for node in ast.walk(tree):
        if not isinstance(node, _SAFE) or (isinstance(node, ast.Call) and getattr(node.func, "id", "") not in
                                           ("min", "max", "int")):
            raise ExecutionBackendUnavailable(f"metal: cannot evaluate launch extent {text!r} without the IR")
    return text


def evaluate(expr: str | int, env: dict[str, Any]) -> int:
    """The integer value of plan expression `expr` for `env`."""
    if isinstance(expr, int):
        return expr
    try:
        return int(eval(_checked_expr(str(expr)), {"__builtins__": {"min": min, "max": max, "int": int}}, dict(env)))
    except NameError as exc:
        raise MetalLaunchError(f"metal: launch extent {expr!r} reads an unbound name ({exc})") from None


def _lookup(name: str, env: dict[str, Any], fname: str) -> Any:
    if name in env:
        return env[name]
    base = re.sub(r"_\d+$", "", name)  # TVM's fresh-name suffix on a colliding id
    if base in env:
        return env[base]
    raise MetalLaunchError(f"metal: cannot bind scalar {name!r} of kernel {fname!r} (known: {', '.join(env)})")


# ---------------------------------------------------------------------------------------------- binding a call
def bind_arguments(params: list[Any], args: tuple[Any, ...], kernel: str = "") -> dict[str, Any]:
    """The call's scalars and symbolic dims by name, after checking `args` against `params` (ParamInfo)."""
    if len(args) != len(params):
        raise MetalLaunchError(f"{kernel}: expected {len(params)} arguments "
                               f"({', '.join(p.name for p in params)}), got {len(args)}")
    env: dict[str, Any] = {}
    for p, a in zip(params, args):
        if p.is_tensor:
            shape = tuple(getattr(a, "shape", ()))
            if len(shape) != len(p.shape):
                raise MetalLaunchError(f"{kernel}: {p.name} needs {len(p.shape)} dims, got shape {list(shape)}")
            for dim, size in zip(p.shape, shape):
                if isinstance(dim, int):
                    if dim != int(size):
                        raise MetalLaunchError(f"{kernel}: {p.name} needs shape {list(p.shape)}, got {list(shape)}")
                elif str(dim).isidentifier():
                    if env.setdefault(str(dim), int(size)) != int(size):
                        raise MetalLaunchError(f"{kernel}: dim {dim} is {env[str(dim)]} elsewhere, {size} in {p.name}")
        else:
            value = a.item() if hasattr(a, "item") else a
            env[p.name] = value
    return env
