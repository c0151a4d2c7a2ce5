"""Pass configuration: `PassConfigKey` (the keys of ``pass_configs=``) and IR printing between passes.

``TILELANG_PRINT_IR=<pass name>|all`` prints the module after that pass (or after every pass) to stderr; a
pass name matches with or without its ``tl.`` prefix, case-insensitively.
"""

from __future__ import annotations

import contextlib
import contextvars
import difflib
import enum
import logging
import sys
from collections.abc import Iterator
from typing import Any


class PassConfigKey(str, enum.Enum):
    """Keys of ``pass_configs=`` (the reference TileLang's names and exact strings, plus this project's own).

    Keys this project does not act on are accepted (a debug-level log line says so); see `ACTED_ON`.
    """

    TL_SIMPLIFY = "tl.Simplify"
    # fields of the tl.Simplify config (a dict of these keys)
    TL_SIMPLIFY_TRANSITIVELY_PROVE_INEQUALITIES = "transitively_prove_inequalities"
    TL_SIMPLIFY_CONVERT_BOOLEAN_TO_AND_OF_ORS = "convert_boolean_to_and_of_ors"
    TL_SIMPLIFY_APPLY_CONSTRAINTS_TO_BOOLEAN_BRANCHES = "apply_constraints_to_boolean_branches"
    TL_SIMPLIFY_PROPAGATE_KNOWNS_TO_PROVE_CONDITIONAL = "propagate_knowns_to_prove_conditional"
    TL_SIMPLIFY_PROPAGATE_KNOWNS_TO_SIMPLIFY_EXPRESSIONS = "propagate_knowns_to_simplify_expressions"
    TL_SIMPLIFY_ENABLE_LET_INLINE = "enable_simplify_let_inline"
    TL_DISABLE_VECTORIZE_256 = "tl.disable_vectorize_256"
    TL_DISABLE_BUFFER_INIT_CHECK = "tl.disable_buffer_init_check"
    TL_DISABLE_DATA_RACE_CHECK = "tl.disable_data_race_check"
    TL_DISABLE_PRELOWER_SEMANTIC_CHECK = "tl.disable_prelower_semantic_check"
    TL_DISABLE_WARP_SPECIALIZED = "tl.disable_warp_specialized"
    TL_ENABLE_FAST_MATH = "tl.enable_fast_math"
    TL_ENABLE_AUTO_SCHEDULE = "tl.enable_auto_schedule"  # the reference's Ascend scheduler: no backend here reads it
    TL_ENABLE_AUTO_WARP_SPECIALIZATION = "tl.enable_auto_warp_specialization"  # CUDA warp-specialises by default
    TL_ENABLE_FP32X2_REDUCTION = "tl.enable_fp32x2_reduction"  # sm_100 packed fp32x2 sums: a hint, not read here
    TL_PTXAS_REGISTER_USAGE_LEVEL = "tl.ptxas_register_usage_level"
    TL_DEVICE_COMPILE_FLAGS = "tl.device_compile_flags"
    TL_EMIT_LINE_DIRECTIVES = "tl.emit_line_directives"
    TL_CONFIG_INDEX_BITWIDTH = "tl.config_index_bitwidth"
    TL_ENABLE_REDUCER_PLAN_VERBOSE = "tl.enable_reducer_plan_verbose"
    TL_LAYOUT_COST_MODEL = "tl.layout_cost_model"
    TL_REDUCER_FORCE_BASELINE = "tl.reducer_force_baseline"
    TL_DISABLE_TMA_LOWER = "tl.disable_tma_lower"
    TL_DISABLE_SAFE_MEMORY_ACCESS = "tl.disable_safe_memory_legalize"
    TL_ENABLE_ASYNC_COPY = "tl.enable_async_copy"
    TL_ENABLE_LOWER_LDGSTG = "tl.enable_lower_ldgstg"
    TL_ENABLE_LOWER_LDGSTG_PREDICATED = "tl.enable_lower_ldgstg_predicated"
    TL_ENABLE_VECTORIZE_PLANNER_VERBOSE = "tl.enable_vectorize_planner_verbose"
    TL_DISABLE_WGMMA = "tl.disable_wgmma"
    TL_DEBUG_MERGE_SHARED_MEMORY_ALLOCATIONS = "tl.debug_merge_shared_memory_allocations"
    TL_ENABLE_AGGRESSIVE_SHARED_MEMORY_MERGE = "tl.enable_aggressive_shared_memory_merge"
    TL_DISABLE_SHARED_MEMORY_REUSE = "tl.disable_shared_memory_reuse"
    TL_DISABLE_SHUFFLE_ELECT = "tl.disable_shuffle_elect"
    TL_DISABLE_LOOP_UNSWITCHING = "tl.disable_loop_unswitching"
    TL_LOOP_UNSWITCHING_ALLOW_NON_TRIVIAL_ELSE = "tl.loop_unswitching_allow_non_trivial_else"
    TL_IF_STMT_BINDING_INLINE_REPLAYABLE_BINDS = "tl.if_stmt_binding_inline_replayable_binds"
    TL_DISABLE_THREAD_STORAGE_SYNC = "tl.disable_thread_storage_sync"
    TL_FORCE_LET_INLINE = "tl.force_let_inline"
    TL_AST_PRINT_ENABLE = "tl.ast_print_enable"
    TL_LAYOUT_VISUALIZATION_ENABLE = "tl.layout_visualization_enable"
    TL_LAYOUT_VISUALIZATION_FORMATS = "tl.layout_visualization_formats"
    TL_STORAGE_REWRITE_DETECT_INPLACE = "tl.storage_rewrite_detect_inplace"
    TL_DISABLE_OUT_OF_BOUND_WARNING = "tl.disable_out_of_bound_warning"
    TL_ENABLE_DUMP_IR = "tl.enable_dump_ir"
    TL_DUMP_IR_DIR = "tl.dump_ir_path"
    TL_PASS_PROFILE = "tl.pass_profile"
    TL_PASS_PROFILE_THRESHOLD_MS = "tl.pass_profile_threshold_ms"
    TIR_ENABLE_EQUIV_TERMS_IN_CSE = "tir.enable_equiv_terms_in_cse_tir"
    TIR_DISABLE_CSE = "tirx.disable_cse_tir"
    TIR_SIMPLIFY = "tirx.Simplify"
    TIR_DISABLE_STORAGE_REWRITE = "tirx.disable_storage_rewrite"
    TIR_DISABLE_VECTORIZE = "tirx.disable_vectorize"
    TIR_USE_ASYNC_COPY = "tirx.use_async_copy"
    TIR_ENABLE_DEBUG = "tirx.enable_debug"
    TIR_MERGE_STATIC_SMEM = "tirx.merge_static_smem"
    TIR_ADD_LOWER_PASS = "tirx.add_lower_pass"
    TIR_NOALIAS = "tirx.noalias"
    CUDA_KERNELS_OUTPUT_DIR = "cuda.kernels_output_dir"
    # this project's own
    TL_DISABLE_VECTORIZE = "tl.disable_vectorize"
    TL_DISABLE_SOFTWARE_PIPELINE = "tl.disable_software_pipeline"
    TL_DISABLE_SHARED_LAYOUTS = "tl.disable_shared_layouts"  # T.annotate_layout on shared tiles: check, don't apply
    TIR_DISABLE_ASSERT = "tirx.disable_assert"

    def __str__(self) -> str:
        return self.value


