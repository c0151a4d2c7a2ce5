"""What the roller recommends: `Hint` (one kernel configuration) and the records the policies build it from."""

from __future__ import annotations

import math
from typing import Any

from tilelang.carver.roller.rasterization import NoRasterization, Rasterization

__all__ = ["TensorCoreExtraConfig", "Stride", "TileDict", "IntrinInfo", "Hint"]


class TensorCoreExtraConfig:
    """Shared/fragment tile shapes of a tensor-core kernel and the axes the matrix instruction covers."""

    def __init__(self, AS_shape: tuple[int, ...], BS_shape: tuple[int, ...], AF_shape: tuple[int, ...],
                 BF_shape: tuple[int, ...], tc_axis: tuple[int, ...]) -> None:
        self.AS_shape = AS_shape
        self.BS_shape = BS_shape
        self.AF_shape = AF_shape
        self.BF_shape = BF_shape
        self.tc_axis = tc_axis


class Stride:
    """A padded row stride on one axis of a tile (``ax`` < 0: dense, no padding)."""

    def __init__(self, stride: int = 1, ax: int = -1) -> None:
        self._ax = int(ax)
        self._stride = int(stride)

    @property
    def ax(self) -> int:
        return self._ax

    @property
    def stride(self) -> int:
        return self._stride

    def is_valid(self) -> bool:
        return self._ax >= 0

    def compute_strides_from_shape(self, shape: list[int]) -> list[int]:
        """Row-major strides of `shape`, with axis `ax` given the padded stride."""
        strides = [1] * len(shape)
        for i in range(len(shape) - 2, -1, -1):
            strides[i] = self._stride if i == self._ax else int(strides[i + 1] * shape[i + 1])
        return strides

    def compute_elements_from_shape(self, shape: list[int]) -> int:
        """Elements a tile of `shape` occupies with the padding applied."""
        dense = math.prod(int(s) for s in shape)
        if not self.is_valid():
            return int(dense)
        if self._ax >= len(shape):
            raise ValueError(f"stride axis {self._ax} is outside a {len(shape)}-d shape")
        padded = math.prod(int(s) for s in shape[: self._ax + 1]) * self._stride
        if padded < dense:
            raise ValueError(f"stride {self._stride} on axis {self._ax} is smaller than the rows of {shape}")
        return int(padded)

    def __repr__(self) -> str:
        return f"<Stride, {self._ax}, {self._stride}>"


class TileDict:
    """One candidate output tile and everything the policy derived for it (per node tiles, reduction steps,
    traffic, shared memory, occupancy)."""

    def __init__(self, output_tile: list[int]) -> None:
        self.output_tile = output_tile
        self.tile_map: dict[Any, list[int]] = {}
        self.rstep_map: dict[Any, dict[str, int]] = {}
        self.cached_tensors_map: dict[Any, list[str]] = {}
        self.output_strides_map: dict[Any, dict[int, Stride]] = {}
        self.tensor_strides_map: dict[Any, dict[str, Stride]] = {}
        self.traffic: float = -1
        self.smem_cost: int = -1
        self.block_per_SM: int = -1
        self.num_wave: int = -1
        self.grid_size: int = -1
        self.valid = True

    def get_tile(self, func: Any) -> list[int]:
        return self.tile_map[func]

    def get_rstep(self, node: Any) -> dict[str, int]:
        return self.rstep_map[node]

    def __hash__(self) -> int:
        return hash(tuple(self.output_tile))


class IntrinInfo:
    """The matrix-instruction facts of a tensor-core kernel: operand dtypes, B's layout and any layout
    transforms applied to the inputs (kind 1: inter-warp, 2 and more: also smoothed)."""

    def __init__(self, in_dtype: str, out_dtype: str, trans_b: bool, input_transform_kind: int = 0,
                 weight_transform_kind: int = 0) -> None:
        self.in_dtype = str(in_dtype)
        self.out_dtype = str(out_dtype)
        self.trans_a = False
        self.trans_b = trans_b
        self.input_transform_kind = input_transform_kind
        self.weight_transform_kind = weight_transform_kind

    def __repr__(self) -> str:
        return (f"<IntrinInfo, in_dtype={self.in_dtype}, out_dtype={self.out_dtype}, trans_b={self.trans_b}, "
                f"input_transform_kind={self.input_transform_kind}, "
                f"weight_transform_kind={self.weight_transform_kind}>")

    def is_input_8bit(self) -> bool:
        import tvm

        return tvm.DataType(self.in_dtype).bits == 8

    @property
    def smooth_a(self) -> bool:
        return self.input_transform_kind >= 2

    @property
    def smooth_b(self) -> bool:
        return self.weight_transform_kind >= 2

    @property
    def inter_transform_a(self) -> bool:
        return self.input_transform_kind >= 1

    @property
    def inter_transform_b(self) -> bool:
        return self.weight_transform_kind >= 1


