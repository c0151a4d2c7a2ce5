"""The launch plan of a compiled WebGPU kernel: which WGSL shaders run, in what order, bound to what.

A kernel is one or more device functions launched in turn by the host function. For each, the plan records
its WGSL, the caller's parameter bound to each storage binding, the name giving each scalar field of
``PODArgs`` (a scalar parameter or a symbolic dimension of a tensor), and its grid as Python expressions over
those names. It is built once from the lowered IR (``artifact.device_mod`` / ``host_mod``), stored as JSON
next to the artifact (`PLAN_FILE`) so a kernel loaded from the cache runs without importing TVM, and rebuilt
from the WGSL alone (``X_ptr`` binds parameter ``X``) plus ``metadata["grid"]`` when neither is there.

A kernel that uses ``T.print`` / ``T.device_assert`` binds the hidden debug log (`tilelang_webgpu.debug_log`):
its binding's parameter index is `DEBUG_LOG`, and the plan keeps the log's record table (`LaunchPlan.debug`).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import asdict, dataclass
from typing import Any

from tilelang.errors import ExecutionBackendUnavailable
from tilelang_webgpu.wgsl import ShaderInterface, split_functions

__all__ = ["DEBUG_LOG", "PLAN_FILE", "KernelStep", "LaunchPlan", "plan_for"]

PLAN_FILE = "webgpu_launch.json"
_VERSION = 1
_BLOCK_TAGS = ("blockIdx.x", "blockIdx.y", "blockIdx.z")
DEBUG_LOG = -1  # the parameter index of the debug log's binding


@dataclass(frozen=True)
class KernelStep:
    """One device function: its WGSL, the parameter index per storage binding, the name per scalar field
    (``packGridDimX`` excluded) and its grid (x, y, z) as Python expressions over those names."""

    name: str
    wgsl: str
    buffers: tuple[int, ...]
    pods: tuple[str, ...]
    grid: tuple[str, str, str]


@dataclass(frozen=True)
class LaunchPlan:
    """Every step of one kernel call, in launch order; `debug`: the debug log's record table (empty when no step
    binds the log)."""

    name: str
    steps: tuple[KernelStep, ...]
    debug: tuple[dict[str, str], ...] = ()

    @property
    def uses_debug_log(self) -> bool:
        return any(DEBUG_LOG in s.buffers for s in self.steps)

    def to_json(self) -> str:
        return json.dumps({"version": _VERSION, "name": self.name, "steps": [asdict(s) for s in self.steps],
                           "debug": list(self.debug)})

    @classmethod
    def from_json(cls, text: str | bytes) -> LaunchPlan:
        data = json.loads(text)
        if data.get("version") != _VERSION:
            raise ValueError(f"launch plan version {data.get('version')!r}, expected {_VERSION}")
        steps = tuple(KernelStep(s["name"], s["wgsl"], tuple(s["buffers"]), tuple(s["pods"]), tuple(s["grid"]))
                      for s in data["steps"])
        return cls(data["name"], steps, tuple(data.get("debug", ())))


def plan_for(artifact: Any) -> LaunchPlan:
    """The launch plan of `artifact`: its stored plan, else one built from its IR, else from its WGSL."""
    stored = artifact.files.get(PLAN_FILE) if artifact.files else None
    if stored is not None:
        return LaunchPlan.from_json(stored)
    shaders = split_functions(artifact.kernel_source)
    if not shaders:
        raise ExecutionBackendUnavailable(f"wgpu: kernel {artifact.name!r} has no WGSL compute shader to run")
    names = [p.name for p in artifact.params]
    if artifact.device_mod is not None:
        steps = _steps_from_ir(artifact, shaders, names)
    else:
        steps = _steps_from_wgsl(artifact, shaders, names)
    debug: tuple[dict[str, str], ...] = ()
    if any(DEBUG_LOG in s.buffers for s in steps):
        from tilelang_webgpu.debug_log import records_of

        mods = [m for m in (artifact.host_mod, artifact.device_mod) if m is not None]
        debug = tuple(records_of([f for m in mods for f in m.functions.values()]))
    return LaunchPlan(artifact.name, tuple(steps), debug)


# ---------------------------------------------------------------------------------------------- from the IR
def _steps_from_ir(artifact: Any, shaders: dict[str, str], names: list[str]) -> list[KernelStep]:
    import tvm
    import tvm_ffi
    from tvm import tirx

    funcs = {gv.name_hint: f for gv, f in artifact.device_mod.functions.items() if isinstance(f, tirx.PrimFunc)}
    order = _call_order(artifact.host_mod, funcs) if artifact.host_mod is not None else list(funcs)
    steps = []
    for fname in order:
        func = funcs[fname]
        if fname not in shaders:
            raise ExecutionBackendUnavailable(f"wgpu: no WGSL for device function {fname!r} of {artifact.name!r}")
        data_names: dict[str, str] = {}
        extents: dict[str, Any] = {}

        def on_decl(node: Any, data_names: dict[str, str] = data_names) -> None:
            if hasattr(node.data, "name"):  # data may also be an expression (a reinterpret, an offset)
                data_names.setdefault(str(node.data.name), str(node.buffer.name))

        def on_attr(node: Any, extents: dict[str, Any] = extents) -> None:
            if node.attr_key == "thread_extent":
                extents.setdefault(str(node.node.thread_tag), node.value)

        tvm_ffi.structural_walk(func.body, [(tirx.DeclBuffer, on_decl), (tirx.AttrStmt, on_attr)])
        buffers, pods = [], []
        for param in func.params:
            pname = str(param.name)
            if isinstance(param.ty, tvm.ir.PointerType):
                buffers.append(_tensor_index(artifact.name, fname, names, [data_names.get(pname), _strip(pname)]))
            else:
                pods.append(pname)
        grid = tuple(_to_python(extents[t]) if t in extents else "1" for t in _BLOCK_TAGS)
        steps.append(KernelStep(fname, shaders[fname], tuple(buffers), tuple(pods), grid))  # type: ignore[arg-type]
    return steps


def _call_order(host_mod: Any, funcs: dict[str, Any]) -> list[str]:
    """Device function names in the order the host launches them (each once)."""
    import tvm
    import tvm_ffi

    called: list[str] = []

    def on_call(call: Any) -> None:
        if isinstance(call.op, tvm.ir.Op) and call.op.name.startswith("tirx.tvm_call_packed") and call.args:
            name = getattr(call.args[0], "value", None)
            if name in funcs and name not in called:
                called.append(name)

    for func in host_mod.functions.values():
        tvm_ffi.structural_walk(func.body, [(tvm.ir.Call, on_call)])
    return called + [n for n in funcs if n not in called]


def _strip(name: str) -> str:
    return name[:-4] if name.endswith("_ptr") else name


def _tensor_index(kernel: str, fname: str, names: list[str], candidates: list[str | None]) -> int:
    from tilelang_webgpu.debug_log import LOG_PARAM

    for cand in candidates:
        if cand == LOG_PARAM and LOG_PARAM not in names:
            return DEBUG_LOG
        if cand in names:
            return names.index(cand)
    raise ExecutionBackendUnavailable(
        f"wgpu: device function {fname!r} of {kernel!r} reads buffer {candidates[-1]!r}, which is none of the "
        f"kernel's parameters ({', '.join(names)}); WebGPU kernels cannot use host-allocated workspaces")


_BINARY = {"Add": "+", "Sub": "-", "Mul": "*", "FloorDiv": "//", "FloorMod": "%", "RShift": ">>", "LShift": "<<",
           "BitwiseAnd": "&", "BitwiseOr": "|", "BitwiseXor": "^", "LT": "<", "LE": "<=", "GT": ">", "GE": ">=",
           "EQ": "==", "NE": "!=", "And": "and", "Or": "or"}


def _to_python(expr: Any) -> str:
    """A Python expression computing the integer tirx expression `expr` (vars read as names)."""
    kind = type(expr).__name__
    if kind == "IntImm":
        return str(int(expr.value))
    if kind == "Var":
        return str(expr.name)
    if kind in _BINARY:
        return f"({_to_python(expr.a)} {_BINARY[kind]} {_to_python(expr.b)})"
    if kind in ("Min", "Max"):
        return f"{kind.lower()}({_to_python(expr.a)}, {_to_python(expr.b)})"
    if kind == "Div":  # truncating integer division
        a, b = _to_python(expr.a), _to_python(expr.b)
        return f"int({a} / {b})"
    if kind == "Cast":
        return f"int({_to_python(expr.value)})"
    if kind == "Select":
        return f"({_to_python(expr.true_value)} if {_to_python(expr.condition)} else {_to_python(expr.false_value)})"
    raise ExecutionBackendUnavailable(f"wgpu: cannot evaluate launch extent {expr} ({kind}) on the host")


# ---------------------------------------------------------------------------------------------- from WGSL only
def _steps_from_wgsl(artifact: Any, shaders: dict[str, str], names: list[str]) -> list[KernelStep]:
    order = [n for n in artifact.metadata.get("device_functions", []) if n in shaders] or list(shaders)
    if len(order) != 1:
        raise ExecutionBackendUnavailable(
            f"wgpu: kernel {artifact.name!r} has {len(order)} device functions but neither its IR nor a stored "
            f"{PLAN_FILE}: recompile it (clear the kernel cache)")
    grid = [_checked_expr(str(g)) for g in artifact.metadata.get("grid", [])] + ["1", "1", "1"]
    fname = order[0]
    iface = ShaderInterface.parse(shaders[fname])
    buffers = tuple(_tensor_index(artifact.name, fname, names, [_strip(b.name)]) for b in iface.storage)
    pods = tuple(name for name, _ in iface.pod_fields if name != "packGridDimX")
    return [KernelStep(fname, shaders[fname], buffers, pods, (grid[0], grid[1], grid[2]))]


_SAFE = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Name, ast.Load, ast.Constant, ast.operator, ast.unaryop,
         ast.Call)


def _checked_expr(text: str) -> str:
    """`text` (a grid entry of the metadata) if it is plain integer arithmetic over names."""
    tree = ast.parse(text, mode="eval")
    for node in ast.walk(tree):
        if not isinstance(node, _SAFE) or (isinstance(node, ast.Call) and getattr(node.func, "id", "") not in
                                           ("min", "max")):
            raise ExecutionBackendUnavailable(f"wgpu: cannot evaluate grid extent {text!r} without the IR")
    return text


def names_in(expr: str) -> set[str]:
    """The variable names a plan expression reads."""
    return {n for n in re.findall(r"[A-Za-z_]\w*", expr) if n not in ("min", "max", "int", "if", "else", "and",
                                                                        "or", "not")}
