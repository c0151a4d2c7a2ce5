"""The launch plan of a compiled kernel: which device functions run, in what order, bound to what.

`build_launch_plan` reads the lowered host and device modules once, at lowering time (`tilelang.lower`), and
the plan travels in the `CompiledArtifact` (``artifact.launch_plan``, serialised with it into the kernel
cache). For each device function, in the order the host launches them, it records:

- every device parameter, in the device function's order: a pointer bound to a caller's tensor parameter (by
  index; ``tensor=None`` for a buffer that is no caller parameter, such as a backend's hidden workspace), or
  a scalar given by an expression;
- grid and block (x, y, z) and the dynamic ("shared.dyn") shared-memory bytes, as expressions.

Expressions are a tiny JSON-able AST, evaluated by `evaluate` without ``eval``:
``int`` | ``["arg", i]`` (caller parameter i, a scalar) | ``["dim", i, axis]`` (a tensor's extent) |
``[op, a, b]`` with op in ``add sub mul floordiv floormod div min max ceildiv shl shr`` |
``["unbound", name]`` / ``["unsupported", text]`` (kept so lowering never fails; binding raises).

`bind(plan, args)` evaluates all of it for one call's arguments and returns one `BoundLaunch` per kernel.
Nothing here imports TVM at module level.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Union

from tilelang.errors import KernelArgumentError

__all__ = ["Expr", "DeviceParam", "KernelLaunch", "LaunchPlan", "BoundLaunch", "LaunchPlanError",
           "build_launch_plan", "bind", "evaluate", "expr_refs", "format_expr"]

Expr = Union[int, tuple]  # noqa: UP007 (a runtime alias)
_VERSION = 1
_BLOCK_TAGS = ("blockIdx.x", "blockIdx.y", "blockIdx.z")
_THREAD_TAGS = ("threadIdx.x", "threadIdx.y", "threadIdx.z")


class LaunchPlanError(KernelArgumentError):
    """A call's arguments cannot be bound to a kernel's launch plan."""


def _ceildiv(a: int, b: int) -> int:
    return -(-a // b)


def _truncdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "floordiv": operator.floordiv,
    "floormod": operator.mod, "div": _truncdiv, "min": min, "max": max, "ceildiv": _ceildiv,
    "shl": operator.lshift, "shr": operator.rshift,
}
_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "floormod": "%", "div": "/", "shl": "<<",
            "shr": ">>"}


# ---------------------------------------------------------------------------------------------- the plan
@dataclass(frozen=True)
class DeviceParam:
    """One parameter of a device function. A pointer (`is_pointer`) is bound to caller tensor `tensor` (None:
    no caller parameter holds it); a scalar takes the value of `value`."""

    name: str
    dtype: str
    is_pointer: bool
    tensor: int | None = None
    value: Expr = 0


@dataclass(frozen=True)
class KernelLaunch:
    """One device function launch: its name, parameters, grid and block (x, y, z) and dynamic shared bytes."""

    name: str
    params: tuple[DeviceParam, ...]
    grid: tuple[Expr, Expr, Expr]
    block: tuple[Expr, Expr, Expr]
    dynamic_shared_bytes: Expr = 0


@dataclass(frozen=True)
class LaunchPlan:
    """Every device function of one kernel call in launch order; `param_names` / `tensor_params`: the caller's
    parameters (names in call order, indices of the tensors)."""

    param_names: tuple[str, ...]
    tensor_params: tuple[int, ...]
    kernels: tuple[KernelLaunch, ...]

    def kernel(self, name: str) -> KernelLaunch:
        for k in self.kernels:
            if k.name == name:
                return k
        raise KeyError(f"no device function {name!r} in the launch plan ({', '.join(self.kernel_names)})")

    @property
    def kernel_names(self) -> list[str]:
        return [k.name for k in self.kernels]

    def to_json(self) -> dict[str, Any]:
        return {"version": _VERSION, "params": list(self.param_names), "tensors": list(self.tensor_params),
                "kernels": [{"name": k.name, "grid": [_expr_json(e) for e in k.grid],
                             "block": [_expr_json(e) for e in k.block],
                             "dynamic_shared_bytes": _expr_json(k.dynamic_shared_bytes),
                             "params": [{"name": p.name, "dtype": p.dtype, "pointer": p.is_pointer,
                                         "tensor": p.tensor, "value": _expr_json(p.value)} for p in k.params]}
                            for k in self.kernels]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LaunchPlan:
        if data.get("version") != _VERSION:
            raise ValueError(f"launch plan version {data.get('version')!r}, expected {_VERSION}")
        kernels = tuple(
            KernelLaunch(k["name"], tuple(DeviceParam(p["name"], p["dtype"], p["pointer"], p["tensor"],
                                                      _expr_from_json(p["value"])) for p in k["params"]),
                         tuple(_expr_from_json(e) for e in k["grid"]),  # type: ignore[arg-type]
                         tuple(_expr_from_json(e) for e in k["block"]),  # type: ignore[arg-type]
                         _expr_from_json(k["dynamic_shared_bytes"]))
            for k in data["kernels"])
        return cls(tuple(data["params"]), tuple(data["tensors"]), kernels)


def _expr_json(e: Expr) -> Any:
    return e if isinstance(e, int) else [e[0], *(_expr_json(a) if not isinstance(a, str) else a for a in e[1:])]


def _expr_from_json(e: Any) -> Expr:
    if isinstance(e, bool) or not isinstance(e, (int, list, tuple)):
        raise ValueError(f"not a launch expression: {e!r}")
    if isinstance(e, int):
        return e
    return (e[0], *(_expr_from_json(a) if not isinstance(a, str) else a for a in e[1:]))


# ---------------------------------------------------------------------------------------------- expressions
def format_expr(e: Expr, names: Sequence[str] = ()) -> str:
    """A readable rendering of `e` (caller parameters by name when `names` is given)."""
    def name(i: int) -> str:
        return names[i] if i < len(names) else f"arg{i}"

    if isinstance(e, int):
        return str(e)
    op = e[0]
    if op == "arg":
        return name(e[1])
    if op == "dim":
        return f"{name(e[1])}.shape[{e[2]}]"
    if op in ("unbound", "unsupported"):
        return f"<{op} {e[1]}>"
    a, b = format_expr(e[1], names), format_expr(e[2], names)
    return f"({a} {_SYMBOLS[op]} {b})" if op in _SYMBOLS else f"{op}({a}, {b})"


def expr_refs(e: Expr) -> list[tuple]:
    """The leaves of `e` that read something (``("arg", i)``, ``("dim", i, axis)``, unbound / unsupported)."""
    if isinstance(e, int):
        return []
    if e[0] in ("arg", "dim", "unbound", "unsupported"):
        return [e]
    return [r for a in e[1:] for r in expr_refs(a)]


def evaluate(e: Expr, args: Sequence[Any], names: Sequence[str] = (), what: str = "launch expression") -> Any:
    """The value of `e` for a call's `args` (caller parameters in order)."""
    if isinstance(e, int):
        return e
    op = e[0]

    def pname(i: int) -> str:
        return names[i] if i < len(names) else f"#{i}"

    if op == "arg":
        value = args[e[1]]
        if hasattr(value, "item") and getattr(value, "ndim", 0) == 0:
            value = value.item()
        if not isinstance(value, (int, float)):
            raise LaunchPlanError(f"argument {pname(e[1])!r} must be a number (the {what} reads it), got "
                                  f"{type(value).__name__}")
        return value
    if op == "dim":
        value, axis = args[e[1]], e[2]
        shape = getattr(value, "shape", None)
        if shape is None or axis >= len(shape):
            got = f"shape {list(shape)}" if shape is not None else type(value).__name__
            raise LaunchPlanError(f"argument {pname(e[1])!r} must be a tensor with at least {axis + 1} dims (the "
                                  f"{what} reads its extent {axis}), got {got}")
        return int(shape[axis])
    if op == "unbound":
        raise LaunchPlanError(f"the {what} reads {e[1]!r}, which is neither a scalar parameter nor a symbolic "
                              "dimension of a tensor parameter")
    if op == "unsupported":
        raise LaunchPlanError(f"the {what} {e[1]!r} cannot be evaluated on the host")
    fn = _OPS.get(op)
    if fn is None or len(e) != 3:
        raise LaunchPlanError(f"malformed {what}: {e!r}")
    a, b = evaluate(e[1], args, names, what), evaluate(e[2], args, names, what)
    if op in ("floordiv", "floormod", "div", "ceildiv") and b == 0:
        raise LaunchPlanError(f"the {what} {format_expr(e, names)} divides by zero for these arguments")
    return fn(a, b)


