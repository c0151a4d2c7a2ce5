"""The checks run on a tile program before lowering (``tl.disable_prelower_semantic_check`` turns them off)."""

from __future__ import annotations

from typing import Any

__all__ = ["PreLowerSemanticCheck", "should_enable_prelower_semantic_check", "should_enable_ast_print"]


def _config(key: str, default: Any) -> Any:
    from tilelang.transform.config import current_tl_config

    return current_tl_config(key, default)


def should_enable_prelower_semantic_check(pass_ctx: Any = None) -> bool:
    if pass_ctx is not None:
        return not bool(pass_ctx.config.get("tl.disable_prelower_semantic_check", False))
    return not bool(_config("tl.disable_prelower_semantic_check", False))


def should_enable_ast_print(pass_ctx: Any = None) -> bool:
    if pass_ctx is not None:
        return bool(pass_ctx.config.get("tl.ast_print_enable", False))
    return bool(_config("tl.ast_print_enable", False))


def PreLowerSemanticCheck(mod: Any) -> None:
    """Validate `mod` before lowering: core's CheckSemantics pass (raises a located error on a bad program)."""
    if not should_enable_prelower_semantic_check():
        return
    from tilelang.transform.check_semantics import CheckSemantics

    CheckSemantics(None)(mod)
