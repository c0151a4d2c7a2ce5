"""Roofline estimate of a tile program: FLOPs of its ``T.gemm`` calls and of its element-wise arithmetic, bytes its
``T.copy`` calls and its element-wise loads and stores move to or from global memory, and the time a device needs
for the larger of the two.

Counts come from the tile IR (before lowering): each tile op or element-wise store is weighted by the extents of
the loops around it (serial and ``T.Parallel``) and the number of blocks of the launch. An element-wise store
(``B[i] = A[i] * 2.0 + 1.0``) counts the bytes of each global element it writes or reads and one FLOP per
floating-point add, subtract, multiply, divide, min, max or math call in its value. The device is

- an object with ``compute_capability`` (e.g. ``"80"``) and ``bandwidth`` (``[shared, global]`` in MB/s; the
  global figure is used), e.g. ``tilelang.carver.arch.CUDA``; or
- an architecture name of `NAMED_DEVICES` (``"sm_80"``, ``"a100"``, ``"h100"``, ...).

Peak compute comes from `ARCH_CONFIGS` (CUDA cores x clock x FLOPs per cycle); an architecture missing there
gives ``expected_tflops=None`` and a memory-only estimate::

    result = Analyzer.analysis(kernel.get_tir(), "a100")
    result.total_flops, result.total_global_bytes, result.estimated_time
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

__all__ = ["ARCH_CONFIGS", "AnalysisResult", "Analyzer", "NAMED_DEVICES", "named_device"]

logger = logging.getLogger(__name__)

#: compute capability -> (CUDA cores per SM, clock in GHz, FLOPs per core and cycle, SMs)
ARCH_CONFIGS: dict[str, tuple[int, float, int, int]] = {
    "80": (128, 1.41, 2, 108),
    "86": (128, 1.70, 2, 84),
    "89": (128, 2.52, 2, 128),
    "90": (128, 1.98, 2, 132),
}

_GRID_TAGS = ("blockIdx.x", "blockIdx.y", "blockIdx.z")


@dataclass(frozen=True)
class NamedDevice:
    """A device description usable by `Analyzer`: compute capability and ``[shared, global]`` bandwidth (MB/s)."""

    name: str
    compute_capability: str
    bandwidth: tuple[int, int]


#: Architecture names accepted in place of a device object (global bandwidth: the datasheet HBM/GDDR figure).
NAMED_DEVICES: dict[str, NamedDevice] = {
    d.name: d for d in (
        NamedDevice("a100", "80", (19_000_000, 1_555_000)),
        NamedDevice("rtx3090", "86", (10_000_000, 936_000)),
        NamedDevice("rtx4090", "89", (13_000_000, 1_008_000)),
        NamedDevice("l40s", "89", (13_000_000, 864_000)),
        NamedDevice("h100", "90", (33_000_000, 3_350_000)),
        NamedDevice("h200", "90", (33_000_000, 4_800_000)),
    )
}
_ARCH_ALIASES = {"sm_80": "a100", "sm_86": "rtx3090", "sm_89": "rtx4090", "sm_90": "h100", "sm_90a": "h100"}


def named_device(name: str) -> NamedDevice:
    """The `NamedDevice` called `name` (an architecture such as ``"sm_90"`` or a product such as ``"a100"``)."""
    key = str(name).strip().lower()
    key = _ARCH_ALIASES.get(key, key)
    if key not in NAMED_DEVICES:
        known = ", ".join(sorted([*NAMED_DEVICES, *_ARCH_ALIASES]))
        raise ValueError(f"Analyzer: unknown architecture {name!r}; known names: {known}. Or pass a device object "
                         "with `compute_capability` and `bandwidth` (e.g. tilelang.carver.arch.CUDA).")
    return NAMED_DEVICES[key]


@dataclass(frozen=True)
class AnalysisResult:
    """FLOPs, global-memory bytes, estimated seconds, and the device's peak TFLOPS and bandwidth (GB/s)."""

    total_flops: int
    total_global_bytes: int
    estimated_time: float
    expected_tflops: float | None
    expected_bandwidth_GBps: float


def _const(e: Any) -> int:
    value = getattr(e, "value", e)
    if not isinstance(value, int):
        raise ValueError(f"Analyzer: the extent {e} is not a constant; specialise the kernel (e.g. get_tir(M=...)) "
                         "before analysing it")
    return value


