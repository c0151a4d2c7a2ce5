"""Subgroup builtins in TVM's WGSL: the reduction (`tilelang_webgpu.tileops.reduce`) calls ``tl_subgroup_id()``,
``tl_subgroup_size()`` and ``tl_subgroup_invocation_id()`` as externs; these become the compute entry point's
``@builtin(subgroup_id)``, ``@builtin(subgroup_size)`` and ``@builtin(subgroup_invocation_id)`` parameters.

``enable subgroups;`` (which TVM writes when the target has ``supports_subgroups``) stays in the kernel source;
`for_naga` drops it just before wgpu compiles the shader, since naga (wgpu 0.32) rejects the directive and gates
subgroup operations on the device feature instead.
"""

from __future__ import annotations

import re

ENABLE = "enable subgroups;"
_BUILTINS = {"tl_subgroup_id": "subgroup_id", "tl_subgroup_size": "subgroup_size",
             "tl_subgroup_invocation_id": "subgroup_invocation_id"}
_ENTRY = re.compile(r"(@compute[^\n]*\nfn \w+\()")


def legalize_subgroup_builtins(source: str) -> str:
    """`source` with the ``tl_subgroup_*()`` calls turned into entry-point builtin parameters."""
    used = [name for name in _BUILTINS if f"{name}()" in source]
    if not used:
        return source
    for name in used:
        source = source.replace(f"{name}()", f"i32({name}_b)")
    params = "".join(f"\n  @builtin({_BUILTINS[name]}) {name}_b : u32," for name in used)
    return _ENTRY.sub(lambda m: m.group(1) + params, source, count=1)


def uses_subgroups(wgsl: str) -> bool:
    """Whether the shader declares the ``subgroups`` extension."""
    return ENABLE in wgsl


def for_naga(wgsl: str) -> str:
    """The shader as naga accepts it: without the ``enable subgroups;`` directive."""
    return wgsl.replace(ENABLE + "\n", "").replace(ENABLE, "")
