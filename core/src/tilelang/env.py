"""Every environment variable TileLang reads, in one list (read at access time, never cached).

``tilelang.env`` is the `Environment` instance ``env`` (as in the reference): each variable is an attribute
(``env.TILELANG_CACHE_DIR``) whose value comes from ``os.environ`` or its default; assigning one
(``env.TILELANG_CACHE_DIR = "/tmp/x"``) forces a value for this process until it is assigned again. The
module-level functions below (``cache_dir()``, ``verbose()``, ...) are the typed accessors the project uses;
they are also methods of ``env``.

Variables (meaning; default), one a line (``tilelang env`` shows each with this text):

- ``TILELANG_CACHE_DIR``: root of the on-disk kernel cache; default ``~/.tilelang/cache``
- ``TILELANG_TMP_DIR``: scratch files of compilers; default ``$TILELANG_CACHE_DIR/tmp``
- ``TILELANG_DISABLE_CACHE``: ``1`` turns the kernel cache (memory and disk) off; default ``0``
- ``TILELANG_CACHE_MAX_BYTES``: disk cache size limit (``500M``, ``10G``); LRU entries are evicted; default none
- ``TILELANG_CACHE_WRITE_DELAY``: test hook: seconds to sleep between the files of a cache write; default ``0``
- ``TILELANG_KERNEL_CACHE_USE_LIB_STAMP``: key the CUDA binary cache by the toolchain stamp too; default ``0``
- ``TILELANG_DEFAULT_TARGET``: target of ``target="auto"`` (a kind, or a JSON dict); default ``auto`` (detected)
- ``TILELANG_EXECUTION_BACKEND``: execution backend of ``execution_backend="auto"``; default ``auto``
- ``TILELANG_VERBOSE``: ``1``: the ``tilelang`` logger at INFO (compilations, cache decisions); default ``0``
- ``TILELANG_LOG_LEVEL``: level of the ``tilelang`` logger (a name or a number); wins over VERBOSE; default
  ``WARNING``
- ``TILELANG_PRINT_ON_COMPILATION``: a line per compilation, logged at INFO: shown when the logger is at INFO or
  lower, or at any level when set to ``1`` explicitly; ``0`` hides it; default ``1``
- ``TILELANG_JIT_DIAGNOSTICS``: ``1`` logs each JIT phase (start, done, failed) at any level; default ``0``
- ``TILELANG_FULL_TRACEBACK``: ``1`` keeps TileLang's own frames in the traceback of an error in a kernel;
  default ``0``
- ``TILELANG_NUM_THREADS``: CPU threads of TVM's runtime (sets ``TVM_NUM_THREADS``); default all usable cores
- ``TILELANG_AUTOTUNE_WORKERS``: processes compiling autotuning candidates; default usable cores
- ``TILELANG_AUTO_TUNING_CPU_COUNTS``: the reference's name for the same (``-1``: auto); default ``-1``
- ``TILELANG_AUTO_TUNING_CPU_UTILITIES``: share of cores autotuning uses when counts is auto; default ``0.9``
- ``TILELANG_AUTO_TUNING_MAX_CPU_COUNT``: upper bound on autotuning workers (``-1``: none); default ``-1``
- ``TILELANG_AUTO_TUNING_DISABLE_CACHE``: ``1``: autotuning results are not cached; default ``0``
- ``TILELANG_COMPILE_TIMEOUT_SECONDS``: timeout of one device-compiler run (nvcc, ...); default none
- ``TILELANG_CLEANUP_TEMP_FILES``: ``0`` keeps compilers' temporary files; default ``1``
- ``TILELANG_HIP_SAVE_TEMP_FILES``: ``1`` keeps the HIP compiler's temporary files; default ``0``
- ``TILELANG_CUDA_COMPILER``: ``nvcc`` or ``nvrtc`` for CUDA builds; default nvcc when found
- ``TILELANG_PRINT_IR``: print the IR after a pass (its name, or ``all``); default off
- ``TILELANG_PASS_PROFILE``: ``1`` times each pass and logs a report per kernel; default ``0``
- ``TILELANG_PASS_PROFILE_THRESHOLD_MS``: the pass timing report leaves out faster passes; default ``0``
- ``TILELANG_PASS_DIFF``: what each pass changed (``terminal``, ``html``, ``both``); default off
- ``TILELANG_PASS_DIFF_OUTPUT``: where the HTML pass diffs go; default ``tmp/pass_diff_output``
- ``TL_LOWER_TRACE``: per-pass IR snapshots (``html``, ``terminal``, ``both``); default off
- ``TL_LOWER_TRACE_DIR``: where the lower trace writes; default ``./tmp/lower_trace_dir``
- ``TILELANG_ENABLE_IR_SPAN``: source spans in the IR (error locations); default ``1``
- ``TILELANG_LAZY_PRIM_FUNC``: ``0`` parses every module-level ``@T.prim_func`` when it is decorated (by default one
  decorated before TVM is imported is parsed on first use, see `tilelang.frontend.lazy`); default ``1``
- ``TL_IKET_OUTPUT_DIR``: where IKET profiling sessions write their traces; default the session's choice
- ``TILELANG_LAYOUT_COST_MODEL``: default of the ``tl.layout_cost_model`` pass config; default unset
- ``TILELANG_DISABLE_PLUGIN_AUTOLOAD``: ``1`` ignores every installed backend; default off
- ``TILELANG_BLOCK_PLUGINS``: ignore some backends (names or target kinds, comma-separated); default none
- ``TVM_IMPORT_PYTHON_PATH``: the reference's bundled-TVM location; accepted, unused (TVM comes from pip); default
  unset
- ``TVM_LIBRARY_PATH``: the reference's TVM library location; accepted, unused; default unset
- ``TL_CUTLASS_PATH``: the reference's CUTLASS headers; accepted, unused; default unset
- ``TL_COMPOSABLE_KERNEL_PATH``: the reference's Composable Kernel headers; accepted, unused; default unset
- ``TL_TEMPLATE_PATH``: the reference's device template headers; accepted, unused (each backend ships its own);
  default unset
- ``SKIP_LOADING_TILELANG_SO``: the reference's switch for its native library; this project has none; default
  ``1``
- ``CUDA_HOME``: the CUDA toolkit (``CUDA_HOME`` or ``CUDA_PATH``, else found from nvcc); read once; default
  detected
- ``ROCM_HOME``: the ROCm installation (``ROCM_PATH`` or ``ROCM_HOME``, else found from hipcc); read once;
  default detected
"""