class Hint:
    """One recommended kernel configuration.

    block      output tile of one block (one entry per spatial axis)
    thread     threads per axis (CUDA-core kernels)      warp   per-warp tile (tensor-core kernels)
    rstep      reduction tile per reduction axis        reduce_thread  threads splitting the reduction
    pipeline_stage, use_async, rasterization_plan, vectorize, cached_tensors, shared_scope, intrin_info, ...
    """

    def __init__(self) -> None:
        self.arch: Any = None
        self.use_tc: bool | None = None
        self.block: list[int] = []
        self.thread: list[int] = []
        self.warp: list[int] = []
        self.rstep: list[int] = []
        self.reduce_thread: list[int] = []
        self.rasterization_plan: Rasterization = NoRasterization()
        self.cached_tensors: list[str] = []
        self.output_strides: dict[int, Stride] = {}
        self.schedule_stages: Any = None
        self.block_reduction_depth: int | None = None
        self.split_k_factor: int = 1
        self._raxis_order: list[int] = []
        self._step: list[int] = []
        self.vectorize: dict[str, int] = {}
        self.pipeline_stage = 1
        self.use_async = False
        self.opt_shapes: dict[str, int] = {}
        self.intrin_info = IntrinInfo("float16", "float16", True)
        self.shared_scope: str = "shared"
        self.pass_context: dict[str, Any] = {}

    def to_dict(self) -> dict[str, Any]:
        """The configuration's non-default fields."""
        out: dict[str, Any] = {"block": self.block}
        if self.use_tc:
            out["warp"] = self.warp
        else:
            out["thread"] = self.thread
        out["rstep"] = self.rstep
        if math.prod(self.reduce_thread) > 1:
            out["reduce_thread"] = self.reduce_thread
        if self.use_tc:
            out["use_tc"] = self.use_tc
        strides = {k: s for k, s in self.output_strides.items() if s.is_valid()}
        if strides:
            out["strides"] = strides
        if math.prod(self._step) > 1:
            out["step"] = self._step
        if self._raxis_order:
            out["raxis_order"] = self._raxis_order
        if self.vectorize:
            out["vectorize"] = self.vectorize
        if self.pipeline_stage != 1:
            out["pipeline_stage"] = self.pipeline_stage
        if self.block_reduction_depth is not None:
            out["block_reduction_depth"] = self.block_reduction_depth
        return out

    @classmethod
    def from_dict(cls, dic: dict[str, Any]) -> Hint:
        hint = cls()
        for key, value in dic.items():
            setattr(hint, key, value)
        return hint

    def tensorcore_legalization(self) -> Hint:
        """Keep only the two innermost axes of `warp` and `block` (the M and N of the matrix instruction)."""
        self.warp = self.warp[-2:]
        self.block = self.block[-2:]
        return self

    @property
    def raxis_order(self) -> list[int]:
        return self._raxis_order or list(range(len(self.rstep)))

    @property
    def step(self) -> list[int]:
        return self._step or [1] * len(self.block)

    def complete_config(self, node: Any) -> Hint:
        """Fill the pass context: 32-bit tensor-core accumulators and dynamic shared memory merge static
        shared allocations."""
        merge = bool(self.use_tc and self.intrin_info.out_dtype in ("float32", "int32"))
        merge = merge or self.shared_scope == "shared.dyn"
        self.pass_context = {"tirx.merge_static_smem": merge}
        return self

    def __repr__(self) -> str:
        return str(self.to_dict())
