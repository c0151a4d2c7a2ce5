"""The CPU backend's tile-op implementations, one module per operator (they beat core's generic ones where their
`applies` holds): `IMPLS` for every CPU kind (llvm, c, cpu), `LLVM_IMPLS` for LLVM only.

- `tilelang_cpu.tileops.gemm_amx`: ``tl.gemm`` of bf16 / fp16 / int8 on AMX tiles (LLVM, priority 4, where the
  target's CPU features have the instruction);
- `tilelang_cpu.tileops.gemm_dot`: ``tl.gemm`` of bf16 / int8 on vector dot products (AVX512-BF16, VNNI; LLVM,
  priority 3);
- `tilelang_cpu.tileops.gemm`: ``tl.gemm`` as a register-blocked, vectorised micro-kernel (LLVM, priority 2);
- `tilelang_cpu.tileops.gemm_row_fma`: ``tl.gemm`` as an ``i, k, j`` loop nest (priority 1, the fallback);
- `tilelang_cpu.tileops.reduce`: ``tl.reduce`` with vectorised partial results (priority 1);
- then the intrinsics the CPU lowers itself (prints, emulated warp collectives: `tilelang_cpu.intrinsics`).
"""

from tilelang_cpu.intrinsics import IMPLS as INTRINSIC_IMPLS
from tilelang_cpu.tileops.gemm import IMPLS as MICRO_KERNEL_IMPLS
from tilelang_cpu.tileops.gemm_amx import AMX_GEMM
from tilelang_cpu.tileops.gemm_dot import DOT_GEMM
from tilelang_cpu.tileops.gemm_row_fma import GEMM_ROW_FMA
from tilelang_cpu.tileops.reduce import REDUCE

IMPLS = (GEMM_ROW_FMA, REDUCE, *INTRINSIC_IMPLS)
LLVM_IMPLS = (AMX_GEMM, DOT_GEMM, *MICRO_KERNEL_IMPLS)

__all__ = ["IMPLS", "LLVM_IMPLS"]