from __future__ import annotations

import glob
import json
import math
import os
import re
import shutil
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "env", "Environment", "EnvVar", "CacheState", "cache_dir", "cache_disabled", "default_target",
    "execution_backend", "num_threads", "autotune_workers", "verbose", "cache_write_delay", "usable_cores",
    "tmp_dir", "log_level", "parse_pass_profile_threshold_ms", "resolve_pass_profile_threshold_ms",
    "enable_cache", "disable_cache", "is_cache_enabled", "CUDA_HOME", "ROCM_HOME",
    "parse_byte_size", "cache_max_bytes", "describe", "variable_docs",
]

_TRUE = {"1", "true", "yes", "on"}
EnvDefault = str | None | Callable[[], str | None]


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() in _TRUE


class EnvVar:
    """Descriptor for one environment variable: reads ``os.environ[key]`` (else `default`, which may be a
    callable) on every access; assigning through the owning instance forces a value (``_forced_value``)."""

    def __init__(self, key: str, default: EnvDefault = None):
        self.key = key
        self.default = default
        self._forced_value: Any = None

    def get(self) -> Any:
        if self._forced_value is not None:
            return self._forced_value
        if self.key in os.environ:
            return os.environ[self.key]
        return self.default() if callable(self.default) else self.default

    def __get__(self, instance: Any, owner: Any) -> Any:
        return self.get()

    def __set__(self, instance: Any, value: Any) -> None:
        self._forced_value = value

    def __repr__(self) -> str:
        return f"EnvVar({self.key!r}, default={self.default!r})"


class CacheState:
    """The process-wide kernel-cache switch (`enable_cache` / `disable_cache`)."""

    _enabled = True

    @classmethod
    def enable(cls) -> None:
        cls._enabled = True

    @classmethod
    def disable(cls) -> None:
        cls._enabled = False

    @classmethod
    def is_enabled(cls) -> bool:
        return cls._enabled


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity where the OS reports one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def parse_pass_profile_threshold_ms(value: object, name: str = "pass profile threshold") -> float:
    """`value` as a finite, non-negative number of milliseconds (ValueError naming `name` otherwise)."""
    try:
        threshold = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a finite non-negative number, got {value!r}") from exc
    if not math.isfinite(threshold) or threshold < 0:
        raise ValueError(f"{name} must be a finite non-negative number, got {value!r}")
    return threshold


