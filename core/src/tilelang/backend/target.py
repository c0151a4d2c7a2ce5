"""Targets: the kinds backends serve, how a user's spelling becomes a TVM target, and ``"auto"`` detection.

A backend registers one `TargetKind` per kind it serves: an optional ``normalize`` (fill defaults such as a
CUDA arch, validate options, or rename an alias kind such as ``hip`` -> ``rocm``) and an optional ``detect``
(return a target config when this machine has the device). Accepted spellings everywhere a target is taken:
``"auto"`` or None, a kind (``"cuda"``), a reference-style string (``"cuda -arch=sm_80"``), a dict
(``{"kind": "cuda", "arch": "sm_90a"}``) or a ``tvm.target.Target``.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tilelang.backend._registry import Registry
from tilelang.errors import TargetError

TargetConfig = dict[str, Any]
TargetSpec = Any  # str | Mapping | tvm.target.Target | None

__all__ = [
    "TargetKind", "register_target_kind", "register_lazy_target_kind", "target_kind_spec", "normalize_target",
    "determine_target", "kind_of", "detect_targets", "tvm_target",
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


_KINDS: Registry[TargetKind] = Registry("target kind", TargetKind, name_of=lambda t: t.kind)


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


def kind_of(target: Any) -> str:
    """The kind name of a tvm Target, a config dict or a plain kind string."""
    if isinstance(target, str):
        return target.split()[0] if target.strip() else target
    if isinstance(target, Mapping):
        return str(target["kind"])
    kind = getattr(target, "kind", None)
    if kind is None:
        raise TargetError(f"cannot tell the target kind of {target!r}")
    return kind if isinstance(kind, str) else str(kind.name)


def _parse_string(spec: str) -> TargetConfig:
    """``"cuda -arch=sm_80 -max_num_threads=1024"`` -> ``{"kind": "cuda", "arch": "sm_80", ...}``."""
    words = shlex.split(spec)
    if not words:
        raise TargetError("empty target string")
    config: TargetConfig = {"kind": words[0]}
    for word in words[1:]:
        if not word.startswith("-"):
            raise TargetError(f"cannot parse target option {word!r} in {spec!r}: expected -key=value")
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
        return _parse_string(spec)
    if isinstance(spec, Mapping):
        if "kind" not in spec:
            raise TargetError(f"a target dict needs a 'kind' key, got {dict(spec)!r}")
        return dict(spec)
    export = getattr(spec, "export", None)
    if callable(export):  # tvm.target.Target
        return {k: v for k, v in dict(export()).items() if k not in ("keys", "tag") or v}
    raise TargetError(f"cannot use {spec!r} ({type(spec).__name__}) as a target; give a kind, a dict or a Target")


def normalize_target(spec: TargetSpec) -> TargetConfig:
    """Turn any accepted spelling (except "auto") into the backend-normalised config dict."""
    config = _to_config(spec)
    for _ in range(4):  # a normaliser may rename an alias kind; follow it a few steps
        kind = config["kind"]
        kind_spec = target_kind_spec(kind)
        if kind_spec.normalize is not None:
            config = dict(kind_spec.normalize(dict(config)))
        if config["kind"] == kind:
            break
    if isinstance(config.get("host"), (str, Mapping)):
        host = _to_config(config["host"])
        config["host"] = host
    return config


def detect_targets() -> list[TargetConfig]:
    """Configs of every device detected here, best first (loads every installed backend)."""
    from tilelang.backend import plugins

    plugins.load_all()
    specs = [s for kind in _KINDS.keys() for s in _KINDS.get(kind) if s.detect is not None]
    specs.sort(key=lambda s: -s.detect_priority)
    found = []
    for spec in specs:
        try:
            config = spec.detect()  # type: ignore[misc]
        except Exception as exc:  # a broken detector must not hide the other devices
            plugins.report_once(f"detector:{spec.kind}", f"target detector of {spec.kind!r} failed: {exc!r}")
            continue
        if config:
            found.append(dict(config))
    return found


def _current_tvm_target() -> Any:
    """The target of an enclosing ``with tvm.target.Target(...)``, if TVM is already imported."""
    if "tvm.target" not in sys.modules:
        return None
    return sys.modules["tvm.target"].Target.current(allow_none=True)


def determine_target(target: TargetSpec = "auto", *, return_object: bool = False) -> Any:
    """Resolve `target` to a normalised config dict (or a ``tvm.target.Target`` with ``return_object=True``).

    ``"auto"`` (or None) takes, in order: ``TILELANG_DEFAULT_TARGET``, an enclosing ``with Target(...)``, then
    the best device that an installed backend detects.
    """
    if target is None or (isinstance(target, str) and target == "auto"):
        env = os.environ.get("TILELANG_DEFAULT_TARGET", "").strip()
        current = _current_tvm_target()
        if env and env != "auto":
            target = env
        elif current is not None:
            target = current
        else:
            detected = detect_targets()
            if not detected:
                from tilelang.backend import plugins

                raise TargetError(
                    "target='auto' found no device: no installed backend detected one "
                    f"(installed target kinds: {', '.join(plugins.installed_kinds()) or 'none'}). "
                    "Install a backend, e.g. `pip install tilelang-cpu`, or pass target= explicitly."
                )
            target = detected[0]
    config = normalize_target(target)
    return tvm_target(config) if return_object else config


def tvm_target(config: TargetSpec) -> Any:
    """The ``tvm.target.Target`` for a normalised config (through its kind's ``to_tvm`` when it has one).

    Registries are keyed by the config's kind; TVM passes and builders get this object.
    """
    from tvm.target import Target

    if not isinstance(config, Mapping):
        return config if isinstance(config, Target) else tvm_target(normalize_target(config))
    spec = target_kind_spec(config["kind"])
    tvm_config = dict(spec.to_tvm(dict(config)) if spec.to_tvm is not None else config)
    if isinstance(tvm_config.get("host"), Mapping):
        tvm_config["host"] = tvm_target(tvm_config["host"])
    try:
        return Target(tvm_config)
    except Exception as exc:
        raise TargetError(f"TVM rejects target {tvm_config!r}: {str(exc).strip().splitlines()[-1]}") from None