# ---------------------------------------------------------------------------------------------- binding
@dataclass(frozen=True)
class BoundLaunch:
    """One kernel launch for one call: `args` are the device parameters' values in order (the caller's tensor
    object for a bound pointer, None for an unbound one, a number for a scalar); `dynamic_shared_bytes` is None
    when the plan could not express the pool's size (a backend then uses its own figure)."""

    kernel: KernelLaunch
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    dynamic_shared_bytes: int | None
    args: tuple[Any, ...]

    @property
    def name(self) -> str:
        return self.kernel.name


def bind(plan: LaunchPlan, args: Sequence[Any]) -> list[BoundLaunch]:
    """Every kernel of `plan` bound to one call's `args` (the caller's parameters, in order)."""
    names = plan.param_names
    if len(args) != len(names):
        raise LaunchPlanError(f"expected {len(names)} arguments ({', '.join(names)}), got {len(args)}")
    for i in plan.tensor_params:
        if not hasattr(args[i], "shape"):
            raise LaunchPlanError(f"argument {names[i]!r} must be a tensor, got {type(args[i]).__name__}")
    out = []
    for k in plan.kernels:
        where = f"launch of {k.name!r}"
        grid = tuple(int(evaluate(g, args, names, f"grid of {k.name!r}")) for g in k.grid)
        block = tuple(int(evaluate(b, args, names, f"block of {k.name!r}")) for b in k.block)
        smem = None
        if not any(r[0] in ("unbound", "unsupported") for r in expr_refs(k.dynamic_shared_bytes)):
            smem = int(evaluate(k.dynamic_shared_bytes, args, names, f"shared memory size of {k.name!r}"))
        values = tuple((args[p.tensor] if p.tensor is not None else None) if p.is_pointer
                       else evaluate(p.value, args, names, f"{where}, parameter {p.name!r}") for p in k.params)
        out.append(BoundLaunch(k, grid, block, smem, values))  # type: ignore[arg-type]
    return out


