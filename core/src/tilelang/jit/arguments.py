"""The call path of a compiled kernel: cheap argument checks, output allocation, and precise diagnoses.

`make_caller` generates (once per kernel) a Python function specialised to the kernel's parameters: it checks
the argument count, device, alignment and, unless the launcher checks them itself, dtype, shape (symbolic dims
included) and contiguity; allocates the outputs; and calls the launcher. Any failed check, or an error raised by
the launcher, goes to `diagnose`, which names the parameter and what was expected in a `KernelArgumentError`.

Alignment is not the caller's concern: a tensor whose data pointer is less aligned than the compiled code
assumes (``torch.from_numpy`` arrays are 16-byte aligned, an offset view ``t[1:]`` is element-aligned) is
replaced for the call by an aligned copy, which is written back afterwards when the kernel changed it
(`call_realigned`). Kernels that assume no more than element alignment take every tensor zero-copy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tilelang.artifact import ParamInfo
from tilelang.errors import KernelArgumentError

__all__ = ["torch_dtype", "make_caller", "diagnose", "normalize_out_idx", "param_alignment", "call_realigned",
           "shape_problem"]

_DEVICE_ATTR = {"cpu": "is_cpu", "cuda": "is_cuda", "mps": "is_mps", "xpu": "is_xpu", "meta": "is_meta"}
_TORCH_NAMES = {"bool": "bool", "float8_e4m3": "float8_e4m3fn", "float8_e5m2": "float8_e5m2"}


def torch_dtype(name: str) -> Any:
    """The torch dtype for a TVM dtype string (``"float16"`` -> ``torch.float16``)."""
    import torch

    value = getattr(torch, _TORCH_NAMES.get(name, name), None)
    if not isinstance(value, torch.dtype):
        raise KernelArgumentError(f"dtype {name!r} has no torch equivalent")
    return value


def normalize_out_idx(out_idx: int | Sequence[int] | None, n_params: int) -> list[int]:
    """``out_idx`` as sorted non-negative indices (``-1`` is the last parameter)."""
    if out_idx is None:
        return []
    items = [out_idx] if isinstance(out_idx, int) else list(out_idx)
    result = []
    for idx in items:
        if not isinstance(idx, int) or not -n_params <= idx < n_params:
            raise KernelArgumentError(f"out_idx entry {idx!r} is out of range for a kernel with {n_params} parameters")
        result.append(idx % n_params)
    if len(set(result)) != len(result):
        raise KernelArgumentError(f"out_idx {out_idx!r} names a parameter twice")
    return sorted(result)


def param_alignment(params: Sequence[ParamInfo], metadata: dict[str, Any], default: int) -> list[int]:
    """Byte alignment each tensor parameter's data pointer must have (``metadata["param_align"]`` or `default`)."""
    declared = metadata.get("param_align") or {}
    return [int(declared.get(p.name, default)) if p.is_tensor else 1 for p in params]


def _describe(value: Any) -> str:
    cls = type(value)
    if cls.__name__ == "Tensor" and hasattr(value, "dtype"):
        return f"Tensor(shape={tuple(value.shape)}, dtype={value.dtype}, device={value.device})"
    return f"{cls.__module__}.{cls.__qualname__}" if cls.__module__ != "builtins" else f"{cls.__name__} {value!r}"


def diagnose(kernel_name: str, params: Sequence[ParamInfo], inputs: Sequence[int], args: Sequence[Any],
             align: Sequence[int], device_type: str | None, cause: BaseException | None = None) -> None:
    """Raise a KernelArgumentError describing the first argument that does not fit; return when all fit."""
    import torch

    def fail(idx: int, what: str) -> None:
        p = params[idx]
        raise KernelArgumentError(f"kernel {kernel_name!r}, argument {p.name!r}: {what}") from cause

    if len(args) != len(inputs):
        names = ", ".join(params[i].name for i in inputs)
        raise KernelArgumentError(
            f"kernel {kernel_name!r} takes {len(inputs)} argument(s) ({names}), got {len(args)}"
        ) from cause
    dims: dict[str, tuple[int, str]] = {}
    for idx, value in zip(inputs, args):
        p = params[idx]
        if not p.is_tensor:
            if isinstance(value, torch.Tensor) or not isinstance(value, (int, float, bool)):
                fail(idx, f"expected a {p.dtype} scalar, got {_describe(value)}")
            dims[p.name] = (int(value), p.name)
            continue
        if not isinstance(value, torch.Tensor):
            fail(idx, f"expected a torch.Tensor of dtype {p.dtype} and shape {list(p.shape)}, got {_describe(value)}")
        if device_type is not None and value.device.type != device_type:
            fail(idx, f"expected a tensor on device {device_type!r}, got one on {str(value.device)!r}")
        expected = torch_dtype(p.dtype)
        if value.dtype != expected:
            fail(idx, f"expected dtype {p.dtype}, got {value.dtype}")
        problem = shape_problem(p, list(value.shape), dims, "tensor")
        if problem:
            fail(idx, problem)
        if not value.is_contiguous():
            fail(idx, f"expected a contiguous tensor, got strides {list(value.stride())} for shape "
                      f"{list(value.shape)}; call .contiguous() first")


