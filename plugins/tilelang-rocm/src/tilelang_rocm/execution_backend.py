"""Execution backends for ROCm, in preference order.

`HipRuntimeBackend` launches the artifact's ``kernel.hsaco`` through the HIP runtime (ctypes on
``libamdhip64``, `tilelang_rocm.hip`) on torch ROCm tensors, on torch's current stream. The device kernel's
explicit arguments are the tensors' data pointers and the scalars, in the order TVM's host/device split gave
them; each is bound by name (the LLVM IR's parameter names, ``kernel.ll``) and written at the offset the code
object's ``.amdhsa`` metadata gives (``kernel.s``; natural alignment when that is missing). Grid and block sizes
come from the launch metadata, symbolic extents evaluated from the call's tensor shapes and scalars. Everything
up to the launch itself is pure and works without a GPU.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from typing import Any

from tilelang.backend import ExecutionBackend
from tilelang.errors import ExecutionBackendUnavailable, TileLangError

HSACO = "kernel.hsaco"

# LLVM kernel parameter type -> (struct format, size); integers are packed as unsigned (two's complement) so
# signed and unsigned scalars of one width share a format
_LLVM_FORMATS = {"ptr": ("Q", 8), "i64": ("Q", 8), "i32": ("I", 4), "i16": ("H", 2), "i8": ("B", 1),
                 "i1": ("B", 1), "double": ("d", 8), "float": ("f", 4), "half": ("e", 2), "bfloat": ("H", 2)}


@dataclass(frozen=True)
class KernelArg:
    """One explicit kernel argument: where it goes in the kernarg segment and what it holds."""

    name: str
    offset: int
    size: int
    llvm_type: str  # "ptr" for buffers, else the scalar's LLVM type
    is_pointer: bool


_KERNEL_DEFINE = re.compile(r'define\b[^@\n]*\bamdgpu_kernel\b[^@\n]*@"?([\w.$]+)"?\(')


def llvm_signature(llvm_ir: str, kernel: str) -> list[tuple[str, str]]:
    """``[(param name, LLVM type)]`` of the ``amdgpu_kernel`` `kernel` in `llvm_ir` (pointers: ``"ptr"``)."""
    found = {}
    for m in _KERNEL_DEFINE.finditer(llvm_ir):
        depth, end = 1, m.end()
        while end < len(llvm_ir) and depth:
            depth += {"(": 1, ")": -1}.get(llvm_ir[end], 0)
            end += 1
        found[m.group(1)] = llvm_ir[m.end():end - 1]
    if kernel not in found:
        raise TileLangError(f"no amdgpu_kernel {kernel!r} in the LLVM IR (found: {', '.join(found) or 'none'})")
    out = []
    for i, param in enumerate(filter(None, (p.strip() for p in _split_params(found[kernel])))):
        words = param.split()
        ty = "ptr" if words[0].startswith("ptr") or words[0].endswith("*") else words[0]
        name = words[-1].lstrip("%").strip('"') if words[-1].startswith("%") else f"arg{i}"
        out.append((name, ty))
    return out


def _split_params(params: str) -> list[str]:
    """Split on top-level commas (attributes such as ``align(8)`` or ``dereferenceable(16)`` nest parens)."""
    out, depth, cur = [], 0, []
    for ch in params:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out


def metadata_args(asm: str, kernel: str) -> list[dict[str, str]] | None:
    """The explicit ``.args`` entries (hidden ones dropped) of `kernel` in the assembly's ``.amdgpu_metadata``
    (dicts of the YAML keys: name, offset, size, value_kind, ...); None when the metadata has no such kernel."""
    if ".amdgpu_metadata" not in asm:
        return None
    meta = asm.split(".amdgpu_metadata", 1)[1].split(".end_amdgpu_metadata", 1)[0]
    for block in re.split(r"\n  - ", meta)[1:]:  # one block per entry of amdhsa.kernels
        name = re.search(r"^    \.name:\s+(\S+)", block, re.MULTILINE)
        if name is None or name.group(1).strip("'\"") != kernel:
            continue
        section = re.search(r"^    \.args:\n((?:      .*\n?)*)", block, re.MULTILINE)
        if section is None:
            return []
        args = []
        for entry in re.split(r"^      - ", section.group(1), flags=re.MULTILINE)[1:]:
            fields = {k: v.strip("'\"") for k, v in re.findall(r"\.(\w+):\s+(\S+)", entry)}
            if not fields.get("value_kind", "").startswith("hidden_"):
                args.append(fields)
        return args
    return None


def natural_layout(signature: list[tuple[str, str]]) -> list[KernelArg]:
    """The kernarg layout of `signature` by the AMDGPU ABI: each argument at its natural alignment, in order."""
    out, offset = [], 0
    for name, ty in signature:
        size = _format_of(ty, name)[1]
        offset = (offset + size - 1) // size * size
        out.append(KernelArg(name, offset, size, ty, ty == "ptr"))
        offset += size
    return out


def kernel_layout(signature: list[tuple[str, str]], asm: str | None, kernel: str) -> list[KernelArg]:
    """The layout of `kernel`'s explicit arguments: the code object metadata's offsets when `asm` has them
    (checked against the LLVM signature), else `natural_layout`."""
    meta = metadata_args(asm, kernel) if asm else None
    if meta is None:
        return natural_layout(signature)
    if len(meta) != len(signature):
        raise TileLangError(f"{kernel}: the code object lists {len(meta)} kernel arguments, the LLVM IR "
                            f"{len(signature)}")
    out = []
    for (name, ty), fields in zip(signature, meta):
        size = int(fields.get("size", _format_of(ty, name)[1]))
        if size != _format_of(ty, name)[1]:
            raise TileLangError(f"{kernel}: kernel argument {name!r} ({ty}) is {size} bytes in the code object")
        out.append(KernelArg(name, int(fields["offset"]), size, ty, ty == "ptr"))
    return out


def _format_of(ty: str, name: str) -> tuple[str, int]:
    if ty not in _LLVM_FORMATS:
        raise TileLangError(f"kernel argument {name!r} has LLVM type {ty!r}, which this launcher cannot pass")
    return _LLVM_FORMATS[ty]


def pack_args(layout: list[KernelArg], values: list[Any]) -> bytes:
    """The kernarg buffer: each value (an int address for pointers, else a number) written at its offset."""
    if not layout:
        return b""
    end = max(a.offset + a.size for a in layout)
    buf = bytearray((end + 7) // 8 * 8)
    for arg, value in zip(layout, values, strict=True):
        fmt, size = _format_of(arg.llvm_type, arg.name)
        if arg.llvm_type == "bfloat":  # the upper half of the float32's bits
            value = struct.unpack("<I", struct.pack("<f", float(value)))[0] >> 16
        elif fmt in "QIHB":
            value = int(value) & ((1 << (8 * size)) - 1)
        else:
            value = float(value)
        struct.pack_into("<" + fmt, buf, arg.offset, value)
    return bytes(buf)


_EVAL_BUILTINS = {"min": min, "max": max, "abs": abs, "int": int}


def evaluate_extent(extent: Any, env: dict[str, Any]) -> int:
    """An int, or a symbolic extent (``"(m + 31) // 32"``) evaluated with `env`'s dims and scalars."""
    if isinstance(extent, int):
        return extent
    try:
        return int(eval(str(extent), {"__builtins__": _EVAL_BUILTINS}, dict(env)))
    except Exception as exc:
        raise TileLangError(f"cannot evaluate launch extent {extent!r} with {env}: {exc}") from None


