"""Repairs of TVM's CUDA C output that nvcc rejects.

TVM prints a non-float32 infinity or NaN constant (a ``bfloat16`` reduction's ``-inf`` identity) as
``__float2bfloat16_rn(-inff)``: ``inff`` / ``nanf`` are no CUDA identifiers. They become the float bit patterns.
"""

from __future__ import annotations

import re

_SPECIAL = re.compile(r"\b(inff|nanf)\b(?!\s*\()")
_BITS = {"inff": "__int_as_float(0x7f800000)", "nanf": "__int_as_float(0x7fffffff)"}


def fix_special_floats(source: str) -> str:
    """`source` with TVM's bare ``inff`` / ``nanf`` constants spelled as device expressions."""
    return _SPECIAL.sub(lambda m: _BITS[m.group(1)], source)