def resolve_pass_profile_threshold_ms(pass_configs: Mapping[Any, Any], key: Any,
                                      env_threshold_ms: Callable[[], float]) -> float:
    """The threshold from `pass_configs[key]` when given (an explicit 0 included), else from the environment."""
    if key in pass_configs:
        return parse_pass_profile_threshold_ms(pass_configs[key], str(key))
    return env_threshold_ms()


_BYTE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_byte_size(value: object, name: str = "size") -> int:
    """`value` as a number of bytes: an integer, or a number with a binary unit (``500M``, ``10G``, ``1.5GiB``,
    ``64k``; K/M/G/T are powers of 1024, a trailing ``B``/``iB`` is optional). ValueError naming `name` otherwise."""
    text = str(value).strip()
    match = re.fullmatch(r"(\d+(?:\.\d*)?|\.\d+)\s*([kmgtKMGT]?)(?:i?[bB])?", text)
    if match is None:
        raise ValueError(f"{name}={text!r} is not a size: use a number of bytes or a number with a unit, "
                         "e.g. 500M or 10G")
    number, unit = match.groups()
    return int(float(number) * _BYTE_UNITS[unit.lower()])


def _find_cuda_home() -> str:
    """The CUDA toolkit root: CUDA_HOME / CUDA_PATH, nvcc on PATH, the nvidia-cuda-nvcc wheel, /usr/local/cuda."""
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            return os.environ[var] if os.path.exists(os.environ[var]) else ""
    nvcc = shutil.which("nvcc")
    if nvcc:
        real = os.path.realpath(nvcc)
        parents = 3 if "hpc_sdk" in real.lower() else 2
        root = real
        for _ in range(parents):
            root = os.path.dirname(root)
        if _has_cuda_headers(root):
            return root
        # nvcc on PATH may be a wrapper script (e.g. /usr/local/bin/nvcc): look for the toolkit it wraps
        for candidate in sorted(glob.glob("/usr/local/cuda*"), reverse=True):
            if _has_cuda_headers(candidate):
                return candidate
    try:
        from importlib import metadata

        for file in metadata.files("nvidia-cuda-nvcc") or []:
            if file.name in ("nvcc", "nvcc.exe"):
                return str(Path(str(file.locate())).parent.parent)
    except Exception:
        pass
    candidates = (glob.glob("C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v*.*") if sys.platform == "win32"
                  else ["/usr/local/cuda", "/opt/nvidia/hpc_sdk/Linux_x86_64"])
    return next((c for c in candidates if os.path.exists(c)), "")


def _has_cuda_headers(root: str) -> bool:
    return os.path.isfile(os.path.join(root, "include", "cuda.h")) or bool(
        glob.glob(os.path.join(root, "targets", "*", "include", "cuda.h")))


def _find_rocm_home() -> str:
    """The ROCm root: ROCM_PATH / ROCM_HOME, hipcc on PATH, /opt/rocm."""
    for var in ("ROCM_PATH", "ROCM_HOME"):
        if os.environ.get(var):
            return os.environ[var]
    hipcc = shutil.which("hipcc")
    if hipcc:
        return os.path.dirname(os.path.dirname(os.path.realpath(hipcc)))
    return "/opt/rocm" if os.path.exists("/opt/rocm") else ""


def _parse_target_config(value: str) -> dict[str, Any] | None:
    """A JSON dict spelled in TILELANG_DEFAULT_TARGET, or None when the value is a plain string."""
    value = value.strip()
    if not value.startswith("{"):
        return None
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as err:
        raise ValueError(f"TILELANG_DEFAULT_TARGET={value!r} looks like a dict but could not be parsed. Use JSON "
                         'syntax like {"kind": "cuda", "arch": "sm_100"}.') from err
    if not isinstance(parsed, dict):
        raise ValueError("TILELANG_DEFAULT_TARGET must parse to a dict")
    return dict(parsed)


def _default_tmp_dir() -> str:
    return os.path.join(str(Environment.TILELANG_CACHE_DIR), "tmp")


