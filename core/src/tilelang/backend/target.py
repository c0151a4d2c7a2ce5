"""Targets: the kinds backends serve, how a user's spelling becomes a TVM target, and ``"auto"`` detection.

A backend registers one `TargetKind` per kind it serves: an optional ``normalize`` (fill defaults such as a
CUDA arch, validate options, or rename an alias kind such as ``hip`` -> ``rocm``) and an optional ``detect``
(return a target config when this machine has the device). Accepted spellings everywhere a target is taken:
``"auto"`` or None, a kind (``"cuda"``), a dict (``{"kind": "cuda", "arch": "sm_90a"}``) or a
``tvm.target.Target``. As in the reference TileLang, a string with options (``"cuda -arch=sm_80"``) is refused
with the equivalent dict in the message: apache-tvm 0.27 no longer parses such strings.

The reference's registries are here too: `register_target_detector` / `auto_detect_target` (each backend's
``detect`` is one, tried by priority, then in registration order) and `register_target_normalizer`.
"""

from __future__ import annotations

import functools
import shlex
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from tilelang.backend._registry import Registry
from tilelang.errors import InvalidTargetError, TargetError

TargetConfig = dict[str, Any]
TargetSpec = Any  # str | Mapping | tvm.target.Target | None
TargetDetector = Callable[[], Any]
TargetNormalizer = Callable[[Any], Any]

__all__ = [
    "TargetKind", "register_target_kind", "register_lazy_target_kind", "target_kind_spec", "normalize_target",
    "determine_target", "split_targets", "TargetPair", "kind_of", "detect_targets", "detect_target", "tvm_target",
    "register_target_detector",
    "register_target_normalizer", "list_target_detectors", "auto_detect_target", "TargetDetectorSpec",
    "TargetNormalizerSpec",
]


@dataclass(frozen=True, slots=True)
class TargetKind:
    """What a backend says about one target kind it serves."""

    kind: str
    normalize: Callable[[TargetConfig], TargetConfig] | None = None
    detect: Callable[[], TargetConfig | None] | None = None
    detect_priority: int = 0
    description: str = ""
    # knobs the target-neutral pipeline reads (see tilelang.transform for the keys it understands)
    pipeline_options: Mapping[str, Any] = field(default_factory=dict)
    # how TVM sees this kind: a kind TVM does not know (a third-party backend's) maps to one it does
    to_tvm: Callable[[TargetConfig], TargetConfig] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or not self.kind.isidentifier():
            raise TypeError(f"TargetKind.kind must be an identifier-like string, got {self.kind!r}")


@dataclass(frozen=True, slots=True)
class TargetDetectorSpec:
    """One detector of `auto_detect_target`: ``detect()`` returns a target (any spelling) or None."""

    name: str
    detect: TargetDetector
    priority: int = 0


@dataclass(frozen=True, slots=True)
class TargetNormalizerSpec:
    """One normalizer: ``normalize(target)`` returns a replacement target, or None to leave it to the next."""

    name: str
    normalize: TargetNormalizer


_KINDS: Registry[TargetKind] = Registry("target kind", TargetKind, name_of=lambda t: t.kind)
_TARGET_DETECTORS: dict[str, TargetDetectorSpec] = {}
_TARGET_NORMALIZERS: dict[str, TargetNormalizerSpec] = {}
_mirrored_detectors: set[str] = set()
_detector_lock = threading.RLock()


def register_target_detector(name: str, detect: TargetDetector, *, override: bool = False,
                             priority: int = 0) -> TargetDetectorSpec:
    """Add a detector for ``target="auto"``; higher `priority` is tried first, then registration order."""
    with _detector_lock:
        if name in _TARGET_DETECTORS and not override:
            raise ValueError(f"Target detector {name!r} is already registered")
        spec = TargetDetectorSpec(name, detect, priority)
        _TARGET_DETECTORS[name] = spec
        return spec


def register_target_normalizer(name: str, normalize: TargetNormalizer, *,
                               override: bool = False) -> TargetNormalizerSpec:
    """Add a normalizer consulted before the target kinds' own (the first non-None answer wins)."""
    if name in _TARGET_NORMALIZERS and not override:
        raise ValueError(f"Target normalizer {name!r} is already registered")
    spec = TargetNormalizerSpec(name, normalize)
    _TARGET_NORMALIZERS[name] = spec
    return spec


def list_target_detectors() -> tuple[str, ...]:
    """The names of the registered target detectors, in registration order."""
    return tuple(_TARGET_DETECTORS)


