"""`FlashAttentionTemplate`: attention as its two batched GEMMs (``S = Q K^T`` then ``O = P V``), planned as one
two-node operator graph so both share a tile plan."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tvm import te

from tilelang.carver.arch import TileDevice
from tilelang.carver.roller.hint import Hint
from tilelang.carver.roller.node import Edge, OutputNode, PrimFuncNode
from tilelang.carver.template.base import BaseTemplate, positive_ints
from tilelang.carver.utils import get_roller_hints_from_output_nodes, get_tensorized_func_and_tags

__all__ = ["FlashAttentionTemplate"]


@dataclass(repr=False)
class FlashAttentionTemplate(BaseTemplate):
    """Attention over [batch * heads, seq, head_dim] tensors: ``MMA0 = Q @ K^T`` ([seq, seq_kv] per head)
    feeding ``MMA1 = P @ V`` ([seq, head_dim] per head)."""

    _output_nodes: list[OutputNode] = None
    batch_size: int = 1
    num_heads: int = 1
    head_dim: int = 1
    seq_length: int = 1
    seq_kv_length: int = 1
    is_causal: bool = False
    in_dtype: str = "float16"
    out_dtype: str = "float16"
    accum_dtype: str = "float16"

    def get_hardware_aware_configs(self, arch: TileDevice = None, topk: int = 10) -> list[Hint]:
        return get_roller_hints_from_output_nodes(self.output_nodes, arch=arch, topk=topk)

    def _batched_matmul(self, batch: int, M: int, N: int, K: int) -> Any:
        """``C[b, i, j] = sum_k A[b, i, k] * B[b, j, k]`` (with the output cast when it differs)."""
        accum, out = str(self.accum_dtype), str(self.out_dtype)
        A = te.placeholder((batch, M, K), name="A", dtype=str(self.in_dtype))
        B = te.placeholder((batch, N, K), name="B", dtype=str(self.in_dtype))
        k = te.reduce_axis((0, K), name="k")
        C = te.compute((batch, M, N), lambda b, i, j: te.sum(A[b, i, k].astype(accum) * B[b, j, k].astype(accum),
                                                             axis=k), name="C")
        if out != accum:
            C = te.compute((batch, M, N), lambda b, i, j: C[b, i, j].astype(out), name="D")
        return te.create_prim_func([A, B, C])

    def initialize_function(self) -> None:
        positive_ints("FlashAttentionTemplate", batch_size=self.batch_size, num_heads=self.num_heads,
                      head_dim=self.head_dim, seq_length=self.seq_length, seq_kv_length=self.seq_kv_length)
        heads = self.batch_size * self.num_heads
        qk = self._batched_matmul(heads, self.seq_length, self.seq_kv_length, self.head_dim)
        pv = self._batched_matmul(heads, self.seq_length, self.head_dim, self.seq_kv_length)
        self.set_function([qk, pv])

        def node(func: Any, name: str) -> PrimFuncNode:
            tensorized, tags = get_tensorized_func_and_tags(func, self.arch.target)
            if tags is None:  # no matrix units for these dtypes here: plan the plain function
                return PrimFuncNode(func, name=name)
            return PrimFuncNode(tensorized, name=name, tags=tags)

        first, second = node(qk, "MMA0"), node(pv, "MMA1")
        edge = Edge(first, second, 0, 0)  # the scores feed the second GEMM's A operand
        first._out_edges.append(edge)
        second.set_inputs(0, edge)
        self.set_output_nodes([OutputNode(second)])

    def params_as_dict(self) -> dict[str, Any]:
        return {"batch_size": self.batch_size, "num_heads": self.num_heads, "head_dim": self.head_dim,
                "seq_length": self.seq_length, "seq_kv_length": self.seq_kv_length, "is_causal": self.is_causal,
                "in_dtype": self.in_dtype, "out_dtype": self.out_dtype, "accum_dtype": self.accum_dtype}