def launch_dims(extents: list[Any], env: dict[str, Any]) -> tuple[int, int, int]:
    """A 3-d grid or block from launch metadata (missing dims are 1)."""
    dims = [evaluate_extent(e, env) for e in extents][:3]
    return tuple(dims + [1] * (3 - len(dims)))  # type: ignore[return-value]


def symbol_env(params: list[Any], args: tuple[Any, ...]) -> dict[str, Any]:
    """Values of the symbolic dims (from the tensors' shapes) and of the scalar parameters of one call."""
    env: dict[str, Any] = {}
    for p, a in zip(params, args):
        if p.is_tensor:
            for dim, size in zip(p.shape, a.shape):
                if isinstance(dim, str) and dim.isidentifier():
                    env[dim] = int(size)
        else:
            env[p.name] = a if isinstance(a, float) else int(a)
    return env


def _base(name: str) -> str:
    return name[:-4] if name.endswith("_ptr") else name


def check_binding(layout: list[KernelArg], params: list[Any], kernel: str) -> None:
    """Every kernel argument names a tensor parameter (pointers) or a scalar / symbolic dim (values)."""
    tensors = {p.name for p in params if p.is_tensor}
    values = {p.name for p in params if not p.is_tensor}
    values |= {d for p in params if p.is_tensor for d in p.shape if isinstance(d, str) and d.isidentifier()}
    for arg in layout:
        if (arg.is_pointer and _base(arg.name) not in tensors) or (not arg.is_pointer and arg.name not in values):
            raise TileLangError(f"{kernel}: cannot bind kernel argument {arg.name!r} ({arg.llvm_type}) to a "
                                f"parameter; parameters: {', '.join(p.name for p in params)}")