def _dtype_bytes(dtype: str) -> int:
    import tvm

    t = tvm.DataType(str(dtype))
    return max(1, t.bits * t.lanes // 8)


class Analyzer:
    """Walks a PrimFunc (or every PrimFunc of an IRModule) and accumulates FLOPs and global bytes."""

    def __init__(self, fn: Any, device: Any) -> None:
        import tvm
        from tvm import tirx

        if isinstance(fn, tirx.PrimFunc):
            fn = tvm.IRModule({"main": fn})
        elif not isinstance(fn, tvm.IRModule):
            raise TypeError(f"Analyzer: expected a PrimFunc or an IRModule, got {type(fn).__name__} (for a "
                            "@tilelang.jit kernel pass kernel.get_tir(...))")
        self.fn = fn
        self.device = named_device(device) if isinstance(device, str) else device
        self.total_flops = 0
        self.total_global_bytes = 0
        self.block_counts: dict[str, int] = {"blockIdx.x": 1, "blockIdx.y": 1}
        self.loop_stack: list[Any] = []
        self.global_buffers: set[Any] = set()

    # ------------------------------------------------------------------------------------------ counting
    def _weight(self) -> int:
        """How many times a tile op at the current point runs: enclosing loop trips x blocks."""
        n = 1
        for extent in self.loop_stack:
            n *= _const(extent)
        for tag in _GRID_TAGS:
            n *= self.block_counts.get(tag, 1)
        return n

    def _analyze_copy(self, call: Any) -> None:
        """Bytes of a ``tl.copy`` with a global source or destination."""
        from tilelang.ir import region as R

        src, dst = call.args[0], call.args[1]
        moved = next((r for r in (src, dst) if R.buffer_of(r) in self.global_buffers), None)
        if moved is None:
            return
        elements = 1
        for extent in R.region_extents(R.to_region(moved)):
            elements *= _const(extent)
        self.total_global_bytes += elements * _dtype_bytes(R.buffer_dtype(R.buffer_of(moved))) * self._weight()

    def _analyze_gemm(self, call: Any) -> None:
        """``2*M*N*K`` FLOPs of a ``tl.gemm``."""
        from tilelang.ir import region as R

        a, b = (R.squeeze(R.region_extents(R.to_region(x))) for x in call.args[:2])
        trans_a, trans_b = (bool(_const(x)) for x in call.args[3:5])
        m, k = (a[-1], a[-2]) if trans_a else (a[-2], a[-1])
        n = b[-2] if trans_b else b[-1]
        self.total_flops += 2 * _const(m) * _const(n) * _const(k) * self._weight()

    def _analyze_store(self, store: Any) -> None:
        """Global bytes and floating-point operations of an element-wise ``buffer[...] = value``."""
        import tvm
        import tvm_ffi
        from tvm.ir.prim import expr as E

        from tilelang.ir import region as R

        weight = self._weight()
        counts = {"bytes": 0, "flops": 0}
        if store.buffer in self.global_buffers:
            counts["bytes"] += _dtype_bytes(R.buffer_dtype(store.buffer))

        def load(node: Any) -> None:
            if node.source in self.global_buffers:
                counts["bytes"] += _dtype_bytes(str(node.dtype))

        def arithmetic(node: Any) -> None:
            if "float" in str(node.dtype):
                counts["flops"] += 1

        tvm_ffi.structural_walk(store.value, [
            (tvm.ir.TensorLoad, load),
            ((E.Add, E.Sub, E.Mul, E.Div, E.Min, E.Max, tvm.ir.Call), arithmetic),
        ])
        self.total_global_bytes += counts["bytes"] * weight
        self.total_flops += counts["flops"] * weight

    def _visit(self, stmt: Any) -> None:
        from tvm import tirx

        if isinstance(stmt, tirx.SeqStmt):
            for s in stmt.seq:
                self._visit(s)
        elif isinstance(stmt, tirx.AttrStmt):
            tag = getattr(stmt.node, "thread_tag", None) if stmt.attr_key == "thread_extent" else None
            if tag in _GRID_TAGS:
                self.block_counts[tag] = _const(stmt.value)
            self._visit(stmt.body)
        elif isinstance(stmt, tirx.For):
            binding = getattr(stmt, "thread_binding", None)
            if binding is not None:
                if binding.thread_tag in _GRID_TAGS:
                    self.block_counts[binding.thread_tag] = _const(stmt.extent)
                self._visit(stmt.body)
            else:
                self.loop_stack.append(stmt.extent)
                try:
                    self._visit(stmt.body)
                finally:
                    self.loop_stack.pop()
        elif isinstance(stmt, tirx.IfThenElse):
            self._visit(stmt.then_case)
            if stmt.else_case is not None:
                self._visit(stmt.else_case)
        elif isinstance(stmt, tirx.BufferStore):
            self._analyze_store(stmt)
        elif isinstance(stmt, tirx.Evaluate):
            name = getattr(getattr(stmt.value, "op", None), "name", "")
            if name in ("tl.copy", "tl.tileop.copy"):
                self._analyze_copy(stmt.value)
            elif name in ("tl.gemm", "tl.tileop.gemm"):
                self._analyze_gemm(stmt.value)
        elif hasattr(stmt, "body") and stmt.body is not None:
            self._visit(stmt.body)

    def ir_pass(self) -> Analyzer:
        """Count every PrimFunc of the module (grid extents are read afresh for each); returns self."""
        from tvm import tirx

        for func in self.fn.functions.values():
            if not isinstance(func, tirx.PrimFunc):
                continue
            self.global_buffers = {p for p in func.params if tirx.is_buffer_var(p)}
            self.block_counts = {"blockIdx.x": 1, "blockIdx.y": 1}
            self.loop_stack.clear()
            self._visit(func.body)
        return self

    # ----------------------------------------------------------------------------------------- estimate
    @staticmethod
    def peak_tflops(device: Any) -> float | None:
        """The device's CUDA-core peak in TFLOPS, or None when its architecture is not in `ARCH_CONFIGS`."""
        arch = str(device.compute_capability)[:2]
        if arch not in ARCH_CONFIGS:
            logger.info("Analyzer: no peak compute for compute capability %s; the estimate is memory-only",
                        device.compute_capability)
            return None
        cores, clock_ghz, flops_per_cycle, sms = ARCH_CONFIGS[arch]
        return round(sms * cores * clock_ghz * flops_per_cycle / 1e3, 1)

    def calculate(self) -> AnalysisResult:
        """The roofline estimate from the counts gathered by `ir_pass`."""
        bandwidth_gbps = self.device.bandwidth[1] / 1000
        peak = self.peak_tflops(self.device)
        memory_s = self.total_global_bytes / (bandwidth_gbps * 1e9)
        estimate = max(memory_s, self.total_flops / (peak * 1e12)) if peak else memory_s
        return AnalysisResult(self.total_flops, self.total_global_bytes, estimate, peak, bandwidth_gbps)

    @classmethod
    def analysis(cls, fn: Any, device: Any) -> AnalysisResult:
        """`fn`'s roofline estimate on `device` (see the module docstring)."""
        return cls(fn, device).ir_pass().calculate()
