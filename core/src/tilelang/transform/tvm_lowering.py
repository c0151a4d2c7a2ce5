"""TVM's block and buffer lowering passes under the reference's ``tilelang.transform`` names.

``LowerOpaqueBlock`` turns opaque blocks into plain statements (their allocations become ``AllocBuffer``s);
``FlattenBuffer`` rewrites every multi-dimensional buffer access into a 1-D one. Both are TVM's passes as they
are; the factories take the target (or None) like every pass of this package.
"""

from __future__ import annotations

from typing import Any

import tvm


def LowerOpaqueBlock(target: Any = None) -> tvm.transform.Pass:
    """TVM's LowerOpaqueBlock."""
    from tvm import s_tir

    return s_tir.transform.LowerOpaqueBlock()


def FlattenBuffer(target: Any = None) -> tvm.transform.Pass:
    """TVM's FlattenBuffer."""
    from tvm import tirx

    return tirx.transform.FlattenBuffer()