class Environment:
    """TileLang's configuration from the environment (see the module docstring for the table)."""

    # read once: toolkit locations
    CUDA_HOME = _find_cuda_home()
    ROCM_HOME = _find_rocm_home()
    TILELANG_PACKAGE_PATH = Path(__file__).resolve().parent

    TILELANG_CACHE_DIR = EnvVar("TILELANG_CACHE_DIR", os.path.expanduser("~/.tilelang/cache"))
    TILELANG_TMP_DIR = EnvVar("TILELANG_TMP_DIR", _default_tmp_dir)
    TILELANG_DISABLE_CACHE = EnvVar("TILELANG_DISABLE_CACHE", "0")
    TILELANG_CACHE_MAX_BYTES = EnvVar("TILELANG_CACHE_MAX_BYTES", "")
    TILELANG_CACHE_WRITE_DELAY = EnvVar("TILELANG_CACHE_WRITE_DELAY", "0")
    TILELANG_KERNEL_CACHE_USE_LIB_STAMP = EnvVar("TILELANG_KERNEL_CACHE_USE_LIB_STAMP", "0")
    TILELANG_PRINT_ON_COMPILATION = EnvVar("TILELANG_PRINT_ON_COMPILATION", "1")
    TILELANG_CLEANUP_TEMP_FILES = EnvVar("TILELANG_CLEANUP_TEMP_FILES", "1")
    TILELANG_HIP_SAVE_TEMP_FILES = EnvVar("TILELANG_HIP_SAVE_TEMP_FILES", "0")
    TILELANG_JIT_DIAGNOSTICS = EnvVar("TILELANG_JIT_DIAGNOSTICS", "0")
    TILELANG_FULL_TRACEBACK = EnvVar("TILELANG_FULL_TRACEBACK", "0")
    TILELANG_COMPILE_TIMEOUT_SECONDS = EnvVar("TILELANG_COMPILE_TIMEOUT_SECONDS", "")
    TILELANG_CUDA_COMPILER = EnvVar("TILELANG_CUDA_COMPILER", "")

    TILELANG_LOG_LEVEL = EnvVar("TILELANG_LOG_LEVEL", None)
    TILELANG_PRINT_IR = EnvVar("TILELANG_PRINT_IR", "")
    TILELANG_PASS_DIFF = EnvVar("TILELANG_PASS_DIFF", "0")
    TILELANG_PASS_DIFF_OUTPUT = EnvVar("TILELANG_PASS_DIFF_OUTPUT", "tmp/pass_diff_output")
    TL_LOWER_TRACE = EnvVar("TL_LOWER_TRACE", "0")
    TL_LOWER_TRACE_DIR = EnvVar("TL_LOWER_TRACE_DIR", lambda: os.path.join(".", "tmp", "lower_trace_dir"))
    TILELANG_PASS_PROFILE = EnvVar("TILELANG_PASS_PROFILE", "0")
    TILELANG_PASS_PROFILE_THRESHOLD_MS = EnvVar("TILELANG_PASS_PROFILE_THRESHOLD_MS", "0")
    TILELANG_ENABLE_IR_SPAN = EnvVar("TILELANG_ENABLE_IR_SPAN", "1")
    TILELANG_LAZY_PRIM_FUNC = EnvVar("TILELANG_LAZY_PRIM_FUNC", "1")
    TL_IKET_OUTPUT_DIR = EnvVar("TL_IKET_OUTPUT_DIR", None)

    TILELANG_NUM_THREADS = EnvVar("TILELANG_NUM_THREADS", None)
    TILELANG_AUTOTUNE_WORKERS = EnvVar("TILELANG_AUTOTUNE_WORKERS", None)
    TILELANG_AUTO_TUNING_DISABLE_CACHE = EnvVar("TILELANG_AUTO_TUNING_DISABLE_CACHE", "0")
    TILELANG_AUTO_TUNING_CPU_UTILITIES = EnvVar("TILELANG_AUTO_TUNING_CPU_UTILITIES", "0.9")
    TILELANG_AUTO_TUNING_CPU_COUNTS = EnvVar("TILELANG_AUTO_TUNING_CPU_COUNTS", "-1")
    TILELANG_AUTO_TUNING_MAX_CPU_COUNT = EnvVar("TILELANG_AUTO_TUNING_MAX_CPU_COUNT", "-1")

    TILELANG_DEFAULT_TARGET = EnvVar("TILELANG_DEFAULT_TARGET", "auto")
    TILELANG_DEFAULT_EXECUTION_BACKEND = EnvVar("TILELANG_EXECUTION_BACKEND", "auto")
    TILELANG_DEFAULT_VERBOSE = EnvVar("TILELANG_VERBOSE", "0")
    TILELANG_LAYOUT_COST_MODEL = EnvVar("TILELANG_LAYOUT_COST_MODEL", None)

    TILELANG_DISABLE_PLUGIN_AUTOLOAD = EnvVar("TILELANG_DISABLE_PLUGIN_AUTOLOAD", "")
    TILELANG_BLOCK_PLUGINS = EnvVar("TILELANG_BLOCK_PLUGINS", "")

    # accepted for the reference's sake; this project has no bundled TVM, CUTLASS or native library to locate
    TVM_IMPORT_PYTHON_PATH = EnvVar("TVM_IMPORT_PYTHON_PATH", None)
    TVM_LIBRARY_PATH = EnvVar("TVM_LIBRARY_PATH", None)
    CUTLASS_INCLUDE_DIR = EnvVar("TL_CUTLASS_PATH", None)
    COMPOSABLE_KERNEL_INCLUDE_DIR = EnvVar("TL_COMPOSABLE_KERNEL_PATH", None)
    TILELANG_TEMPLATE_PATH = EnvVar("TL_TEMPLATE_PATH", None)
    SKIP_LOADING_TILELANG_SO = EnvVar("SKIP_LOADING_TILELANG_SO", "1")

    # ------------------------------------------------------------------------------- cache switches
    def is_cache_globally_disabled(self) -> bool:
        return _truthy(self.TILELANG_DISABLE_CACHE)

    def is_cache_enabled(self) -> bool:
        return not self.is_cache_globally_disabled() and CacheState.is_enabled()

    def enable_cache(self) -> None:
        CacheState.enable()

    def disable_cache(self) -> None:
        CacheState.disable()

    def should_use_kernel_cache_lib_stamp(self) -> bool:
        return _truthy(self.TILELANG_KERNEL_CACHE_USE_LIB_STAMP)

    def is_autotune_cache_disabled(self) -> bool:
        return _truthy(self.TILELANG_AUTO_TUNING_DISABLE_CACHE)

    # ------------------------------------------------------------------------------- flags
    def is_print_on_compilation_enabled(self) -> bool:
        return _truthy(self.TILELANG_PRINT_ON_COMPILATION)

    def is_print_on_compilation_requested(self) -> bool:
        """``TILELANG_PRINT_ON_COMPILATION`` turned on explicitly (environment or assignment), not by default:
        the compilation lines are then shown at INFO whatever the ``tilelang`` logger's level."""
        var = vars(Environment)["TILELANG_PRINT_ON_COMPILATION"]
        explicit = var._forced_value is not None or var.key in os.environ
        return explicit and _truthy(var.get())

    def should_cleanup_temp_files(self) -> bool:
        return _truthy(self.TILELANG_CLEANUP_TEMP_FILES)

    def is_jit_diagnostics_enabled(self) -> bool:
        return _truthy(self.TILELANG_JIT_DIAGNOSTICS)

    def keep_full_traceback(self) -> bool:
        """``TILELANG_FULL_TRACEBACK``: errors in a user's kernel keep TileLang's own frames and chained causes."""
        return _truthy(self.TILELANG_FULL_TRACEBACK)

    def is_pass_profile_enabled(self) -> bool:
        return _truthy(self.TILELANG_PASS_PROFILE)

    def is_span_enable(self) -> bool:
        return _truthy(self.TILELANG_ENABLE_IR_SPAN)

    def is_lazy_prim_func_enabled(self) -> bool:
        return _truthy(self.TILELANG_LAZY_PRIM_FUNC)

    def is_running_autodd(self) -> bool:
        argv = getattr(sys, "orig_argv", None) or []
        if "-mtilelang.autodd" in argv:
            return True
        if "-m" in argv:
            i = argv.index("-m")
            module = argv[i + 1] if i + 1 < len(argv) else ""
            return module == "tilelang.autodd" or module.startswith("tilelang.autodd.")
        return False

    def is_light_import(self) -> bool:
        return self.is_running_autodd()

    def get_pass_profile_threshold_ms(self) -> float:
        value = str(self.TILELANG_PASS_PROFILE_THRESHOLD_MS).strip()
        return parse_pass_profile_threshold_ms(value, "TILELANG_PASS_PROFILE_THRESHOLD_MS") if value else 0.0

    def get_compile_timeout_seconds(self) -> float | None:
        value = str(self.TILELANG_COMPILE_TIMEOUT_SECONDS).strip()
        if not value:
            return None
        try:
            timeout = float(value)
        except ValueError as exc:
            raise ValueError(f"TILELANG_COMPILE_TIMEOUT_SECONDS={value!r} must be empty or a non-negative "
                             "number") from exc
        if not math.isfinite(timeout) or timeout < 0:
            raise ValueError(f"TILELANG_COMPILE_TIMEOUT_SECONDS={value!r} must be empty or a non-negative number")
        return timeout if timeout > 0 else None

    def get_pass_diff_mode(self) -> str | None:
        value = str(self.TILELANG_PASS_DIFF).strip().lower()
        if value in ("", "0", "false", "no", "off"):
            return None
        return value if value in ("html", "both") else "terminal"

    def get_lower_trace_mode(self) -> str | None:
        value = str(self.TL_LOWER_TRACE).strip().lower()
        if value in ("", "0", "false", "no", "off"):
            return None
        return value if value in ("terminal", "both") else "html"

    def get_lower_trace_dir(self) -> str:
        return str(self.TL_LOWER_TRACE_DIR).strip() or os.path.join(".", "tmp", "lower_trace_dir")

    def get_default_target(self) -> str | dict[str, Any]:
        """``TILELANG_DEFAULT_TARGET``: ``"auto"``, a plain target string, or a JSON dict as a dict."""
        target = self.TILELANG_DEFAULT_TARGET
        if target is None:
            return "auto"
        if isinstance(target, Mapping):
            return dict(target)
        if isinstance(target, str):
            return _parse_target_config(target) or target.strip() or "auto"
        raise TypeError("TILELANG_DEFAULT_TARGET must be a string or a target config dict")

    def get_default_execution_backend(self) -> str:
        return str(self.TILELANG_DEFAULT_EXECUTION_BACKEND).strip() or "auto"

    def get_default_verbose(self) -> bool:
        return _truthy(self.TILELANG_DEFAULT_VERBOSE)

    def get_default_layout_cost_model(self) -> str | None:
        value = self.TILELANG_LAYOUT_COST_MODEL
        return (str(value).strip() or None) if value is not None else None

    # ------------------------------------------------------------------------------- typed accessors
    def cache_dir(self) -> Path:
        return Path(str(self.TILELANG_CACHE_DIR)).expanduser()

    def tmp_dir(self) -> Path:
        return Path(str(self.TILELANG_TMP_DIR)).expanduser()

    def cache_disabled(self) -> bool:
        return self.is_cache_globally_disabled()

    def default_target(self) -> str | dict[str, Any] | None:
        target = self.get_default_target()
        return None if target == "auto" else target

    def execution_backend(self) -> str:
        return self.get_default_execution_backend()

    def verbose(self) -> bool:
        return self.get_default_verbose()

    def log_level(self) -> str | None:
        value = self.TILELANG_LOG_LEVEL
        return str(value).strip().upper() or None if value is not None else None

    def num_threads(self) -> int:
        return (_positive_int("TILELANG_NUM_THREADS", self.TILELANG_NUM_THREADS)
                or _positive_int("TVM_NUM_THREADS", os.environ.get("TVM_NUM_THREADS")) or usable_cores())

    def autotune_workers(self) -> int:
        explicit = _positive_int("TILELANG_AUTOTUNE_WORKERS", self.TILELANG_AUTOTUNE_WORKERS)
        if explicit:
            return explicit
        counts = int(str(self.TILELANG_AUTO_TUNING_CPU_COUNTS).strip() or "-1")
        if counts > 0:
            workers = counts
        else:
            share = float(str(self.TILELANG_AUTO_TUNING_CPU_UTILITIES).strip() or "0.9")
            workers = max(1, int(usable_cores() * share))
        cap = int(str(self.TILELANG_AUTO_TUNING_MAX_CPU_COUNT).strip() or "-1")
        return max(1, min(workers, cap) if cap > 0 else workers)

    def cache_write_delay(self) -> float:
        value = str(self.TILELANG_CACHE_WRITE_DELAY).strip()
        return float(value) if value else 0.0

    def usable_cores(self) -> int:
        return usable_cores()

    def cache_max_bytes(self) -> int | None:
        """``TILELANG_CACHE_MAX_BYTES`` in bytes; None when unset, empty or 0 (no limit)."""
        value = self.TILELANG_CACHE_MAX_BYTES
        text = "" if value is None else str(value).strip()
        if not text:
            return None
        return parse_byte_size(text, "TILELANG_CACHE_MAX_BYTES") or None

    def describe(self) -> list[dict[str, Any]]:
        """Every setting with its effective value and where it came from (``tilelang env``): one dict per
        variable with ``name``, ``value`` and ``source`` (``environment``, ``set in this process``, ``default``;
        toolkit locations read once at import say ``environment`` or ``detected``)."""
        out = []
        for attr in vars(type(self)).values():
            if not isinstance(attr, EnvVar):
                continue
            if attr._forced_value is not None:
                source = "set in this process"
            elif attr.key in os.environ:
                source = "environment"
            else:
                source = "default"
            out.append({"name": attr.key, "value": attr.get(), "source": source})
        for name, variables in (("CUDA_HOME", ("CUDA_HOME", "CUDA_PATH")), ("ROCM_HOME", ("ROCM_PATH", "ROCM_HOME"))):
            given = next((v for v in variables if os.environ.get(v)), None)
            out.append({"name": name, "value": getattr(self, name) or None,
                        "source": f"environment ({given})" if given else "detected"})
        docs = variable_docs()
        for row in out:
            row["description"] = docs.get(row["name"], "")
            note = self._effect_note(row["name"])
            if note:
                row["note"] = note
        return out

    def _effect_note(self, name: str) -> str | None:
        """What a value does not show by itself: the compilation line's visibility depends on the log level."""
        if name != "TILELANG_PRINT_ON_COMPILATION" or not self.is_print_on_compilation_enabled():
            return None
        if self.is_print_on_compilation_requested():
            return "now: shown at any log level"
        import logging

        if logging.getLogger("tilelang.jit.compilation").isEnabledFor(logging.INFO):
            return "now: shown (the tilelang logger is at INFO or lower)"
        level = logging.getLevelName(logging.getLogger("tilelang").getEffectiveLevel())
        return (f"now: NOT shown, the tilelang logger is at {level}; set TILELANG_PRINT_ON_COMPILATION=1 or "
                "TILELANG_LOG_LEVEL=INFO to see it")

    def settings(self) -> dict[str, Any]:
        """Every variable of the table with its effective value (``tilelang env``)."""
        out = {}
        for attr in vars(type(self)).values():
            if isinstance(attr, EnvVar):
                out[attr.key] = attr.get()
        return out


