"""Execution backends for ROCm, in preference order.

`HipRuntimeBackend` launches the artifact's ``kernel.hsaco`` through the HIP runtime (ctypes on
``libamdhip64``, `tilelang_rocm.hip`) on torch ROCm tensors, on torch's current stream. The device kernel's
explicit arguments are the tensors' data pointers and the scalars, in the order TVM's host/device split gave
them; each is bound by name (the LLVM IR's parameter names, ``kernel.ll``) and written at the offset the code
object's ``.amdhsa`` metadata gives (``kernel.s``; natural alignment when that is missing). Values, grid and
block come from core's launch plan (``artifact.launch_plan``) bound to the call by
`tilelang.engine.launch_plan.bind`. Everything up to the launch itself is pure and works without a GPU.
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


def check_binding(layout: list[KernelArg], launch: Any, kernel: str) -> None:
    """Every kernel argument, in order, is the launch plan's device parameter at its position: a pointer bound
    to a tensor parameter, or a scalar (`launch`: the plan's `tilelang.engine.launch_plan.KernelLaunch`)."""
    params = list(launch.params)
    for i, arg in enumerate(layout):
        param = params[i] if i < len(params) else None
        if param is None or param.is_pointer != arg.is_pointer or (param.is_pointer and param.tensor is None):
            raise TileLangError(f"{kernel}: cannot bind kernel argument {arg.name!r} ({arg.llvm_type}) to a "
                                f"parameter; the launch plan passes {', '.join(p.name for p in params) or 'none'}")
    if len(params) != len(layout):
        raise TileLangError(f"{kernel}: the code object takes {len(layout)} kernel arguments, the launch plan "
                            f"passes {len(params)}")


def bind_args(layout: list[KernelArg], plan: Any, params: list[Any], args: tuple[Any, ...],
              device_index: int | None = None) -> tuple[list[Any], Any]:
    """The kernel argument values of one call (tensor addresses, scalars) and the plan's first kernel bound to
    the call (`tilelang.engine.launch_plan.BoundLaunch`: grid, block); checks that the tensors are GPU tensors
    on one device (`device_index`: the first tensor's when None)."""
    from tilelang.backend.sdk import bind_launch

    if len(args) != len(params):
        raise TileLangError(f"expected {len(params)} arguments ({', '.join(p.name for p in params)}), "
                            f"got {len(args)}")
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
    bound = bind_launch(plan, args)[0]
    values = [v.data_ptr() if arg.is_pointer else v for arg, v in zip(layout, bound.args)]
    return values, bound


class HipLaunch:
    """Everything a HIP launch needs that the artifact fixes: kernel name, argument layout, core's plan."""

    def __init__(self, artifact: Any):
        plan = getattr(artifact, "launch_plan", None)
        if plan is None:
            raise TileLangError(f"{artifact.name}: the artifact carries no launch plan: recompile it (clear the "
                                "kernel cache)")
        if len(plan.kernels) != 1:
            raise TileLangError(f"{artifact.name}: {len(plan.kernels)} device kernels "
                                f"({', '.join(plan.kernel_names)}); the HIP launcher runs programs with one T.Kernel")
        ll = artifact.files.get("kernel.ll")
        if ll is None:
            raise TileLangError(f"{artifact.name}: the artifact has no kernel.ll (run tilelang_rocm.compiler."
                                "finalize on it)")
        ll_text = ll.decode() if isinstance(ll, bytes) else str(ll)
        self.plan = plan
        self.kernel = plan.kernels[0].name
        asm = artifact.files.get("kernel.s")
        asm_text = asm.decode() if isinstance(asm, bytes) else asm
        self.layout = kernel_layout(llvm_signature(ll_text, self.kernel), asm_text, self.kernel)
        self.params = list(artifact.params)
        check_binding(self.layout, plan.kernels[0], self.kernel)

    def prepare(self, args: tuple[Any, ...], device_index: int | None = None
                ) -> tuple[tuple[int, int, int], tuple[int, int, int], bytes, int | None]:
        """``(grid, block, kernargs, device index)`` of one call."""
        values, bound = bind_args(self.layout, self.plan, self.params, args, device_index)
        if device_index is None:
            device_index = next((a.device.index or 0 for p, a in zip(self.params, args) if p.is_tensor), None)
        return bound.grid, bound.block, pack_args(self.layout, values), device_index


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
        self.plan = HipLaunch(artifact)
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
