"""Backend dialects: names an installed backend adds to ``tilelang.language`` (``T.tma_copy``, ``T.alloc_tmem``, ...).

The reference exposes its CUDA-only names on ``tilelang.language`` as a compatibility facade. Here core never
imports a backend by name: a distribution declares an entry point in group ``tilelang.language`` whose name is
the dialect (``cuda``) and whose value is a module (``tilelang_cuda.language``). When ``T.<name>`` is not a
core name, `lookup` consults the dialect modules (imported on that first miss, never by
``import tilelang.language``): the first that has the attribute provides it. A name the reference puts in a
dialect that no installed backend provides raises an AttributeError naming the distribution to install.

``TILELANG_DISABLE_PLUGIN_AUTOLOAD=1`` and ``TILELANG_BLOCK_PLUGINS`` apply here as to backends.
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tilelang.errors import distribution_for

GROUP = "tilelang.language"
# the dialect whose compatibility facade the reference's ``tilelang.language`` is (its ``__all__`` and
# ``__tilelang_dialect__`` when installed): a fact about the reference's API, not an import of a backend
FACADE_DIALECT = "cuda"


@dataclass(frozen=True)
class DialectEntryPoint:
    """One ``tilelang.language`` entry point: dialect name, module path, distribution and its version."""

    dialect: str
    module: str
    distribution: str
    version: str


# The reference's names by dialect, for the message when none of the installed backends provides one (facts
# about the reference's API, not a list of what a backend must implement).
REFERENCE_DIALECT_NAMES: dict[str, frozenset[str]] = {
    "cuda": frozenset("""
        ClusterKernel CUDASourceCodeKernel alloc_cluster_barrier alloc_descriptor alloc_tmem
        annotate_consumer_reg_alloc annotate_l2_hit_ratio annotate_min_blocks_per_sm annotate_producer_reg_dealloc
        copy_cluster create_tma_descriptor deallocate_tmem dec_max_nreg disable_warp_group_reg_alloc
        fence_proxy_async get_warp_group_idx inc_max_nreg increase_descriptor_offset ldg128 ldg256 ldg32 ldg64
        lds128 lds32 lds64 named_barrier_arrive ptx_arrive_cluster_barrier ptx_mma_sm70 set_max_nreg
        shuffle_elect stg128 stg256 stg32 stg64 sts128 sts32 sts64 tma_copy tma_gather4 tma_gather4_bytes tma_load
        tma_load_2sm tma_scatter4 tma_store_arrive tma_store_wait
        tcgen05_gemm tcgen05_mma_arrive wgmma_gemm wait_wgmma tcgen05_gemm_blockscaled cp_async_barrier_noinc
        tcgen05_cp_warpx4 tcgen05_sf_warp_transpose tcgen05_after_thread_sync tcgen05_before_thread_sync
        mma_gemm_blockscaled __ffs __fns __ldg alloc_tcgen05_smem_desc alloc_wgmma_desc
        initialize_wgmma_descriptor ptx_wgmma_ss tcgen05_mma tcgen05_mma_blockscaled warpgroup_arrive
        warpgroup_commit_batch warpgroup_fence_operand warpgroup_wait wgmma_mma
        block_rank_in_cluster cluster_sync clc_is_canceled clc_get_first_ctaid_x cluster_arrive cluster_wait
        clc_try_cancel_multicast cluster_arrive_relaxed clc_try_cancel clc_get_first_ctaid_y clc_get_first_ctaid_z
        ptx_fence_barrier_init ptx_mma_block_scale mma_fill mma_store ptx_wait_barrier ptx_ldmatrix ptx_mma
        ptx_mma_sp ptx_cp_async_bulk rng_init rng_rand rng_rand_float ws WarpSpecialize WarpSpecializeFrame
        pdl_trigger pdl_sync
    """.split()),
    "rocm": frozenset("mfma mfma_store tvm_mfma tvm_mfma_store tvm_rdna_wmma tvm_rdna_wmma_store".split()),
    "metal": frozenset("""make_filled_simdgroup_matrix simdgroup_load simdgroup_multiply_accumulate simdgroup_store
                       cooperative_tensor_fill cooperative_tensor_load cooperative_tensor_multiply_accumulate
                       cooperative_tensor_store""".split()),
}

_lock = threading.RLock()
_entry_points: list[DialectEntryPoint] | None = None
_modules: dict[str, Any] = {}  # dialect -> module, or the exception its import raised


def _read_entry_points() -> list[DialectEntryPoint]:
    from importlib import metadata

    found = []
    for ep in metadata.entry_points(group=GROUP):
        dist = getattr(ep, "dist", None)
        name = dist.metadata["Name"] if dist is not None else "unknown distribution"
        found.append(DialectEntryPoint(ep.name, ep.value, name, dist.version if dist is not None else "?"))
    return found


def entry_points() -> list[DialectEntryPoint]:
    """The usable ``tilelang.language`` entry points (honouring the plugin escape-hatch variables)."""
    global _entry_points
    with _lock:
        if _entry_points is None:
            from tilelang.env import env

            if str(env.TILELANG_DISABLE_PLUGIN_AUTOLOAD or "").strip() not in ("", "0"):
                _entry_points = []
            else:
                blocked = {b.strip() for b in str(env.TILELANG_BLOCK_PLUGINS or "").split(",") if b.strip()}
                _entry_points = [ep for ep in _read_entry_points() if ep.dialect not in blocked
                                 and ep.module.split(".")[0].removeprefix("tilelang_") not in blocked]
        return list(_entry_points)


def installed_dialects() -> list[str]:
    return sorted({ep.dialect for ep in entry_points()})


def module_of(dialect: str) -> Any:
    """The module of installed dialect `dialect` (imported once; an import error is raised again each time)."""
    with _lock:
        if dialect not in _modules:
            eps = [ep for ep in entry_points() if ep.dialect == dialect]
            if not eps:
                raise LookupError(f"no installed backend provides the {dialect!r} language dialect")
            try:
                _modules[dialect] = importlib.import_module(eps[0].module.split(":")[0])
            except Exception as exc:  # reported to whoever asks for a name of this dialect
                _modules[dialect] = exc
        found = _modules[dialect]
    if isinstance(found, BaseException):
        raise ImportError(f"the {dialect!r} language dialect failed to import: {found!r}") from found
    return found


def facade_module() -> Any:
    """The installed `FACADE_DIALECT` module, or None (not installed, or failing to import)."""
    if FACADE_DIALECT not in installed_dialects():
        return None
    try:
        return module_of(FACADE_DIALECT)
    except ImportError:
        return None


def dialect_of(name: str) -> str | None:
    """The reference dialect that defines `name`, if any."""
    return next((d for d, names in REFERENCE_DIALECT_NAMES.items() if name in names), None)


def lookup(name: str) -> Any:
    """``T.<name>`` from an installed dialect; AttributeError saying what to install when none has it."""
    known = dialect_of(name)
    order = installed_dialects()
    if known in order:  # the dialect the reference puts it in first
        order = [known] + [d for d in order if d != known]
    failures = []
    for dialect in order:
        try:
            module = module_of(dialect)
        except ImportError as exc:
            failures.append(str(exc))
            continue
        if hasattr(module, name):
            return getattr(module, name)
    message = f"module 'tilelang.language' has no attribute {name!r}"
    if known is not None:
        if known in installed_dialects():
            message += (f": it belongs to the {known} dialect, which the installed backend does not provide yet "
                        f"(see `tilelang.{known}.language`)")
        else:
            message += (f": it belongs to the {known} dialect, which no installed backend provides; install it with "
                        f"`pip install {distribution_for(known)}`")
    if failures:
        message += " (" + "; ".join(failures) + ")"
    raise AttributeError(message)


def reset() -> None:
    """Forget the entry points and imported dialect modules (tests)."""
    global _entry_points
    with _lock:
        _entry_points = None
        _modules.clear()


def common_language_dialect(module_name: str, label: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for a backend's dialect module that is exactly the common language
    (``tilelang.language.common``) under its own name; names resolve on first use (importing the dialect imports
    neither TVM nor torch). `label` names the backend in the AttributeError of an unknown name."""

    def get(name: str) -> Any:
        common = importlib.import_module("tilelang.language.common")
        if name == "__all__":
            value: Any = tuple(common.__all__)
        elif name in common.__all__:
            value = getattr(common, name)
        else:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r} (the {label} dialect is the "
                                 "common language: see tilelang.language.common.__all__)")
        vars(sys.modules[module_name])[name] = value
        return value

    def names() -> list[str]:
        return sorted({*vars(sys.modules[module_name]), *get("__all__")})

    return get, names