# the keys this project's pipeline and backends read; the others are accepted and have no effect here
ACTED_ON = frozenset({
    "tl.disable_vectorize", "tl.disable_safe_memory_legalize", "tl.disable_software_pipeline",
    "tl.disable_shared_layouts", "tl.disable_tma_lower", "tl.enable_fast_math", "tl.device_compile_flags",
    "tl.pass_profile", "tl.pass_profile_threshold_ms", "tl.enable_dump_ir", "tl.dump_ir_path",
    "tirx.disable_vectorize", "tirx.disable_cse_tir", "tirx.enable_debug", "tirx.disable_assert",
    "tirx.disable_storage_rewrite", "tirx.noalias", "tl.config_index_bitwidth",
})
# earlier spellings -> the reference's
_ALIASES = {"tl.disable_safe_memory_access": "tl.disable_safe_memory_legalize"}
_KNOWN = frozenset(k.value for k in PassConfigKey) | frozenset(_ALIASES)
_logger = logging.getLogger("tilelang.transform.config")


def _check_key(name: str) -> None:
    """An unknown ``tl.<name>`` key is an error naming the closest known one (backend namespaces such as
    ``tl.cuda.*`` belong to their plugins and are not checked here)."""
    if not name.startswith("tl.") or name.count(".") > 1 or name in _KNOWN:
        if name not in ACTED_ON and name in _KNOWN:
            _logger.debug("pass config %r is accepted but has no effect in this project", name)
        return
    close = difflib.get_close_matches(name, sorted(_KNOWN), n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise KeyError(f"unknown pass config {name!r}{hint} (known: tilelang.PassConfigKey)")


def _a(value: Any) -> str:
    """``a set``, ``an int``: the article and type name of `value`, for messages."""
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def _shown(value: Any) -> str:
    import reprlib

    short = reprlib.Repr()
    short.maxstring, short.maxother = 60, 60
    return short.repr(value)


def check_pass_configs(configs: Any, arg: str = "pass_configs") -> dict[Any, Any]:
    """`configs` (a mapping of option names to values, or None) as a dict; anything else, or a key that is not an
    option name (a str or `PassConfigKey`), is a TypeError naming `arg` and what was given."""
    from collections.abc import Mapping

    if configs is None:
        return {}
    if not isinstance(configs, Mapping):
        hint = ""
        if isinstance(configs, (set, frozenset)) and all(isinstance(k, str) for k in configs):
            hint = " (did you forget ': True'?)"
        elif isinstance(configs, str) or (isinstance(configs, (list, tuple))
                                          and all(isinstance(k, str) for k in configs)):
            first = configs if isinstance(configs, str) else (configs[0] if configs else "tl.disable_vectorize")
            hint = f" (e.g. {{{first!r}: True}})"
        raise TypeError(f"{arg} must be a dict mapping option names to values, got {_a(configs)} "
                        f"{_shown(configs)}{hint}")
    for key in configs:
        if not isinstance(key, str) and not (isinstance(key, enum.Enum) and isinstance(key.value, str)):
            raise TypeError(f"{arg} keys must be option names (str or tilelang.PassConfigKey), got the "
                            f"{type(key).__name__} {_shown(key)} (in {_shown(dict(configs))})")
    return dict(configs)


def check_compile_flags(flags: Any, arg: str = "compile_flags") -> list[str] | None:
    """`flags` (None, a str, or a list/tuple of str) as a list (None kept); anything else is a TypeError naming
    `arg` and, for a bad element, its index and type."""
    if flags is None:
        return None
    if isinstance(flags, str):
        return [flags]
    if not isinstance(flags, (list, tuple)):
        raise TypeError(f"{arg} must be a str or a list/tuple of str, got {_a(flags)} {_shown(flags)}")
    for i, flag in enumerate(flags):
        if not isinstance(flag, str):
            raise TypeError(f"{arg}[{i}] must be a str, got {_a(flag)}: {_shown(flag)} (in {_shown(flags)})")
    return list(flags)


def normalize_pass_configs(configs: dict[Any, Any] | None) -> dict[str, Any]:
    """String keys, checked (`_check_key`); ``tir.*`` spellings of the reference map to TVM 0.27's ``tirx.*``."""
    out: dict[str, Any] = {}
    for key, value in check_pass_configs(configs).items():
        name = key.value if isinstance(key, PassConfigKey) else str(key)
        if name.startswith("tir."):
            name = "tirx." + name[4:]
        _check_key(name)
        name = _ALIASES.get(name, name)
        out[name] = value
    return out


def with_compile_flags(configs: dict[str, Any] | None, compile_flags: Any) -> dict[str, Any]:
    """`configs` with `compile_flags` (the ``compile_flags=`` of a kernel: a string or a list) appended to
    ``tl.device_compile_flags``, as the reference hands them to the device compiler (nvcc, NVRTC, hipcc)."""
    out = dict(configs or {})
    if not compile_flags:
        return out
    flags = [compile_flags] if isinstance(compile_flags, str) else list(compile_flags)
    given = out.get("tl.device_compile_flags")
    given = [] if given is None else [given] if isinstance(given, str) else list(given)
    out["tl.device_compile_flags"] = [*given, *flags]
    return out


def tvm_pass_configs(configs: dict[str, Any]) -> dict[str, Any]:
    """The subset of `configs` that TVM's PassContext understands (it rejects unknown keys)."""
    known = _tvm_config_keys()
    out = {k: v for k, v in configs.items() if k in known}
    if configs.get("tl.disable_vectorize"):  # TVM's own vectoriser obeys the tl key too
        out.setdefault("tirx.disable_vectorize", True)
    return out


_TVM_KEYS: frozenset[str] | None = None


def _tvm_config_keys() -> frozenset[str]:
    global _TVM_KEYS
    if _TVM_KEYS is None:
        import tvm_ffi

        _TVM_KEYS = frozenset(str(k) for k in tvm_ffi.get_global_func("transform.ListConfigs")().keys())
    return _TVM_KEYS


_TL_CONFIGS: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar("tl_pass_configs", default=None)


@contextlib.contextmanager
def tl_configs(configs: dict[str, Any]) -> Iterator[None]:
    """Make the ``tl.*`` pass configs visible to the passes run inside (TVM's PassContext rejects them)."""
    inherited = _pass_context_tl_configs()  # a user's ``with PassContext(config={"tl...."})`` around the build
    token = _TL_CONFIGS.set({**inherited, **{k: v for k, v in configs.items() if k.startswith("tl.")}})
    try:
        yield
    finally:
        _TL_CONFIGS.reset(token)


def current_tl_config(key: str, default: Any = None) -> Any:
    """The value of the ``tl.*`` pass config `key`: the current `tl_configs` scope, else the ``tl.*`` configs of the
    current ``tvm.transform.PassContext`` (``with PassContext(config={"tl.disable_vectorize": True}):``)."""
    scoped = _TL_CONFIGS.get() or {}
    if str(key) in scoped:
        return scoped[str(key)]
    return _pass_context_tl_configs().get(str(key), default)


def current_tl_configs() -> dict[str, Any]:
    """Every ``tl.*`` pass config in effect (the current `tl_configs` scope over the current PassContext's)."""
    return {**_pass_context_tl_configs(), **(_TL_CONFIGS.get() or {})}


# ---------------------------------------------------------------- tl.* keys in tvm.transform.PassContext
# TVM 0.27 rejects config keys no C++ code registered; the reference registers its ``tl.*`` keys, so users write
# ``tvm.transform.PassContext(config={"tl.disable_tma_lower": True})``. The patched constructor keeps the ``tl.*``
# keys beside the context (by its object handle) and ``PassContext.config`` shows them with TVM's own.
_CONTEXT_TL: dict[int, dict[str, Any]] = {}

# deprecated keys -> the reference's deprecation message (a DeprecationWarning when a kernel is built with them)
DEPRECATED = {
    "tl.disable_tma_lower": "`tl.disable_tma_lower` is deprecated and will be removed in v0.1.10. Use "
                            "`T.copy(..., disable_tma=True)` per-copy instead.",
}


def warn_deprecated(configs: dict[str, Any]) -> None:
    """A DeprecationWarning for each deprecated key set in `configs`."""
    import warnings

    for key in configs or {}:
        name = key.value if isinstance(key, PassConfigKey) else str(key)
        if name in DEPRECATED:
            warnings.warn(DEPRECATED[name], DeprecationWarning, stacklevel=3)


def _pass_context_tl_configs() -> dict[str, Any]:
    if not _CONTEXT_TL or "tvm.ir.transform" not in sys.modules:
        return {}
    current = sys.modules["tvm.ir.transform"].PassContext.current()
    return _CONTEXT_TL.get(current.__chandle__(), {})


def install_pass_context_configs(pass_context: type) -> None:
    """Patch ``tvm.transform.PassContext`` to accept the ``tl.*`` keys (checked like `normalize_pass_configs`)."""
    if getattr(pass_context, "_tilelang_tl_configs", False):
        return
    original_init = pass_context.__init__
    original_config = pass_context.__dict__["config"]

    def __init__(self: Any, opt_level: int = 2, required_pass: Any = None, disabled_pass: Any = None,
                 instruments: Any = None, config: dict[Any, Any] | None = None) -> None:
        tl, rest = {}, {}
        for key, value in (config or {}).items():
            name = key.value if isinstance(key, PassConfigKey) else str(key)
            if name.startswith("tl."):
                _check_key(name)
                tl[_ALIASES.get(name, name)] = value
            else:
                rest[name] = value
        original_init(self, opt_level, required_pass, disabled_pass, instruments, rest or None)
        if tl:  # every construction sets its own entry: a handle reused later never sees stale keys
            _CONTEXT_TL[self.__chandle__()] = tl
        else:
            _CONTEXT_TL.pop(self.__chandle__(), None)

    def config(self: Any) -> Any:
        own = original_config.__get__(self, type(self))
        tl = _CONTEXT_TL.get(self.__chandle__())
        return {**{str(k): v for k, v in own.items()}, **tl} if tl else own

    pass_context.__init__ = __init__
    pass_context.config = property(config, doc="TVM's config of this context and its ``tl.*`` keys")
    pass_context._tilelang_tl_configs = True


def print_ir_target() -> str | None:
    from tilelang.env import env

    value = str(env.TILELANG_PRINT_IR or "").strip()
    return value or None


def PrintIRInstrument(which: str) -> Any:
    """A pass instrument that prints the module after pass `which` (or ``all``)."""
    import tvm

    wanted = which.lower()

    @tvm.instrument.pass_instrument
    class _PrintIR:
        def run_after_pass(self, mod: Any, info: Any) -> None:
            name = str(info.name)
            short = name.split(".", 1)[-1].lower()
            if wanted in ("all", "1") or wanted in (name.lower(), short):
                print(f"# ---- IR after {name}", file=sys.stderr)
                print(mod.script() if hasattr(mod, "script") else mod, file=sys.stderr)

    return _PrintIR()