def variable_docs() -> dict[str, str]:
    """Each variable of the module docstring's table with its text, markup removed: ``TILELANG_CACHE_DIR`` maps to
    "root of the on-disk kernel cache; default ~/.tilelang/cache"."""
    docs: dict[str, str] = {}
    name = None
    for line in (__doc__ or "").splitlines():
        bullet = re.match(r"- ``(\w+)``: (.*)", line)
        if bullet:
            name, text = bullet.groups()
            docs[name] = text
        elif name and line.startswith("  ") and line.strip():
            docs[name] += " " + line.strip()
        else:
            name = None
    return {k: v.replace("``", "") for k, v in docs.items()}


def _positive_int(name: str, value: Any) -> int | None:
    text = "" if value is None else str(value).strip()
    if not text:
        return None
    try:
        number = int(text)
    except ValueError:
        raise ValueError(f"{name}={text!r} is not an integer") from None
    if number < 1:
        raise ValueError(f"{name}={text!r} must be at least 1")
    return number


env = Environment()

CUDA_HOME = env.CUDA_HOME
ROCM_HOME = env.ROCM_HOME
enable_cache = env.enable_cache
disable_cache = env.disable_cache
is_cache_enabled = env.is_cache_enabled
cache_dir = env.cache_dir
tmp_dir = env.tmp_dir
cache_disabled = env.cache_disabled
default_target = env.default_target
execution_backend = env.execution_backend
verbose = env.verbose
log_level = env.log_level
num_threads = env.num_threads
autotune_workers = env.autotune_workers
cache_write_delay = env.cache_write_delay
cache_max_bytes = env.cache_max_bytes
describe = env.describe