def shape_problem(p: ParamInfo, shape: list[int], dims: dict[str, tuple[int, str]], noun: str) -> str | None:
    """What is wrong with `shape` for parameter `p` (None when it fits); binds `p`'s symbolic dims not in `dims`
    yet (value, where) and checks the others against them. `noun` names the argument kind in the message."""
    if len(shape) != len(p.shape):
        return f"expected {len(p.shape)} dimension(s) {list(p.shape)}, got shape {shape}"
    for axis, (want, got) in enumerate(zip(p.shape, shape)):
        if isinstance(want, int):
            if got != want:
                return f"expected shape {list(p.shape)}, got {shape} (dim {axis})"
        elif want in dims and dims[want][0] != got:
            bound, where = dims[want]
            return f"dim {axis} is symbolic {want!r} = {bound} (bound by {where}), but this {noun} has {got}"
        else:
            dims.setdefault(want, (got, f"{p.name}.shape[{axis}]"))
    return None


def _aligned_copy(value: Any, align: int) -> Any:
    """A copy of contiguous tensor `value` whose data pointer is a multiple of `align` bytes."""
    import torch

    copy = value.clone(memory_format=torch.contiguous_format)
    if copy.data_ptr() % align == 0:  # torch's allocators align to 64 (CPU) / 512 (CUDA) bytes
        return copy
    nbytes = value.numel() * value.element_size()
    raw = torch.empty(nbytes + align, dtype=torch.uint8, device=value.device)
    start = -raw.data_ptr() % align
    copy = raw[start:start + nbytes].view(value.dtype).view(value.shape)
    copy.copy_(value)
    return copy


def call_realigned(call: Callable[..., Any], kernel_name: str, inputs: Sequence[int], align: Sequence[int],
                   args: Sequence[Any]) -> Any:
    """``call(*args)`` with every tensor argument less aligned than `align` asks replaced by an aligned copy.

    An argument passed twice (``kernel(x, x)``) gets one copy. After the call each copy is written back to its
    tensor: on the CPU only when the kernel changed it (an input is not rewritten: it may be read-only memory, and
    rewriting it could undo an aliased output), on devices always (comparing would synchronise).
    """
    import torch

    fixed = list(args)
    copies: dict[tuple[Any, ...], tuple[Any, Any]] = {}
    for pos, (idx, value) in enumerate(zip(inputs, args)):
        if isinstance(value, torch.Tensor) and value.data_ptr() % align[idx]:
            key = (value.data_ptr(), value.dtype, tuple(value.shape))
            if key not in copies:
                copies[key] = (value, _aligned_copy(value, align[idx]))
            fixed[pos] = copies[key][1]
    if not copies:
        raise KernelArgumentError(f"kernel {kernel_name!r}: arguments rejected")
    result = call(*fixed)
    for original, copy in copies.values():
        if original.device.type != "cpu" or not torch.equal(copy.reshape(-1).view(torch.uint8),
                                                            original.reshape(-1).view(torch.uint8)):
            original.copy_(copy)
    return result


