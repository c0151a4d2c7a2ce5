"""`ThreadSync(scope)`: barriers for a storage scope (the reference's ``tilelang.transform.ThreadSync``).

Inserts the synchronisation a memory scope needs between conflicting accesses of the threads of a block:
``"shared"`` / ``"shared.dyn"`` get block barriers, ``"global"`` grid-level ones where the target has them. This is
TVM's ``s_tir.transform.ThreadSync``, the pass core's `InsertBarriers` also builds on.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ThreadSync"]


def ThreadSync(storage_scope: str) -> Any:
    """The barrier-insertion pass for `storage_scope` (``"shared"``, ``"shared.dyn"``, ``"global"``, ...)."""
    if not isinstance(storage_scope, str) or not storage_scope:
        raise ValueError(f"ThreadSync needs a storage scope such as 'shared', got {storage_scope!r}")
    from tvm import s_tir

    return s_tir.transform.ThreadSync(storage_scope)
