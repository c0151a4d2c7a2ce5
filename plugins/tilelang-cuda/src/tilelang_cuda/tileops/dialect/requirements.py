"""The lowest architecture that has each construct of the CUDA dialect (`Requirement`), and the check every
lowering runs first: on an older target `require` raises a LoweringError naming the construct, the target's arch
and that architecture."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tilelang.transform import utils as C


@dataclass(frozen=True)
class Requirement:
    """The lowest architecture that has a construct: ``sm`` (``90``), arch-specific (``sm_90a``), a feature name;
    ``families`` lists the only sm generations that have an arch-specific construct (wgmma: Hopper only), empty
    when every later arch-specific target has it."""

    sm: int
    arch_specific: bool
    feature: str
    families: tuple[int, ...] = ()

    @property
    def arch(self) -> str:
        return f"sm_{self.sm}{'a' if self.arch_specific else ''}"


def _r(sm: int, feature: str, specific: bool = False, families: tuple[int, ...] = ()) -> Requirement:
    return Requirement(sm, specific, feature, families)


_DATACENTER_BLACKWELL = (100, 101, 103, 110)
MBARRIER = _r(80, "mbarrier objects")
ASYNC_TX = _r(90, "mbarrier transaction counts")
CP_ASYNC = _r(80, "cp.async")
CLUSTER = _r(90, "thread-block clusters")
CLC = _r(100, "cluster launch control")
TMA = _r(90, "the Tensor Memory Accelerator (TMA)")
GATHER4 = _r(100, "TMA tile::gather4 / scatter4", True, _DATACENTER_BLACKWELL)
WGMMA = _r(90, "wgmma", True, (90,))
SETMAXNREG = _r(90, "setmaxnreg", True)
TCGEN05 = _r(100, "tcgen05 and tensor memory", True, _DATACENTER_BLACKWELL)
PDL = _r(90, "programmatic dependent launch (griddepcontrol)")
FENCE_PROXY_ASYNC = _r(90, "fence.proxy.async")
LDMATRIX = _r(75, "ldmatrix")
MMA = _r(80, "mma.sync")
MMA_SM75 = _r(75, "mma.sync (m16n8k8 / m8n8k16 / m8n8k32)")  # Turing's shapes; the rest need `MMA`
MMA_ANY = _r(70, "mma.sync")  # T.ptx_mma's own entry: each shape then requires its arch (MMA_SM75 or MMA)
FP8_MMA = _r(89, "fp8 mma.sp")
MMA_BLOCK_SCALE = _r(120, "block-scaled mma.sync (kind::mxf4nvf4)", True, (120, 121))
V256 = _r(100, "256-bit global loads and stores")
BASE = _r(70, "this instruction")

_ARCH_SPECIFIC_SUFFIXES = ("a", "f")


def _arch(target: Any) -> tuple[int, bool, str]:
    arch = str(target.attrs.get("arch", "sm_80")) if hasattr(target, "attrs") else str(target.get("arch", "sm_80"))
    digits = "".join(ch for ch in arch if ch.isdigit())
    return int(digits or 80), arch.endswith(_ARCH_SPECIFIC_SUFFIXES), arch


def missing(target: Any, req: Requirement) -> tuple[str, str] | None:
    """(message, hint) when `target` lacks `req`, else None.  An arch-specific construct needs an arch-specific
    target (``sm_90a``, not ``sm_90``) and, where ``req.families`` says so, one of those generations."""
    sm, specific, arch = _arch(target)
    hint = f"compile for {{\"kind\": \"cuda\", \"arch\": \"{req.arch}\"}}"
    if sm < req.sm or (req.arch_specific and not specific):
        return f"needs {req.feature}, which {req.arch} and newer have; target arch {arch} does not", hint
    if req.arch_specific and req.families and sm not in req.families:
        families = ", ".join(f"sm_{f}a" for f in req.families)
        return f"needs {req.feature}, which only {families} have; target arch {arch} does not", hint
    return None


def require(ctx: Any, req: Requirement) -> None:
    """LoweringError naming the construct, the target and the lowest arch that has it, unless the target has it."""
    lacking = missing(ctx.target, req)
    if lacking is None:
        return
    message, hint = lacking
    if hasattr(ctx, "target_kind"):  # an intrinsic's context names the construct and the target itself
        raise ctx.error(message, hint)
    # a tile operator's context (T.tcgen05_gemm, T.copy out of TMEM): name them the same way
    from tilelang.backend.sdk import dsl_name

    raise C.lowering_error(ctx.func, f"{dsl_name(ctx.op)} on target 'cuda': {message}; {hint}")
