"""`CompileRequest`: what one compilation was asked for, resolved once from the user's arguments.

Every entry point (`tilelang.lower`, `tilelang.compile`, ``@tilelang.jit``, the autotuner, the kernel cache)
builds one from what the user passed and hands it down; nothing below re-resolves a target or re-normalises a
pass config:

- the target pair (`tilelang.backend.split_targets`): device and host configs, whether the kernel is host code,
  and TVM's targets, built only through each kind's ``TargetKind.to_tvm`` (kinds TVM lacks work everywhere);
- the pass configs, checked and normalised once (``tir.*`` spellings, aliases) with the compile flags appended
  to ``tl.device_compile_flags``, where device compilers read them;
- each buffer parameter's data alignment that the compiled code assumes (`param_align`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tilelang.backend.target import TargetPair, TargetSpec, split_targets

__all__ = ["CompileRequest"]


@dataclass(frozen=True)
class CompileRequest:
    """One compilation's resolved target pair, pass configs and compile flags."""

    targets: TargetPair
    pass_configs: dict[str, Any] = field(default_factory=dict)
    compile_flags: list[str] | None = None

    @classmethod
    def create(cls, target: TargetSpec = "auto", target_host: TargetSpec = None,
               pass_configs: dict[Any, Any] | None = None, compile_flags: Any = None) -> CompileRequest:
        """Resolve the user's arguments (``"auto"``, a kind, a dict, a ``Target`` or a `TargetPair`)."""
        from tilelang.transform.config import check_compile_flags, normalize_pass_configs, with_compile_flags

        flags = check_compile_flags(compile_flags)
        configs = with_compile_flags(normalize_pass_configs(pass_configs), flags)
        return cls(split_targets(target, target_host), configs, flags)

    @property
    def on_host(self) -> bool:
        """Whether the kernel itself is host code (CPU kinds)."""
        return self.targets.on_host

    def param_align(self, prim: Any) -> dict[str, int]:
        """Each buffer parameter's data alignment that the compiled code assumes of the pointer it is given.

        Kernels that run on the host are built from the lowered function, whose parameters the core pipeline's
        `HostChecks` re-declared with their element's alignment: any torch tensor fits. Device kernels keep the
        program's declaration (their vector loads may assume it); a misaligned tensor is then copied.
        """
        from tilelang.transform.plan_shared_memory import dtype_bytes

        found = {}
        for p in prim.params:
            ty = getattr(p, "ty", None)
            align = getattr(ty, "data_alignment", None)
            if align is not None:
                found[str(p.name)] = min(int(align), dtype_bytes(str(ty.dtype))) if self.on_host else int(align)
        return found
