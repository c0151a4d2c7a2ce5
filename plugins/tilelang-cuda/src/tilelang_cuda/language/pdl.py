"""Programmatic dependent launch (sm_90+): let the next kernel of the stream start before this one ends."""

from __future__ import annotations

from typing import Any

from tilelang_cuda.language._emit import call, public

__all__ = ["pdl_trigger", "pdl_sync"]


@public
def pdl_trigger() -> Any:
    """``griddepcontrol.launch_dependents``: the dependent kernel may launch once every CTA has triggered or ended."""
    return call("pdl_trigger", "handle", [])


@public
def pdl_sync() -> Any:
    """``griddepcontrol.wait``: wait until the kernels this one depends on have completed and flushed memory."""
    return call("pdl_sync", "handle", [])
