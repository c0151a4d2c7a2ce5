"""Small helpers shared by backend pipelines: reading pass configs and target pipeline options."""

from __future__ import annotations

from typing import Any

__all__ = ["get_pass_config", "is_vectorize_enabled", "pipeline_options"]


def get_pass_config(key: Any, default: Any = None) -> Any:
    """The value of pass config `key` (``tl.*`` or ``tirx.*``) in the current compilation, else `default`."""
    from tilelang.transform.config import current_tl_config

    name = str(getattr(key, "value", key))
    if name.startswith("tl."):
        return current_tl_config(name, default)
    import tvm

    return tvm.transform.PassContext.current().config.get(name, default)


def pipeline_options(target: Any) -> dict[str, Any]:
    """The pipeline options (``TargetKind.pipeline_options``) of `target`'s kind."""
    from tilelang.transform.utils import pipeline_options as options

    return dict(options(target))


def is_vectorize_enabled(target: Any) -> bool:
    """Whether loops are vectorised for `target` (its options and the ``tl.disable_vectorize`` config)."""
    return bool(pipeline_options(target).get("vectorize", True)) and not bool(
        get_pass_config("tl.disable_vectorize", False))