# ---------------------------------------------------------------------------------------------- building
def build_launch_plan(device_mod: Any, host_mod: Any, params: Sequence[Any]) -> LaunchPlan:
    """The plan of a lowered kernel: `device_mod` / `host_mod` after the host/device split, `params` the
    caller's parameters (`tilelang.artifact.ParamInfo`, in call order)."""
    import tvm
    import tvm_ffi
    from tvm import tirx

    names = [p.name for p in params]
    refs: dict[str, Expr] = {}
    for i, p in enumerate(params):
        if not p.is_tensor:
            refs[p.name] = ("arg", i)
    for i, p in enumerate(params):
        for axis, d in enumerate(p.shape if p.is_tensor else ()):
            if isinstance(d, str) and d.isidentifier():
                refs.setdefault(d, ("dim", i, axis))
    tensors = {p.name: i for i, p in enumerate(params) if p.is_tensor}

    funcs = {str(gv.name_hint): f for gv, f in device_mod.functions.items() if isinstance(f, tirx.PrimFunc)}
    kernels = []
    for fname in _call_order(host_mod, funcs, tvm, tvm_ffi, tirx):
        func = funcs[fname]
        data_names: dict[str, str] = {}
        extents: dict[str, Any] = {}

        def on_decl(node: Any, data_names: dict[str, str] = data_names) -> None:
            if hasattr(node.data, "name"):  # data may also be an expression (a reinterpret, an offset)
                data_names.setdefault(str(node.data.name), str(node.buffer.name))

        def on_attr(node: Any, extents: dict[str, Any] = extents) -> None:
            if node.attr_key == "thread_extent":
                extents.setdefault(str(node.node.thread_tag), node.value)

        tvm_ffi.structural_walk(func.body, [(tirx.DeclBuffer, on_decl), (tirx.AttrStmt, on_attr)])
        dparams = []
        for param in func.params:
            pname = str(param.name)
            dtype = str(getattr(param, "dtype", "")) or "handle"
            if isinstance(param.ty, tvm.ir.PointerType):
                index = next((tensors[c] for c in (data_names.get(pname), _strip(pname)) if c in tensors), None)
                dparams.append(DeviceParam(pname, dtype, True, index))
            else:
                dparams.append(DeviceParam(pname, dtype, False, None, _to_expr(param, refs)))
        grid = tuple(_to_expr(extents[t], refs) if t in extents else 1 for t in _BLOCK_TAGS)
        block = tuple(_to_expr(extents[t], refs) if t in extents else 1 for t in _THREAD_TAGS)
        kernels.append(KernelLaunch(fname, tuple(dparams), grid, block,  # type: ignore[arg-type]
                                    _dynamic_shared(func, refs)))
    return LaunchPlan(tuple(names), tuple(sorted(tensors.values())), tuple(kernels))