def _mirror_kind_detectors() -> None:
    """Register every installed backend's TargetKind.detect as a target detector (once per kind)."""
    from tilelang.backend import plugins

    plugins.load_all()
    for kind in _KINDS.keys():
        for spec in _KINDS.get(kind):
            if spec.detect is None or spec.kind in _mirrored_detectors:
                continue
            with _detector_lock:
                _mirrored_detectors.add(spec.kind)
                _TARGET_DETECTORS.setdefault(spec.kind, TargetDetectorSpec(spec.kind, spec.detect,
                                                                            spec.detect_priority))


def _ordered_detectors() -> list[TargetDetectorSpec]:
    _mirror_kind_detectors()
    with _detector_lock:
        specs = list(_TARGET_DETECTORS.values())
    return sorted(specs, key=lambda s: -s.priority)  # stable: equal priorities keep registration order


def auto_detect_target() -> Any:
    """The first target a registered detector finds on this machine (ValueError naming what was tried)."""
    errors = []
    for spec in _ordered_detectors():
        try:
            found = spec.detect()
        except Exception as exc:
            errors.append(f"{spec.name}: {exc}")
            continue
        if found is not None:
            return found
    tried = f" Tried: {', '.join(errors)}." if errors else ""
    raise TargetError(f"No registered target detector found an available target.{tried} Install a backend, "
                      "e.g. `pip install tilelang-cpu`, or pass target= explicitly.")


def register_target_kind(spec: TargetKind, *, override: bool = False) -> TargetKind:
    """Register `spec` for ``spec.kind``."""
    return _KINDS.register(spec.kind, spec, override=override)


def register_lazy_target_kind(kind: str, import_path: str) -> None:
    """Register the TargetKind at ``"module:attr"``, imported when `kind` is first used."""
    _KINDS.register_lazy(kind, import_path)


def target_kind_spec(kind: str) -> TargetKind:
    """The TargetKind registered for `kind`, loading its plugin; BackendNotInstalled when none serves it."""
    from tilelang.backend import plugins

    found = _KINDS.get(kind)
    if not found:
        plugins.raise_for_missing_kind(kind)
    return found[0]


# A kind TVM does not know (a third party's ``ccpu``) reaches TVM as the kind its ``to_tvm`` names; its own name
# travels in the TVM target's keys as ``tilelang:<kind>``, so every registry lookup still finds the plugin.
KIND_KEY_PREFIX = "tilelang:"


def kind_of(target: Any) -> str:
    """The kind name of a tvm Target, a config dict or a plain kind string (for a Target built by `tvm_target`
    from a kind TVM does not know, that kind, not the TVM kind it was mapped to)."""
    if isinstance(target, str):
        return target.split()[0] if target.strip() else target
    if isinstance(target, Mapping):
        return str(target["kind"])
    kind = getattr(target, "kind", None)
    if kind is None:
        raise TargetError(f"cannot tell the target kind of {target!r}")
    for key in getattr(target, "keys", None) or ():
        if str(key).startswith(KIND_KEY_PREFIX):
            return str(key)[len(KIND_KEY_PREFIX):]
    return kind if isinstance(kind, str) else str(kind.name)


def _parse_string(spec: str) -> TargetConfig:
    """``"cuda -arch=sm_80 -max_num_threads=1024"`` -> ``{"kind": "cuda", "arch": "sm_80", ...}`` (for messages)."""
    words = shlex.split(spec)
    if not words:
        raise InvalidTargetError(f"Target {spec!r} is not supported: the string is empty")
    config: TargetConfig = {"kind": words[0]}
    for word in words[1:]:
        if not word.startswith("-"):
            raise InvalidTargetError(f"Target {spec!r} is not supported: cannot parse option {word!r} "
                                     "(expected -key=value). Pass target options as a dict.")
        key, eq, value = word.lstrip("-").partition("=")
        config[key.replace("-", "_")] = _parse_value(value) if eq else True
    return config


def _parse_value(text: str) -> Any:
    if text.lstrip("-").isdigit():
        return int(text)
    if "," in text:
        return [_parse_value(t) for t in text.split(",")]
    return text


def _to_config(spec: TargetSpec) -> TargetConfig:
    if isinstance(spec, str):
        text = spec.strip()
        if not text:
            raise InvalidTargetError(f"Target {spec!r} is not supported: the string is empty")
        if len(text.split()) > 1:
            raise InvalidTargetError(
                f"Target {spec!r} is not supported. Pass target options as a dict when the target needs "
                f"attributes, e.g. target={_parse_string(text)!r}")
        return {"kind": text}
    if isinstance(spec, Mapping):
        if "kind" not in spec:
            raise InvalidTargetError(f"Target {dict(spec)!r} is not supported: a target dict needs a 'kind' key. "
                                     "Pass a valid target config dict.")
        return dict(spec)
    export = getattr(spec, "export", None)
    if callable(export):  # tvm.target.Target
        return {k: _plain(v) for k, v in dict(export()).items() if k not in ("keys", "tag") or v}
    raise TargetError(f"cannot use {spec!r} ({type(spec).__name__}) as a target; give a kind, a dict or a Target")


