"""``metal.legalize_nan_tests`` (`LegalizeNanTests`, ``device_module``): NaN tests read the bits.

TVM spells ``isnan(x)`` as ``x != x`` (or ``isnan(x)``), which Metal's fast math (the default of
``MTLCompileOptions``) may fold to false, losing the NaN that ``T.reduce_max`` / ``T.reduce_min`` keep as torch
does. Each test of a float16 / float32 ``x`` becomes ``(as_type<uint>(float(x)) & 0x7fffffff) > 0x7f800000``
(`tilelang.tileop.reduce.isnan_by_bits`).
"""

from __future__ import annotations

from typing import Any


def LegalizeNanTests(target: Any = None) -> Any:
    """Every ``isnan(x)`` / ``x != x`` of a float16 / float32 ``x`` becomes a test of its bits."""
    from tilelang.backend.sdk import nan_tests_by_bits
    from tilelang.transform import utils as C

    @C.prim_func_pass("metal.legalize_nan_tests")
    def legalize(func: Any, mod: Any, ctx: Any) -> Any:
        body = nan_tests_by_bits(func.body)
        return func if body.same_as(func.body) else C.with_body(func, body)

    return legalize