def _strip(name: str) -> str:
    return name[:-4] if name.endswith("_ptr") else name


def _call_order(host_mod: Any, funcs: dict[str, Any], tvm: Any, tvm_ffi: Any, tirx: Any) -> list[str]:
    """Device function names in the order the host launches them (each once; never-called ones last)."""
    called: list[str] = []

    def on_call(call: Any) -> None:
        if isinstance(call.op, tvm.ir.Op) and call.op.name.startswith("tirx.tvm_call_packed") and call.args:
            name = getattr(call.args[0], "value", None)
            if name in funcs and name not in called:
                called.append(name)

    if host_mod is not None:
        for func in host_mod.functions.values():
            if isinstance(func, tirx.PrimFunc):
                tvm_ffi.structural_walk(func.body, [(tvm.ir.Call, on_call)])
    return called + [n for n in funcs if n not in called]


_BINARY = {"Add": "add", "Sub": "sub", "Mul": "mul", "FloorDiv": "floordiv", "FloorMod": "floormod",
           "Div": "div", "Min": "min", "Max": "max", "LShift": "shl", "RShift": "shr"}


def _to_expr(e: Any, refs: dict[str, Expr]) -> Expr:
    """The plan expression of integer tirx expression `e` (its vars resolved through `refs`)."""
    kind = type(e).__name__
    if kind == "IntImm":
        return int(e.value)
    if kind in ("Var", "SizeVar"):
        name = str(e.name)
        for cand in (name, re.sub(r"_\d+$", "", name)):  # TVM's fresh-name suffix on a colliding id
            if cand in refs:
                return refs[cand]
        return ("unbound", name)
    if kind == "Cast":
        return _to_expr(e.value, refs)
    if kind in ("FloorDiv", "RShift") and type(e.a).__name__ == "Add" and type(e.a.b).__name__ == "IntImm" \
            and type(e.b).__name__ == "IntImm":  # (a + d - 1) // d and (a + 2**k - 1) >> k are ceil-divisions
        d = int(e.b.value) if kind == "FloorDiv" else 1 << int(e.b.value)
        if d > 1 and int(e.a.b.value) == d - 1:
            return ("ceildiv", _to_expr(e.a.a, refs), d)
    if kind in _BINARY:
        return (_BINARY[kind], _to_expr(e.a, refs), _to_expr(e.b, refs))
    return ("unsupported", str(e))


def _dynamic_shared(func: Any, refs: dict[str, Expr]) -> Expr:
    """Bytes of the function's "shared.dyn" allocations (a sum of products; symbolic extents resolved)."""
    from tilelang.transform import utils as C
    from tilelang.transform.plan_shared_memory import dtype_bytes

    total: Expr = 0
    for alloc in C.allocations(func.body):
        if C.scope_of(alloc.buffer) != "shared.dyn":
            continue
        try:
            size: Expr = dtype_bytes(str(alloc.buffer.ty.dtype))
        except Exception:  # a dtype without a byte size (sub-byte, opaque): the launch cannot know the pool
            return ("unsupported", f"shared.dyn buffer {alloc.buffer.name} of {alloc.buffer.ty.dtype}")
        for extent in alloc.buffer.ty.shape:
            size = _fold("mul", size, _to_expr(extent, refs))
        total = _fold("add", total, size)
    return total


def _fold(op: str, a: Expr, b: Expr) -> Expr:
    if isinstance(a, int) and isinstance(b, int):
        return _OPS[op](a, b)
    if op == "add" and a == 0:
        return b
    return (op, a, b)