def _plain(value: Any) -> Any:
    """tvm_ffi containers (Array, Map, String) as Python lists, dicts and strings."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if hasattr(value, "__iter__"):
        return [_plain(v) for v in value]
    return value


def _registered_normalization(spec: TargetSpec) -> TargetSpec | None:
    for normalizer in list(_TARGET_NORMALIZERS.values()):
        found = normalizer.normalize(spec)
        if found is not None:
            return found
    return None


def normalize_target(spec: TargetSpec) -> TargetConfig:
    """Turn any accepted spelling (except "auto") into the backend-normalised config dict.

    A kind's normaliser that refuses a dict's options raises `InvalidTargetError` ("Pass a valid target config
    dict"), which is also an AssertionError as in the reference.
    """
    replaced = _registered_normalization(spec)
    config = _to_config(replaced if replaced is not None else spec)
    for _ in range(4):  # a normaliser may rename an alias kind; follow it a few steps
        kind = config["kind"]
        kind_spec = target_kind_spec(kind)
        if kind_spec.normalize is not None:
            try:
                config = dict(kind_spec.normalize(dict(config)))
            except InvalidTargetError:
                raise
            except TargetError as exc:
                raise InvalidTargetError(f"Target {spec!r} is not supported: {exc}. Pass a valid target config "
                                         "dict.") from None
        if config["kind"] == kind:
            break
    if isinstance(config.get("host"), (str, Mapping)):
        config["host"] = _to_config(config["host"])
    return config


def _detected() -> Iterator[TargetConfig]:
    """Configs of the devices detected here, best first, each probed only when the previous ones are consumed."""
    from tilelang.backend import plugins

    for spec in _ordered_detectors():
        try:
            detected = spec.detect()
        except Exception as exc:  # a broken detector must not hide the other devices
            plugins.report_once(f"detector:{spec.name}", f"target detector of {spec.name!r} failed: {exc!r}")
            continue
        if detected is not None:
            yield normalize_target(detected)


def detect_targets() -> list[TargetConfig]:
    """Configs of every device detected here, best first (loads every installed backend)."""
    return list(_detected())


def detect_target() -> TargetConfig | None:
    """The config of the best device detected here, or None. Backends after it are not probed: a probe can load
    a device runtime into the process (WebGPU's adapter loads Mesa and its LLVM, which crashes a later import of
    another LLVM, e.g. Triton's when torch compiles a function)."""
    return next(_detected(), None)


def _current_tvm_target() -> Any:
    """The target of an enclosing ``with tvm.target.Target(...)``, if TVM is already imported."""
    if "tvm.target" not in sys.modules:
        return None
    return sys.modules["tvm.target"].Target.current(allow_none=True)


def _is_auto(target: Any) -> bool:
    return target is None or (isinstance(target, str) and target.strip() == "auto")


def determine_target(target: TargetSpec = "auto", return_object: bool = False) -> Any:
    """Resolve `target` to a normalised config dict (or a ``tvm.target.Target`` with ``return_object=True``).

    ``"auto"`` (or None) takes, in order: ``TILELANG_DEFAULT_TARGET`` (a kind or a JSON dict), an enclosing
    ``with tvm.target.Target(...)``, then the best device that an installed backend detects.
    """
    if _is_auto(target):
        from tilelang.env import env

        default = env.get_default_target()
        current = _current_tvm_target()
        if not _is_auto(default):
            target = default
        elif current is not None:
            target = current
        else:
            detected = detect_target()
            if detected is None:
                from tilelang.backend import plugins

                raise TargetError(
                    "target='auto' found no device: no installed backend detected one "
                    f"(installed target kinds: {', '.join(plugins.installed_kinds()) or 'none'}). "
                    "Install a backend, e.g. `pip install tilelang-cpu`, or pass target= explicitly."
                )
            target = detected
    config = normalize_target(target)
    if not return_object:
        return config
    try:
        return tvm_target(config)
    except TargetError as exc:
        raise InvalidTargetError(f"Target {target!r} is not supported: {exc}. Pass a valid target config "
                                 "dict.") from None


@dataclass(frozen=True, eq=False)
class TargetPair:
    """A user's target resolved once: the device config, the host config and (built on first use, TVM imported
    then) their TVM targets. `split_targets` makes it; everything below the API takes it instead of resolving
    the user's spelling again. Pickles as its two configs (a compile worker rebuilds the TVM targets)."""

    device: TargetConfig  # normalised, without "host"
    host: TargetConfig
    _tvm: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def kind(self) -> str:
        return str(self.device["kind"])

    @property
    def tvm_device(self) -> Any:
        """The device ``tvm.target.Target`` (no host attached)."""
        if "device" not in self._tvm:
            self._tvm["device"] = tvm_target(self.device)
        return self._tvm["device"]

    @property
    def tvm_host(self) -> Any:
        if "host" not in self._tvm:
            self._tvm["host"] = tvm_target(self.host)
        return self._tvm["host"]

    @property
    def on_host(self) -> bool:
        """Whether the kernel itself is host code (a CPU kind: TVM's device type kDLCPU)."""
        return _runs_on_host(self.device)

    @classmethod
    def from_config(cls, config: TargetConfig) -> TargetPair:
        """The pair of a config `split_targets` resolved (its ``config()``), without resolving anything again."""
        if "host" not in config:
            raise TargetError(f"{config!r} is not a resolved target pair (it has no 'host'); use split_targets")
        return cls(device={k: v for k, v in config.items() if k != "host"}, host=dict(config["host"]))

    def config(self) -> TargetConfig:
        """The device config with its host (``{"kind": ..., "host": {...}}``), as `determine_target` spells it."""
        return {**self.device, "host": dict(self.host)}

    def __getstate__(self) -> dict[str, Any]:
        return {"device": self.device, "host": self.host}

    def __setstate__(self, state: dict[str, Any]) -> None:
        object.__setattr__(self, "device", state["device"])
        object.__setattr__(self, "host", state["host"])
        object.__setattr__(self, "_tvm", {})


# TVM's target kinds whose code runs on the host CPU (device type kDLCPU)
_HOST_TVM_KINDS = frozenset({"llvm", "c"})


def _as_tvm_sees_it(config: Mapping[str, Any]) -> dict[str, Any]:
    """`config` through its kind's ``to_tvm`` mapping, when the kind has one (no TVM import)."""
    found = _KINDS.get(str(config["kind"]))
    spec = found[0] if found else None
    return dict(spec.to_tvm(dict(config)) if spec is not None and spec.to_tvm is not None else config)


def _runs_on_host(device: TargetConfig) -> bool:
    """Whether a kernel of `device` is host code: its kind as TVM sees it (after ``to_tvm``) is a CPU kind. Decided
    without importing TVM (a warm cache hit resolves its target too)."""
    return str(_as_tvm_sees_it(device)["kind"]) in _HOST_TVM_KINDS


def split_targets(target: TargetSpec = "auto", target_host: TargetSpec = None) -> TargetPair:
    """Resolve a user's `target` (and optional `target_host`) once into a `TargetPair`.

    The host is, in order: `target_host`; the device config's own ``"host"``; the device itself when the kernel
    runs on the host (CPU kinds); otherwise ``{"kind": "llvm"}``. ``"auto"`` resolves as in `determine_target`.
    """
    if isinstance(target, TargetPair):
        if target_host is None:
            return target
        target = target.device
    config = determine_target(target)
    device = {k: v for k, v in config.items() if k != "host"}
    host: Any = target_host if target_host is not None else config.get("host")
    if host is None:
        host = dict(device) if _runs_on_host(device) else {"kind": "llvm"}
    elif not (isinstance(host, Mapping) and "kind" in host and not _is_auto(host.get("kind"))):
        host = determine_target(host)
    host = {k: v for k, v in _plain(dict(host)).items() if k != "host"}
    return TargetPair(device=device, host=host)


def tvm_target(config: TargetSpec) -> Any:
    """The ``tvm.target.Target`` for a normalised config (through its kind's ``to_tvm`` when it has one).

    Registries are keyed by the config's kind; TVM passes and builders get this object.
    """
    from tvm.target import Target

    if not isinstance(config, Mapping):
        return config if isinstance(config, Target) else tvm_target(normalize_target(config))
    kind = str(config["kind"])
    if not _KINDS.get(kind) and kind not in tvm_kind_names():
        target_kind_spec(kind)  # names the distribution that serves the kind
    tvm_config = _as_tvm_sees_it(config)
    if isinstance(tvm_config.get("host"), Mapping):
        tvm_config["host"] = tvm_target(tvm_config["host"])
    try:
        target = Target(tvm_config)
        if str(target.kind.name) != kind:  # mapped by to_tvm: the kind's own name rides in the keys
            marked = [KIND_KEY_PREFIX + kind, *(k for k in target.keys if not str(k).startswith(KIND_KEY_PREFIX))]
            target = Target({**tvm_config, "keys": marked})
        return target
    except Exception as exc:
        raise TargetError(f"TVM rejects target {tvm_config!r}: {str(exc).strip().splitlines()[-1]}") from None


@functools.cache
def tvm_kind_names() -> frozenset[str]:
    """The target kinds TVM itself defines (``llvm``, ``c``, ``cuda``...)."""
    from tvm.target import Target

    return frozenset(str(k) for k in Target.list_kinds())