def bind_args(layout: list[KernelArg], params: list[Any], args: tuple[Any, ...],
              device_index: int | None = None) -> tuple[list[Any], dict[str, Any]]:
    """The kernel argument values of one call (tensor addresses, scalars) and the symbol env; checks that the
    tensors are GPU tensors on one device (`device_index`: the first tensor's when None)."""
    if len(args) != len(params):
        raise TileLangError(f"expected {len(params)} arguments ({', '.join(p.name for p in params)}), "
                            f"got {len(args)}")
    by_name: dict[str, Any] = {}
    for p, a in zip(params, args):
        if not p.is_tensor:
            continue
        device = getattr(a, "device", None)
        if device is None or getattr(device, "type", None) != "cuda":
            raise TileLangError(f"argument {p.name!r} must be a torch tensor on an AMD GPU (device 'cuda' in a "
                                f"ROCm build of torch), got {getattr(device, 'type', type(a).__name__)}")
        index = device.index if device.index is not None else 0
        if device_index is None:
            device_index = index
        elif index != device_index:
            raise TileLangError(f"argument {p.name!r} is on cuda:{index}, the kernel runs on cuda:{device_index}")
        by_name[p.name] = a
    env = symbol_env(params, args)
    values = [by_name[_base(arg.name)].data_ptr() if arg.is_pointer else env[arg.name] for arg in layout]
    return values, env


class LaunchPlan:
    """Everything a launch needs that the artifact fixes: kernel name, argument layout, grid and block."""

    def __init__(self, artifact: Any):
        meta = artifact.metadata
        names = list(meta.get("device_functions") or [])
        if len(names) > 1:
            raise TileLangError(f"{artifact.name}: {len(names)} device kernels ({', '.join(names)}); the HIP "
                                "launcher runs programs with one T.Kernel")
        ll = artifact.files.get("kernel.ll")
        if ll is None:
            raise TileLangError(f"{artifact.name}: the artifact has no kernel.ll (run tilelang_rocm.compiler."
                                "finalize on it)")
        ll_text = ll.decode() if isinstance(ll, bytes) else str(ll)
        if names:
            self.kernel = names[0]
        else:
            kernels = _KERNEL_DEFINE.findall(ll_text)
            if len(kernels) != 1:
                raise TileLangError(f"{artifact.name}: expected one amdgpu_kernel, found {kernels}")
            self.kernel = kernels[0]
        asm = artifact.files.get("kernel.s")
        asm_text = asm.decode() if isinstance(asm, bytes) else asm
        self.layout = kernel_layout(llvm_signature(ll_text, self.kernel), asm_text, self.kernel)
        self.params = list(artifact.params)
        check_binding(self.layout, self.params, self.kernel)
        self.grid = list(meta.get("grid") or [1])
        self.block = list(meta.get("threads") or [1])

    def prepare(self, args: tuple[Any, ...], device_index: int | None = None
                ) -> tuple[tuple[int, int, int], tuple[int, int, int], bytes, int | None]:
        """``(grid, block, kernargs, device index)`` of one call."""
        values, env = bind_args(self.layout, self.params, args, device_index)
        if device_index is None:
            device_index = next((a.device.index or 0 for p, a in zip(self.params, args) if p.is_tensor), None)
        return launch_dims(self.grid, env), launch_dims(self.block, env), pack_args(self.layout, values), \
            device_index