def make_caller(kernel_name: str, params: Sequence[ParamInfo], out_idx: Sequence[int], launcher: Callable[..., Any],
                *, device_type: str | None, launcher_checks: bool, align: Sequence[int],
                array_caller: Callable[[], Callable[..., Any]] | None = None) -> Callable[..., Any]:
    """Generate the specialised ``call(*inputs)`` of one kernel (see the module docstring). `array_caller` gives
    the kernel's caller for NumPy arguments (`tilelang.jit.host_arrays`), taken when a call passes one."""
    import torch

    from tilelang.jit.host_arrays import has_host_array

    inputs = [i for i in range(len(params)) if i not in set(out_idx)]
    ns: dict[str, Any] = {"_launch": launcher, "_empty": torch.empty, "_diagnose": diagnose, "_params": params,
                          "_inputs": inputs, "_realigned": call_realigned, "_align": list(align),
                          "_name": kernel_name, "_dev_type": device_type, "_array_caller": array_caller,
                          "_has_array": has_host_array if array_caller is not None else (lambda args: False)}
    var = {i: f"a{i}" for i in range(len(params))}
    lines = ["def call(*args):", f"    if len(args) != {len(inputs)}:",
             "        if _has_array(args):",
             "            return _array_caller()(*args)",
             "        _diagnose(_name, _params, _inputs, args, _align, _dev_type)"]
    if inputs:
        lines.append(f"    {', '.join(var[i] for i in inputs)}, = args")
    conds: list[str] = []
    setup: list[str] = []
    where: dict[str, str] = {}  # symbolic dim -> expression giving its value
    tensor_inputs = [i for i in inputs if params[i].is_tensor]
    for i in inputs:
        p = params[i]
        if not p.is_tensor:
            where.setdefault(p.name, var[i])
            continue
        if device_type in _DEVICE_ATTR:
            conds.append(f"not {var[i]}.{_DEVICE_ATTR[device_type]}")
        if align[i] > 1:
            conds.append(f"{var[i]}.data_ptr() & {align[i] - 1}")
        need_shape = any(isinstance(d, str) for d in p.shape) or not launcher_checks
        if need_shape:
            setup.append(f"s{i} = {var[i]}.shape")
        for axis, d in enumerate(p.shape):
            if isinstance(d, str) and d not in where:
                where[d] = f"s{i}[{axis}]"
            elif isinstance(d, str) and not launcher_checks:
                conds.append(f"s{i}[{axis}] != {where[d]}")
        if not launcher_checks:
            ns[f"_dt{i}"] = torch_dtype(p.dtype)
            conds.append(f"{var[i]}.dtype is not _dt{i}")
            conds.append(f"len(s{i}) != {len(p.shape)}")
            conds.extend(f"s{i}[{axis}] != {d}" for axis, d in enumerate(p.shape) if isinstance(d, int))
            conds.append(f"not {var[i]}.is_contiguous()")
    # outputs: every symbolic dim must be bound by an input. The allocation is planned here: dims as positional
    # ints (a shape tuple costs ~0.3 us in torch's argument parser), and ``first_input.new_empty(...)``, which
    # takes the device (and, when it matches, the dtype) from the first tensor input without keyword arguments.
    out_lines = []
    first = tensor_inputs[0] if tensor_inputs else None
    for i in out_idx:
        p = params[i]
        if not p.is_tensor:
            raise KernelArgumentError(f"kernel {kernel_name!r}: out_idx names scalar parameter {p.name!r}")
        dims = []
        for d in p.shape:
            if isinstance(d, str) and d not in where:
                raise KernelArgumentError(
                    f"kernel {kernel_name!r}: cannot allocate output {p.name!r}: its dim {d!r} is not the dim of "
                    "any input; pass it as an input instead (drop it from out_idx)")
            dims.append(str(d) if isinstance(d, int) else where[d])
        ns[f"_dt{i}"] = torch_dtype(p.dtype)
        shape = ", ".join(dims) if dims else "()"
        if first is None:
            out_lines.append(f"        {var[i]} = _empty({shape}, dtype=_dt{i}, device=_device)")
        elif p.dtype == params[first].dtype:  # (a wrong input dtype is reported by the launcher or checks)
            out_lines.append(f"        {var[i]} = {var[first]}.new_empty({shape})")
        else:
            out_lines.append(f"        {var[i]} = {var[first]}.new_empty({shape}, dtype=_dt{i})")
    ns["_device"] = torch.device(device_type if device_type in ("cpu", "cuda", "mps", "xpu") else "cpu")
    if setup or conds:
        lines.append("    try:")
        lines.extend(f"        {s}" for s in setup)
        if conds:
            lines.append(f"        bad = {' or '.join(f'({c})' for c in conds)}")
        else:
            lines.append("        bad = False")
        lines.append("    except Exception:")
        lines.append("        bad = True")
        lines.append("    if bad:")  # a wrong argument raises in _diagnose; what passes it is only misaligned
        lines.append("        if _has_array(args):")
        lines.append("            return _array_caller()(*args)")
        lines.append("        _diagnose(_name, _params, _inputs, args, _align, _dev_type)")
        lines.append("        return _realigned(call, _name, _inputs, _align, args)")
    all_args = ", ".join(var[i] for i in range(len(params)))
    lines += ["    try:", *out_lines, f"        _launch({all_args})", "    except Exception as exc:",
              "        _diagnose(_name, _params, _inputs, args, _align, _dev_type, exc)", "        raise"]
    outs = [var[i] for i in out_idx]
    lines.append(f"    return {outs[0] if len(outs) == 1 else '[' + ', '.join(outs) + ']' if outs else 'None'}")
    source = "\n".join(lines)
    exec(compile(source, f"<tilelang call {kernel_name}>", "exec"), ns)
    call = ns["call"]
    call.__source__ = source
    return call
