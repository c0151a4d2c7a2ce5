"""ldmatrix / stmatrix (8x8 b16 matrix fragments between shared memory and registers) on the CuTe DSL.

``ldmatrix_xN(smem_ptr, local_ptr)`` loads N matrices; thread t supplies the row address of row ``t % 8`` of
matrix ``t // 8`` and receives N 32-bit registers (written to `local_ptr`, a register pointer, as 2N b16).
``stmatrix_xN(smem_ptr, v0, ...)`` stores N registers per thread (sm_90+). ``_trans`` transposes each matrix.
The ``ptx_`` names are the same functions.
"""

from __future__ import annotations

import cutlass.cute as cute
from cutlass._mlir.dialects import llvm
from cutlass.base_dsl.typing import Int32
from cutlass.cutlass_dsl import T

from tilelang_cuda.contrib.cutedsl._dsl._asm import asm, smem_addr


def _shape(num, trans):
    return f"m8n8.x{num}{'.trans' if trans else ''}.shared.b16"


def _ldmatrix(smem_ptr, local_ptr, num, trans):
    regs = ", ".join(f"${i}" for i in range(num))
    result = T.i32() if num == 1 else llvm.StructType.get_literal([T.i32()] * num)
    out = asm(result, [smem_addr(smem_ptr)], f"ldmatrix.sync.aligned.{_shape(num, trans)} {{{regs}}}, [${num}];",
              ",".join(["=r"] * num + ["r"]))
    dst = cute.make_tensor(cute.recast_ptr(local_ptr, dtype=Int32), cute.make_layout(num))
    for i in range(num):
        dst[i] = Int32(out if num == 1 else llvm.extractvalue(T.i32(), out, [i]))


def _stmatrix(smem_ptr, values, trans):
    num = len(values)
    regs = ", ".join(f"${i + 1}" for i in range(num))
    asm(None, [smem_addr(smem_ptr), *(Int32(v).ir_value() for v in values)],
        f"stmatrix.sync.aligned.{_shape(num, trans)} [$0], {{{regs}}};", ",".join(["r"] * (num + 1)))


def ptx_ldmatrix_x1(smem_ptr, local_ptr):
    """One 8x8 matrix (``ldmatrix.sync.aligned.m8n8.x1.shared.b16``)."""
    _ldmatrix(smem_ptr, local_ptr, 1, False)


def ptx_ldmatrix_x2(smem_ptr, local_ptr):
    """Two 8x8 matrices."""
    _ldmatrix(smem_ptr, local_ptr, 2, False)


def ptx_ldmatrix_x4(smem_ptr, local_ptr):
    """Four 8x8 matrices."""
    _ldmatrix(smem_ptr, local_ptr, 4, False)


def ptx_ldmatrix_x1_trans(smem_ptr, local_ptr):
    """One 8x8 matrix, transposed (``.trans``)."""
    _ldmatrix(smem_ptr, local_ptr, 1, True)


def ptx_ldmatrix_x2_trans(smem_ptr, local_ptr):
    """Two 8x8 matrices, transposed."""
    _ldmatrix(smem_ptr, local_ptr, 2, True)


def ptx_ldmatrix_x4_trans(smem_ptr, local_ptr):
    """Four 8x8 matrices, transposed."""
    _ldmatrix(smem_ptr, local_ptr, 4, True)


def ptx_stmatrix_x1(smem_ptr, value0):
    """Store one 8x8 matrix (``stmatrix.sync.aligned.m8n8.x1.shared.b16``, sm_90+)."""
    _stmatrix(smem_ptr, [value0], False)


def ptx_stmatrix_x2(smem_ptr, value0, value1):
    """Store two 8x8 matrices."""
    _stmatrix(smem_ptr, [value0, value1], False)


def ptx_stmatrix_x4(smem_ptr, value0, value1, value2, value3):
    """Store four 8x8 matrices."""
    _stmatrix(smem_ptr, [value0, value1, value2, value3], False)


def ptx_stmatrix_x1_trans(smem_ptr, value0):
    """Store one 8x8 matrix, transposed."""
    _stmatrix(smem_ptr, [value0], True)


def ptx_stmatrix_x2_trans(smem_ptr, value0, value1):
    """Store two 8x8 matrices, transposed."""
    _stmatrix(smem_ptr, [value0, value1], True)


def ptx_stmatrix_x4_trans(smem_ptr, value0, value1, value2, value3):
    """Store four 8x8 matrices, transposed."""
    _stmatrix(smem_ptr, [value0, value1, value2, value3], True)


ldmatrix_x1, ldmatrix_x2, ldmatrix_x4 = ptx_ldmatrix_x1, ptx_ldmatrix_x2, ptx_ldmatrix_x4
ldmatrix_x1_trans, ldmatrix_x2_trans, ldmatrix_x4_trans = (ptx_ldmatrix_x1_trans, ptx_ldmatrix_x2_trans,
                                                           ptx_ldmatrix_x4_trans)
stmatrix_x1, stmatrix_x2, stmatrix_x4 = ptx_stmatrix_x1, ptx_stmatrix_x2, ptx_stmatrix_x4
stmatrix_x1_trans, stmatrix_x2_trans, stmatrix_x4_trans = (ptx_stmatrix_x1_trans, ptx_stmatrix_x2_trans,
                                                           ptx_stmatrix_x4_trans)