class _Launcher:
    def __init__(self, artifact: Any):
        import torch

        if HSACO not in artifact.files:
            from tilelang_rocm.compiler import finalize

            finalize(artifact)
        if HSACO not in artifact.files:
            raise TileLangError(f"{artifact.name}: no {HSACO} to launch (the artifact was not built by this "
                                "process's ROCm codegen and carries no code object)")
        self.name = artifact.name
        self.hsaco = bytes(artifact.files[HSACO])
        self.plan = LaunchPlan(artifact)
        self.modules: dict[int, Any] = {}
        self._module(torch.cuda.current_device())  # load now: a bad code object fails at load time

    def _module(self, index: int) -> Any:
        module = self.modules.get(index)
        if module is None:
            import torch

            from tilelang_rocm.hip import HipModule

            with torch.cuda.device(index):
                module = self.modules[index] = HipModule(self.hsaco, [self.plan.kernel])
        return module

    def __call__(self, *args: Any) -> None:
        import torch

        grid, block, kernargs, index = self.plan.prepare(args)
        if index is None:
            index = torch.cuda.current_device()
        if min(grid) <= 0:
            return  # an empty launch (a dynamic extent of 0)
        module = self._module(index)
        if torch.cuda.current_device() != index:
            with torch.cuda.device(index):
                module.launch(self.plan.kernel, grid, block, kernargs, torch.cuda.current_stream(index).cuda_stream)
        else:
            module.launch(self.plan.kernel, grid, block, kernargs, torch.cuda.current_stream(index).cuda_stream)


class HipRuntimeBackend(ExecutionBackend):
    """Launches hsaco code objects through the HIP runtime on torch ROCm tensors (current torch stream)."""

    name = "hip_runtime"
    reference_names = ("tvm_ffi", "cython")
    aliases = ("ctypes",)
    description = "HIP runtime launch of hsaco code objects on torch ROCm tensors"
    torch_device_type = "cuda"  # ROCm builds of torch call AMD GPUs "cuda"
    default_alignment = 16

    def unavailable_reason(self) -> str | None:
        try:
            import torch
        except ImportError:
            return "torch is not installed"
        if not getattr(torch.version, "hip", None) or not torch.cuda.is_available():
            return "no AMD GPU is visible to a ROCm build of torch"
        try:
            from tilelang_rocm.hip import libhip

            libhip()
        except OSError as exc:
            return f"the HIP runtime library (libamdhip64) cannot be loaded: {exc}"
        return None

    def load(self, artifact: Any) -> Any:
        reason = self.unavailable_reason()
        if reason is not None:
            raise ExecutionBackendUnavailable(f"{self.name}: {reason}")
        import torch

        torch.cuda.init()  # torch's HIP runtime state (device, streams) before the module loads
        return _Launcher(artifact)

    def export_files(self, artifact: Any) -> dict[str, bytes]:
        """``kernel.hsaco`` with ``kernel.ll`` and ``kernel.s``: everything needed to launch again."""
        from tilelang_rocm.compiler import finalize

        finalize(artifact)
        return {n: artifact.files[n] for n in (HSACO, "kernel.ll", "kernel.s") if n in artifact.files}


EXECUTION_BACKENDS = [HipRuntimeBackend()]
