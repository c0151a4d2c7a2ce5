"""Generated tile programs: DSL source text, operands and the torch expression that computes the same result.

A :class:`Program` is self-contained text: :meth:`Program.script` prints a standalone Python file (kernel,
inputs, torch reference) that reproduces a failure outside the fuzzer. :meth:`Program.kernel` parses the
source as if it came from a file (the frontend reads kernels' source through ``linecache``).
"""

from __future__ import annotations

import hashlib
import linecache
from dataclasses import dataclass, field
from typing import Any

HEADER = "import tilelang.language as T\n\n\n"

# (atol, rtol) of an output of this dtype, before the program's own scale (sums over K, ...)
TOLERANCE = {"float32": (1e-4, 1e-4), "float16": (1e-2, 1e-2), "bfloat16": (6e-2, 2e-2)}


@dataclass(frozen=True)
class Operand:
    """One kernel parameter: role ``"in"`` (random normal data) or ``"out"`` (zero-filled before the call)."""

    name: str
    role: str
    shape: tuple[int, ...]
    dtype: str


@dataclass(frozen=True)
class Program:
    """A generated kernel: ``source`` defines ``kernel``; ``ref`` is a torch expression over the input names
    whose value is the output (or a tuple of the outputs, in parameter order)."""

    kind: str
    source: str
    operands: tuple[Operand, ...]
    ref: str
    scale: float = 1.0                      # tolerance multiplier (long sums, exp, ...)
    tags: frozenset[str] = field(default_factory=frozenset)
    elements: int = 0                       # rough work size: lets slow checkers (the CUDA emulator) skip

    def __repr__(self) -> str:  # hypothesis prints failing examples with repr: show the reproducer
        return f"<{self.kind} program>\n{self.script()}"

    @property
    def inputs(self) -> list[Operand]:
        return [o for o in self.operands if o.role == "in"]

    @property
    def outputs(self) -> list[Operand]:
        return [o for o in self.operands if o.role == "out"]

    @property
    def dtypes(self) -> set[str]:
        return {o.dtype for o in self.operands}

    def kernel(self) -> Any:
        """The PrimFunc the source defines (parsed from a ``linecache`` entry named after the source hash)."""
        text = HEADER + self.source
        digest = hashlib.sha1(text.encode()).hexdigest()[:12]
        filename = f"<tilelang-fuzz-{self.kind}-{digest}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        namespace: dict[str, Any] = {}
        exec(compile(text, filename, "exec"), namespace)
        return namespace["kernel"]

    def make_inputs(self, seed: int = 0) -> list[Any]:
        import torch

        g = torch.Generator().manual_seed(seed)
        return [torch.randn(o.shape, generator=g).to(getattr(torch, o.dtype)) for o in self.inputs]

    def make_outputs(self) -> list[Any]:
        import torch

        return [torch.zeros(o.shape, dtype=getattr(torch, o.dtype)) for o in self.outputs]

    def call_args(self, inputs: list[Any], outputs: list[Any]) -> list[Any]:
        ins, outs = iter(inputs), iter(outputs)
        return [next(outs) if o.role == "out" else next(ins) for o in self.operands]

    def expected(self, inputs: list[Any]) -> list[Any]:
        import torch

        env = {"torch": torch, **{o.name: t for o, t in zip(self.inputs, inputs)}}
        value = eval(self.ref, env)
        return list(value) if isinstance(value, tuple) else [value]

    def check(self, outputs: list[Any], inputs: list[Any], backend: str, tf32: bool = False) -> None:
        """Compare `outputs` with the torch reference (tolerances by output dtype, times ``scale``). ``tf32``: the
        backend runs float32 GEMMs on TF32 tensor cores (CUDA on sm_80+, as the reference TileLang does), whose
        10-bit mantissa is float16's, so float32 results of a GEMM program get float16's tolerance."""
        import torch

        tf32_gemm = tf32 and "gemm" in self.tags and any(o.dtype == "float32" for o in self.inputs)
        for operand, out, ref in zip(self.outputs, outputs, self.expected(inputs)):
            atol, rtol = TOLERANCE["float16" if tf32_gemm and operand.dtype == "float32" else operand.dtype]
            torch.testing.assert_close(out.float(), ref.float(), atol=atol * self.scale, rtol=rtol * self.scale,
                                       msg=lambda m, o=operand: f"{backend}: output {o.name} differs from torch "
                                                                f"({m})\n{self.script()}")

    def script(self) -> str:
        """A standalone reproducer: the kernel, its inputs and the torch reference."""
        ins = ", ".join(o.name for o in self.inputs)
        lines = [
            "import torch", "import tilelang", HEADER.strip(), "", "", self.source.rstrip(), "", "",
            "g = torch.Generator().manual_seed(0)",
            *(f"{o.name} = torch.randn({o.shape}, generator=g).to(torch.{o.dtype})" for o in self.inputs),
            *(f"{o.name} = torch.zeros({o.shape}, dtype=torch.{o.dtype})" for o in self.outputs),
            f"ref = {self.ref}  # torch, from inputs {ins}",
            f"tilelang.compile(kernel, target='cpu')({', '.join(o.name for o in self.operands)})",
        ]
        return "\n".join(lines) + "\n"
